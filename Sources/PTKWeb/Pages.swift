import PTKTime
import PTKVocabulary

/// The web interface's HTML pages, made from plain values (`WebPhoto`, texts, numbers). Every text that comes from
/// outside (names, notes, senders, messages) goes through `escapeHTML`, in elements and in
/// quoted attributes alike; no page carries inline script or style (the Content-Security-
/// Policy is `default-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'`),
/// so markup that slipped through could still run, post or redirect nothing.
public struct WebPages: Sendable {
    /// The receiver's name (ptkd's `name`).
    public var receiver: String
    /// The certificate's SHA-256, shown in every footer.
    public var fingerprint: String

    /// The pages of the receiver `receiver` whose certificate has SHA-256 `fingerprint` (hex).
    public init(receiver: String, fingerprint: String) {
        self.receiver = receiver
        self.fingerprint = fingerprint
    }

    /// Who is looking: the session's name and CSRF token.
    public struct Viewer: Sendable {
        /// The logged-in name, shown in the header (escaped like any outside text).
        public var name: String
        /// The session's CSRF token, put in each form and in the page for the scripts' requests.
        public var csrf: String
        /// The viewer `name` with the session's token `csrf`.
        public init(name: String, csrf: String) {
            self.name = name
            self.csrf = csrf
        }
    }

    func page(_ title: String, _ viewer: Viewer?, _ body: String) -> String {
        let h = escapeHTML
        var header = "<a class=\"home\" href=\"/\">\(h(receiver))</a>"
        if let viewer {
            header += """
                <nav><a href="/">Photos</a><a href="/upload">Upload</a>\
                <form method="post" action="/logout"><input type="hidden" name="csrf" value="\(h(viewer.csrf))">\
                <button type="submit" title="Log out \(h(viewer.name))">Log out</button></form></nav>
                """
        }
        return document(
            title, viewer,
            """
            <header>\(header)</header>
            <main>
            \(body)
            </main>
            <footer>ptkd web interface · certificate SHA-256 <code id="fingerprint">\(colonHex(fingerprint))</code></footer>
            """)
    }

    /// The HTML document around `body`: the head every page shares (the stylesheet, the
    /// script, the CSRF token for the script), `head` added to it, and `bodyClass` on <body>.
    func document(_ title: String, _ viewer: Viewer?, head: String = "", bodyClass: String? = nil, _ body: String)
        -> String
    {
        let h = escapeHTML
        return """
            <!DOCTYPE html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <meta name="referrer" content="no-referrer">
            \(viewer.map { "<meta name=\"csrf-token\" content=\"\(h($0.csrf))\">" } ?? "")
            <title>\(h(title)) · \(h(receiver))</title>
            <link rel="stylesheet" href="/static/app.css">
            <script src="/static/app.js" defer></script>
            \(head)</head>
            <body\(bodyClass.map { " class=\"\(h($0))\"" } ?? "")>
            \(body)
            </body>
            </html>

            """
    }

    /// The login page: the password form (when a password is set) and how to get a link.
    /// `next`: the page to go on to once logged in (a path of this site, which the door checks
    /// again when the form comes back: `WebDoor.returnPath`).
    public func login(hasPassword: Bool, message: String? = nil, next: String? = nil) -> String {
        let h = escapeHTML
        var body = "<h1>Log in</h1>\n"
        if let message { body += "<p class=\"error\" role=\"alert\">\(h(message))</p>\n" }
        if hasPassword {
            body += """
                <form class="login" method="post" action="/login">\
                \(next.map { "<input type=\"hidden\" name=\"next\" value=\"\(h($0))\">" } ?? "")
                <label>This device's name <input name="name" autocomplete="nickname" maxlength="64" placeholder="e.g. Anna's phone"></label>
                <label>Password <input type="password" name="password" autocomplete="current-password" required autofocus></label>
                <button type="submit">Log in</button>
                </form>

                """
        }
        body += """
            <p class="hint">On the receiver, <code>sudo ptk web-link</code> prints a one-time link and its QR code to scan\
            \(hasPassword ? "" : "; <code>sudo ptk web-password</code> sets a password for this page").</p>
            """
        return page("Log in", nil, body)
    }

    /// A gallery thumbnail's size in CSS pixels for `p` (its 180 rendition's): the img's
    /// width and height, so that the page does not move as thumbnails arrive.
    static func thumbnailSize(_ p: WebPhoto) -> (Int, Int)? {
        p.fitted(in: gallerySides[0]).map { ($0.width, $0.height) }
    }

    /// A photo no larger than its 1x thumbnail (an icon, pixel art): both its renditions are the
    /// photo itself, so it is offered once (no 2x), and shown at its own size in its cell, never
    /// stretched to the row's height (class "small").
    static func isSmall(_ p: WebPhoto) -> Bool {
        p.displayedSize.map { max($0.width, $0.height) <= gallerySides[0] } ?? false
    }

    /// The figure's attributes for the rows' layout (issue 58): its classes ("alpha" puts the
    /// checkerboard behind a photo with transparent pixels; "small", `isSmall`), and the photo's
    /// size as shown (`data-w`, `data-h`), from which app.js lays the rows out before any image
    /// arrives, at each photo's aspect ratio and never larger than its thumbnail's pixels cover
    /// at the screen's density; `data-side` is the largest thumbnail's side when it is not 360
    /// (the old 256-pixel one of a library made before issue 45).
    static func figureAttributes(_ p: WebPhoto) -> String {
        let classes = [p.checkerboard ? "alpha" : nil, p.hasThumbnail && isSmall(p) ? "small" : nil].compactMap { $0 }
        var attributes = classes.isEmpty ? "" : " class=\"\(classes.joined(separator: " "))\""
        if p.hasThumbnail, let (w, h) = p.displayedSize {
            attributes += " data-w=\"\(w)\" data-h=\"\(h)\"" + (p.oldThumbnail ? " data-side=\"256\"" : "")
        }
        return attributes
    }

    /// Photos on one page of the gallery: the first page opens at once however large the
    /// library; app.js appends the next page as its end scrolls into view (without script,
    /// "More photos" opens it).
    public static let pageSize = 200

    /// A page of the gallery: sections of thumbnails in rows at their own aspect ratio (app.js
    /// fills each row to the width, issue 58; without script they keep their 1x size), each
    /// loaded lazily (the browser fetches only those near the screen); filters by sender and
    /// rating. `firstContinues`: the first
    /// section goes on from the page before (it gets no title again). `more` is the query of
    /// the next page ("after=CURSOR&sender=..."), nil on the last. `matching` photos match the
    /// filters, of `total`.
    public func gallery(
        _ sections: [(title: String, photos: [WebPhoto])], firstContinues: Bool, matching: Int, total: Int,
        senders: [String], sender: String?, minRating: Int?, more: String?, viewer: Viewer
    ) -> String {
        let h = escapeHTML
        let shown = sections.reduce(0) { $0 + $1.photos.count }
        let filters = Self.filterQuery(sender: sender, minRating: minRating)
        var body =
            "<form class=\"filters\" method=\"get\" action=\"/\">\n<label>Sender <select name=\"sender\"><option value=\"\">everyone</option>"
        for s in senders { body += "<option value=\"\(h(s))\"\(s == sender ? " selected" : "")>\(h(s))</option>" }
        body += "</select></label>\n<label>Rating <select name=\"rating\"><option value=\"\">any</option>"
        for r in 1...5 {
            body +=
                "<option value=\"\(r)\"\(r == minRating ? " selected" : "")>\(String(repeating: "★", count: r)) and up</option>"
        }
        body += "</select></label>\n<button type=\"submit\">Show</button></form>\n"
        body +=
            "<h1 id=\"count\">\(matching == total ? "\(total) photo\(total == 1 ? "" : "s")" : "\(matching) of \(total) photos"), newest first</h1>\n"
        if shown == 0 && more == nil {
            body +=
                "<p class=\"hint\">\(total == 0 ? "No photos yet: <a href=\"/upload\">upload some</a>, or send them with ptk-send or LocalSend." : "No photo matches.")</p>\n"
        }
        body += "<div id=\"photos\">\n"
        body.reserveCapacity(shown * 300)
        for (i, section) in sections.enumerated() {
            if !section.title.isEmpty && !(i == 0 && firstContinues) { body += "<h2>\(h(section.title))</h2>\n" }
            body += "<div class=\"grid\">\n"
            for p in section.photos {
                var image =
                    "<span class=\"none\">\(h(p.problem ?? (p.indexed ? "no thumbnail" : "not indexed yet")))</span>"
                if p.hasThumbnail {
                    // 180 at 1x, 360 at 2x and 3x (app.js keeps each row within its thumbnails' pixels).
                    let (small, large) = (
                        h(Self.thumbnailURL(p, side: Self.gallerySides[0])),
                        h(Self.thumbnailURL(p, side: Self.gallerySides[1]))
                    )
                    let size = Self.thumbnailSize(p).map { " width=\"\($0.0)\" height=\"\($0.1)\"" } ?? ""
                    let srcset = Self.isSmall(p) ? "" : " srcset=\"\(small) 1x, \(large) 2x\""
                    image =
                        "<img src=\"\(small)\"\(srcset) alt=\"\(h(p.name))\"\(size) loading=\"lazy\" decoding=\"async\">"
                }
                if p.motionID != nil {
                    // A Live Photo's still (issue 58): its video is not an item of its own.
                    image += "<span class=\"badge live\" aria-label=\"Live Photo\">◉ LIVE</span>"
                } else if p.isVideo {
                    // Marked as a video, with its length when known (issue 58).
                    let length = p.duration.map { DurationText.clock($0) } ?? ""
                    image +=
                        "<span class=\"badge\" aria-label=\"video\(length.isEmpty ? "" : ", " + length)\">▶\(length.isEmpty ? "" : " " + length)</span>"
                }
                let rating =
                    p.rating.map {
                        "<span class=\"stars\" title=\"\($0)/5\">\(String(repeating: "★", count: $0))</span>"
                    } ?? ""
                // A long name is cut with an ellipsis (its whole text in the title).
                body +=
                    "<figure id=\"p\(p.id)\"\(Self.figureAttributes(p))><a href=\"\(h(Self.viewURL(p, filters: filters)))\">\(image)</a><figcaption><span class=\"name\" title=\"\(h(p.name))\">\(h(p.name))</span>\(rating)</figcaption></figure>\n"
            }
            body += "</div>\n"
        }
        if let more {
            body += "<p class=\"more\"><a id=\"more\" href=\"/?\(h(more))\">More photos</a></p>\n"
        }
        body += "</div>\n"
        return self.page("Photos", viewer, body)
    }

    /// A photo: the image, its details, and the forms that change it.
    public func photo(_ p: WebPhoto, details: [(String, DetailValue)], viewer: Viewer, message: String? = nil) -> String
    {
        let h = escapeHTML
        let csrf = "<input type=\"hidden\" name=\"csrf\" value=\"\(h(viewer.csrf))\">"
        var body = "<h1 id=\"name\">\(h(p.name))</h1>\n"
        if let message { body += "<p class=\"error\" role=\"alert\">\(h(message))</p>\n" }
        // The preview or the original (PNG, JPEG); a HEIC's thumbnail until its preview is made.
        if let shown = Self.shownImage(p) {
            let image = Self.imageTag(shown, alt: p.name, sizes: "(max-width: 1400px) 100vw, 1400px")
            let coming =
                shown.waiting
                ? "<p class=\"hint\" id=\"coming\">\(h(p.type.displayName)): preview coming; this is its thumbnail.</p>"
                : ""
            body +=
                "<div class=\"full\"><a href=\"\(h(Self.viewURL(p, filters: "")))\" title=\"Full screen\">\(image)</a>\(coming)</div>\n"
        }
        body += """
            <p class="downloads"><a href="/photo/\(p.id)/original?download=1" download>Download the original</a> \
            <a href="/photo/\(p.id)/package" download>Download as .ptk</a> \
            <a href="\(h(Self.viewURL(p, filters: "")))">Full screen</a></p>

            """
        body += Self.detailsTable(details)
        let ratingOptions = (["none"] + (0...5).map(String.init)).map { v -> String in
            let selected = (p.rating.map(String.init) ?? "none") == v ? " selected" : ""
            return "<option value=\"\(v)\"\(selected)>\(v == "none" ? "no rating" : "\(v)/5")</option>"
        }.joined()
        body += """
            <form class="change" method="post" action="/photo/\(p.id)/rename">\(csrf)
            <label>Name <input name="name" value="\(h(p.name))" required maxlength="1000"></label><button type="submit">Rename</button></form>
            <form class="change" method="post" action="/photo/\(p.id)/note">\(csrf)
            <label>Note <textarea name="note" rows="3" maxlength="10000">\(h(p.note ?? ""))</textarea></label><button type="submit">Save the note</button></form>
            <form class="change" method="post" action="/photo/\(p.id)/rate">\(csrf)
            <label>Rating <select name="rating">\(ratingOptions)</select></label><button type="submit">Rate</button></form>
            <p><a class="danger" id="delete" href="/photo/\(p.id)/delete">Delete…</a></p>

            """
        return page(p.name, viewer, body)
    }

    /// A photo's details as a table; a time as `<time datetime="ISO-UTC">... UTC</time>`, which
    /// app.js shows in the browser's time zone (named); without script it stays UTC, named.
    static func detailsTable(_ details: [(String, DetailValue)]) -> String {
        let h = escapeHTML
        var table = "<table class=\"details\">\n"
        for (key, value) in details {
            switch value {
            case .text(let text): table += "<tr><th>\(h(key))</th><td>\(h(text))</td></tr>\n"
            case .time(let time):
                table +=
                    "<tr><th>\(h(key))</th><td><time datetime=\"\(h(time.iso8601))\">\(h(time.description))</time></td></tr>\n"
            }
        }
        return table + "</table>\n"
    }

    /// "Delete this photo?" with the button that does it.
    public func confirmDelete(_ p: WebPhoto, viewer: Viewer) -> String {
        let h = escapeHTML
        var body = "<h1>Delete \(h(p.name))?</h1>\n"
        if p.hasThumbnail {
            body += "<p><img src=\"\(h(Self.thumbnailURL(p, side: Self.gallerySides[0])))\" alt=\"\(h(p.name))\"></p>\n"
        }
        body += """
            <p>The photo, its entry in the library and its thumbnail are deleted from the receiver\(p.motionID == nil ? "" : ", and so is its Live Photo video (unless another photo shows it too)"). \
            This cannot be undone.</p>
            <form method="post" action="/photo/\(p.id)/delete"><input type="hidden" name="csrf" value="\(h(viewer.csrf))">
            <button type="submit" class="danger" id="confirm">Delete</button> <a href="/photo/\(p.id)">Cancel</a></form>

            """
        return page("Delete " + p.name, viewer, body)
    }

    /// The upload page: a file picker and a drop zone; app.js sends each file with a progress bar.
    public func upload(types: [PhotoType], maxFileSize: Int64, viewer: Viewer) -> String {
        let h = escapeHTML
        let accept = Array(Set(types.flatMap { [$0.mediaType] + $0.endings })).sorted().joined(separator: ",")
        let names = types.map(\.displayName).joined(separator: ", ")
        let body = """
            <h1>Upload photos</h1>
            <p class="hint">\(h(names)) up to \(h(formatBytes(Double(maxFileSize)))) each. They are saved on \(h(receiver)) as from “web: \(h(viewer.name))”.</p>
            <div id="drop" class="drop"><label>Choose photos <input type="file" id="files" name="files" multiple accept="\(h(accept))"></label>
            <p>or drop them here</p></div>
            <ul id="queue" class="queue"></ul>

            """
        return page("Upload", viewer, body)
    }

    /// A page saying what went wrong (404, 400, ...), with the way back.
    public func error(_ message: String, viewer: Viewer?) -> String {
        page("Error", viewer, "<h1>\(escapeHTML(message))</h1>\n<p><a href=\"/\">Back to the photos</a></p>\n")
    }
}
