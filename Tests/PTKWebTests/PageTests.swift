import Foundation
import PTKLibrary
import PTKPhotoPages
import PTKProtocol
import PTKSystem
import PTKTestTags
import PTKVocabulary
import PTKWeb
import Testing

@Suite("Web pages", .tags(.unit))
struct PageTests {
    let pages = WebPages(receiver: "living<room>", fingerprint: "ab12cd")
    let viewer = WebPages.Viewer(name: "Anna\"<b>", csrf: "tok\"en")
    static let hostile = "<img src=x onerror=alert(1)>"

    func photo(_ id: Int64, _ name: String, day: Int = 1) -> Photo {
        var p = Photo(id: id, name: name, size: 1000, received: WallTime(seconds: 1_700_000_000 + Int64(day) * 86_400))
        p.width = 400
        p.height = 200
        p.indexed = true
        p.hasThumbnail = true
        p.sha256 = String(repeating: "a", count: 64)
        return p
    }

    @Test("names, notes, senders, filters and the viewer stay text in every page")
    func escaping() {
        var p = photo(1, Self.hostile + ".png")
        p.note = "</textarea><script>alert(2)</script>"
        p.senderName = "web: <script>alert(3)</script>"
        let sections = WebPhoto.grouped([p].map(WebPhoto.init))
        let gallery = pages.gallery(
            sections, firstContinues: false, matching: 1, total: 1, senders: [p.senderName!], sender: p.senderName,
            minRating: nil, more: nil, viewer: viewer)
        let page = pages.photo(WebPhoto(p), details: p.details(thumbnailFolder: "/t"), viewer: viewer)
        let confirm = pages.confirmDelete(WebPhoto(p), viewer: viewer)
        let login = pages.login(hasPassword: true, message: Self.hostile)
        let upload = pages.upload(types: [.png], maxFileSize: 1 << 20, viewer: viewer)
        for html in [gallery, page, confirm, login, upload, pages.error(Self.hostile, viewer: viewer)] {
            #expect(!html.contains("<img src=x"))
            #expect(!html.contains("<script>"))
            #expect(!html.contains("</textarea><script>"))
            #expect(!html.contains("living<room>"))
            #expect(!html.contains("tok\"en"))
            #expect(!html.contains("Anna\"<b>"))
            // No inline script or style anywhere: the policy would block it, and none is needed.
            #expect(
                !html.contains("<script>") && !html.contains("<style") && !html.contains(" style=")
                    && !html.contains(" onclick"))
        }
        #expect(page.contains("&lt;/textarea&gt;&lt;script&gt;alert(2)&lt;/script&gt;"))
        #expect(gallery.contains("&lt;img src=x onerror=alert(1)&gt;.png"))
    }

    @Test("the gallery loads thumbnails lazily, sized, newest section first, with the filters kept")
    func gallery() {
        var a = photo(1, "old.png", day: 1)
        a.senderName = "Bob"
        var b = photo(2, "new.png", day: 2)
        b.rating = 4
        b.senderName = "Anna"
        let html = pages.gallery(
            WebPhoto.grouped([b, a].map(WebPhoto.init)), firstContinues: false, matching: 2, total: 3,
            senders: ["Anna", "Bob"], sender: "Anna", minRating: 4, more: nil, viewer: viewer)
        #expect(
            html.contains(
                "<img src=\"/photo/2/thumbnail/180?v=aaaaaaaaaaaa\" srcset=\"/photo/2/thumbnail/180?v=aaaaaaaaaaaa 1x, "
                    + "/photo/2/thumbnail/360?v=aaaaaaaaaaaa 2x\" alt=\"new.png\" width=\"180\" height=\"90\" loading=\"lazy\" decoding=\"async\">"
            ))
        // Each figure opens the viewer with the filters kept, and is the place the viewer comes back to.
        #expect(
            html.contains(
                "<figure id=\"p2\" data-w=\"400\" data-h=\"200\"><a href=\"/view/2?sender=Anna&amp;rating=4\">"))
        #expect(html.components(separatedBy: "new.png")[0].count < html.components(separatedBy: "old.png")[0].count)
        #expect(html.contains("<option value=\"Anna\" selected>Anna</option>"))
        #expect(html.contains("<option value=\"4\" selected>"))
        #expect(html.contains("2 of 3 photos"))
        #expect(html.contains("<span class=\"stars\" title=\"4/5\">★★★★</span>"))
    }

    @Test(
        "each figure carries its photo's size as shown for the rows' layout, the checkerboard class only when it has transparent pixels, a small photo offered once, a long name with its title (issue 58)"
    )
    func figuresForTheRows() {
        func figure(_ html: String, _ id: Int64) -> String {
            let start = html.range(of: "<figure id=\"p\(id)\"")!.lowerBound
            return String(html[start...].prefix { $0 != "\n" })
        }
        var opaque = photo(1, "landscape.jpg")
        (opaque.width, opaque.height, opaque.orientation) = (4032, 3024, 6)
        (opaque.thumbnailType, opaque.hasAlpha) = (.jpeg, false)
        var glass = photo(2, "glass.png")
        (glass.thumbnailType, glass.hasAlpha) = (.png, true)
        var icon = photo(3, "icon.png")
        (icon.width, icon.height, icon.thumbnailType, icon.hasAlpha) = (32, 32, .png, false)
        var unknown = photo(4, "old.png")
        (unknown.thumbnailType, unknown.hasOldThumbnail) = (.png, true)
        var waiting = photo(5, String(repeating: "a very long name ", count: 8) + ".png")
        (waiting.indexed, waiting.hasThumbnail, waiting.width, waiting.height) = (false, false, nil, nil)
        let html = pages.gallery(
            [("", [opaque, glass, icon, unknown, waiting].map(WebPhoto.init))], firstContinues: false, matching: 5,
            total: 5, senders: [], sender: nil, minRating: nil, more: nil, viewer: viewer)
        // Turned by its EXIF orientation: 3024 wide as shown.
        #expect(figure(html, 1).hasPrefix("<figure id=\"p1\" data-w=\"3024\" data-h=\"4032\"><a "))
        #expect(figure(html, 1).contains("width=\"135\" height=\"180\""))
        #expect(figure(html, 2).hasPrefix("<figure id=\"p2\" class=\"alpha\" data-w=\"400\" data-h=\"200\"><a "))
        #expect(figure(html, 3).hasPrefix("<figure id=\"p3\" class=\"small\" data-w=\"32\" data-h=\"32\"><a "))
        #expect(
            figure(html, 3).contains(
                "<img src=\"/photo/3/thumbnail/180?v=aaaaaaaaaaaa\" alt=\"icon.png\" width=\"32\" height=\"32\""),
            "its one file, no 2x: both renditions are the photo itself")
        // Not known yet (the old thumbnail, a PNG): the checkerboard, in case.
        #expect(
            figure(html, 4).hasPrefix(
                "<figure id=\"p4\" class=\"alpha\" data-w=\"400\" data-h=\"200\" data-side=\"256\"><a "))
        #expect(figure(html, 5).hasPrefix("<figure id=\"p5\"><a "), "no thumbnail, no size")
        #expect(figure(html, 5).contains("<span class=\"name\" title=\"\(waiting.name)\">\(waiting.name)</span>"))
    }

    @Test(
        "the static gallery: each thumbnail at its own 1x size (no square cells), the checkerboard class only behind transparent photos, names on one line (issue 58)"
    )
    func staticGalleryRows() {
        var opaque = photo(1, "wide.jpg")
        (opaque.thumbnailType, opaque.hasAlpha) = (.jpeg, false)
        var glass = photo(2, "glass.png")
        (glass.thumbnailType, glass.hasAlpha) = (.png, true)
        let html = StaticGallery.page(
            directory: "/srv/photos", photos: [opaque, glass].map(WebPhoto.init), photosLink: "..",
            thumbnailsLink: "thumbnails")
        #expect(
            html.contains(
                "<figure><a href=\"../wide.jpg\"><img src=\"thumbnails/1-360.jpg\" alt=\"wide.jpg\" width=\"180\" height=\"90\" loading=\"lazy\"></a>"
            ), "\(html)")
        #expect(html.contains("<figure class=\"alpha\"><a href=\"../glass.png\"><img src=\"thumbnails/2-360.png\""))
        #expect(html.components(separatedBy: "class=\"alpha\"").count == 2)
        #expect(html.contains(".name, .meta { overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }"))
        #expect(!html.contains("aspect-ratio: 1") && !html.contains("height: 200px"))
    }

    @Test(
        "a gallery page links the next one by its query, escaped; a section going on from the page before is not titled again"
    )
    func paging() {
        let photos = (0..<3).map { i -> Photo in photo(Int64(3 - i), "p\(3 - i).png", day: i < 2 ? 2 : 1) }
        let sections = WebPhoto.grouped(photos.map(WebPhoto.init))
        func figures(_ html: String) -> Int { html.components(separatedBy: "<figure ").count - 1 }
        func titles(_ html: String) -> Int { html.components(separatedBy: "<h2>").count - 1 }
        let one = self.pages.gallery(
            sections, firstContinues: false, matching: 450, total: 450, senders: [], sender: "Anna & co", minRating: 3,
            more: "after=7&sender=Anna%20%26%20co&rating=3", viewer: viewer)
        #expect(figures(one) == 3 && titles(one) == 2)
        #expect(
            one.contains("<a id=\"more\" href=\"/?after=7&amp;sender=Anna%20%26%20co&amp;rating=3\">More photos</a>"))
        let two = self.pages.gallery(
            sections, firstContinues: true, matching: 450, total: 450, senders: [], sender: nil, minRating: nil,
            more: nil, viewer: viewer)
        #expect(figures(two) == 3 && titles(two) == 1 && !two.contains("id=\"more\""))
    }

    @Test("every change form carries the CSRF token; the page has it for the script")
    func tokens() {
        let html = pages.photo(
            WebPhoto(photo(3, "a.png")), details: [], viewer: WebPages.Viewer(name: "x", csrf: "T0KEN"))
        // log out, rename, note, rate
        #expect(html.components(separatedBy: "name=\"csrf\" value=\"T0KEN\"").count - 1 == 4)
        #expect(html.contains("<meta name=\"csrf-token\" content=\"T0KEN\">"))
        #expect(
            pages.confirmDelete(WebPhoto(photo(3, "a.png")), viewer: WebPages.Viewer(name: "x", csrf: "T0KEN"))
                .contains("name=\"csrf\" value=\"T0KEN\""))
    }

    @Test(
        "a large PNG or JPEG without its preview is shown by its thumbnail, never its original; one over 24 megapixels is not offered beside its preview"
    )
    func noLargeOriginals() {
        var large = photo(6, "huge.png")
        (large.width, large.height) = (20_000, 20_000)
        let pending = WebPhoto(large)
        let shown = WebPages.shownImage(pending)
        #expect(
            shown?.src == WebPages.thumbnailURL(pending, side: 360) && shown?.srcset == nil && shown?.waiting == true)
        var none = pending
        none.hasThumbnail = false
        #expect(WebPages.shownImage(none) == nil, "over the pixel limit: nothing to show rather than the original")
        var previewed = pending
        previewed.hasPreview = true
        #expect(WebPages.shownImage(previewed)?.srcset == nil, "400 megapixels is not offered to a wide screen")
        var neighbour = WebPhoto(large)
        neighbour.id = 7
        let page = pages.view(pending, details: [], previous: nil, next: neighbour, filters: "", viewer: viewer)
        #expect(page.contains("data-src=\"/photo/7/thumbnail/360"), "the next photo preloads its thumbnail")
        #expect(!page.contains("original\"") && !page.contains("data-src=\"/photo/7/original"))
    }

    @Test(
        "a HEIC is shown by its preview, or its 360 thumbnail while the preview is coming; PNG and JPEG whole, or by preview and original in srcset"
    )
    func viewable() {
        let heic = pages.photo(WebPhoto(photo(4, "a.heic")), details: [], viewer: viewer)
        #expect(heic.contains("<img id=\"photo\" src=\"/photo/4/thumbnail/360?v=aaaaaaaaaaaa\" alt=\"a.heic\">"))
        #expect(heic.contains("HEIC: preview coming") && !heic.contains("cannot show"))
        var withPreview = WebPhoto(photo(4, "a.heic"))
        withPreview.hasPreview = true
        // A HEIC's original is no browser format: the preview alone. Its address changes once
        // the preview is made ("p"): the thumbnail made again with it is not the cached one.
        #expect(
            pages.photo(withPreview, details: [], viewer: viewer).contains(
                "<img id=\"photo\" src=\"/photo/4/preview?v=aaaaaaaaaaaap\" alt=\"a.heic\">"))
        #expect(WebPages.thumbnailURL(withPreview, side: 360) == "/photo/4/thumbnail/360?v=aaaaaaaaaaaap")
        #expect(
            WebPages.thumbnailURL(WebPhoto(photo(4, "a.heic")), side: 360) == "/photo/4/thumbnail/360?v=aaaaaaaaaaaa")
        // An upgraded library's old thumbnail has an address of its own, left when the new ones come.
        var old = WebPhoto(photo(4, "a.png"))
        old.oldThumbnail = true
        #expect(WebPages.thumbnailURL(old, side: 180) == "/photo/4/thumbnail/180?v=aaaaaaaaaaaao")
        #expect(
            pages.photo(WebPhoto(photo(4, "a.jpg")), details: [], viewer: viewer).contains(
                "<img id=\"photo\" src=\"/photo/4/original\" alt=\"a.jpg\">"))
        var large = photo(5, "big.jpg")
        (large.width, large.height) = (4032, 3024)
        var big = WebPhoto(large)
        big.hasPreview = true
        let page = pages.photo(big, details: [], viewer: viewer)
        #expect(
            page.contains(
                "<img id=\"photo\" src=\"/photo/5/preview?v=aaaaaaaaaaaa\" srcset=\"/photo/5/preview?v=aaaaaaaaaaaa 1440w, "
                    + "/photo/5/original 4032w\" sizes=\"(max-width: 1400px) 100vw, 1400px\" alt=\"big.jpg\">"))
        #expect(page.contains("<a href=\"/photo/5/original?download=1\" download>Download the original</a>"))
        #expect(page.contains("<a href=\"/view/5\">Full screen</a>"))
    }

    @Test("times are <time> in UTC, named, for app.js to show in the browser's zone; other details stay text")
    func times() {
        let details: [(String, DetailValue)] = [
            ("received", .time(WallTime(milliseconds: 1_764_665_700_123))), ("taken", .text("2024-05-06 07:08:09")),
        ]
        let page = pages.photo(WebPhoto(photo(3, "a.png")), details: details, viewer: viewer)
        #expect(
            page.contains(
                "<tr><th>received</th><td><time datetime=\"2025-12-02T08:55:00.123Z\">2025-12-02 08:55:00 UTC</time></td></tr>"
            ))
        #expect(page.contains("<tr><th>taken</th><td>2024-05-06 07:08:09</td></tr>"))
        #expect(String(decoding: WebAsset.js.bytes, as: UTF8.self).contains("timeZoneName: \"short\""))
    }

    func view(_ p: Photo, previous: Photo?, next: Photo?, filters: String = "") -> String {
        pages.view(
            WebPhoto(p), details: [("received", .time(p.received))], previous: previous.map(WebPhoto.init),
            next: next.map(WebPhoto.init),
            filters: filters, viewer: viewer)
    }

    @Test(
        "the viewer: the photo full screen, previous and next as links with the filters, none at the ends; close goes to the photo's figure"
    )
    func viewerPage() {
        let (a, b, c) = (photo(1, "a.png"), photo(2, "b.png"), photo(3, "c.heic"))
        let filters = WebPages.filterQuery(sender: "Anna & <co>", minRating: 3)
        #expect(filters == "sender=Anna%20%26%20%3Cco%3E&rating=3")
        let middle = view(b, previous: a, next: c, filters: filters)
        #expect(middle.contains("<body class=\"viewer\">"))
        #expect(middle.contains("<img id=\"photo\" src=\"/photo/2/original\" alt=\"b.png\">"))
        #expect(
            middle.contains(
                "<a id=\"prev\" class=\"step prev\" rel=\"prev\" href=\"/view/1?sender=Anna%20%26%20%3Cco%3E&amp;rating=3\""
            ))
        #expect(
            middle.contains(
                "<a id=\"next\" class=\"step next\" rel=\"next\" href=\"/view/3?sender=Anna%20%26%20%3Cco%3E&amp;rating=3\""
            ))
        // The next photo's image, for app.js to load ahead (a HEIC without preview: its thumbnail).
        #expect(middle.contains("data-src=\"/photo/3/thumbnail/360?v=aaaaaaaaaaaa\""))
        #expect(
            middle.contains("<a id=\"close\" class=\"close\" href=\"/?sender=Anna%20%26%20%3Cco%3E&amp;rating=3#p2\""))
        #expect(
            middle.contains("<details class=\"info\"><summary>Details</summary>")
                && middle.contains("<a href=\"/photo/2\" id=\"edit\">"))
        #expect(middle.contains("<time datetime=\""))
        let first = view(a, previous: nil, next: b)
        #expect(
            !first.contains("id=\"prev\"")
                && first.contains("<a id=\"next\" class=\"step next\" rel=\"next\" href=\"/view/2\""))
        #expect(first.contains("<a id=\"close\" class=\"close\" href=\"/#p1\""))
        let last = view(c, previous: b, next: nil)
        #expect(last.contains("id=\"prev\"") && !last.contains("id=\"next\""))
        #expect(last.contains("HEIC: preview coming"))
        let alone = view(a, previous: nil, next: nil)
        #expect(!alone.contains("id=\"prev\"") && !alone.contains("id=\"next\""))
        var large = photo(5, "big.png")
        (large.width, large.height) = (3000, 4000)
        var big = WebPhoto(large)
        big.hasPreview = true
        let shown = pages.view(big, details: [], previous: nil, next: nil, filters: "", viewer: viewer)
        // Contained in the screen: a portrait 3:4 photo is as wide as the screen's height allows,
        // so a browser takes the preview rather than the original where that is enough.
        #expect(
            shown.contains(
                "srcset=\"/photo/5/preview?v=aaaaaaaaaaaa 1080w, /photo/5/original 3000w\" sizes=\"min(100vw, calc(100vh * 3000 / 4000))\""
            ))
    }

    @Test("hostile names, senders and filters stay text in the viewer, its links and its data attributes")
    func hostileViewer() {
        var a = photo(1, Self.hostile + "\"'.png")
        a.senderName = "<script>alert(3)</script>"
        var b = photo(2, "\"><script>alert(4)</script>.png")
        b.note = "</details><script>alert(5)</script>"
        let html = view(
            b, previous: a, next: a,
            filters: WebPages.filterQuery(sender: "\"><script>alert(6)</script>", minRating: nil))
        #expect(!html.contains("<script>") && !html.contains("<img src=x") && !html.contains("\"\"><script"))
        #expect(!html.contains(" style=") && !html.contains(" onclick"))
        #expect(html.contains("aria-label=\"Previous: &lt;img src=x onerror=alert(1)&gt;&quot;&#39;.png\""))
        #expect(html.contains("sender=%22%3E%3Cscript%3Ealert%286%29%3C%2Fscript%3E"))
    }

    @Test("the footer shows the certificate's fingerprint as browsers do")
    func fingerprint() {
        #expect(colonHex("ab12cd") == "AB:12:CD")
        #expect(pages.login(hasPassword: false).contains("<code id=\"fingerprint\">AB:12:CD</code>"))
        #expect(!pages.login(hasPassword: false).contains("type=\"password\""))
        #expect(pages.login(hasPassword: true).contains("type=\"password\""))
    }
}
