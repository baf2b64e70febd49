import Foundation
import Glibc
import PTKProtocol
import PTKSystem
import PTKTestSupport
import PTKTestTags
import PTKVocabulary
import Testing

@testable import PTKLibrary

/// The modification time of `path`, in milliseconds.
private func mtime(_ path: String) -> Int64? {
    var st = stat()
    guard stat(path, &st) == 0 else { return nil }
    return Int64(st.st_mtim.tv_sec) * 1000 + Int64(st.st_mtim.tv_nsec) / 1_000_000
}

@Suite("End to end: the day taken and the file's own time (issue 27, EXIF and mtimes)", .tags(.endToEnd))
struct PhoneFactsTests {
    @Test(
        "mtimes travel: ptk-send sends each file's (OFFER.modified), LocalSend's metadata.modified is read, a .ptk round trip keeps it; a time more than a day ahead is ignored"
    )
    func modifiedTimes() throws {
        let d = try DaemonProcess.withLocalSend()
        let src = photo(d.root, "old.png", size: 20_000, seed: 1)
        var times = [
            timespec(tv_sec: 1_588_760_000, tv_nsec: 250_000_000),
            timespec(tv_sec: 1_588_760_000, tv_nsec: 250_000_000),
        ]
        #expect(utimensat(AT_FDCWD, src, &times, 0) == 0)
        #expect(try send(d, [src]).status == 0)
        #expect(mtime(d.dir + "/old.png") == 1_588_760_000_250)
        // LocalSend: the app's ISO 8601 time.
        let app = try LocalSendApp(port: d.localSendPort)
        let f = pngFile("f1", "phone.png", size: 10_000, seed: 2)
        let (status, json) = try app.prepare([f], modified: "2021-03-04T05:06:07.890Z")
        #expect(status == 200)
        let (session, tokensByFile) = tokens(json)
        #expect(
            try app.upload(session: session, fileID: "f1", token: tokensByFile["f1"] ?? "", bytes: f.bytes).status
                == 200)
        #expect(mtime(d.dir + "/phone.png") == WallTime(iso8601: "2021-03-04T05:06:07.890Z")!.milliseconds)
        // A time two days ahead is not believed: the file keeps the time it was written.
        let raw = try RawPeer(port: d.port)
        try raw.hello()
        let bytes = makePNG(size: 5_000, seed: 3)
        let ahead = WallTime.now.milliseconds + 2 * 86_400_000
        try raw.send(
            .offer(Offer(name: "ahead.png", size: Int64(bytes.count), sha256: sha256Hex(bytes), modified: ahead)))
        #expect(try raw.receive() == .accept(Accept(offset: 0)))
        try raw.send(.chunk(bytes))
        #expect(try raw.receive() == .ack)
        try raw.send(.done)
        guard case .saved? = try raw.receive() else {
            Issue.record("not saved")
            return
        }
        #expect(abs((mtime(d.dir + "/ahead.png") ?? 0) - WallTime.now.milliseconds) < 60_000)
        // ptk show gives it; export keeps it in photo.metadata; import and ptk-send of the package restore it.
        #expect(waitForIndex(d, ["old.png", "phone.png", "ahead.png"]))
        #expect(
            try library(d, ["show", "old"], environment: ["TZ": "UTC"]).stdout.contains(
                "modified:  2020-05-06 10:13:20 UTC"))
        let out = d.root + "/out"
        try makeDirectories(out)
        #expect(try library(d, ["export", "old", "-o", out]).status == 0)
        let meta = String(decoding: readFile(out + "/old.ptk/photo.metadata") ?? [], as: UTF8.self)
        #expect(meta.contains("\"Modified\" : \"2020-05-06T10:13:20.250Z\""), "\(meta)")
        #expect(try library(d, ["rm", "old"]).status == 0)
        #expect(try library(d, ["import", out + "/old.ptk"]).status == 0)
        #expect(mtime(d.dir + "/old.png") == 1_588_760_000_250)
        #expect(try library(d, ["rm", "old"]).status == 0)
        #expect(try send(d, [out + "/old.ptk"]).status == 0)
        #expect(mtime(d.dir + "/old.png") == 1_588_760_000_250)
    }

    @Test(
        "a portrait JPEG from a phone: listed upright with the day taken, shown with the camera; location only as yes; sorted by taken"
    )
    func portraitFromAPhone() throws {
        let d = try DaemonProcess.withLocalSend(["--types", "image/png,image/jpeg"])
        let jpeg = jpegWithEXIF(
            makeJPEG(width: 400, height: 200),
            exifTIFF(
                EXIFFields(
                    orientation: 6, taken: "2024:07:03 14:22:05", offset: "+02:00", make: "Google", model: "Pixel 8",
                    gps: true)))
        let app = try LocalSendApp(port: d.localSendPort, alias: "Pixel 8")
        let file = (id: "p", name: "PXL_1.jpg", bytes: jpeg, type: "image/jpeg", hash: Optional(sha256Hex(jpeg)))
        let (status, json) = try app.prepare([file])
        #expect(status == 200)
        let (session, tokensByFile) = tokens(json)
        #expect(
            try app.upload(session: session, fileID: "p", token: tokensByFile["p"] ?? "", bytes: jpeg).status == 200)
        #expect(try send(d, [photo(d.root, "screen.png", size: 8_000, seed: 4)]).status == 0)
        #expect(waitForIndex(d, ["PXL_1.jpg", "screen.png"]))
        // Taken at 14:22 at +02:00: listed in the host's zone (here UTC, named).
        let list = try library(d, ["list", "--sort", "taken"], environment: ["TZ": "UTC"]).stdout
        let lines = list.split(separator: "\n")
        #expect(
            lines.count == 2 && lines[0].hasPrefix("PXL_1.jpg") && lines[0].contains("200x400")
                && lines[0].contains("2024-07-03 12:22 UTC"), "\(list)")
        let shown = try library(d, ["show", "PXL_1"], environment: ["TZ": "UTC"]).stdout
        for line in [
            "taken:     2024-07-03 12:22:05 UTC", "camera:    Google Pixel 8",
            "location:  recorded in the photo (not shown)",
            "200x400", "stored 400x200, EXIF orientation 6: turned 90° clockwise",
        ] {
            #expect(shown.contains(line), "\(line) in \(shown)")
        }
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(try library(d, ["show", "PXL_1", "--json"]).stdout.utf8))
                as? [String: Any])
        #expect(object["HasLocation"] as? Bool == true && object["Taken"] as? String == "2024-07-03T14:22:05+02:00")
        #expect(
            object["DisplayWidth"] as? Int == 200 && object["DisplayHeight"] as? Int == 400
                && object["Width"] as? Int == 400)
        #expect(!object.keys.contains { $0.lowercased().contains("gps") || $0.lowercased().contains("latitude") })
        #expect(try library(d, ["gallery"]).status == 0)
        let page = String(decoding: readFile(d.dir + "/.ptk/gallery/index.html") ?? [], as: UTF8.self)
        #expect(
            page.contains("<h2>2024-07-03</h2>") && page.contains("taken 2024-07-03 14:22"),
            "the gallery groups by the day taken")
    }
}

@Suite("End to end: HEIC and true colour from a phone (issue 27)", .tags(.endToEnd))
struct PhoneHEICTests {
    @Test(
        "LocalSend's default types take an iPhone's HEIC (turned by EXIF or irot) and a Display P3 PNG; thumbnails are the library's own; one libheif cannot open gets 400 and leaves nothing"
    )
    func heicAndColourThroughLocalSend() throws {
        let d = try DaemonProcess.withLocalSend()
        let app = try LocalSendApp(port: d.localSendPort, alias: "iPhone")
        func file(_ id: String, _ name: String, _ fixture: String, _ type: String) throws -> (
            id: String, name: String, bytes: [UInt8], type: String, hash: String?
        ) {
            let bytes = try #require(readFile(fixturePath(fixture)))
            return (id, name, bytes, type, sha256Hex(bytes))
        }
        let files = [
            try file("a", "IMG_0001.HEIC", "heif/portrait-exif.heic", "image/heic"),
            try file("b", "IMG_0002.HEIC", "heif/rotated.heic", "image/heic"),
            try file("c", "IMG_0003.HEIC", "heif/display-p3-icc.heic", "image/heic"),
            try file("d", "screenshot.png", "heif/display-p3.png", "image/png"),
        ]
        let grid = heifGrid(rows: 256, columns: 256, width: 4096)
        let bad = (id: "e", name: "IMG_0004.HEIC", bytes: grid, type: "image/heic", hash: Optional(sha256Hex(grid)))
        let (status, json) = try app.prepare(files + [bad])
        #expect(status == 200)
        let (session, tokensByFile) = tokens(json)
        #expect(tokensByFile.count == 5, "every file is accepted by default: \(json)")
        for f in files {
            #expect(
                try app.upload(session: session, fileID: f.id, token: tokensByFile[f.id] ?? "", bytes: f.bytes).status
                    == 200, "\(f.name)")
            #expect(readFile(d.dir + "/" + f.name) == f.bytes, "\(f.name) byte-identical")
        }
        let refused = try app.upload(session: session, fileID: "e", token: tokensByFile["e"] ?? "", bytes: grid)
        #expect(refused.status == 400)
        #expect(refused.body.contains("not a well-formed HEIC: over 4096 item references"), "\(refused.body)")
        #expect(!fileExists(d.dir + "/IMG_0004.HEIC"))
        #expect(listDirectory(d.dir + "/.incoming").isEmpty)
        #expect(eventually { d.log.contains("IMG_0004.HEIC") && d.log.contains("over 4096 item references") })

        #expect(waitForIndex(d, Set(files.map(\.name))))
        let list = try library(d, ["list", "--sort", "taken"]).stdout
        let lines = list.split(separator: "\n")
        // EXIF orientation 6 turns the 300x200 picture upright; irot already did for the other.
        #expect(
            lines.first?.hasPrefix("IMG_0001.HEIC") == true && lines.first?.contains("200x300") == true
                && lines.first?.contains("2024-07-03 14:22") == true, "\(list)")
        #expect(lines.contains { $0.hasPrefix("IMG_0002.HEIC") && $0.contains("200x300") }, "\(list)")
        let shown = try library(d, ["show", "IMG_0001"]).stdout
        #expect(shown.contains("HEIC, 200x300") && shown.contains("taken:     2024-07-03T14:22:05"), "\(shown)")
        // Each thumbnail is the one the thumbnailer makes of those bytes (which the unit tests
        // hold within 3 levels of ImageMagick's rendering), in sRGB and saying so.
        let lib = try PhotoLibrary(directory: d.dir, create: false)
        for f in files {
            let row = try #require(try lib.all().first { $0.name == f.name })
            #expect(row.hasThumbnail && row.problem == nil, "\(f.name): \(String(describing: row.problem))")
            let fd = try FileDescriptor.open(d.dir + "/" + f.name, flags: .readOnly)
            defer { fd.close() }
            let made = Thumbnailer.make(
                from: fd, type: PhotoType(fileName: f.name) ?? .png, sides: Thumbnailer.gallerySides
            ).renditions
            #expect(made.count == Thumbnailer.gallerySides.count, "\(f.name)")
            for (side, rendition) in zip(Thumbnailer.gallerySides, made) {
                let name = try #require(row.thumbnailFileName(side: side))
                let stored = try #require(readFile(lib.thumbnailFolder + "/" + name))
                #expect(stored == rendition.bytes, "\(f.name) at \(side)")
            }
        }
        #expect(try consistencyProblems(d.dir).isEmpty)
    }
}
