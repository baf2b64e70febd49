import PTKLibrary
import PTKPhotoPages
import PTKSystem
import PTKTestTags
import PTKVocabulary
import PTKWeb
import Testing

/// How the pages show a video (issue 58): the gallery's badge, the viewer's player and what
/// stands in for it when the browser cannot play the codec, the details' line.
@Suite("Web pages: videos", .tags(.unit))
struct VideoPageTests {
    let pages = WebPages(receiver: "home", fingerprint: "ab12cd")
    let viewer = WebPages.Viewer(name: "Anna", csrf: "T0KEN")

    func video(_ id: Int64, _ name: String, codec: String? = "avc1", duration: Double? = 12.4) -> Photo {
        var p = Photo(id: id, name: name, size: 12_500_000, received: WallTime(seconds: 1_700_000_000))
        (p.width, p.height, p.orientation) = (1920, 1080, 6)
        (p.indexed, p.hasThumbnail, p.thumbnailType) = (true, true, .jpeg)
        (p.preview, p.previewType) = (.made, .jpeg)
        p.sha256 = String(repeating: "b", count: 64)
        (p.duration, p.codec, p.frameRate) = (duration, codec, 29.97)
        return p
    }

    @Test("the gallery marks a video with its length, and a photo not at all")
    func badge() {
        var photo = video(3, "a.jpg")
        (photo.duration, photo.codec) = (nil, nil)
        let html = pages.gallery(
            WebPhoto.grouped([video(1, "VID.mp4"), video(2, "IMG.MOV", duration: nil), photo].map(WebPhoto.init)),
            firstContinues: false, matching: 3, total: 3, senders: [], sender: nil, minRating: nil, more: nil,
            viewer: viewer)
        #expect(html.contains("<span class=\"badge\" aria-label=\"video, 0:12\">▶ 0:12</span></a>"))
        #expect(html.contains("<span class=\"badge\" aria-label=\"video\">▶</span></a>"), "no length known")
        #expect(html.components(separatedBy: "class=\"badge\"").count == 3, "the photo has none")
    }

    @Test("the static gallery (ptk gallery) says a video and its length beside its size")
    func staticGallery() {
        let html = StaticGallery.page(
            directory: "/srv/photos",
            photos: [video(1, "VID.mp4"), video(2, "a.jpg", codec: nil, duration: nil)]
                .map(WebPhoto.init), photosLink: "..", thumbnailsLink: "thumbnails")
        #expect(html.contains("1080x1920 · video 0:12</div>"), "\(html)")
        #expect(html.components(separatedBy: "· video").count == 2, "the photo is not said to be one")
    }

    @Test(
        "the viewer plays a video from its original with its poster first, says which codec a browser is asked for, and holds the poster, the reason and the download for a browser that cannot play it"
    )
    func player() {
        let page = pages.view(
            WebPhoto(video(7, "IMG_0042.MOV", codec: "hvc1")), details: [], previous: nil, next: nil, filters: "",
            viewer: viewer)
        #expect(page.contains("<main class=\"stage video\">"))
        #expect(
            page.contains(
                "<video id=\"video\" controls playsinline preload=\"metadata\" poster=\"/photo/7/preview?v=bbbbbbbbbbbb\" "
                    + "src=\"/photo/7/original\" data-codecs=\"hvc1.1.6.L120.90\" aria-label=\"IMG_0042.MOV\"></video>")
        )
        #expect(
            page.contains(
                "<div id=\"cannot\" class=\"cannot\" hidden><img id=\"photo\" src=\"/photo/7/preview?v=bbbbbbbbbbbb\""))
        #expect(page.contains("This browser cannot play this HEVC video."))
        #expect(page.contains("<a href=\"/photo/7/original?download=1\" download>Download it</a>"))
        // A coding ptk has no browser name for: the browser tries, and app.js falls back on an error.
        let unknown = pages.view(
            WebPhoto(video(8, "x.mp4", codec: "apch")), details: [], previous: nil, next: nil, filters: "",
            viewer: viewer)
        #expect(unknown.contains("src=\"/photo/8/original\" aria-label=\"x.mp4\"></video>"))
        #expect(unknown.contains("cannot play this ProRes 422 HQ video"))
        // A photo still gets its image, no player.
        var photo = video(9, "a.jpg", codec: nil, duration: nil)
        photo.frameRate = nil
        let still = pages.view(WebPhoto(photo), details: [], previous: nil, next: nil, filters: "", viewer: viewer)
        #expect(!still.contains("<video") && still.contains("<main class=\"stage\">"))
    }

    @Test("a hostile codec or name stays text in the player and its fallback")
    func hostile() {
        var p = video(5, "<img src=x onerror=alert(1)>.mp4", codec: "\"><b")
        p.codec = "\"><b"
        let page = pages.view(WebPhoto(p), details: [], previous: nil, next: nil, filters: "", viewer: viewer)
        #expect(!page.contains("<img src=x"))
        #expect(!page.contains("\"><b"))
    }

    @Test("ptk show's video line: type, size as shown, length, codec, frame rate, bit rate")
    func detailsLine() {
        let p = video(1, "VID.mp4")
        let line = p.details(thumbnailFolder: "/t").first { $0.0 == "video" }?.1
        #expect(line == .text("MP4, 1080x1920, 12.4 s, H.264 (avc1), 29.97 frames/s, 8.1 Mbit/s"))
        var bare = Photo(id: 2, name: "x.mov", size: 1, received: WallTime(seconds: 0))
        bare.indexed = true
        #expect(bare.details(thumbnailFolder: "/t").first { $0.0 == "video" }?.1 == .text("MOV, facts unknown"))
        #expect(!bare.details(thumbnailFolder: "/t").contains { $0.0 == "image" })
    }

    @Test("durations as a player and as people read them; decimals without trailing zeros; hostile numbers bounded")
    func durations() {
        #expect(DurationText.clock(0) == "0:00")
        #expect(DurationText.clock(7.4) == "0:07")
        #expect(DurationText.clock(245) == "4:05")
        #expect(DurationText.clock(3723) == "1:02:03")
        #expect(DurationText.clock(-5) == "0:00")
        #expect(DurationText.clock(.nan) == "0:00")
        #expect(DurationText.clock(.infinity) == "277777:46:40")
        #expect(DurationText.spoken(12.46) == "12.5 s")
        #expect(DurationText.spoken(59.96) == "1:00")
        #expect(DurationText.decimal(29.97, places: 2) == "29.97")
        #expect(DurationText.decimal(30, places: 2) == "30")
        #expect(DurationText.decimal(8.04, places: 1) == "8")
        #expect(DurationText.decimal(0.05, places: 2) == "0.05")
        #expect(DurationText.decimal(1e300, places: 9) == "1000000000000")
    }

    @Test("codecs: four letters or digits only; common names; the codecs a browser is asked about")
    func codecs() {
        #expect(VideoCodec.fourCC("avc1") == "avc1")
        #expect(VideoCodec.fourCC("mp4v") == "mp4v")
        #expect(VideoCodec.fourCC("raw ") == "raw ")
        for bad in ["avc", "avc1x", "\"><b", "a\u{0}c1", "é123", ""] {
            #expect(VideoCodec.fourCC(bad) == nil, "\(bad)")
        }
        #expect(VideoCodec.commonName("hev1") == "HEVC")
        #expect(VideoCodec.commonName("avc3") == "H.264")
        #expect(VideoCodec.commonName("abcd") == "abcd")
        #expect(VideoCodec.browserCodec("avc1") == "avc1.640028")
        #expect(VideoCodec.browserCodec("apcn") == nil)
        #expect(VideoCodec.browserCodec("abcd") == nil)
    }
}
