import PTKVocabulary

/// The viewer (`/view/ID`): one photo filling the screen, previous and next as links (app.js
/// adds the arrow keys, Escape and swipes), the way back to its place in the gallery, and its
/// details a tap away.
extension WebPages {
    /// The viewer page of `p`. `previous` and `next` are its neighbours in the gallery's order
    /// under the filters (nil at the ends); `filters` is their query ("sender=...&rating=3",
    /// percent-encoded, "" for none), carried by every link so that the viewer walks what the
    /// gallery showed. Closing goes back to the gallery at the photo's figure (`#pID`: app.js
    /// loads the gallery's pages until it is there).
    public func view(
        _ p: WebPhoto, details: [(String, DetailValue)], previous: WebPhoto?, next: WebPhoto?, filters: String,
        viewer: Viewer
    ) -> String {
        let h = escapeHTML
        var body = "<main class=\"stage\(p.isVideo ? " video" : "")\(p.motionID != nil ? " live" : "")\">\n"
        if p.isVideo {
            body += Self.videoTag(p) + "\n"
        } else if let shown = Self.shownImage(p) {
            body += Self.imageTag(shown, alt: p.name, sizes: Self.viewerSizes(p)) + "\n"
            if p.motionID != nil { body += Self.motionTag(p) + "\n" }
            if shown.waiting {
                body +=
                    "<p class=\"coming\" id=\"coming\">\(h(p.type.displayName)): preview coming; this is its thumbnail.</p>\n"
            }
        } else {
            body +=
                "<p class=\"coming\" id=\"coming\">\(h(p.problem ?? (p.indexed ? "No image to show" : "Not indexed yet")))</p>\n"
        }
        body += "</main>\n<nav class=\"controls\" aria-label=\"Photos\">\n"
        let gallery = "/" + (filters.isEmpty ? "" : "?" + filters) + "#p\(p.id)"
        body +=
            "<a id=\"close\" class=\"close\" href=\"\(h(gallery))\" title=\"Back to the photos (Escape)\">✕<span> Photos</span></a>\n"
        for (link, label, key, neighbour) in [("prev", "Previous", "←", previous), ("next", "Next", "→", next)] {
            guard let neighbour else { continue }
            // The neighbour's image, for app.js to load before it is asked for.
            var preload = ""
            if let shown = Self.shownImage(neighbour) {
                preload =
                    " data-src=\"\(h(shown.src))\""
                    + (shown.srcset.map { " data-srcset=\"\(h($0))\" data-sizes=\"\(h(Self.viewerSizes(neighbour)))\"" }
                        ?? "")
            }
            body +=
                "<a id=\"\(link)\" class=\"step \(link)\" rel=\"\(link)\" href=\"\(h(Self.viewURL(neighbour, filters: filters)))\" "
                + "title=\"\(label) (\(key))\" aria-label=\"\(label): \(h(neighbour.name))\"\(preload)>\(link == "prev" ? "‹" : "›")</a>\n"
        }
        body += """
            </nav>
            <details class="info"><summary>Details</summary>
            <h1 id="name">\(h(p.name))</h1>
            \(Self.detailsTable(details))<p><a href="/photo/\(p.id)" id="edit">Rename, note, rate or delete…</a> \
            <a href="/photo/\(p.id)/original?download=1" download>Download the original</a></p>
            </details>

            """
        return document(p.name, viewer, bodyClass: "viewer", body)
    }

    /// A video's player (issue 58): the original over Range requests, its poster (the
    /// preview) first, nothing loaded but its description until it is played; and, hidden,
    /// what app.js shows instead when the browser cannot play its codec: the poster, why, and
    /// the download. ptk converts no video (a small receiver has not the processor for it).
    static func videoTag(_ p: WebPhoto) -> String {
        let h = escapeHTML
        let poster = p.hasPreview ? " poster=\"\(h(previewURL(p)))\"" : ""
        let codecs = p.codec.flatMap(VideoCodec.browserCodec).map { " data-codecs=\"\(h($0))\"" } ?? ""
        let codec = p.codec.map { VideoCodec.commonName($0) + " " } ?? ""
        let still = shownImage(p).map { imageTag($0, alt: p.name, sizes: viewerSizes(p)) } ?? ""
        return """
            <video id="video" controls playsinline preload="metadata"\(poster) src="/photo/\(p.id)/original"\(codecs) \
            aria-label="\(h(p.name))"></video>
            <div id="cannot" class="cannot" hidden>\(still)<p>This browser cannot play this \(h(codec))video. \
            <a href="/photo/\(p.id)/original?download=1" download>Download it</a> to play it in a video player; \
            ptk keeps videos as they came and converts none.</p></div>
            """
    }

    /// A Live Photo's motion (issue 58): its video over the still, hidden and not loaded until
    /// app.js plays it (muted, from the start) while the LIVE button is hovered or the photo is
    /// pressed, or once on the button's click; the button says so when the browser cannot play
    /// it (an iPhone's HEVC in Chromium on Linux).
    static func motionTag(_ p: WebPhoto) -> String {
        guard let id = p.motionID else { return "" }
        let h = escapeHTML
        let codecs = p.motionCodec.flatMap(VideoCodec.browserCodec).map { " data-codecs=\"\(h($0))\"" } ?? ""
        return """
            <video id="motion" class="motion" muted playsinline preload="none" src="/photo/\(id)/original"\(codecs) \
            aria-label="\(h(p.name)): its Live Photo" hidden></video>
            <button id="live" class="live" type="button" title="Live Photo: hover, or press and hold the photo">◉ LIVE</button>
            """
    }

    /// How wide the viewer shows `p` (contained in the screen): the screen's width, or less for
    /// a photo taller than the screen's shape ("min(100vw, calc(100vh * 3 / 4))" for a portrait
    /// 3:4 one), so that a browser takes the preview, not the original, when that is enough.
    static func viewerSizes(_ p: WebPhoto) -> String {
        guard let size = p.displayedSize, size.width > 0, size.height > 0 else { return "100vw" }
        return "min(100vw, calc(100vh * \(size.width) / \(size.height)))"
    }
}
