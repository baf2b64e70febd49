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
    private var stream: ISOBoxStream
    private var rules = Rules()

    /// A check at the start of a file. With `totalSize` (nil: unknown) every box must stay within it,
    /// and only then may a last box have size 0 ("to the end").
    public init(totalSize: Int64? = nil) {
        stream = ISOBoxStream(totalSize: totalSize, format: "an MP4 or MOV file", limit: MP4Limits.topLevelBoxes)
    }

    /// Takes the next bytes: throws at the first box header, size or `ftyp` that cannot be a video's.
    public mutating func feed(_ bytes: UnsafeRawBufferPointer) throws(FormatError) {
        try stream.feed(bytes, rules: &rules)
    }

    /// Throws when no box came, no `moov` or `mdat` box came, or the stream ended inside a box.
    public func finish() throws(FormatError) {
        guard stream.endedCleanly else { throw FormatError("truncated inside a box") }
        if stream.boxes == 0 { throw FormatError("empty") }
        guard rules.moovs == 1 else { throw FormatError("no moov box (the movie's description)") }
        guard rules.sawMdat else { throw FormatError("no mdat box (the movie's data)") }
    }

    /// A video's top-level boxes: `ftyp` first with an MP4 or QuickTime brand (or an old
    /// QuickTime file's first box), one `moov` within its limit, an `mdat`.
    private struct Rules: ISOBoxRules {
        var moovs = 0
        var sawMdat = false

        mutating func header(_ box: ISOBoxStream.Header) throws(FormatError) -> Bool {
            if box.index == 1 && box.type != "ftyp" && !PhotoType.quickTimeFirstBoxes.contains(box.type) {
                throw FormatError("starts with a \(box.type) box, not ftyp (not an MP4 or MOV file)")
            }
            switch box.type {
            case "ftyp":
                try box.checkFileType(limit: MP4Limits.ftypBytes)
                return true
            case "moov":
                moovs += 1
                guard moovs == 1 else { throw FormatError("a second moov box at byte \(box.start)") }
                guard box.size <= MP4Limits.moovBytes else {
                    throw FormatError(
                        "moov box of \(box.size) bytes is over the \(MP4Limits.moovBytes >> 20) MiB limit")
                }
                return false
            case "mdat":
                sawMdat = true
                return false
            default:
                return false
            }
        }

        /// The ftyp box's brands: one of them an MP4 or QuickTime brand.
        func body(_ content: [UInt8]) throws(FormatError) {
            let brands = isoBrands(content)
            guard brands.contains(where: { PhotoType.mp4Brands.contains($0) || $0 == "qt  " }) else {
                throw FormatError("brands \(brands.joined(separator: ", ")) are not MP4 or QuickTime ones")
            }
        }
    }
}
