import FoundationEssentials

/// The metadata of a photo as JSON: `ptk list --json`, `ptk show --json` and a package's
/// `photo.metadata` (which adds `Version` and `Thumbnail`). Keys as PhotoKeeper's documents
/// spelled them (`CodingKeys`). The format only: the library fills it from its photos (`init(_ photo:)`).
public struct PhotoMetadata: Codable, Sendable, Equatable {
    public var version: Int?
    /// Listings only: the library's id of the photo (never reused; `ptk watch --since`).
    public var id: Int64?
    public var name: String?
    /// The photo's media type ("image/jpeg"): a package carries its photo's type.
    public var mediaType: String?
    public var size: Int64?
    public var sha256: String?
    public var width: Int?
    public var height: Int?
    public var bitDepth: Int?
    public var colorType: Int?
    public var interlace: Int?
    /// ISO 8601, UTC, with milliseconds: "2026-11-30T09:41:02.123Z".
    public var received: String?
    /// The file's modification time (ISO 8601, UTC): kept by export and restored by import.
    public var modified: String?
    /// When it was taken, as the photo says (see `PhotoFacts.taken`).
    public var taken: String?
    public var cameraMake: String?
    public var cameraModel: String?
    /// EXIF Orientation, and the size as shown.
    public var orientation: Int?
    public var displayWidth: Int?
    public var displayHeight: Int?
    /// Only whether the photo holds a location: the location itself is never given out.
    public var hasLocation: Bool?
    public var senderName: String?
    public var senderAddress: String?
    public var senderID: String?
    public var note: String?
    public var rating: Int?
    /// Listings only: false while the photo waits to be indexed.
    public var indexed: Bool?
    /// Why there is no thumbnail.
    public var problem: String?
    /// In a package: the thumbnail PNG, base64 (PhotoKeeper's format). In listings (`ptk list
    /// --json`, `ptk show --json`): the photo's largest gallery thumbnail, relative to the
    /// received-photos directory as `Name` is (".ptk/thumbnails/12-360.jpg"), once it is made.
    public var thumbnail: String?
    /// Listings only: the photo's preview, relative to the received-photos directory
    /// (".ptk/previews/12.jpg"), once it is made; absent while it is coming, when none is
    /// needed and when it could not be made.
    public var preview: String?

    /// The format's keys, as PhotoKeeper's documents spell them (a package's bytes and the
    /// listings' keys are those of before the properties were named in Swift's way).
    enum CodingKeys: String, CodingKey {
        case version = "Version"
        case id = "ID"
        case name = "Name"
        case mediaType = "MediaType"
        case size = "Size"
        case sha256 = "SHA256"
        case width = "Width"
        case height = "Height"
        case bitDepth = "BitDepth"
        case colorType = "ColorType"
        case interlace = "Interlace"
        case received = "Received"
        case modified = "Modified"
        case taken = "Taken"
        case cameraMake = "CameraMake"
        case cameraModel = "CameraModel"
        case orientation = "Orientation"
        case displayWidth = "DisplayWidth"
        case displayHeight = "DisplayHeight"
        case hasLocation = "HasLocation"
        case senderName = "SenderName"
        case senderAddress = "SenderAddress"
        case senderID = "SenderID"
        case note = "Note"
        case rating = "Rating"
        case indexed = "Indexed"
        case problem = "Problem"
        case thumbnail = "Thumbnail"
        case preview = "Preview"
    }

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
