import FoundationEssentials
import PTKStore

/// What the library holds about one photo of the received-photos directory.
public struct Photo: Sendable, Equatable {
    /// The row's number: never reused, it names the thumbnail file.
    public var id: Int64
    /// The file name in the directory.
    public var name: String
    public var size: Int64
    /// Lower-case hex; nil until the photo has been indexed (a file found in the directory).
    public var sha256: String?
    /// From the PNG header (a JPEG's frame header: bit depth is its precision, colour type 0
    /// greyscale or 2 colour, interlace 1 progressive); nil until indexed or when the file has
    /// no readable header.
    public var width: Int?
    public var height: Int?
    public var bitDepth: Int?
    public var colorType: Int?
    public var interlace: Int?
    /// When it was received (or found in the directory, or imported), in milliseconds since the epoch.
    public var received: Int64
    /// The sender's HELLO name, address and device ID (nil for a photo copied in by hand).
    public var senderName: String?
    public var senderAddress: String?
    public var senderID: String?
    public var note: String?
    /// 0 to 5; nil when not rated.
    public var rating: Int?
    /// False while the photo waits for its metadata and thumbnail.
    public var indexed: Bool
    /// True when `.ptk/thumbnails/<id>.png` holds its thumbnail.
    public var hasThumbnail: Bool
    /// Why there is no thumbnail (too many pixels, not decodable), when there is none.
    public var problem: String?

    public init(id: Int64, name: String, size: Int64, received: Int64) {
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

    /// "4032x3024", or "?" before indexing.
    public var dimensions: String {
        guard let width, let height else { return "?" }
        return "\(width)x\(height)"
    }
}

/// A photo just saved by ptkd, for the library to index.
public struct Arrival: Sendable, Equatable {
    public var name: String
    public var size: Int64
    public var sha256: String
    public var received: Int64
    public var senderName: String
    public var senderAddress: String
    public var senderID: String?

    public init(name: String, size: Int64, sha256: String, received: Int64, senderName: String, senderAddress: String, senderID: String?) {
        self.name = name
        self.size = size
        self.sha256 = sha256
        self.received = received
        self.senderName = senderName
        self.senderAddress = senderAddress
        self.senderID = senderID
    }
}

/// The metadata of a photo as JSON: `ptk list --json`, `ptk show --json` and a package's
/// `photo.metadata` (which adds `Version` and `Thumbnail`). Keys as PhotoKeeper's documents
/// spelled them.
public struct PhotoMetadata: Codable, Sendable, Equatable {
    public var Version: Int?
    public var Name: String?
    public var Size: Int64?
    public var SHA256: String?
    public var Width: Int?
    public var Height: Int?
    public var BitDepth: Int?
    public var ColorType: Int?
    public var Interlace: Int?
    /// ISO 8601, UTC, with milliseconds: "2026-11-30T09:41:02.123Z".
    public var Received: String?
    public var SenderName: String?
    public var SenderAddress: String?
    public var SenderID: String?
    public var Note: String?
    public var Rating: Int?
    /// Listings only: false while the photo waits to be indexed.
    public var Indexed: Bool?
    /// Why there is no thumbnail.
    public var Problem: String?
    /// Packages only: the thumbnail PNG, base64.
    public var Thumbnail: String?

    public init(_ photo: Photo) {
        Name = photo.name
        Size = photo.size
        SHA256 = photo.sha256
        Width = photo.width
        Height = photo.height
        BitDepth = photo.bitDepth
        ColorType = photo.colorType
        Interlace = photo.interlace
        Received = formatISO8601(milliseconds: photo.received)
        SenderName = photo.senderName
        SenderAddress = photo.senderAddress
        SenderID = photo.senderID
        Note = photo.note
        Rating = photo.rating
        Problem = photo.problem
    }

    /// Pretty, with sorted keys, so that two exports of one photo are the same bytes.
    public func json() -> String {
        // Encoding strings and integers cannot fail.
        String(decoding: (try? Self.encoder.encode(self)) ?? Data("{}".utf8), as: UTF8.self)
    }

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

/// `milliseconds` since the epoch as ISO 8601 UTC with milliseconds.
public func formatISO8601(milliseconds: Int64) -> String {
    let (days, rest) = milliseconds.quotientAndRemainder(dividingBy: 86_400_000)
    let (d, ms) = rest < 0 ? (days - 1, rest + 86_400_000) : (days, rest)
    let (y, m, day) = civil(fromDays: d)
    func two(_ v: Int64) -> String { v < 10 ? "0\(v)" : "\(v)" }
    let millis = ms % 1000
    let milli = millis < 10 ? "00\(millis)" : millis < 100 ? "0\(millis)" : "\(millis)"
    return "\(y)-\(two(m))-\(two(day))T\(two(ms / 3_600_000)):\(two(ms / 60_000 % 60)):\(two(ms / 1000 % 60)).\(milli)Z"
}

/// Parses what `formatISO8601` writes, also without fraction or with an offset
/// ("+02:00"); nil if the text is not such a time.
public func parseISO8601(_ text: String) -> Int64? {
    let b = Array(text.utf8)
    func number(_ from: Int, _ count: Int) -> Int64? {
        guard from + count <= b.count else { return nil }
        var v: Int64 = 0
        for c in b[from..<from + count] {
            guard c >= 48 && c <= 57 else { return nil }
            v = v * 10 + Int64(c - 48)
        }
        return v
    }
    guard b.count >= 20, let y = number(0, 4), b[4] == 45, let mo = number(5, 2), b[7] == 45, let d = number(8, 2),
          b[10] == 84 || b[10] == 116 || b[10] == 32, let h = number(11, 2), b[13] == 58, let mi = number(14, 2),
          b[16] == 58, let s = number(17, 2), (1...12).contains(mo), (1...31).contains(d), h < 24, mi < 60, s < 61 else { return nil }
    var i = 19
    var millis: Int64 = 0
    if i < b.count, b[i] == 46 {
        i += 1
        var digits = 0
        while i < b.count, b[i] >= 48, b[i] <= 57 {
            if digits < 3 { millis = millis * 10 + Int64(b[i] - 48) }
            digits += 1
            i += 1
        }
        guard digits > 0 else { return nil }
        if digits < 3 { for _ in digits..<3 { millis *= 10 } }
    }
    var offset: Int64 = 0
    guard i < b.count else { return nil }
    if b[i] == 90 || b[i] == 122 {
        i += 1
    } else if b[i] == 43 || b[i] == 45, let oh = number(i + 1, 2), b.count > i + 3, b[i + 3] == 58, let om = number(i + 4, 2) {
        offset = (oh * 60 + om) * 60_000 * (b[i] == 45 ? -1 : 1)
        i += 6
    } else {
        return nil
    }
    guard i == b.count else { return nil }
    return days(fromCivil: y, mo, d) * 86_400_000 + ((h * 60 + mi) * 60 + s) * 1000 + millis - offset
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
func days(fromCivil year: Int64, _ month: Int64, _ day: Int64) -> Int64 {
    let y = month <= 2 ? year - 1 : year
    let era = (y >= 0 ? y : y - 399) / 400
    let yoe = y - era * 400
    let doy = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
    return era * 146_097 + doe - 719_468
}

/// The date of a day number since 1970-01-01.
func civil(fromDays z0: Int64) -> (Int64, Int64, Int64) {
    let z = z0 + 719_468
    let era = (z >= 0 ? z : z - 146_096) / 146_097
    let doe = z - era * 146_097
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
    let mp = (5 * doy + 2) / 153
    let d = doy - (153 * mp + 2) / 5 + 1
    let m = mp < 10 ? mp + 3 : mp - 9
    return (yoe + era * 400 + (m <= 2 ? 1 : 0), m, d)
}
