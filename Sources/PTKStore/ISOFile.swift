import PTKSystem

/// What the whole-file checks of ISO base media files (`HEIFCheck`, `MP4Check`) share: reading
/// the file by its descriptor, and finding the one top-level box that describes it (`meta`,
/// `moov`) among a bounded number.
enum ISOFile {
    /// Reads exactly `count` bytes at `offset`, or throws.
    typealias Read = (_ offset: Int64, _ count: Int) throws(FormatError) -> [UInt8]

    /// `check` run on the file in `fd`: its size and a reader of exact ranges (pread: the
    /// descriptor's offset is left as it is); or why the file could not be read or was refused.
    static func examine<R>(_ fd: FileDescriptor, _ check: (Int64, @escaping Read) throws(FormatError) -> R) -> Result<
        R, FormatError
    > {
        let size: Int64
        do { size = try fd.status().size } catch { return .failure(FormatError("cannot read its status: \(error)")) }
        do {
            return .success(
                try check(size) { (offset, count) throws(FormatError) -> [UInt8] in
                    var out = [UInt8](repeating: 0, count: count)
                    let done: Int
                    do {
                        done = try out.withUnsafeMutableBytes { b throws(SystemError) in
                            try fd.readFully(fromAbsoluteOffset: offset, into: b)
                        }
                    } catch { throw FormatError("cannot read it: \(error)") }
                    guard done == count else {
                        throw FormatError(
                            "the file ends at byte \(offset + Int64(done)), inside what its boxes describe")
                    }
                    return out
                })
        } catch {
            return .failure(error)
        }
    }

    /// The content (its offset and length) of the one top-level box of `type` in the file of
    /// `size` bytes, walked over at most `limit` boxes, each within the file; nil when there is
    /// none; throws for a second one.
    static func onlyBox(_ type: String, size: Int64, read: Read, limit: Int) throws(FormatError) -> (Int64, Int64)? {
        var at: Int64 = 0
        var boxes = 0
        var found: (Int64, Int64)?
        while at < size {
            boxes += 1
            guard boxes <= limit else { throw FormatError("over \(limit) boxes at the top level") }
            let head = try read(at, Int(min(16, size - at)))
            guard head.count >= 8 else { throw FormatError("\(head.count) stray bytes at the end") }
            let size32 = head[0..<4].reduce(0) { $0 << 8 | UInt64($1) }
            var length = Int64(size32)
            var header: Int64 = 8
            if size32 == 1 {
                guard head.count == 16 else { throw FormatError("a box's 64-bit size is cut off") }
                let large = head[8..<16].reduce(0) { $0 << 8 | UInt64($1) }
                guard large <= UInt64(Int64.max) else { throw FormatError("a box of \(large) bytes") }
                length = Int64(large)
                header = 16
            } else if size32 == 0 {
                length = size - at
            }
            guard length >= header, length <= size - at else {
                throw FormatError("a box of \(length) bytes at byte \(at) does not fit in the file")
            }
            if head[4..<8].elementsEqual(type.utf8) {
                guard found == nil else { throw FormatError("a second \(type) box at byte \(at)") }
                found = (at + header, length - header)
            }
            at += length
        }
        return found
    }
}
