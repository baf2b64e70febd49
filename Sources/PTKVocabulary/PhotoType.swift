/// The kinds of file a received-photos directory keeps: photos (PNG, JPEG, HEIC, HEIF) and a
/// phone camera's videos (MP4, QuickTime MOV), as the `types` setting chooses. The type
/// decides the structural check a file must pass and the ending its name gets.
public enum PhotoType: String, Sendable, CaseIterable {
    case png = "image/png"
    case jpeg = "image/jpeg"
    /// HEIF with HEVC-coded images (what iPhones send).
    case heic = "image/heic"
    /// HEIF of any other coding; checked and decoded the same way (libheif).
    case heif = "image/heif"
    /// An MP4 video (ISO base media file format: what Android cameras record; also `.m4v`).
    case mp4 = "video/mp4"
    /// A QuickTime video (what iPhone cameras record, and a Live Photo's motion).
    case mov = "video/quicktime"

    /// The MIME type ("image/png").
    public var mediaType: String { rawValue }

    /// The name endings kept as they are (in any case); the first is added to a name that has
    /// none of them.
    public var endings: [String] {
        switch self {
        case .png: return [".png"]
        case .jpeg: return [".jpg", ".jpeg"]
        case .heic: return [".heic", ".heif"]
        case .heif: return [".heif", ".heic"]
        case .mp4: return [".mp4", ".m4v"]
        case .mov: return [".mov", ".qt"]
        }
    }

    /// `name` split into its stem and its ending of this type as written ("" when it has none).
    public func split(_ name: String) -> (stem: String, ending: String) {
        let lower = name.lowercased()
        for ending in endings where lower.hasSuffix(ending) {
            return (String(name.dropLast(ending.count)), String(name.suffix(ending.count)))
        }
        return (name, "")
    }

    /// "PNG", "JPEG", "HEIC", "HEIF", "MP4", "MOV".
    public var displayName: String {
        switch self {
        case .png: return "PNG"
        case .jpeg: return "JPEG"
        case .heic: return "HEIC"
        case .heif: return "HEIF"
        case .mp4: return "MP4"
        case .mov: return "MOV"
        }
    }

    /// MP4 or MOV: a video, checked by its box structure (`MP4Validator`, `MP4Check`).
    public var isVideo: Bool { self == .mp4 || self == .mov }

    /// `name` with an ending that fits this type: kept when it has one of the type's endings;
    /// another type's ending is replaced ("IMG_1.png" as a JPEG gives "IMG_1.jpg"); none gets
    /// the type's own. (ptk-send offers files so; the web interface names uploads so.)
    public func fittedName(_ name: String) -> String {
        if !split(name).ending.isEmpty { return name }
        if let other = PhotoType(fileName: name) { return other.split(name).stem + endings[0] }
        return name + endings[0]
    }

    /// HEIC or HEIF: the ISO base media file format, checked and decoded by libheif.
    public var isHEIF: Bool { self == .heic || self == .heif }

    /// The 8-byte PNG signature (PNG specification 5.2).
    public static let pngSignature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    /// The brands (in a `ftyp` box) of HEIF files: HEVC-coded images and sequences, and the
    /// structural brands of any coding.
    public static let heifBrands: Set<String> = ["heic", "heix", "heim", "heis", "hevc", "hevx", "mif1", "msf1"]

    /// The major brands of the MP4 videos cameras and encoders write (ISO/IEC 14496-12 and -14,
    /// Apple's M4V, 3GPP, ffmpeg's defaults): a `ftyp` with one of these is an MP4. QuickTime's
    /// own brand is `qt  `.
    public static let mp4Brands: Set<String> = [
        "isom", "iso2", "iso3", "iso4", "iso5", "iso6", "mp41", "mp42", "avc1", "M4V ", "M4VH", "M4VP", "3gp4",
        "3gp5", "3gp6", "3g2a", "mmp4", "dash", "MSNV", "XAVC", "f4v ",
    ]

    /// The boxes an old QuickTime file (before `ftyp` existed) may start with.
    public static let quickTimeFirstBoxes: Set<String> = ["wide", "free", "skip", "mdat", "moov", "pnot"]

    /// The type of a media type ("image/png"), any case; nil for one not listed.
    public init?(mediaType: String) {
        self.init(rawValue: mediaType.lowercased())
    }

    /// The type a file name's ending says, nil for any other ending.
    public init?(fileName: String) {
        let lower = fileName.lowercased()
        func ends(_ e: String) -> Bool { lower.hasSuffix(e) && lower.count > e.count }
        // A type's own first ending first (".heif" is HEIF), then any it keeps.
        guard
            let type = PhotoType.allCases.first(where: { ends($0.endings[0]) })
                ?? PhotoType.allCases.first(where: { $0.endings.contains(where: ends) })
        else {
            return nil
        }
        self = type
    }

    /// The type a file's first bytes say (the PNG signature; a JPEG's SOI marker followed by
    /// another marker; a `ftyp` box whose major brand is a HEIF one: HEIC for the HEVC
    /// brands, else HEIF; an MP4 brand: MP4; `qt  `: MOV; an old QuickTime file's first box:
    /// MOV), nil when none.
    public static func sniff(_ head: some Collection<UInt8>) -> PhotoType? {
        if head.starts(with: pngSignature) { return .png }
        if head.starts(with: [0xFF, 0xD8, 0xFF]) { return .jpeg }
        let b = Array(head.prefix(12))
        guard b.count >= 8 else { return nil }
        let box = String(decoding: b[4..<8], as: UTF8.self)
        if box == "ftyp", b.count == 12 {
            let brand = String(decoding: b[8..<12], as: UTF8.self)
            if heifBrands.contains(brand) { return brand.hasPrefix("he") ? .heic : .heif }
            if mp4Brands.contains(brand) { return .mp4 }
            if brand == "qt  " { return .mov }
        }
        // A box size of at least its header, or 1 (a 64-bit size follows).
        let size = b[0..<4].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        if quickTimeFirstBoxes.contains(box), size == 1 || size >= 8 { return .mov }
        return nil
    }
}
