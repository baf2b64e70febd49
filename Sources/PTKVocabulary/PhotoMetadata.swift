import FoundationEssentials

/// The metadata of a photo as JSON: `ptk list --json`, `ptk show --json` and a package's
/// `photo.metadata` (which adds `Version` and `Thumbnail`). Keys as PhotoKeeper's documents
/// spelled them (`CodingKeys`). The format only: the library fills it from its photos (`init(_ photo:)`).
public struct PhotoMetadata: Codable, Sendable, Equatable {
    /// In a package only: the format's version (`Package.version`); absent from listings.
    public var version: Int?
    /// Listings only: the library's id of the photo (never reused; `ptk watch --since`).
    public var id: Int64?
    /// The file name, relative to the received-photos directory (with its folders, if any).
    public var name: String?
    /// The photo's media type ("image/jpeg"): a package carries its photo's type.
    public var mediaType: String?
    /// The file's length in bytes.
    public var size: Int64?
    /// The file's SHA-256, 64 lowercase hex digits; absent until it is indexed.
    public var sha256: String?
    /// Pixels as stored, before `orientation` turns them; absent until indexed or when unreadable.
    public var width: Int?
    /// Pixels as stored, before `orientation` turns them.
    public var height: Int?
    /// From the PNG header, or a JPEG's precision.
    public var bitDepth: Int?
    /// The PNG colour type (0 greyscale, 2 truecolour, 3 indexed, 4 and 6 with alpha); a JPEG's is 0 or 2.
    public var colorType: Int?
    /// 1 when interlaced (PNG Adam7, or a progressive JPEG), else 0.
    public var interlace: Int?
    /// ISO 8601, UTC, with milliseconds: "2026-11-30T09:41:02.123Z".
    public var received: String?
    /// The file's modification time (ISO 8601, UTC): kept by export and restored by import.
    public var modified: String?
    /// When it was taken, as the photo says (see `PhotoFacts.taken`).
    public var taken: String?
    /// The EXIF Make, as the camera wrote it.
    public var cameraMake: String?
    /// The EXIF Model, as the camera wrote it.
    public var cameraModel: String?
    /// EXIF Orientation, and the size as shown.
    public var orientation: Int?
    /// Width after `orientation` (height and width swap for orientations 5 to 8).
    public var displayWidth: Int?
    /// Height after `orientation`.
    public var displayHeight: Int?
    /// Only whether the photo holds a location: the location itself is never given out.
    public var hasLocation: Bool?
    /// The name the sender gave in its HELLO (or its LocalSend alias); absent for a photo copied in by hand.
    public var senderName: String?
    /// The address it was sent from.
    public var senderAddress: String?
    /// The sender's device ID.
    public var senderID: String?
    /// The note a user set on it (from `ptk` or the web pages).
    public var note: String?
    /// 0 to 5; absent when not rated.
    public var rating: Int?
    /// Listings only: false while the photo waits to be indexed.
    public var indexed: Bool?
    /// Why there is no thumbnail.
    public var problem: String?
    /// A Live Photo's content identifier (issue 58): Apple's, read from the still or the video.
    public var contentIdentifier: String?
    /// Listings only: the video shown as this still's Live Photo motion.
    public var livePhotoVideo: String?
    /// Listings only: the still this video is the Live Photo motion of.
    public var livePhotoStill: String?
    /// In a package: the thumbnail PNG, base64 (PhotoKeeper's format). In listings (`ptk list
    /// --json`, `ptk show --json`): the photo's largest gallery thumbnail, relative to the
    /// received-photos directory as `Name` is (".ptk/thumbnails/12-360.jpg"), once it is made.
    public var thumbnail: String?
    /// Listings only: the photo's preview, relative to the received-photos directory
    /// (".ptk/previews/12.jpg"), once it is made; absent while it is coming, when none is
    /// needed and when it could not be made.
    public var preview: String?
    /// A video's length in seconds (issue 58); absent for a photo.
    public var duration: Double?
    /// A video's frames a second; absent for a photo or when unknown.
    public var frameRate: Double?
    /// A video's coding as its sample description names it ("avc1", "hvc1"); absent for a photo.
    public var codec: String?

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
        case contentIdentifier = "ContentIdentifier"
        case livePhotoVideo = "LivePhotoVideo"
        case livePhotoStill = "LivePhotoStill"
        case thumbnail = "Thumbnail"
        case preview = "Preview"
        case duration = "Duration"
        case frameRate = "FrameRate"
        case codec = "Codec"
    }

    /// Every field absent.
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

    /// A list, pretty, with sorted keys, as `json()` writes one.
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
    public static func decodeMetadata(_ bytes: [UInt8], package packagePath: String) throws(PackageError)
        -> PhotoMetadata
    {
        try checkMetadata(bytes, package: packagePath)
        do { return try JSONDecoder().decode(PhotoMetadata.self, from: Data(bytes)) } catch {
            throw PackageError("\(packagePath)/\(metadataName) is not valid package metadata: \(error)")
        }
    }
}
