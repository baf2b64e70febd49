import PTKLibrary
import PTKPhotoPages
import PTKSystem
import PTKTestTags
import PTKVocabulary
import PTKWeb
import Testing

/// How the pages show a Live Photo (issue 58): the gallery's LIVE mark on the still, the viewer's
/// motion over it, and the details' line naming the other half.
@Suite("Web pages: Live Photos", .tags(.unit))
struct LivePhotoPageTests {
    let pages = WebPages(receiver: "home", fingerprint: "ab12cd")
    let viewer = WebPages.Viewer(name: "Anna", csrf: "T0KEN")

    func still(_ id: Int64, _ name: String, motion: Int64?) -> Photo {
        var p = Photo(id: id, name: name, size: 2_500_000, received: WallTime(seconds: 1_700_000_000))
        (p.width, p.height) = (4032, 3024)
        (p.indexed, p.hasThumbnail, p.thumbnailType) = (true, true, .jpeg)
        (p.preview, p.previewType) = (.made, .jpeg)
        p.sha256 = String(repeating: "c", count: 64)
        p.motionID = motion
        return p
    }

    @Test("the gallery marks a Live Photo's still LIVE, not as a video; a photo without motion gets no mark")
    func badge() {
        let html = pages.gallery(
            WebPhoto.grouped(
                [still(1, "IMG_0042.HEIC", motion: 2), still(3, "beach.jpg", motion: nil)].map(WebPhoto.init)),
            firstContinues: false, matching: 2, total: 2, senders: [], sender: nil, minRating: nil, more: nil,
            viewer: viewer)
        #expect(html.contains("<span class=\"badge live\" aria-label=\"Live Photo\">◉ LIVE</span></a>"), "\(html)")
        #expect(html.components(separatedBy: "class=\"badge").count == 2, "one mark only")
        #expect(!html.contains("▶"))
    }

    @Test(
        "the viewer holds the still with its motion hidden and unloaded (the video's original, muted) and the LIVE button; the motion's codec is what the browser is asked; a name with markup stays text"
    )
    func viewerPage() {
        var shown = WebPhoto(still(1, "IMG_0042.HEIC", motion: 2))
        shown.motionCodec = "hvc1"
        let page = pages.view(shown, details: [], previous: nil, next: nil, filters: "", viewer: viewer)
        #expect(page.contains("<main class=\"stage live\">"))
        #expect(
            page.contains(
                "<video id=\"motion\" class=\"motion\" muted playsinline preload=\"none\" src=\"/photo/2/original\" "
                    + "data-codecs=\"hvc1.1.6.L120.90\" aria-label=\"IMG_0042.HEIC: its Live Photo\" hidden></video>"),
            "\(page)")
        #expect(page.contains("<button id=\"live\" class=\"live\" type=\"button\""))
        #expect(page.contains("<img id=\"photo\""), "the still itself is shown")
        let hostile = pages.view(
            WebPhoto(still(4, "<b>\"x\".heic", motion: 5)), details: [], previous: nil, next: nil, filters: "",
            viewer: viewer)
        #expect(hostile.contains("aria-label=\"&lt;b&gt;&quot;x&quot;.heic: its Live Photo\""))
        #expect(!hostile.contains("<b>\"x\""))
        let plain = pages.view(
            WebPhoto(still(6, "beach.jpg", motion: nil)), details: [], previous: nil, next: nil, filters: "",
            viewer: viewer)
        #expect(
            !plain.contains("id=\"motion\"") && !plain.contains("id=\"live\"")
                && plain.contains("<main class=\"stage\">"))
    }

    @Test("the details name the other half: the still's video, and the video's still")
    func details() {
        var motion = still(2, "IMG_0042.MOV", motion: nil)
        motion.stillID = 1
        let s = still(1, "IMG_0042.HEIC", motion: 2)
        let ofStill = s.details(thumbnailFolder: "", livePartner: motion)
        #expect(ofStill.contains { $0.0 == "live photo" && $0.1 == .text("its video is IMG_0042.MOV") })
        let ofMotion = motion.details(thumbnailFolder: "", livePartner: s)
        #expect(ofMotion.contains { $0.0 == "live photo" && $0.1 == .text("the video of IMG_0042.HEIC") })
        #expect(!s.details(thumbnailFolder: "").contains { $0.0 == "live photo" })
    }

    @Test("the static gallery (ptk gallery) links a Live Photo's video from its still's entry")
    func staticGallery() {
        var shown = WebPhoto(still(1, "a b/IMG_0042.HEIC", motion: 2))
        shown.motionName = "a b/IMG_0042.MOV"
        let html = StaticGallery.page(
            directory: "/srv/photos", photos: [shown, WebPhoto(still(3, "beach.jpg", motion: nil))], photosLink: "..",
            thumbnailsLink: "thumbnails")
        #expect(
            html.contains("<div class=\"meta\">Live Photo: <a href=\"../a%20b/IMG_0042.MOV\">its video</a></div>"),
            "\(html)")
        #expect(html.components(separatedBy: "Live Photo:").count == 2, "the other photo has none")
        #expect(html.contains("2 photos in /srv/photos"))
    }

    @Test("deleting a Live Photo's still says its video goes too; a photo's page says nothing of a video")
    func confirmDelete() {
        let live = pages.confirmDelete(WebPhoto(still(1, "IMG_0042.HEIC", motion: 2)), viewer: viewer)
        #expect(
            live.contains(
                "thumbnail are deleted from the receiver, and so is its Live Photo video (unless another photo shows it too). This cannot be undone."
            ), "\(live)")
        let plain = pages.confirmDelete(WebPhoto(still(3, "beach.jpg", motion: nil)), viewer: viewer)
        #expect(plain.contains("thumbnail are deleted from the receiver. This cannot be undone."), "\(plain)")
    }
}
