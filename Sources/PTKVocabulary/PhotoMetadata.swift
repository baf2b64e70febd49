import FoundationEssentials

/// The metadata of a photo as JSON: `ptk list --json`, `ptk show --json` and a package's
/// `photo.metadata` (which adds `Version` and `Thumbnail`). Keys as PhotoKeeper's documents
/// spelled them. The format only: the library fills it from its photos (`init(_ photo:)`).
public struct PhotoMetadata: Codable, Sendable, Equatable {
    public var Version: Int?
    /// Listings only: the library's id of the photo (never reused; `ptk watch --since`).
    public var ID: Int64?
    public var Name: String?
    /// The photo's media type ("image/jpeg"): a package carries its photo's type.
    public var MediaType: String?
    public var Size: Int64?
    public var SHA256: String?
    public var Width: Int?
    public var Height: Int?
    public var BitDepth: Int?
    public var ColorType: Int?
    public var Interlace: Int?
    /// ISO 8601, UTC, with milliseconds: "2026-11-30T09:41:02.123Z".
    public var Received: String?
    /// The file's modification time (ISO 8601, UTC): kept by export and restored by import.
    public var Modified: String?
    /// When it was taken, as the photo says (see `PhotoFacts.taken`).
    public var Taken: String?
    public var CameraMake: String?
    public var CameraModel: String?
    /// EXIF Orientation, and the size as shown.
    public var Orientation: Int?
    public var DisplayWidth: Int?
    public var DisplayHeight: Int?
    /// Only whether the photo holds a location: the location itself is never given out.
    public var HasLocation: Bool?
    public var SenderName: String?
    public var SenderAddress: String?
    public var SenderID: String?
    public var Note: String?
    public var Rating: Int?
    /// Listings only: false while the photo waits to be indexed.
    public var Indexed: Bool?
    /// Why there is no thumbnail.
    public var Problem: String?
    /// In a package: the thumbnail PNG, base64 (PhotoKeeper's format). In listings (`ptk list
    /// --json`, `ptk show --json`): the photo's largest gallery thumbnail, relative to the
    /// received-photos directory as `Name` is (".ptk/thumbnails/12-360.jpg"), once it is made.
    public var Thumbnail: String?
    /// Listings only: the photo's preview, relative to the received-photos directory
    /// (".ptk/previews/12.jpg"), once it is made; absent while it is coming, when none is
    /// needed and when it could not be made.
    public var Preview: String?

    public init() {}

    /// Pretty, with sorted keys, so that two exports of one photo are the same bytes.
    public func json() -> String {
        // Encoding strings and integers cannot fail.
        String(decoding: (try? Self.encoder.encode(self)) ?? Data("{}".utf8), as: UTF8.self)
    }

    /// On one line, keys sorted: `ptk watch --json`.
    public func jsonLine() -> String {
        // Encoding strings and integers cannot fail.
        String(decoding: (try? Self.lineEncoder.encode(self)) ?? Data("{}".utf8), as: UTF8.self)
    }

    private static let lineEncoder: JSONEncoder = {
        let e = JSONEncoder()
        e.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return e
    }()

    public static func json(_ list: [PhotoMetadata]) -> String {
        // Encoding strings and integers cannot fail.
        String(decoding: (try? encoder.encode(list)) ?? Data("[]".utf8), as: UTF8.self)
    }

    private static let encoder: JSONEncoder = {
        let e = JSONEncoder()
        e.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return e
    }()
}

extension Package {
    /// A package's photo.metadata from its bytes: its Version checked (`checkMetadata`), then
    /// decoded; `packagePath` names the package in the error.
    public static func decodeMetadata(_ bytes: [UInt8], package packagePath: String) throws(PackageError) -> PhotoMetadata {
        try checkMetadata(bytes, package: packagePath)
        do { return try JSONDecoder().decode(PhotoMetadata.self, from: Data(bytes)) } catch {
            throw PackageError("\(packagePath)/\(metadataName) is not valid package metadata: \(error)")
        }
    }
}
