import PTKTime
import PTKVocabulary

/// A value of a photo's details: text, or a time, which the pages show in the browser's time
/// zone (and `ptk show` in the host's).
public enum DetailValue: Sendable, Equatable {
    case text(String)
    case time(WallTime)
}

/// A photo as the pages show it (the web interface's and the static gallery's): plain text and
/// numbers, made of the library's `Photo` by PTKPhotoPages, so that PTKWeb renders without knowing the
/// library.
public struct WebPhoto: Sendable, Equatable {
    /// The library's id: what the web interface's addresses name a photo by (`/photo/42`).
    public var id: Int64
    /// The name relative to the received-photos directory ("a/b.png").
    public var name: String
    /// The SHA-256 as hex, nil before indexing.
    public var sha256: String?
    /// The width and height as the photo is shown (EXIF orientation applied), nil before indexing.
    public var displayedWidth: Int?
    /// The displayed height, as `displayedWidth`; nil before indexing.
    public var displayedHeight: Int?
    /// When it was received.
    public var received: WallTime
    /// When it was taken ("2024-07-03 14:22"), or nil.
    public var takenMinutes: String?
    /// The calendar day it was taken, else received ("2024-07-03"): the gallery's sections.
    public var day: String
    /// The sender's name as the sender gave it (outside text: escaped when shown), nil when unknown.
    public var senderName: String?
    /// The note written on the photo's page, nil when none.
    public var note: String?
    /// 0 to 5, nil when not rated.
    public var rating: Int?
    /// Indexed (facts read, thumbnail tried).
    public var indexed: Bool
    /// A gallery thumbnail exists (`thumbnailType` says its format).
    public var hasThumbnail: Bool
    /// The gallery thumbnails' format (.jpeg, or .png for a photo with transparency), nil when none (issue 45).
    public var thumbnailType: PhotoType?
    /// A preview (`/photo/ID/preview`, a JPEG of at most 1440 pixels) has been made (issue 45).
    public var hasPreview = false
    /// Its thumbnail is the old 256-pixel PNG of a library made before issue 45, until the
    /// photo is indexed again.
    public var oldThumbnail = false
    /// Some pixel is not fully opaque (issue 58), nil when unknown: the gallery's
    /// checkerboard goes behind such a photo only (`checkerboard`).
    public var hasAlpha: Bool?
    /// Why indexing or the thumbnail failed, or what was set aside in making it.
    public var problem: String?
    /// A video's length in seconds (issue 58): the gallery's badge; nil for a photo or when unknown.
    public var duration: Double?
    /// A video's coding in four letters ("avc1", "hvc1"): whether a browser can play it; nil
    /// for a photo or when unknown.
    public var codec: String?
    /// A Live Photo's still (issue 58): the id of its video, which the viewer plays on press or
    /// hover and the gallery marks; nil for any other photo.
    public var motionID: Int64?
    /// That video's coding in four letters, when known: whether the browser can play it.
    public var motionCodec: String?
    /// That video's file name, where a page links it (the static gallery).
    public var motionName: String?

    /// A photo as shown; `thumbnailType`, `hasPreview`, `oldThumbnail` are set after, when known.
    public init(
        id: Int64, name: String, sha256: String? = nil, displayedWidth: Int? = nil, displayedHeight: Int? = nil,
        received: WallTime, takenMinutes: String? = nil, day: String, senderName: String? = nil, note: String? = nil,
        rating: Int? = nil, indexed: Bool = false, hasThumbnail: Bool = false, problem: String? = nil
    ) {
        self.id = id
        self.name = name
        self.sha256 = sha256
        self.displayedWidth = displayedWidth
        self.displayedHeight = displayedHeight
        self.received = received
        self.takenMinutes = takenMinutes
        self.day = day
        self.senderName = senderName
        self.note = note
        self.rating = rating
        self.indexed = indexed
        self.hasThumbnail = hasThumbnail
        self.problem = problem
    }

    /// PNG, JPEG, HEIC or HEIF, as its name's ending says (PNG for any other).
    public var type: PhotoType { PhotoType(fileName: name) ?? .png }

    /// The width and height as shown, nil before indexing.
    public var displayedSize: (width: Int, height: Int)? {
        guard let displayedWidth, let displayedHeight else { return nil }
        return (displayedWidth, displayedHeight)
    }

    /// The `?v=` of its images' addresses: the first 12 hex digits of its SHA-256, which name
    /// its content ("" before indexing).
    /// A HEIF's largest thumbnail is made again, sharper, with its preview (its first one may
    /// come from the file's own small thumbnail): "p" once the preview is made, so that a
    /// browser does not keep the first one for a day.
    /// An upgraded library's old 256-pixel thumbnail is shown until the photo is indexed
    /// again: "o" while it is, so that the new ones are not taken for it.
    public var version: String {
        String((sha256 ?? "").prefix(12)) + (type.isHEIF && hasPreview ? "p" : "") + (oldThumbnail ? "o" : "")
    }

    /// An MP4 or MOV (issue 58): the viewer plays it, the gallery marks it.
    public var isVideo: Bool { type.isVideo }

    /// Browsers show the original itself (PNG, JPEG; not HEIC or HEIF).
    public var browserShowsOriginal: Bool { type == .png || type == .jpeg }

    /// Its size as shown, made to fit `side` on its long side (never enlarged), as the
    /// thumbnailer makes its renditions; nil before indexing.
    public func fitted(in side: Int) -> (width: Int, height: Int)? {
        guard let (w, h) = displayedSize, w > 0, h > 0 else { return nil }
        let scale = min(1.0, Double(side) / Double(max(w, h)))
        return (max(1, Int((Double(w) * scale).rounded())), max(1, Int((Double(h) * scale).rounded())))
    }

    /// Its thumbnail is shown on a transparency checkerboard: it has transparent pixels, or
    /// (not yet known) its thumbnail is a PNG, which may have them.
    public var checkerboard: Bool { hasThumbnail && (hasAlpha ?? (thumbnailType == .png)) }

    /// "3024x4032" as shown, or "?" before indexing.
    public var dimensions: String {
        guard let size = displayedSize else { return "?" }
        return "\(size.width)x\(size.height)"
    }

    /// `photos` (newest first) in the galleries' sections: photos filed in folders (the layout
    /// setting) folder by folder, the folder with the newest photo first, titled "folder/" (or
    /// "(top folder)"); without folders, by the day each was taken (else received), newest
    /// first, titled by the day. One untitled section when there is nothing to tell apart.
    public static func grouped(_ photos: [WebPhoto]) -> [(title: String, photos: [WebPhoto])] {
        guard !photos.isEmpty else { return [] }
        let folderOf = { (p: WebPhoto) -> String in splitLastComponent(p.name).folder ?? "" }
        let byFolder = photos.contains(where: { $0.name.containsScalar("/") })
        guard byFolder || Set(photos.map(\.day)).count > 1 else { return [("", photos)] }
        var list = photos
        if !byFolder { list.sort { ($0.day, $0.received) > ($1.day, $1.received) } }
        let grouping: (WebPhoto) -> String = byFolder ? folderOf : { $0.day }
        var order: [String] = []
        var groups: [String: [WebPhoto]] = [:]
        for p in list {
            let f = grouping(p)
            if groups[f] == nil { order.append(f) }
            groups[f, default: []].append(p)
        }
        return order.map { f in (!byFolder ? f : f.isEmpty ? "(top folder)" : f + "/", groups[f]!) }
    }
}
