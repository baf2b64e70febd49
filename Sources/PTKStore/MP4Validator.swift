import PTKVocabulary

/// Checks the top-level box structure of a video (ISO/IEC 14496-12, the ISO base media file
/// format, as MP4 and QuickTime MOV files are made) as bytes stream in, keeping a few bytes of
/// state: a sequence of boxes, each with a size of at least its header (32-bit, or 64-bit
/// after a size of 1) that stays within the file (a size of 0, "to the end", only for a last
/// box in a file of announced size), a type of four printable characters, at most
/// `MP4Limits.topLevelBoxes` of them; a `ftyp` box first (at most 4 KiB, with an MP4 or
/// QuickTime brand), or for an old QuickTime file one of the boxes such a file starts with;
/// exactly one `moov` box (at most `MP4Limits.moovBytes`), at least one `mdat`; nothing after
/// the last box. What `moov` holds (its `mvhd`, tracks, chunk offsets) is `MP4Check`'s, once
/// the whole file is there.
public struct MP4Validator: FormatCheck {
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
    private var moovs = 0
    private var sawMdat = false

    /// A check at the start of a file. With `totalSize` (nil: unknown) every box must stay within it,
    /// and only then may a last box have size 0 ("to the end").
    public init(totalSize: Int64? = nil) {
        cursor = StreamCursor(totalSize: totalSize, fieldCapacity: 16)
    }

    /// Takes the next bytes: throws at the first box header, size or `ftyp` that cannot be a video's.
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

    /// Throws when no box came, no `moov` or `mdat` box came, or the stream ended inside a box.
    public func finish() throws(FormatError) {
        switch phase {
        case .header where cursor.field.isEmpty:
            if boxes == 0 { throw FormatError("empty") }
        case .toEnd:
            break
        default:
            throw FormatError("truncated inside a box")
        }
        guard moovs == 1 else { throw FormatError("no moov box (the movie's description)") }
        guard sawMdat else { throw FormatError("no mdat box (the movie's data)") }
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
        let start = cursor.position - Int64(field.count)
        guard typeBytes.allSatisfy({ (0x20...0x7E).contains($0) }) else {
            throw FormatError("box \(boxes + 1) at byte \(start) has no box type (not an MP4 or MOV file)")
        }
        let type = String(decoding: typeBytes, as: UTF8.self)
        let headerSize = Int64(field.count)
        boxes += 1
        guard boxes <= MP4Limits.topLevelBoxes else {
            throw FormatError("over \(MP4Limits.topLevelBoxes) boxes at the top level")
        }
        if boxes == 1 && type != "ftyp" && !PhotoType.quickTimeFirstBoxes.contains(type) {
            throw FormatError("starts with a \(type) box, not ftyp (not an MP4 or MOV file)")
        }
        if boxes > 1 && type == "ftyp" { throw FormatError("a second ftyp box") }
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
        switch type {
        case "ftyp" where size > MP4Limits.ftypBytes:
            throw FormatError("ftyp box of \(size) bytes is over the \(MP4Limits.ftypBytes)-byte limit")
        case "moov":
            moovs += 1
            guard moovs == 1 else { throw FormatError("a second moov box at byte \(start)") }
            guard size <= MP4Limits.moovBytes else {
                throw FormatError("moov box of \(size) bytes is over the \(MP4Limits.moovBytes >> 20) MiB limit")
            }
        case "mdat":
            sawMdat = true
        default:
            break
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

    /// The ftyp box's content: a major brand, a minor version, compatible brands; one of them
    /// an MP4 or QuickTime brand.
    private func checkFileType() throws(FormatError) {
        let field = cursor.field
        var brands = [String(decoding: field[0..<4], as: UTF8.self)]
        var i = 8
        while i + 4 <= field.count {
            brands.append(String(decoding: field[i..<i + 4], as: UTF8.self))
            i += 4
        }
        guard brands.contains(where: { PhotoType.mp4Brands.contains($0) || $0 == "qt  " }) else {
            throw FormatError("brands \(brands.joined(separator: ", ")) are not MP4 or QuickTime ones")
        }
    }
}
