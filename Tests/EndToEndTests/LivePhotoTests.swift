import Foundation
import PTKSystem
import PTKTestSupport
import PTKTestTags
import Testing

@Suite("End to end: Live Photos kept as one item (issue 58)", .serialized, .tags(.endToEnd))
struct LivePhotoEndToEndTests {
    static let identifier = "1F6A2C4E-0B3D-4E5F-8A9B-C0D1E2F3A4B5"

    @Test(
        "an iPhone's HEIC and HEVC MOV with one content identifier, and a JPEG and MOV with none but the same name, sent with ptk-send: saved identical, each pair one entry in ptk list and named in ptk show; export writes both packages, rm removes both and says so, import pairs them again"
    )
    func pairedThroughTheLibrary() throws {
        let d = try DaemonProcess([])
        let work = makeTemporaryDirectory("ptk-live")
        defer { removeTree(work) }
        try livePhoto(in: work, name: "IMG_0042", identifier: Self.identifier)
        try livePhoto(in: work, name: "IMG_0050", identifier: nil)
        // Without an identifier the name pairs them, with the times both were taken (1 s
        // apart): not the files' modification times (an hour apart here).
        for (file, time) in [("IMG_0050.JPG", "2026-11-30 08:15:07Z"), ("IMG_0050.MOV", "2026-11-30 09:15:07Z")] {
            #expect(try run("/usr/bin/touch", ["-d", time, work + "/" + file], absolute: true).status == 0)
        }
        let names = ["IMG_0042.HEIC", "IMG_0042.MOV", "IMG_0050.JPG", "IMG_0050.MOV"]
        let sent = try send(d, names.map { work + "/" + $0 })
        #expect(sent.status == 0, "\(sent.stderr)")
        #expect(waitForIndex(d, Set(names)))
        for name in names { #expect(readFile(d.dir + "/" + name) == readFile(work + "/" + name), "\(name) identical") }

        let still = try entry(d, "IMG_0042.HEIC")
        #expect(still["ContentIdentifier"] as? String == Self.identifier, "from Apple's MakerNote: \(still)")
        #expect(still["LivePhotoVideo"] as? String == "IMG_0042.MOV" && still["LivePhotoStill"] == nil, "\(still)")
        #expect(still["CameraMake"] as? String == "Apple" && still["Taken"] as? String == "2026-11-30T09:15:08+01:00")
        let motion = try entry(d, "IMG_0042.MOV")
        #expect(motion["ContentIdentifier"] as? String == Self.identifier, "from the MOV's metadata: \(motion)")
        #expect(motion["LivePhotoStill"] as? String == "IMG_0042.HEIC" && motion["Codec"] as? String == "hvc1")
        #expect(try entry(d, "IMG_0050.JPG")["LivePhotoVideo"] as? String == "IMG_0050.MOV")
        #expect(try entry(d, "IMG_0050.MOV")["ContentIdentifier"] == nil)

        let list = try library(d, ["list", "--sort", "name"])
        #expect(list.status == 0)
        let lines = list.stdout.split(separator: "\n")
        #expect(lines.count == 2, "one entry a Live Photo: \(list.stdout)")
        #expect(lines.first?.hasPrefix("IMG_0042.HEIC + IMG_0042.MOV  ") == true, "\(list.stdout)")
        #expect(lines.first?.contains("320x240 live 0:02") == true, "\(list.stdout)")
        #expect(lines.last?.hasPrefix("IMG_0050.JPG + IMG_0050.MOV  ") == true, "\(list.stdout)")
        #expect(
            list.stderr.contains("2 photos in \(d.dir) (2 of them Live Photos: each a still with its video)"),
            "\(list.stderr)")
        let show = try library(d, ["show", "IMG_0042.HEIC"])
        #expect(show.stdout.contains("live photo: its video is IMG_0042.MOV\n"), "\(show.stdout)")
        #expect(try library(d, ["show", "IMG_0042.MOV"]).stdout.contains("live photo: the video of IMG_0042.HEIC\n"))

        // ptk gallery: each Live Photo one entry, its still's, linking its video.
        let gallery = try library(d, ["gallery", "-o", work + "/gallery"])
        #expect(gallery.status == 0, "\(gallery.stderr)")
        let page = String(decoding: readFile(work + "/gallery/index.html") ?? [], as: UTF8.self)
        #expect(page.contains("2 photos in "), "two items")
        #expect(page.components(separatedBy: "Live Photo: <a href=").count == 3, "\(page)")
        #expect(!page.contains("title=\"IMG_0042.MOV\""), "the video is no entry of its own")

        let out = work + "/out"
        let exported = try library(d, ["export", "IMG_0042.HEIC", "-o", out])
        #expect(exported.status == 0, "\(exported.stderr)")
        #expect(
            exported.stdout == """
                exported 'IMG_0042.HEIC' to \(out)/IMG_0042.ptk
                exported 'IMG_0042.MOV' (its Live Photo video) to \(out)/IMG_0042 (motion).ptk

                """, "\(exported.stdout)")
        #expect(readFile(out + "/IMG_0042.ptk/photo.data") == readFile(work + "/IMG_0042.HEIC"))
        #expect(readFile(out + "/IMG_0042 (motion).ptk/photo.data") == readFile(work + "/IMG_0042.MOV"))

        let removed = try library(d, ["rm", "IMG_0042.HEIC"])
        #expect(removed.status == 0, "\(removed.stderr)")
        #expect(removed.stdout == "removed 'IMG_0042.HEIC'\nremoved 'IMG_0042.MOV' (its Live Photo video)\n")
        #expect(!fileExists(d.dir + "/IMG_0042.HEIC") && !fileExists(d.dir + "/IMG_0042.MOV"))
        // Removed by its own name, a motion goes alone: its still stays, a photo.
        let alone = try library(d, ["rm", "IMG_0050.MOV"])
        #expect(alone.stdout == "removed 'IMG_0050.MOV'\n")
        #expect(fileExists(d.dir + "/IMG_0050.JPG"))

        for package in ["IMG_0042.ptk", "IMG_0042 (motion).ptk"] {
            let i = try library(d, ["import", out + "/" + package])
            #expect(i.status == 0, "\(i.stderr)")
        }
        #expect(try entry(d, "IMG_0042.heic")["LivePhotoVideo"] as? String == "IMG_0042 (motion).mov")
        #expect(try library(d, ["list"]).stdout.split(separator: "\n").count == 2)
    }

    @Test(
        "a backup app's WebDAV upload of an iPhone's folder (a HEIC and its MOV with one identifier; a JPEG and a MOV of the same name without) pairs both in that folder, saved identical; the gallery counts two items"
    )
    func pairedThroughWebDAV() throws {
        let d = try DaemonProcess.withDAV()
        let work = makeTemporaryDirectory("ptk-live-dav")
        defer { removeTree(work) }
        try livePhoto(in: work, name: "IMG_0044", identifier: Self.identifier)
        try livePhoto(in: work, name: "IMG_0045", identifier: nil)
        let pw = try d.appPassword("backup-app", access: "upload")
        #expect(try curl(d, pw, ["-X", "MKCOL", d.davURL + "iPhone"]).status == 201)
        let files = ["IMG_0044.HEIC", "IMG_0044.MOV", "IMG_0045.JPG", "IMG_0045.MOV"]
        for name in files {
            let put = try curl(d, pw, ["-T", work + "/" + name, d.davURL + "iPhone/" + name])
            #expect(put.status == 201, "\(name): \(put.status) \(put.stderr)")
        }
        #expect(waitForIndex(d, Set(files.map { "iPhone/" + $0 })))
        for name in files { #expect(readFile(d.dir + "/iPhone/" + name) == readFile(work + "/" + name), "\(name)") }
        #expect(try entry(d, "iPhone/IMG_0044.HEIC")["LivePhotoVideo"] as? String == "iPhone/IMG_0044.MOV")
        #expect(try entry(d, "iPhone/IMG_0045.JPG")["LivePhotoVideo"] as? String == "iPhone/IMG_0045.MOV")
        let list = try library(d, ["list"])
        #expect(list.stdout.split(separator: "\n").count == 2, "\(list.stdout)")
        #expect(list.stderr.contains("(2 of them Live Photos"), "\(list.stderr)")
    }
}

/// A Live Photo in headless Chromium (Tests/Browser/live_photo_test.py through WebDriver),
/// against the real ptkd (issue 58).
@Suite(
    "End to end: Live Photos in a real browser (issue 58)", .serialized,
    .enabled(if: browserAvailable, browserMissing), .tags(.endToEnd))
struct LivePhotoBrowserTests {
    @Test(
        "the gallery shows each Live Photo as one item marked LIVE and never its video; the viewer plays the H.264 motion while LIVE is hovered or the photo pressed, then shows the still; an HEVC motion says this browser cannot play it"
    )
    func motionPlays() throws {
        let d = try DaemonProcess.withWeb()
        let work = makeTemporaryDirectory("ptk-live-browser")
        defer { removeTree(work) }
        try livePhoto(in: work, name: "IMG_0042", identifier: LivePhotoEndToEndTests.identifier, hevc: false)
        try livePhoto(in: work, name: "IMG_0043", identifier: "00000000-0000-4000-8000-000000000043")
        let beach = imageFile(work, "beach.png", width: 400, height: 300)
        let names = ["IMG_0042.HEIC", "IMG_0042.MOV", "IMG_0043.HEIC", "IMG_0043.MOV", "beach.png"]
        #expect(try send(d, names.dropLast().map { work + "/" + $0 } + [beach]).status == 0)
        #expect(waitForIndex(d, Set(names)))
        func id(_ name: String) throws -> String { String(try #require(try entry(d, name)["ID"] as? Int)) }
        try d.setWebPassword("right horse battery")
        try runBrowserScript(
            "live_photo_test.py",
            [
                "--base", "https://127.0.0.1:\(d.webPort)", "--password", "right horse battery",
                "--still", try id("IMG_0042.HEIC"), "--motion", try id("IMG_0042.MOV"),
                "--hevc-still", try id("IMG_0043.HEIC"), "--hevc-motion", try id("IMG_0043.MOV"),
            ], daemon: d)
    }
}
