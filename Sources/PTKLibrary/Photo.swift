import FoundationEssentials
import PTKStore
import PTKSystem
import PTKVocabulary

/// What the library holds about one photo of the received-photos directory.
public struct Photo: Sendable, Equatable {
    /// The row's number: never reused, it names the thumbnail file.
    public var id: Int64
    /// The file name in the directory.
    public var name: String
    /// The file's length in bytes.
    public var size: Int64
    /// Lower-case hex; nil until the photo has been indexed (a file found in the directory).
    public var sha256: String?
    /// From the PNG header (a JPEG's frame header: bit depth is its precision, colour type 0
    /// greyscale or 2 colour, interlace 1 progressive); nil until indexed or when the file has
    /// no readable header.
    public var width: Int?
    /// Pixels as stored, before `orientation` turns them (see `displayedSize`).
    public var height: Int?
    /// From the PNG header, or a JPEG's precision.
    public var bitDepth: Int?
    /// The PNG colour type (0, 2, 3, 4 or 6; a JPEG's is 0 or 2); `colorTypeName` names it.
    public var colorType: Int?
    /// 1 when interlaced (PNG Adam7, or a progressive JPEG), else 0.
    public var interlace: Int?
    /// When it was received (or found in the directory, or imported).
    public var received: WallTime
    /// The sender's HELLO name, address and device ID (nil for a photo copied in by hand).
    public var senderName: String?
    /// The address it was sent from.
    public var senderAddress: String?
    /// The sender's device ID; nil also when the sender gave none.
    public var senderID: String?
    /// The note a user set on it; nil when there is none (an empty one is cleared).
    public var note: String?
    /// 0 to 5; nil when not rated.
    public var rating: Int?
    /// False while the photo waits for its metadata and thumbnail.
    public var indexed: Bool
    /// True when the photo has its gallery thumbnails (`thumbnailType`).
    public var hasThumbnail: Bool
    /// The gallery thumbnails' format (issue 45): .jpeg, or .png for a photo with
    /// transparency or no larger than a thumbnail (issue 58); nil when it has none. Each side of `Thumbnailer.gallerySides` has a file,
    /// except for a photo with `hasOldThumbnail` (.png: one file for every side).
    public var thumbnailType: PhotoType?
    /// True while the photo still has the one thumbnail of a schema before 5 (`thumbnail = 1`):
    /// `<id>.png`, at most `Thumbnailer.maxSide` (256) pixels on its long side, shown for
    /// every gallery side until the photo is indexed again and its new thumbnails replace it.
    public var hasOldThumbnail: Bool = false
    /// Some pixel is not fully opaque (issue 58): the gallery shows a checkerboard behind it
    /// and behind no other photo. Nil until its thumbnails say (not indexed, none made, or the
    /// old thumbnail of a schema before 5).
    public var hasAlpha: Bool?
    /// Its preview (issue 45).
    public var preview: PreviewState = .pending
    /// The preview's format when it is made: .jpeg (`.ptk/previews/<id>.jpg`), or .png
    /// (`<id>.png`) when the thumbnailer made a PNG; nil otherwise.
    public var previewType: PhotoType?
    /// Why there is no thumbnail (too many pixels, not decodable), when there is none; with a
    /// thumbnail, why its EXIF or its colour profile was set aside, if one was.
    public var problem: String?
    /// The file's modification time when it was indexed (the sender's, when it sent one).
    public var modified: WallTime?
    /// EXIF Orientation (1-8), when the photo has one: how the stored pixels are shown.
    public var orientation: Int?
    /// When it was taken (ISO 8601; see `PhotoFacts.taken`), when the photo says.
    public var taken: String?
    /// The EXIF Make, as the camera wrote it.
    public var cameraMake: String?
    /// The EXIF Model, as the camera wrote it.
    public var cameraModel: String?
    /// Whether its EXIF holds a location (GPS); nil until indexed. The location itself is never read out.
    public var hasLocation: Bool?
    /// A video's length in seconds (issue 58), from its `mvhd`; nil for a photo or when unknown.
    public var duration: Double?
    /// A video's frames a second (its first video track); nil for a photo or when unknown.
    public var frameRate: Double?
    /// A video's coding as its sample description names it ("avc1", "hvc1"); nil for a photo.
    public var codec: String?
    /// A Live Photo's content identifier (issue 58): Apple's, from a still's MakerNote or a
    /// video's metadata; nil when it carries none.
    public var liveID: String?
    /// A still's Live Photo motion: the id of the video paired with it (`LivePhotos`), else nil.
    public var motionID: Int64?
    /// A video that is a Live Photo's motion: the id of its still, else nil. Such a video is
    /// shown with its still, not as an item of its own.
    public var stillID: Int64?

    /// A photo just found or received, not yet indexed: no hash, size in pixels, thumbnail or preview yet.
    public init(id: Int64, name: String, size: Int64, received: WallTime) {
        self.id = id
        self.name = name
        self.size = size
        self.received = received
        indexed = false
        hasThumbnail = false
    }

    /// The colour type's name (PNG specification 11.2.2).
    public var colorTypeName: String? {
        switch colorType {
        case 0: return "greyscale"
        case 2: return "truecolour"
        case 3: return "indexed-colour"
        case 4: return "greyscale with alpha"
        case 6: return "truecolour with alpha"
        case nil: return nil
        default: return "colour type \(colorType!)"
        }
    }

    /// PNG or JPEG, as its name's ending says.
    public var type: PhotoType { PhotoType(fileName: name) ?? .png }

    /// The width and height as the photo is shown: the stored ones, swapped when its EXIF
    /// orientation turns it a quarter (5 to 8).
    public var displayedSize: (width: Int, height: Int)? {
        guard let width, let height else { return nil }
        return (orientation ?? 1) >= 5 ? (height, width) : (width, height)
    }

    /// "3024x4032" as shown, or "?" before indexing.
    public var dimensions: String {
        guard let size = displayedSize else { return "?" }
        return "\(size.width)x\(size.height)"
    }

    /// The codec's common name ("H.264" for avc1, "HEVC" for hvc1), else its four letters.
    public var codecName: String? {
        codec.map { VideoCodec.commonName($0) }
    }

    /// Bits a second over the whole file (its size over its duration), for a video; nil otherwise.
    public var bitRate: Double? {
        guard let duration, duration > 0 else { return nil }
        return Double(size) * 8 / duration
    }

    /// "4032x3024" as stored.
    public var storedDimensions: String {
        guard let width, let height else { return "?" }
        return "\(width)x\(height)"
    }

    /// When it was taken as people read it ("2024-07-03 14:22", the camera's clock), or nil
    /// when `taken` does not begin so ("YYYY-MM-DDTHH:MM", digits where digits go): the index
    /// may hold anything the service user wrote, and this goes to terminals and pages as it is.
    public var takenMinutes: String? {
        guard let taken else { return nil }
        let b = Array(taken.utf8.prefix(16))
        let digit = { (c: UInt8) in c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9") }
        guard b.count == 16, b[4] == UInt8(ascii: "-"), b[7] == UInt8(ascii: "-"),
            b[10] == UInt8(ascii: "T") || b[10] == UInt8(ascii: " "),
            b[13] == UInt8(ascii: ":"), [0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15].allSatisfy({ digit(b[$0]) })
        else { return nil }
        return String(decoding: b.map { $0 == UInt8(ascii: "T") ? UInt8(ascii: " ") : $0 }, as: UTF8.self)
    }

    /// The calendar day it was taken ("2024-07-03"), else the day received (UTC).
    public var day: String { String((taken ?? received.iso8601).prefix(10)) }

    /// The file name of its gallery thumbnail of `side` (one of `Thumbnailer.gallerySides`) in
    /// `.ptk/thumbnails`: "12-360.jpg"; nil when it has none. For a photo with
    /// `hasOldThumbnail`, "12.png" for every side: the old thumbnail of a schema before 5, at
    /// most 256 pixels (`Thumbnailer.maxSide`) on its long side, so smaller than the largest
    /// side asks, is shown until the photo is indexed again.
    public func thumbnailFileName(side: Int) -> String? {
        if hasOldThumbnail { return "\(id).png" }
        return thumbnailType.map { "\(id)-\(side).\($0.fileExtension)" }
    }

    /// The file name of its preview in `.ptk/previews` ("12.jpg"), nil when none is made.
    public var previewFileName: String? {
        guard preview == .made, let previewType else { return nil }
        return "\(id).\(previewType.fileExtension)"
    }

    /// Its largest gallery thumbnail, relative to the received-photos directory (as `name`
    /// is): ".ptk/thumbnails/12-360.jpg"; nil when it has none.
    public var thumbnailPath: String? {
        thumbnailFileName(side: Thumbnailer.gallerySides.max()!).map { PhotoLibrary.folderName + "/thumbnails/" + $0 }
    }

    /// Its preview, relative to the received-photos directory: ".ptk/previews/12.jpg"; nil
    /// when none is made.
    public var previewPath: String? { previewFileName.map { PhotoLibrary.folderName + "/previews/" + $0 } }

    /// `size` (as shown) fitted within `side` on its long side, never enlarged: the size of
    /// the thumbnailer's renditions (rounded to the nearest pixel, at least 1). Nil when the
    /// size is not known.
    public static func fitted(_ size: (width: Int, height: Int)?, within side: Int) -> (width: Int, height: Int)? {
        guard let size, size.width > 0, size.height > 0 else { return nil }
        let long = max(size.width, size.height)
        if long <= side { return size }
        func scaled(_ v: Int) -> Int { max(1, (v * side + long / 2) / long) }
        return (scaled(size.width), scaled(size.height))
    }
}

extension PhotoType {
    /// The ending of a library file of this type, without the dot: "png", "jpg".
    var fileExtension: String { String(endings[0].dropFirst()) }
}

/// Where a photo's preview stands (issue 45).
public enum PreviewState: Sendable, Equatable {
    /// Not made yet: the indexer makes previews after the thumbnails of what is waiting.
    case pending
    /// None is needed: the photo is at most `Thumbnailer.previewSide` on its long side and in
    /// a format browsers show (PNG, JPEG); the original is shown.
    case notNeeded
    /// `.ptk/previews/<id>.jpg` holds it.
    case made
    /// It could not be made, and why.
    case failed(String)
}

/// A photo just saved by ptkd, for the library to index.
public struct Arrival: Sendable, Equatable {
    /// Where it was saved, relative to the received-photos directory.
    public var name: String
    /// Its length in bytes.
    public var size: Int64
    /// Its SHA-256, 64 lowercase hex digits, as the store checked it.
    public var sha256: String
    /// When it was saved.
    public var received: WallTime
    /// The sender's HELLO name (or the LocalSend app's alias).
    public var senderName: String
    /// The address it was sent from.
    public var senderAddress: String
    /// The sender's device ID, when it has one.
    public var senderID: String?

    /// A photo as the door that received it describes it.
    public init(
        name: String, size: Int64, sha256: String, received: WallTime, senderName: String, senderAddress: String,
        senderID: String?
    ) {
        self.name = name
        self.size = size
        self.sha256 = sha256
        self.received = received
        self.senderName = senderName
        self.senderAddress = senderAddress
        self.senderID = senderID
    }
}

extension PhotoMetadata {
    /// What the library knows of `photo`, in the format's keys.
    public init(_ photo: Photo) {
        self.init()
        name = photo.name
        mediaType = photo.type.mediaType
        size = photo.size
        sha256 = photo.sha256
        width = photo.width
        height = photo.height
        bitDepth = photo.bitDepth
        colorType = photo.colorType
        interlace = photo.interlace
        received = photo.received.iso8601
        modified = photo.modified?.iso8601
        taken = photo.taken
        cameraMake = photo.cameraMake
        cameraModel = photo.cameraModel
        orientation = photo.orientation
        displayWidth = photo.displayedSize?.width
        displayHeight = photo.displayedSize?.height
        hasLocation = photo.hasLocation
        contentIdentifier = photo.liveID
        senderName = photo.senderName
        senderAddress = photo.senderAddress
        senderID = photo.senderID
        note = photo.note
        rating = photo.rating
        problem = photo.problem
        thumbnail = photo.thumbnailPath
        preview = photo.previewPath
        duration = photo.duration
        frameRate = photo.frameRate
        codec = photo.codec
    }
}
