import PTKVocabulary

/// Checks the box structure of a HEIF file (ISO/IEC 14496-12, the ISO base media file format;
/// ISO/IEC 23008-12, HEIF) as bytes stream in, keeping a few bytes of state: a sequence of
/// top-level boxes, each with a size of at least its header that stays within the file (a
/// size of 0, "to the end", only with the announced size known), a type of four printable
/// characters, at most `HEIFLimits.topLevelBoxes` of them; a `ftyp` box first, at most 4 KiB, whose major or a compatible brand is a HEIF
/// one; a `meta` box (at most 16 MiB: the item locations and properties); nothing after the
/// last box. It does not parse what the boxes hold: before a HEIF is kept, `HEIFCheck` reads
/// its items (counts, declared sizes) and then libheif must open it and find its primary image.
public struct HEIFValidator: FormatCheck {
    /// The largest `ftyp` box: a major brand, a version and compatible brands.
    public static let ftypLimit: Int64 = 4096
    /// The largest `meta` box.
    public static let metaLimit: Int64 = 16 << 20

    private var stream: ISOBoxStream
    private var rules = Rules()

    /// A check at the start of a file. With `totalSize` (nil: unknown) every box must stay within it,
    /// and only then may a last box have size 0 ("to the end").
    public init(totalSize: Int64? = nil) {
        stream = ISOBoxStream(totalSize: totalSize, format: "a HEIF file", limit: HEIFLimits.topLevelBoxes)
    }

    /// Takes the next bytes: throws at the first box header, size or `ftyp` that cannot be HEIF's.
    public mutating func feed(_ bytes: UnsafeRawBufferPointer) throws(FormatError) {
        try stream.feed(bytes, rules: &rules)
    }

    /// Throws when no box came, no `meta` box came, or the stream ended inside a box.
    public func finish() throws(FormatError) {
        guard stream.endedCleanly else { throw FormatError("truncated inside a box") }
        if stream.boxes == 0 { throw FormatError("empty") }
        guard rules.sawMeta else { throw FormatError("no meta box (the images' descriptions)") }
    }

    /// HEIF's top-level boxes: `ftyp` first (libheif keeps every box: a file of empty boxes is
    /// memory, not a photo, hence the stream's limit), with a HEIF brand; a `meta`.
    private struct Rules: ISOBoxRules {
        var sawMeta = false

        mutating func header(_ box: ISOBoxStream.Header) throws(FormatError) -> Bool {
            if box.index == 1 && box.type != "ftyp" {
                throw FormatError("does not start with a ftyp box (not a HEIF file)")
            }
            switch box.type {
            case "ftyp":
                try box.checkFileType(limit: HEIFValidator.ftypLimit)
                return true
            case "meta":
                sawMeta = true
                if box.size > HEIFValidator.metaLimit {
                    throw FormatError("meta box of \(box.size) bytes is over the 16 MiB limit")
                }
                return false
            default:
                return false
            }
        }

        /// The ftyp box's content: a major brand, a minor version, compatible brands.
        func body(_ content: [UInt8]) throws(FormatError) {
            let brands = isoBrands(content)
            guard brands.contains(where: { PhotoType.heifBrands.contains($0) }) else {
                throw FormatError("brands \(brands.joined(separator: ", ")) are not HEIF ones")
            }
        }
    }
}

/// A `ftyp` box's brands: its major brand, then its compatible ones (after the minor version).
func isoBrands(_ content: [UInt8]) -> [String] {
    guard content.count >= 4 else { return [] }
    var brands = [String(decoding: content[0..<4], as: UTF8.self)]
    var i = 8
    while i + 4 <= content.count {
        brands.append(String(decoding: content[i..<i + 4], as: UTF8.self))
        i += 4
    }
    return brands
}
