import PTKSystem

/// Why a file's SHA-256 could not be computed.
public enum FileHashFailure: Error, Equatable, Sendable, CustomStringConvertible {
    /// `cancelled` said stop.
    case cancelled
    /// A read (or mapping the range about to be read) failed.
    case system(SystemError)
    /// The file is no longer the size it was said to be: it changed after it was checked.
    case sizeChanged(expected: Int64, now: Int64)

    /// Lower-case words for the sender's message about the file.
    public var description: String {
        switch self {
        case .cancelled: return "hashing was cancelled"
        case .system(let e): return e.description
        case .sizeChanged(let expected, let now):
            return "the file changed after it was checked (\(expected) bytes, now \(now))"
        }
    }
}

extension SHA256 {
    /// How much is hashed between two questions to `cancelled`.
    public static let fileStep = 1 << 20

    /// The SHA-256 of the file open as `fd`, from its first byte: the one routine for every
    /// file ptk hashes (a photo ptk-send offers, one the library indexes or imports).
    ///
    /// - `size`: what the file's size must be (ptk-send checked it before connecting); then the
    ///   file is hashed through a memory map where the page cache holds it, with no copy, each
    ///   MiB's range checked to be in the file before it is touched, so a file truncated meanwhile
    ///   is `.sizeChanged` or `.system`, not SIGBUS. nil: read with pread to its end.
    /// - `buffer`: where reads go (a caller hashing many files keeps one); nil: one of 1 MiB.
    /// - `cancelled`: asked before every MiB; true stops with `.cancelled`.
    public static func hex(
        ofFile fd: FileDescriptor, size: Int64? = nil, buffer: UnsafeMutableRawBufferPointer? = nil,
        cancelled: () -> Bool = { false }
    ) -> Result<String, FileHashFailure> {
        if let size {
            let now: Int64
            do { now = try fd.status().size } catch { return .failure(.system(error)) }
            guard now == size else { return .failure(.sizeChanged(expected: size, now: now)) }
            // A file that cannot be mapped is read instead: same hash, one more copy.
            if size > 0, let map = try? MappedFile(fd, length: Int(size)) {
                var hasher = SHA256()
                for start in stride(from: 0, to: Int(size), by: fileStep) {
                    if cancelled() { return .failure(.cancelled) }
                    let range = start..<min(Int(size), start + fileStep)
                    do throws(SystemError) { try map.prepare(range) } catch { return .failure(.system(error)) }
                    map.withBytes(in: range) { hasher.update($0) }
                }
                return .success(hasher.finalizeHex())
            }
        }
        let own = buffer == nil ? UnsafeMutableRawBufferPointer.allocate(byteCount: fileStep, alignment: 64) : nil
        defer { own?.deallocate() }
        let through = buffer ?? own!
        var hasher = SHA256()
        var offset: Int64 = 0
        while true {
            if cancelled() { return .failure(.cancelled) }
            let n: Int
            do { n = try fd.read(fromAbsoluteOffset: offset, into: through) } catch { return .failure(.system(error)) }
            if n == 0 { break }
            hasher.update(UnsafeRawBufferPointer(rebasing: through[..<n]))
            offset += Int64(n)
        }
        if let size, offset != size { return .failure(.sizeChanged(expected: size, now: offset)) }
        return .success(hasher.finalizeHex())
    }
}
