import Foundation
import Glibc
import PTKDigest
import PTKPhotoPages
import PTKStore
import PTKSystem
import PTKTestSupport
import PTKTestTags
import PTKVocabulary
import Testing

@testable import PTKLibrary

@Suite(.tags(.unit)) struct PackageTests {
    @Test(
        "a package's thumbnail is the fine 256-pixel PNG of the whole image (a JPEG decoded at twice the size), not the gallery's"
    )
    func packageThumbnailIsTheFineOne() throws {
        let f = Fixture()
        let jpeg = makeJPEG(width: 1600, height: 1200, seed: 5)
        try f.receive("cam.jpg", jpeg)
        let out = makeTemporaryDirectory("ptk-export")
        defer { removeTree(out) }
        let package = try f.library.export("cam", to: out)
        let json = try #require(readFile(package + "/photo.metadata"))
        let object = try #require(try JSONSerializationLite.object(json))
        let text = try #require(object["Thumbnail"] as? String)
        let thumbnail = try #require(Data(base64Encoded: text))
        #expect(
            Array(thumbnail) == jpegThumbnail(jpeg).png, "Thumbnailer.make(from:type:maxSide:), the JPEG at 2/8 for 256"
        )
        #expect(decodeRGBA(Array(thumbnail)).map { [$0.width, $0.height] } == [256, 192])
    }

    @Test func exportThenImportIsByteIdenticalAndKeepsTheMetadata() throws {
        let f = Fixture()
        let bytes = photoBytes(3, width: 300, height: 200)
        try f.receive("IMG 7.png", bytes)
        try f.library.setNote("IMG 7", "first snow")
        try f.library.setRating("IMG 7", 4)
        let out = makeTemporaryDirectory("ptk-export")
        defer { removeTree(out) }
        let package = try f.library.export("IMG 7", to: out)
        #expect(package == out + "/IMG 7.ptk")
        #expect(listDirectory(package) == ["photo.data", "photo.metadata"])
        #expect(listDirectory(out) == ["IMG 7.ptk"], "no staging folder left")
        #expect(readFile(package + "/photo.data") == bytes)
        let json = try #require(readFile(package + "/photo.metadata"))
        let object = try #require(try JSONSerializationLite.object(json))
        #expect(object["Version"] as? Int == 1)
        #expect(object["Name"] as? String == "IMG 7.png")
        #expect(object["SHA256"] as? String == SHA256.hex(of: bytes))
        #expect(object["Note"] as? String == "first snow")
        #expect(object["Rating"] as? Int == 4)
        #expect(object["SenderName"] as? String == "Alice's phone")
        #expect(object["SenderID"] as? String == "ABCD-EFGH")
        #expect(object["Received"] as? String == "2023-11-14T22:13:20.123Z")
        #expect([object["Width"] as? Int, object["Height"] as? Int] == [300, 200])
        let thumbnailText = try #require(object["Thumbnail"] as? String)
        let thumbnail = try #require(Data(base64Encoded: thumbnailText))
        // PhotoKeeper's format: a PNG of at most 256 pixels, made afresh from the photo (the
        // library keeps no such file), and no path of the library's own files.
        #expect(renditionType(Array(thumbnail)) == .png)
        #expect(decodeRGBA(Array(thumbnail)).map { [$0.width, $0.height] } == [256, 171])
        #expect(object["Preview"] == nil)
        // Exporting again never replaces the package.
        do {
            _ = try f.library.export("IMG 7", to: out)
            Issue.record("expected an error")
        } catch { #expect((error as! LibraryError).kind == .refused) }

        // Into another library: same bytes, same metadata.
        let g = Fixture()
        let imported = try g.library.importPackage(package + "/")
        #expect(imported.name == "IMG 7.png")
        #expect(readFile(g.directory + "/IMG 7.png") == bytes)
        #expect(imported.note == "first snow")
        #expect(imported.rating == 4)
        #expect(imported.senderName == "Alice's phone")
        #expect(imported.senderAddress == "192.0.2.7:40000")
        #expect(imported.senderID == "ABCD-EFGH")
        #expect(imported.received == WallTime(milliseconds: 1_700_000_000_123))
        #expect(imported.sha256 == SHA256.hex(of: bytes))
        #expect(imported.indexed && imported.hasThumbnail)
        // Into the same library: a unique name, never a replacement.
        let again = try f.library.importPackage(package)
        #expect(again.name == "IMG 7 (2).png")
        #expect(readFile(f.directory + "/IMG 7.png") == bytes)
        #expect(readFile(f.directory + "/IMG 7 (2).png") == bytes)
        // Exported again, the package is the same bytes (sorted keys).
        let out2 = makeTemporaryDirectory("ptk-export")
        defer { removeTree(out2) }
        let package2 = try g.library.export("IMG 7", to: out2)
        #expect(readFile(package2 + "/photo.metadata") == json)
    }

    @Test func packagesThatAreNotRightAreRefusedWithAClearMessage() throws {
        let f = Fixture()
        let bytes = photoBytes(5)
        try f.receive("p.png", bytes)
        let out = makeTemporaryDirectory("ptk-export")
        defer { removeTree(out) }
        let package = try f.library.export("p", to: out)
        let metadata = String(decoding: readFile(package + "/photo.metadata")!, as: UTF8.self)
        let g = Fixture()
        func variant(_ name: String, metadata text: String? = nil, data: [UInt8]? = nil) -> String {
            let path = out + "/" + name
            mkdir(path, 0o755)
            writeFile(path + "/photo.data", data ?? bytes)
            if let text { writeFile(path + "/photo.metadata", Array(text.utf8)) }
            return path
        }
        let cases: [(String, String, LibraryError.Kind)] = [
            (
                variant(
                    "v2.ptk", metadata: metadata.replacingOccurrences(of: "\"Version\" : 1", with: "\"Version\" : 2")),
                "Version 2 package", .badInput
            ),
            (variant("noversion.ptk", metadata: "{\"Name\": \"x\"}"), "no Version", .badInput),
            (variant("notjson.ptk", metadata: "Version 1"), "not a JSON object", .badInput),
            (variant("nometadata.ptk"), "cannot read", .badInput),
            (variant("otherdata.ptk", metadata: metadata, data: photoBytes(6)), "does not match its SHA256", .badInput),
            (variant("notpng.ptk", metadata: "{\"Version\": 1}", data: Array("no PNG here".utf8)), "PNG", .badInput),
            (out + "/missing.ptk", "not a package", .badInput),
        ]
        for (path, words, kind) in cases {
            do {
                _ = try g.library.importPackage(path)
                Issue.record("\(path)")
            } catch {
                #expect((error as! LibraryError).kind == kind, "\(path): \(error)")
                #expect("\(error)".contains(words), "\(path): \(error)")
            }
        }
        #expect(try g.library.all().count == 0)
        #expect(listDirectory(g.directory).filter { !$0.hasPrefix(".") } == [], "nothing published")
        #expect(listDirectory(g.directory + "/.incoming") == [], "no temporary file left")
        // Minimal metadata is enough; the received time is then the import's.
        let before = WallTime.now
        let minimal = try g.library.importPackage(variant("minimal.ptk", metadata: "{\"Version\": 1, \"Rating\": 9}"))
        #expect(minimal.name == "minimal.png")
        #expect(minimal.rating == nil, "an out-of-range rating is dropped")
        #expect(minimal.received >= before)
    }

    @Test func thePackageAndPhotoNamesFollowEachOther() {
        #expect(Package.folderName(for: "beach.png") == "beach.ptk")
        #expect(Package.folderName(for: "beach.PNG") == "beach.ptk")
        #expect(Package.photoName(forPackage: "/a/b/beach.ptk", type: .png) == "beach.png")
        #expect(Package.photoName(forPackage: "beach", type: .png) == "beach.png")
        #expect(Package.photoName(forPackage: "beach.ptk", type: .jpeg) == "beach.jpg")
        #expect(Package.folderName(for: "beach.JPEG") == "beach.ptk")
        #expect(Package.folderName(for: "beach.jpg") == "beach.ptk")
    }
}

@Suite(.tags(.unit)) struct GalleryTests {
    @Test func theGalleryListsThumbnailsNewestFirstWithEscapedNamesAndWorkingLinks() throws {
        let f = Fixture()
        try f.receive("old.png", photoBytes(1))
        try f.library.record([
            Arrival(
                name: "a <b> & \"c\".png", size: 1, sha256: "x", received: WallTime(milliseconds: 1_800_000_000_000),
                senderName: "Eve <script>", senderAddress: "192.0.2.9:1", senderID: nil)
        ])
        writeFile(f.directory + "/a <b> & \"c\".png", photoBytes(2))
        while let id = try f.library.pending(limit: 1).first { try f.library.index(id: id) }
        try f.library.setRating("old", 3)
        let (page, count) = try f.library.gallery()
        #expect(page == f.directory + "/.ptk/gallery/index.html")
        #expect(count == 2)
        let html = String(decoding: try #require(readFile(page)), as: UTF8.self)
        #expect(html.contains("a &lt;b&gt; &amp; &quot;c&quot;.png"))
        #expect(html.contains("Eve &lt;script&gt;"))
        #expect(!(html.contains("<script")))
        #expect(html.contains("href=\"../../a%20%3Cb%3E%20%26%20%22c%22.png\""), "\(html)")
        #expect(html.contains("★★★☆☆"))
        let newest = try #require(html.range(of: "a &lt;b&gt;"))
        let oldest = try #require(html.range(of: ">old.png<"))
        #expect(newest.lowerBound < oldest.lowerBound, "newest first")
        // Every image the page shows exists where its link points.
        for p in try f.library.all() {
            let name = try #require(p.thumbnailFileName(side: 360))
            #expect(name.hasPrefix("\(p.id)-360."))
            #expect(html.contains("src=\"../thumbnails/\(name)\""))
            #expect(fileExists(f.directory + "/.ptk/gallery/../thumbnails/\(name)"))
        }
        // Elsewhere, the thumbnails are copied beside the page and the photos linked relatively.
        let out = makeTemporaryDirectory("ptk-gallery")
        defer { removeTree(out) }
        let (other, _) = try f.library.gallery(to: out + "/site")
        let html2 = String(decoding: try #require(readFile(other)), as: UTF8.self)
        for p in try f.library.all() {
            let name = try #require(p.thumbnailFileName(side: 360))
            #expect(html2.contains("src=\"thumbnails/\(name)\""))
            #expect(try readFile(out + "/site/thumbnails/\(name)") == f.library.thumbnail(of: p, side: 360)?.bytes)
        }
        let link = relativePath(from: out + "/site", to: f.directory) + "/old.png"
        #expect(html2.contains("href=\"\(link)\""), "\(link)")
        #expect(absolutePath(out + "/site/" + link) == f.directory + "/old.png")
    }

    @Test func pathsAndEscaping() {
        #expect(relativePath(from: "/a/b/c", to: "/a/d") == "../../d")
        #expect(relativePath(from: "/a", to: "/a") == "")
        #expect(relativePath(from: "/srv/photos/.ptk/gallery", to: "/srv/photos") == "../..")
        #expect(relativePath(from: "/", to: "/my photos") == "my%20photos")
        #expect(absolutePath("/a/./b/../c/") == "/a/c")
    }
}

/// A JSON object as a dictionary (FoundationEssentials has no JSONSerialization).
enum JSONSerializationLite {
    static func object(_ bytes: [UInt8]) throws -> [String: Any]? {
        struct AnyJSON: Decodable {
            var value: Any
            init(from decoder: Decoder) throws {
                let c = try decoder.singleValueContainer()
                if let i = try? c.decode(Int.self) {
                    value = i
                } else if let b = try? c.decode(Bool.self) {
                    value = b
                } else if let s = try? c.decode(String.self) {
                    value = s
                } else if let d = try? c.decode([String: AnyJSON].self) {
                    value = d.mapValues(\.value)
                } else {
                    value = NSNullLite()
                }
            }
        }
        return try JSONDecoder().decode([String: AnyJSON].self, from: Data(bytes)).mapValues(\.value)
    }
    struct NSNullLite {}
}
