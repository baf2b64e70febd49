import PTKSystem
import PTKVocabulary

extension PhotoStore {
    /// Takes the `request.size` bytes of `source` (an open file: a watched inbox's, `ptk
    /// import`'s) as the photo `request` describes, through the same path as every door's: a
    /// temporary file in `.incoming`, free space and min-free, the size, SHA-256 and structural
    /// checks for `request.type`, fsync, duplicates, and publishing without replacing. Reads
    /// with pread, so `source`'s offset is untouched; a source shorter than announced fails as
    /// a size mismatch, nothing published. `stop` is asked between reads of 1 MiB: true
    /// abandons the copy (nothing kept) with an I/O failure saying so. A source written while
    /// it was read (its size, modification or change time differ after the last read from
    /// before the first) is not published either: the bytes read may mix its old and new
    /// contents, and both may pass the format check (a JPEG's entropy-coded data has no
    /// checksum). That fails as a size mismatch, "changed while it was read".
    public func take(_ request: StoreRequest, from source: FileDescriptor, stop: () -> Bool = { false }) -> Result<
        StoredPhoto, StoreFailure
    > {
        let file: IncomingFile
        switch begin(request) {
        case .success(let f): file = f
        case .failure(let failure): return .failure(failure)
        }
        // The source as it was before any byte was read; fstat of an open descriptor fails
        // only on EIO, and then the read below fails too.
        let before = try? source.status()
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        var position = file.offset
        while position < request.size {
            if stop() {
                file.abandon(keepForResume: false)
                return .failure(StoreFailure(.io, "stopped before the whole file was read"))
            }
            let want = Int(min(Int64(buffer.count), request.size - position))
            let n: Int
            do {
                n = try buffer.withUnsafeMutableBytes { b throws(SystemError) in
                    try source.read(
                        fromAbsoluteOffset: position, into: UnsafeMutableRawBufferPointer(rebasing: b[..<want]))
                }
            } catch {
                file.abandon(keepForResume: false)
                return .failure(StoreFailure(.io, "cannot read the photo: \(error)"))
            }
            if n == 0 { break }
            let appended = buffer.withUnsafeBytes { b in
                Result { () throws(StoreFailure) in try file.append(UnsafeRawBufferPointer(rebasing: b[..<n])) }
            }
            if case .failure(let error) = appended {
                file.abandon(keepForResume: false)
                return .failure(error)
            }
            position += Int64(n)
        }
        let after = try? source.status()  // as `before`: EIO only, and the check below is then not made
        if let before, let after,
            after.size != before.size || after.modified != before.modified
                || after.modifiedNanoseconds != before.modifiedNanoseconds || after.changedAt != before.changedAt
        {
            file.abandon(keepForResume: false)
            return .failure(StoreFailure(.sizeMismatch, "the file changed while it was read"))
        }
        return file.finish()
    }
}
