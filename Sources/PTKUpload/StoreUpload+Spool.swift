import PTKHTTP
import PTKSystem
import PTKVocabulary

extension StoreUpload {
    /// How often a spooling body asks how much room is left (`spool`'s `room`).
    static let spoolCheckStep: Int64 = 4 << 20

    /// Reads a body of undeclared length (chunked, without `X-Expected-Entity-Length`: `curl
    /// -T -`, `rclone rcat`) into `file`, an open file with no name (the caller unlinked it, so
    /// nothing is left under any name whatever happens), so that the store is then given a
    /// photo of known size (`replay`). At most `limit` bytes: past it, 413 and the rest unread.
    /// `room` says how many bytes the file system can still take beyond min-free (nil:
    /// unknown); it is asked at the start and every `spoolCheckStep` bytes, and a body that
    /// would go past it is refused 507. Returns the body's size, or the failure to answer
    /// (stage `.body`: the connection closes after it), or `.gone`.
    public static func spool(_ body: RequestBody, into file: FileDescriptor, limit: Int64, room: () -> Int64?) -> Result<Int64, SpoolEnd> {
        var count: Int64 = 0
        var checked: Int64 = 0
        var left = room()
        var refusal: (Int, String)? = nil
        var written: SystemError? = nil
        let read = Result { () throws(HTTPError) in
            try body.stream(sink: { piece in
                count += Int64(piece.count)
                if count > limit {
                    refusal = (413, "the body is over this receiver's limit of \(formatBytes(Double(limit)))")
                    return false
                }
                if count - checked >= spoolCheckStep {
                    checked = count
                    left = room()
                }
                if let l = left, count > l + checked {
                    refusal = (507, "the receiver's disk is too full to hold it")
                    return false
                }
                do throws(SystemError) { try file.writeAll(piece) } catch {
                    written = error
                    refusal = (500, "the receiver cannot hold the body: \(error)")
                    return false
                }
                return true
            }, refusal: { refusal ?? (400, "body refused") })
        }
        switch read {
        case .success: return .success(count)
        case .failure(let error):
            let received = count
            func failed(_ status: Int, _ why: String, detail: String? = nil) -> Result<Int64, SpoolEnd> {
                .failure(.failed(Failure(status: status, reason: why, detail: detail ?? why, stage: .body, received: received)))
            }
            switch error {
            case .refused(let status, let why): return failed(status, why, detail: written.map { "\($0)" })
            case .status(let status, let why, _): return failed(status.code, why)
            case .timedOut: return failed(408, "no bytes within the idle timeout", detail: "idle")
            case .interrupted: return failed(503, "the receiver is shutting down", detail: "shutdown")
            case .gone, .bodyRefused: return .failure(.gone(received: received))
            }
        }
    }

    /// How `receive(size:reading:...)` reads a body: passing it to its sink piece by piece and,
    /// when the sink says no, throwing `.refused` with the refusal's status and reason (as
    /// `RequestBody.stream` does).
    public typealias BodyReader = (_ sink: (UnsafeRawBufferPointer) -> Bool, _ refusal: () -> (Int, String)) throws(HTTPError) -> Void

    /// How a spooled body ended short of its end.
    public enum SpoolEnd: Error {
        case failed(Failure)
        /// The client went away after `received` bytes.
        case gone(received: Int64)
    }

    /// A reader for `receive(size:reading:...)` over `size` bytes spooled into `file`, from its start.
    public static func replay(_ file: FileDescriptor, size: Int64) -> BodyReader {
        { sink, refusal throws(HTTPError) in
            var buffer = [UInt8](repeating: 0, count: 256 << 10)
            var offset: Int64 = 0
            while offset < size {
                let want = Int(min(Int64(buffer.count), size - offset))
                let read = buffer.withUnsafeMutableBytes { b in
                    Result { () throws(SystemError) in try file.read(fromAbsoluteOffset: offset, into: UnsafeMutableRawBufferPointer(rebasing: b[..<want])) }
                }
                let n: Int
                switch read {
                case .success(let count): n = count
                case .failure(let error): throw .refused(500, "cannot read the body back: \(error)")
                }
                if n == 0 { throw .refused(500, "the spooled body ended early") }
                let more = buffer.withUnsafeBytes { sink(UnsafeRawBufferPointer(rebasing: $0[..<n])) }
                if !more {
                    let (status, why) = refusal()
                    throw .refused(status, why)
                }
                offset += Int64(n)
            }
        }
    }
}
