import Foundation
import PTKLibrary
import PTKProtocol
import PTKSystem
import PTKWeb
import Testing

@Suite("Web pages")
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
        let gallery = pages.gallery(sections, firstContinues: false, matching: 1, total: 1, senders: [p.senderName!], sender: p.senderName, minRating: nil, more: nil, viewer: viewer)
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
            #expect(!html.contains("<script>") && !html.contains("<style") && !html.contains(" style=") && !html.contains(" onclick"))
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
        let html = pages.gallery(WebPhoto.grouped([b, a].map(WebPhoto.init)), firstContinues: false, matching: 2, total: 3, senders: ["Anna", "Bob"], sender: "Anna", minRating: 4, more: nil, viewer: viewer)
        #expect(html.contains("<img src=\"/photo/2/thumbnail?v=aaaaaaaaaaaa\" alt=\"new.png\" loading=\"lazy\" decoding=\"async\" width=\"256\" height=\"128\">"))
        #expect(html.components(separatedBy: "new.png")[0].count < html.components(separatedBy: "old.png")[0].count)
        #expect(html.contains("<option value=\"Anna\" selected>Anna</option>"))
        #expect(html.contains("<option value=\"4\" selected>"))
        #expect(html.contains("2 of 3 photos"))
        #expect(html.contains("<span class=\"stars\" title=\"4/5\">★★★★</span>"))
    }

    @Test("a gallery page links the next one by its query, escaped; a section going on from the page before is not titled again")
    func paging() {
        let photos = (0..<3).map { i -> Photo in photo(Int64(3 - i), "p\(3 - i).png", day: i < 2 ? 2 : 1) }
        let sections = WebPhoto.grouped(photos.map(WebPhoto.init))
        func figures(_ html: String) -> Int { html.components(separatedBy: "<figure>").count - 1 }
        func titles(_ html: String) -> Int { html.components(separatedBy: "<h2>").count - 1 }
        let one = self.pages.gallery(sections, firstContinues: false, matching: 450, total: 450, senders: [], sender: "Anna & co", minRating: 3,
                                     more: "after=7&sender=Anna%20%26%20co&rating=3", viewer: viewer)
        #expect(figures(one) == 3 && titles(one) == 2)
        #expect(one.contains("<a id=\"more\" href=\"/?after=7&amp;sender=Anna%20%26%20co&amp;rating=3\">More photos</a>"))
        let two = self.pages.gallery(sections, firstContinues: true, matching: 450, total: 450, senders: [], sender: nil, minRating: nil, more: nil, viewer: viewer)
        #expect(figures(two) == 3 && titles(two) == 1 && !two.contains("id=\"more\""))
    }

    @Test("every change form carries the CSRF token; the page has it for the script")
    func tokens() {
        let html = pages.photo(WebPhoto(photo(3, "a.png")), details: [], viewer: WebPages.Viewer(name: "x", csrf: "T0KEN"))
        #expect(html.components(separatedBy: "name=\"csrf\" value=\"T0KEN\"").count - 1 == 4)  // log out, rename, note, rate
        #expect(html.contains("<meta name=\"csrf-token\" content=\"T0KEN\">"))
        #expect(pages.confirmDelete(WebPhoto(photo(3, "a.png")), viewer: WebPages.Viewer(name: "x", csrf: "T0KEN")).contains("name=\"csrf\" value=\"T0KEN\""))
    }

    @Test("HEIC photos are shown by their thumbnail; PNG and JPEG whole")
    func viewable() {
        #expect(pages.photo(WebPhoto(photo(4, "a.heic")), details: [], viewer: viewer).contains("src=\"/photo/4/thumbnail\""))
        #expect(pages.photo(WebPhoto(photo(4, "a.jpg")), details: [], viewer: viewer).contains("src=\"/photo/4/original\""))
    }

    @Test("the footer shows the certificate's fingerprint as browsers do")
    func fingerprint() {
        #expect(colonHex("ab12cd") == "AB:12:CD")
        #expect(pages.login(hasPassword: false).contains("<code id=\"fingerprint\">AB:12:CD</code>"))
        #expect(!pages.login(hasPassword: false).contains("type=\"password\""))
        #expect(pages.login(hasPassword: true).contains("type=\"password\""))
    }
}
