import PTKSystem

/// The check run on a video file by its descriptor.
extension MP4Check {
    /// The file's facts, or why it must not be kept. Reads with pread: the descriptor's offset
    /// is left as it is.
    public static func examine(_ fd: FileDescriptor) -> Result<Report, FormatError> {
        let size: Int64
        do { size = try fd.status().size } catch { return .failure(FormatError("cannot read its status: \(error)")) }
        do {
            return .success(
                try check(size: size) { (offset, count) throws(FormatError) -> [UInt8] in
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
}
