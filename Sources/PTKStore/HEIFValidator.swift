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

    private enum Phase: Sendable {
        /// A box header: 8 bytes, or 16 with a 64-bit size.
        case header
        /// A box's content, kept in `field` (ftyp) or skipped.
        case body(remaining: Int64, keep: Bool)
        /// A last box of size 0: everything to the end of the file.
        case toEnd
    }

    private var phase = Phase.header
    private var cursor: StreamCursor
    private var boxes = 0
    private var sawMeta = false

    /// A check at the start of a file. With `totalSize` (nil: unknown) every box must stay within it,
    /// and only then may a last box have size 0 ("to the end").
    public init(totalSize: Int64? = nil) {
        cursor = StreamCursor(totalSize: totalSize, fieldCapacity: 16)
    }

    /// Takes the next bytes: throws at the first box header, size or `ftyp` that cannot be HEIF's.
    public mutating func feed(_ bytes: UnsafeRawBufferPointer) throws(FormatError) {
        var i = 0
        let n = bytes.count
        while i < n {
            switch phase {
            case .toEnd:
                cursor.skip(&i, to: n)
            case .body(let remaining, let keep):
                let left = cursor.pass(bytes, &i, remaining: remaining, keep: keep).left
                if left == 0 {
                    if keep { try checkFileType() }
                    phase = .header
                    cursor.clearField()
                } else {
                    phase = .body(remaining: left, keep: keep)
                }
            case .header:
                cursor.gatherByte(bytes, &i)
                try headerByte()
            }
        }
    }

    /// Throws when no box came, no `meta` box came, or the stream ended inside a box.
    public func finish() throws(FormatError) {
        switch phase {
        case .header where cursor.field.isEmpty:
            if boxes == 0 { throw FormatError("empty") }
            guard sawMeta else { throw FormatError("no meta box (the images' descriptions)") }
        case .toEnd:
            guard sawMeta else { throw FormatError("no meta box (the images' descriptions)") }
        default:
            throw FormatError("truncated inside a box")
        }
    }

    private static func number(_ bytes: ArraySlice<UInt8>) -> UInt64 {
        bytes.reduce(0) { $0 << 8 | UInt64($1) }
    }

    private mutating func headerByte() throws(FormatError) {
        let field = cursor.field
        guard field.count >= 8 else { return }
        let size32 = Self.number(field[0..<4])
        if size32 == 1 && field.count < 16 { return }
        let typeBytes = field[4..<8]
        guard typeBytes.allSatisfy({ (0x20...0x7E).contains($0) }) else {
            throw FormatError(
                "box \(boxes + 1) at byte \(cursor.position - Int64(field.count)) has no box type (not a HEIF file)")
        }
        let type = String(decoding: typeBytes, as: UTF8.self)
        let headerSize = Int64(field.count)
        let start = cursor.position - headerSize
        boxes += 1
        // libheif keeps every top-level box: a file of empty boxes is memory, not a photo.
        guard boxes <= HEIFLimits.topLevelBoxes else {
            throw FormatError("over \(HEIFLimits.topLevelBoxes) boxes at the top level")
        }
        if boxes == 1 && type != "ftyp" { throw FormatError("does not start with a ftyp box (not a HEIF file)") }
        if boxes > 1 && type == "ftyp" { throw FormatError("a second ftyp box") }
        if type == "meta" { sawMeta = true }
        var size: Int64
        if size32 == 1 {
            let large = Self.number(field[8..<16])
            guard large <= UInt64(Int64.max) else { throw FormatError("\(type) box of \(large) bytes") }
            size = Int64(large)
        } else if size32 == 0 {
            // To the end of the file: the last box.
            guard let totalSize = cursor.totalSize else {
                throw FormatError("\(type) box without a size, in a file of unknown size")
            }
            size = totalSize - start
        } else {
            size = Int64(size32)
        }
        guard size >= headerSize else { throw FormatError("\(type) box of \(size) bytes is shorter than its header") }
        if let totalSize = cursor.totalSize, !cursor.fits(from: start, count: size) {
            throw FormatError(
                "\(type) box of \(size) bytes at byte \(start) runs past the end of the \(totalSize)-byte file")
        }
        if type == "ftyp" && size > Self.ftypLimit {
            throw FormatError("ftyp box of \(size) bytes is over the \(Self.ftypLimit)-byte limit")
        }
        if type == "meta" && size > Self.metaLimit {
            throw FormatError("meta box of \(size) bytes is over the 16 MiB limit")
        }
        cursor.clearField()
        let body = size - headerSize
        if size32 == 0 {
            phase = .toEnd
        } else if type == "ftyp" {
            guard body >= 8 else { throw FormatError("ftyp box of \(size) bytes is too short for its brands") }
            phase = .body(remaining: body, keep: true)
        } else if body == 0 {
            phase = .header
        } else {
            phase = .body(remaining: body, keep: false)
        }
    }

    /// The ftyp box's content: a major brand, a minor version, compatible brands.
    private func checkFileType() throws(FormatError) {
        let field = cursor.field
        var brands = [String(decoding: field[0..<4], as: UTF8.self)]
        var i = 8
        while i + 4 <= field.count {
            brands.append(String(decoding: field[i..<i + 4], as: UTF8.self))
            i += 4
        }
        guard brands.contains(where: { PhotoType.heifBrands.contains($0) }) else {
            throw FormatError("brands \(brands.joined(separator: ", ")) are not HEIF ones")
        }
    }
}
