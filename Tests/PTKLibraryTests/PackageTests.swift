import FoundationEssentials
import Glibc
import PTKDigest
import PTKSystem
import PTKTestSupport
import XCTest

@testable import PTKLibrary

final class PackageTests: XCTestCase {
    func testExportThenImportIsByteIdenticalAndKeepsTheMetadata() throws {
        let f = Fixture()
        let bytes = photoBytes(3, width: 300, height: 200)
        try f.receive("IMG 7.png", bytes)
        try f.library.setNote("IMG 7", "first snow")
        try f.library.setRating("IMG 7", 4)
        let out = makeTemporaryDirectory("ptk-export")
        defer { removeTree(out) }
        let package = try f.library.export("IMG 7", to: out)
        XCTAssertEqual(package, out + "/IMG 7.ptk")
        XCTAssertEqual(listDirectory(package), ["photo.data", "photo.metadata"])
        XCTAssertEqual(listDirectory(out), ["IMG 7.ptk"], "no staging folder left")
        XCTAssertEqual(readFile(package + "/photo.data"), bytes)
        let json = try XCTUnwrap(readFile(package + "/photo.metadata"))
        let object = try XCTUnwrap(try JSONSerializationLite.object(json))
        XCTAssertEqual(object["Version"] as? Int, 1)
        XCTAssertEqual(object["Name"] as? String, "IMG 7.png")
        XCTAssertEqual(object["SHA256"] as? String, SHA256.hex(of: bytes))
        XCTAssertEqual(object["Note"] as? String, "first snow")
        XCTAssertEqual(object["Rating"] as? Int, 4)
        XCTAssertEqual(object["SenderName"] as? String, "Alice's phone")
        XCTAssertEqual(object["SenderID"] as? String, "ABCD-EFGH")
        XCTAssertEqual(object["Received"] as? String, "2023-11-14T22:13:20.123Z")
        XCTAssertEqual([object["Width"] as? Int, object["Height"] as? Int], [300, 200])
        let thumbnail = try XCTUnwrap(Data(base64Encoded: try XCTUnwrap(object["Thumbnail"] as? String)))
        XCTAssertEqual(Array(thumbnail), try f.library.thumbnail(of: try f.library.find("IMG 7")))
        XCTAssertEqual(decodeRGBA(Array(thumbnail)).map { [$0.width, $0.height] }, [256, 171])
        // Exporting again never replaces the package.
        XCTAssertThrowsError(try f.library.export("IMG 7", to: out)) { XCTAssertEqual(($0 as! LibraryError).kind, .refused) }

        // Into another library: same bytes, same metadata.
        let g = Fixture()
        let imported = try g.library.importPackage(package + "/")
        XCTAssertEqual(imported.name, "IMG 7.png")
        XCTAssertEqual(readFile(g.directory + "/IMG 7.png"), bytes)
        XCTAssertEqual(imported.note, "first snow")
        XCTAssertEqual(imported.rating, 4)
        XCTAssertEqual(imported.senderName, "Alice's phone")
        XCTAssertEqual(imported.senderAddress, "192.0.2.7:40000")
        XCTAssertEqual(imported.senderID, "ABCD-EFGH")
        XCTAssertEqual(imported.received, 1_700_000_000_123)
        XCTAssertEqual(imported.sha256, SHA256.hex(of: bytes))
        XCTAssertTrue(imported.indexed && imported.hasThumbnail)
        // Into the same library: a unique name, never a replacement.
        let again = try f.library.importPackage(package)
        XCTAssertEqual(again.name, "IMG 7 (2).png")
        XCTAssertEqual(readFile(f.directory + "/IMG 7.png"), bytes)
        XCTAssertEqual(readFile(f.directory + "/IMG 7 (2).png"), bytes)
        // Exported again, the package is the same bytes (sorted keys).
        let out2 = makeTemporaryDirectory("ptk-export")
        defer { removeTree(out2) }
        let package2 = try g.library.export("IMG 7", to: out2)
        XCTAssertEqual(readFile(package2 + "/photo.metadata"), json)
    }

    func testPackagesThatAreNotRightAreRefusedWithAClearMessage() throws {
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
            (variant("v2.ptk", metadata: metadata.replacingOccurrences(of: "\"Version\" : 1", with: "\"Version\" : 2")), "Version 2 package", .badInput),
            (variant("noversion.ptk", metadata: "{\"Name\": \"x\"}"), "no Version", .badInput),
            (variant("notjson.ptk", metadata: "Version 1"), "not a JSON object", .badInput),
            (variant("nometadata.ptk"), "cannot read", .badInput),
            (variant("otherdata.ptk", metadata: metadata, data: photoBytes(6)), "does not match its SHA256", .badInput),
            (variant("notpng.ptk", metadata: "{\"Version\": 1}", data: Array("no PNG here".utf8)), "PNG", .badInput),
            (out + "/missing.ptk", "not a package", .badInput),
        ]
        for (path, words, kind) in cases {
            XCTAssertThrowsError(try g.library.importPackage(path), path) { error in
                XCTAssertEqual((error as! LibraryError).kind, kind, "\(path): \(error)")
                XCTAssertTrue("\(error)".contains(words), "\(path): \(error)")
            }
        }
        XCTAssertEqual(try g.library.all().count, 0)
        XCTAssertEqual(listDirectory(g.directory).filter { !$0.hasPrefix(".") }, [], "nothing published")
        XCTAssertEqual(listDirectory(g.directory + "/.incoming"), [], "no temporary file left")
        // Minimal metadata is enough; the received time is then the import's.
        let before = wallClockMilliseconds()
        let minimal = try g.library.importPackage(variant("minimal.ptk", metadata: "{\"Version\": 1, \"Rating\": 9}"))
        XCTAssertEqual(minimal.name, "minimal.png")
        XCTAssertNil(minimal.rating, "an out-of-range rating is dropped")
        XCTAssertGreaterThanOrEqual(minimal.received, before)
    }

    func testThePackageAndPhotoNamesFollowEachOther() {
        XCTAssertEqual(Package.folderName(for: "beach.png"), "beach.ptk")
        XCTAssertEqual(Package.folderName(for: "beach.PNG"), "beach.ptk")
        XCTAssertEqual(Package.photoName(forPackage: "/a/b/beach.ptk"), "beach.png")
        XCTAssertEqual(Package.photoName(forPackage: "beach"), "beach.png")
    }
}

final class GalleryTests: XCTestCase {
    func testTheGalleryListsThumbnailsNewestFirstWithEscapedNamesAndWorkingLinks() throws {
        let f = Fixture()
        try f.receive("old.png", photoBytes(1))
        try f.library.record([Arrival(name: "a <b> & \"c\".png", size: 1, sha256: "x", received: 1_800_000_000_000, senderName: "Eve <script>", senderAddress: "192.0.2.9:1", senderID: nil)])
        writeFile(f.directory + "/a <b> & \"c\".png", photoBytes(2))
        while let id = try f.library.pending(limit: 1).first { try f.library.index(id: id) }
        try f.library.setRating("old", 3)
        let (page, count) = try f.library.gallery()
        XCTAssertEqual(page, f.directory + "/.ptk/gallery/index.html")
        XCTAssertEqual(count, 2)
        let html = String(decoding: try XCTUnwrap(readFile(page)), as: UTF8.self)
        XCTAssertTrue(html.contains("a &lt;b&gt; &amp; &quot;c&quot;.png"))
        XCTAssertTrue(html.contains("Eve &lt;script&gt;"))
        XCTAssertFalse(html.contains("<script"))
        XCTAssertTrue(html.contains("href=\"../../a%20%3Cb%3E%20%26%20%22c%22.png\""), html)
        XCTAssertTrue(html.contains("★★★☆☆"))
        let newest = try XCTUnwrap(html.range(of: "a &lt;b&gt;")), oldest = try XCTUnwrap(html.range(of: ">old.png<"))
        XCTAssertLessThan(newest.lowerBound, oldest.lowerBound, "newest first")
        // Every image the page shows exists where its link points.
        for id in try f.library.all().map(\.id) {
            XCTAssertTrue(html.contains("src=\"../thumbnails/\(id).png\""))
            XCTAssertTrue(fileExists(f.directory + "/.ptk/gallery/../thumbnails/\(id).png"))
        }
        // Elsewhere, the thumbnails are copied beside the page and the photos linked relatively.
        let out = makeTemporaryDirectory("ptk-gallery")
        defer { removeTree(out) }
        let (other, _) = try f.library.gallery(to: out + "/site")
        let html2 = String(decoding: try XCTUnwrap(readFile(other)), as: UTF8.self)
        for p in try f.library.all() {
            XCTAssertEqual(readFile(out + "/site/thumbnails/\(p.id).png"), try f.library.thumbnail(of: p))
        }
        let link = relativePath(from: out + "/site", to: f.directory) + "/old.png"
        XCTAssertTrue(html2.contains("href=\"\(link)\""), link)
        XCTAssertEqual(absolutePath(out + "/site/" + link), f.directory + "/old.png")
    }

    func testPathsAndEscaping() {
        XCTAssertEqual(relativePath(from: "/a/b/c", to: "/a/d"), "../../d")
        XCTAssertEqual(relativePath(from: "/a", to: "/a"), "")
        XCTAssertEqual(relativePath(from: "/srv/photos/.ptk/gallery", to: "/srv/photos"), "../..")
        XCTAssertEqual(relativePath(from: "/", to: "/my photos"), "my%20photos")
        XCTAssertEqual(absolutePath("/a/./b/../c/"), "/a/c")
        XCTAssertEqual(percentEncode("ä b/#?.png"), "%C3%A4%20b%2F%23%3F.png")
        XCTAssertEqual(escapeHTML("<'&\">"), "&lt;&#39;&amp;&quot;&gt;")
    }
}

/// A JSON object as a dictionary (FoundationEssentials has no JSONSerialization).
enum JSONSerializationLite {
    static func object(_ bytes: [UInt8]) throws -> [String: Any]? {
        struct AnyJSON: Decodable {
            var value: Any
            init(from decoder: Decoder) throws {
                let c = try decoder.singleValueContainer()
                if let i = try? c.decode(Int.self) { value = i }
                else if let b = try? c.decode(Bool.self) { value = b }
                else if let s = try? c.decode(String.self) { value = s }
                else if let d = try? c.decode([String: AnyJSON].self) { value = d.mapValues(\.value) }
                else { value = NSNullLite() }
            }
        }
        return try JSONDecoder().decode([String: AnyJSON].self, from: Data(bytes)).mapValues(\.value)
    }
    struct NSNullLite {}
}
