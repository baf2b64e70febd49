import PTKSystem
import PTKVocabulary

// Bytes that are in the temporary file without being appended (issue 56's inboxes): cloned into
// it from the source, or the source itself linked into `.incoming`. They pass the same checks
// as bytes appended, read from the file that is to be published.

extension IncomingFile {
    /// Makes the (new, empty) temporary file share all of `source`'s bytes: a reflink
    /// (FICLONE), no byte copied, and a later change to either leaves the other as it was.
    /// Throws as `cloneContents` does: `code.meansCannotClone` says copy instead.
    func clone(from source: FileDescriptor) throws(SystemError) {
        try fd.cloneContents(of: source)
    }

    /// Reads the bytes already in the file (cloned into it, or the linked source itself) from
    /// `written` to its end through the SHA-256 and structural checks, writing nothing: read
    /// from this file, never from where they came from, so the bytes checked are the bytes
    /// published (a source written after its clone changes the source only). A file that is
    /// not `request.size` bytes long fails as a size mismatch; one that cannot be a photo of
    /// its type fails `.notAPhoto` as soon as that shows. `stop` is asked between reads of 1 MiB.
    func checkHeldBytes(stop: () -> Bool) throws(StoreFailure) {
        let length: Int64
        do { length = try fd.status().size } catch {
            throw StoreFailure(.io, "cannot read the file taken: \(error)")
        }
        guard length == request.size else {
            throw StoreFailure(.sizeMismatch, "the file taken holds \(length) bytes, not the \(request.size) looked at")
        }
        var buffer = [UInt8](repeating: 0, count: Int(min(max(length, 1), 1 << 20)))
        while written < length {
            if stop() { throw StoreFailure(.io, "stopped before the whole file was read") }
            let want = Int(min(Int64(buffer.count), length - written))
            let position = written
            let n: Int
            do {
                n = try buffer.withUnsafeMutableBytes { b throws(SystemError) in
                    try fd.read(fromAbsoluteOffset: position, into: UnsafeMutableRawBufferPointer(rebasing: b[..<want]))
                }
            } catch {
                throw StoreFailure(.io, "cannot read the file taken: \(error)")
            }
            if n == 0 {
                throw StoreFailure(.sizeMismatch, "the file taken ended after \(written) of \(request.size) bytes")
            }
            buffer.withUnsafeBytes { b in
                let slice = UnsafeRawBufferPointer(rebasing: b[..<n])
                hashInline(slice)
                checkStructureInline(slice)
            }
            if let formatError { throw StoreFailure(.notAPhoto, message(formatError)) }
            written += Int64(n)
        }
    }
}
