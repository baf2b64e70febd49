import Foundation
import PTKStore
import PTKSystem
import PTKTestTags
import PTKVocabulary
import Testing

@testable import PTKLibrary

/// The bytes of a package's photo.metadata (PhotoKeeper's format) and of `ptk list --json`,
/// pinned: Tests/Fixtures/package holds them as the code wrote them before `PhotoMetadata`'s
/// properties were renamed (issue 55), every key set.
@Suite(.tags(.unit)) struct PackageMetadataBytesTests {
    static let fixtures =
        "/" + #filePath.split(separator: "/").dropLast(2).joined(separator: "/") + "/Fixtures/package/"

    /// A photo with every field the metadata shows.
    static var photo: Photo {
        var p = Photo(
            id: 42, name: "holiday/IMG_0001.JPG", size: 2_345_678, received: WallTime(milliseconds: 1_700_000_000_123))
        p.sha256 = String(repeating: "ab", count: 32)
        (p.width, p.height, p.bitDepth, p.colorType, p.interlace) = (4032, 3024, 8, 2, 1)
        (p.senderName, p.senderAddress, p.senderID) = ("Alice's \"phone\"", "[2001:db8::7]:40000", "ABCD-EFGH")
        (p.note, p.rating, p.indexed, p.problem) = ("the sea / é ☀︎", 4, true, "its EXIF was set aside")
        (p.thumbnailType, p.hasThumbnail) = (.jpeg, true)
        p.modified = WallTime(milliseconds: 1_699_999_999_000)
        (p.orientation, p.taken, p.cameraMake, p.cameraModel, p.hasLocation) = (
            6, "2023-11-14T10:00:00+01:00", "Make", "Model", true
        )
        (p.preview, p.previewType) = (.made, .jpeg)
        return p
    }

    /// As `PhotoLibrary.export` fills a package's metadata.
    static var package: PhotoMetadata {
        var m = PhotoMetadata(photo)
        m.version = Package.version
        m.thumbnail = "iVBORw0KGgo="
        m.preview = nil
        return m
    }

    /// As `ptk list --json` fills a listing's entry.
    static var listing: PhotoMetadata {
        var m = PhotoMetadata(photo)
        m.indexed = true
        m.id = 42
        return m
    }

    static func fixture(_ name: String) throws -> String {
        String(decoding: try #require(FileManager.default.contents(atPath: fixtures + name)), as: UTF8.self)
    }

    @Test("a package's photo.metadata is the bytes it was")
    func packageBytes() throws {
        #expect(Self.package.json() + "\n" == (try Self.fixture("photo.metadata")))
        let decoded = try PhotoMetadata.decode(Array(try Self.fixture("photo.metadata").utf8), package: "fixture.ptk")
        #expect(decoded == Self.package)
    }

    @Test("ptk list --json and ptk watch --json are the bytes they were")
    func listingBytes() throws {
        #expect(PhotoMetadata.json([Self.listing]) + "\n" == (try Self.fixture("list.json")))
        #expect(Self.listing.jsonLine() + "\n" == (try Self.fixture("watch.jsonl")))
    }
}
