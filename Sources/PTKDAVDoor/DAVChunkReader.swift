import PTKHTTP
import PTKSystem
import PTKUpload

/// An upload folder's chunks read one after another as one body (for `StoreUpload.receive`):
/// each opened below the uploads directory (no symlink followed), and each must hold the bytes
/// the index says (a 500 otherwise: nothing is stored).
struct DAVChunkReader {
    let base: FileDescriptor?
    let folder: String
    let chunks: [DAVUploads.Chunk]

    var reading: StoreUpload.BodyReader {
        let (base, folder, chunks) = (self.base, self.folder, self.chunks)
        return { sink, refusal throws(HTTPError) in
            guard let base else { throw .refused(500, "the receiver cannot read upload folders now") }
            var buffer = [UInt8](repeating: 0, count: 256 << 10)
            for chunk in chunks {
                let fd: FileDescriptor
                do throws(SystemError) {
                    fd = try base.openBeneath(folder + "/" + chunk.name, flags: [.readOnly, .nonBlocking])
                } catch {
                    throw .refused(500, "cannot read the chunk \(chunk.name) back: \(error)")
                }
                defer { fd.close() }
                var offset: Int64 = 0
                while offset < chunk.size {
                    let want = Int(min(Int64(buffer.count), chunk.size - offset))
                    let read = buffer.withUnsafeMutableBytes { b in
                        Result { () throws(SystemError) in
                            try fd.read(
                                fromAbsoluteOffset: offset, into: UnsafeMutableRawBufferPointer(rebasing: b[..<want]))
                        }
                    }
                    let n: Int
                    switch read {
                    case .success(let count): n = count
                    case .failure(let error): throw .refused(500, "cannot read the chunk \(chunk.name) back: \(error)")
                    }
                    if n == 0 { throw .refused(500, "the chunk \(chunk.name) is shorter than when it came") }
                    if !buffer.withUnsafeBytes({ sink(UnsafeRawBufferPointer(rebasing: $0[..<n])) }) {
                        let (status, why) = refusal()
                        throw .refused(status, why)
                    }
                    offset += Int64(n)
                }
            }
        }
    }
}
