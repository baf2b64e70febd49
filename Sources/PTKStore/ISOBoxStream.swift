/// The top-level boxes of an ISO base media file (ISO/IEC 14496-12: HEIF, MP4, MOV) as bytes
/// stream in, in pieces of any size, keeping a few bytes of state: each box a 32-bit size (1: a
/// 64-bit size follows the type; 0: to the end of the file, for a file of announced size), a
/// type of four printable characters, a size of at least its header that stays within the
/// announced size. What a format requires of its boxes (which come first, which once, how
/// large) is its `ISOBoxRules`; `HEIFValidator` and `MP4Validator` are this stream and their rules.
struct ISOBoxStream: Sendable {
    /// A box's header, as the rules see it.
    struct Header: Sendable {
        /// Its four characters.
        let type: String
        /// Its offset in the file.
        let start: Int64
        /// Its size, header included ("to the end": the rest of the announced size).
        let size: Int64
        /// 8, or 16 with a 64-bit size.
        let headerSize: Int64
        /// Which box it is, from 1.
        let index: Int

        /// A `ftyp` box's header as every format wants it: not a second one, at most `limit`
        /// bytes, room for a major brand and a version (its content then goes to the rules' `body`).
        func checkFileType(limit: Int64) throws(FormatError) {
            if index > 1 { throw FormatError("a second ftyp box") }
            if size > limit { throw FormatError("ftyp box of \(size) bytes is over the \(limit)-byte limit") }
            guard size - headerSize >= 8 else {
                throw FormatError("ftyp box of \(size) bytes is too short for its brands")
            }
        }
    }

    private enum Phase: Sendable {
        /// A box header: 8 bytes, or 16 with a 64-bit size.
        case header
        /// A box's content, kept in the cursor's field (for the rules) or skipped.
        case body(remaining: Int64, keep: Bool)
        /// A last box of size 0: everything to the end of the file.
        case toEnd
    }

    private var phase = Phase.header
    private var cursor: StreamCursor
    private(set) var boxes = 0
    /// "a HEIF file", "an MP4 or MOV file": what a stream that is not one is said not to be.
    let format: String
    /// The most boxes at the top level.
    let limit: Int

    init(totalSize: Int64?, format: String, limit: Int) {
        cursor = StreamCursor(totalSize: totalSize, fieldCapacity: 16)
        self.format = format
        self.limit = limit
    }

    /// Takes the next bytes: throws at the first header that cannot be a box, or that `rules` refuse.
    mutating func feed(_ bytes: UnsafeRawBufferPointer, rules: inout some ISOBoxRules) throws(FormatError) {
        var i = 0
        let n = bytes.count
        while i < n {
            switch phase {
            case .toEnd:
                cursor.skip(&i, to: n)
            case .body(let remaining, let keep):
                let left = cursor.pass(bytes, &i, remaining: remaining, keep: keep).left
                if left == 0 {
                    if keep { try rules.body(cursor.field) }
                    phase = .header
                    cursor.clearField()
                } else {
                    phase = .body(remaining: left, keep: keep)
                }
            case .header:
                cursor.gatherByte(bytes, &i)
                try headerByte(&rules)
            }
        }
    }

    /// Whether the stream ended where a box does (or inside a last box "to the end").
    var endedCleanly: Bool {
        switch phase {
        case .header: return cursor.field.isEmpty
        case .toEnd: return true
        case .body: return false
        }
    }

    private static func number(_ bytes: ArraySlice<UInt8>) -> UInt64 {
        bytes.reduce(0) { $0 << 8 | UInt64($1) }
    }

    private mutating func headerByte(_ rules: inout some ISOBoxRules) throws(FormatError) {
        let field = cursor.field
        guard field.count >= 8 else { return }
        let size32 = Self.number(field[0..<4])
        if size32 == 1 && field.count < 16 { return }
        let typeBytes = field[4..<8]
        let headerSize = Int64(field.count)
        let start = cursor.position - headerSize
        guard typeBytes.allSatisfy({ (0x20...0x7E).contains($0) }) else {
            throw FormatError("box \(boxes + 1) at byte \(start) has no box type (not \(format))")
        }
        let type = String(decoding: typeBytes, as: UTF8.self)
        boxes += 1
        guard boxes <= limit else { throw FormatError("over \(limit) boxes at the top level") }
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
        let keep = try rules.header(
            Header(type: type, start: start, size: size, headerSize: headerSize, index: boxes))
        cursor.clearField()
        let body = size - headerSize
        if size32 == 0 {
            phase = .toEnd
        } else if body == 0 {
            phase = .header
            if keep { try rules.body([]) }
        } else {
            phase = .body(remaining: body, keep: keep)
        }
    }
}

/// What a format requires of its top-level boxes, told each box's header and the content of
/// those it keeps.
protocol ISOBoxRules: Sendable {
    /// Checks a box's header; returns whether its content is to be kept and given to `body`.
    mutating func header(_ box: ISOBoxStream.Header) throws(FormatError) -> Bool
    /// Checks the content of a box `header` kept.
    mutating func body(_ content: [UInt8]) throws(FormatError)
}
