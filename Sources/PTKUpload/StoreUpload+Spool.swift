import PTKHTTP
import PTKProtocol
import PTKStore
import PTKSystem
import PTKTime
import PTKVocabulary

extension StoreUpload {
    /// Reads a body of undeclared length (chunked, without `X-Expected-Entity-Length`: `curl
    /// -T -`, `rclone rcat`) into `file` (`PhotoStore.openSpool`), so that the store is then
    /// given a photo of known size (`replay`). At most `limit` bytes: past it, 413 and the rest
    /// unread. The file promises itself room against min-free as it grows: a body that would
    /// go under it is refused 507. `stop` is asked every 200 ms whether to give up (its status
    /// and reason: shutdown). Small pieces are gathered up to 64 KiB before they are written.
    /// Returns the body's size, or the failure to answer (stage `.body`: the connection closes
    /// after it), or `.gone`.
    public static func spool(
        _ body: RequestBody, into file: SpoolFile, limit: Int64,
        stop: () -> (Int, String)?
    ) -> Result<Int64, SpoolEnd> {
        var count: Int64 = 0
        var refusal: (Int, String)? = nil
        var detail: String? = nil
        var pending: [UInt8] = []
        var lastCheck = Instant.now
        func write(_ bytes: UnsafeRawBufferPointer) -> Bool {
            do throws(StoreFailure) { try file.append(bytes) } catch {
                refusal =
                    error.kind == .noSpace
                    ? (507, "the receiver's disk is too full to hold it") : (500, "the receiver cannot hold the body")
                detail = error.message
                return false
            }
            return true
        }
        func flush() -> Bool {
            defer { pending.removeAll(keepingCapacity: true) }
            return pending.isEmpty || pending.withUnsafeBytes { write($0) }
        }
        let read = Result { () throws(HTTPError) in
            try body.stream(
                sink: { piece in
                    count += Int64(piece.count)
                    if count > limit {
                        refusal = (413, "the body is over this receiver's limit of \(formatBytes(Double(limit)))")
                        return false
                    }
                    if piece.count >= gatherLimit && pending.isEmpty {
                        if !write(piece) { return false }
                    } else {
                        pending.append(contentsOf: piece)
                        if pending.count >= gatherLimit && !flush() { return false }
                    }
                    if Instant.now - lastCheck > .milliseconds(200) {
                        lastCheck = .now
                        if let stopped = stop() {
                            refusal = stopped
                            return false
                        }
                    }
                    return true
                }, refusal: { refusal ?? (400, "body refused") })
            if !flush() { throw .refused(refusal!.0, refusal!.1) }
        }
        switch read {
        case .success:
            file.finishWriting()
            return .success(count)
        case .failure(let error):
            let received = count
            func failed(_ status: Int, _ why: String, detail: String? = nil) -> Result<Int64, SpoolEnd> {
                .failure(
                    .failed(
                        Failure(status: status, reason: why, detail: detail ?? why, stage: .body, received: received)))
            }
            switch error {
            case .refused(let status, let why): return failed(status, why, detail: detail)
            case .status(let status, let why, _): return failed(status.code, why)
            case .timedOut:
                var failure = Failure(
                    status: 408, reason: "no bytes within the idle timeout", detail: "idle", stage: .body,
                    received: received)
                failure.idle = true
                return .failure(.failed(failure))
            case .interrupted: return failed(503, "the receiver is shutting down", detail: "shutdown")
            case .gone, .bodyRefused: return .failure(.gone(received: received))
            }
        }
    }

    /// How `receive(size:reading:...)` reads a body: passing it to its sink piece by piece and,
    /// when the sink says no, throwing `.refused` with the refusal's status and reason (as
    /// `RequestBody.stream` does).
    public typealias BodyReader = (_ sink: (UnsafeRawBufferPointer) -> Bool, _ refusal: () -> (Int, String))
        throws(HTTPError) -> Void

    /// How a spooled body ended short of its end.
    public enum SpoolEnd: Error {
        case failed(Failure)
        /// The client went away after `received` bytes.
        case gone(received: Int64)
    }

    /// A reader for `receive(size:reading:...)` over the bytes `file` holds, from its start.
    public static func replay(_ file: SpoolFile) -> BodyReader {
        { sink, refusal throws(HTTPError) in
            let size = file.size
            var buffer = [UInt8](repeating: 0, count: 256 << 10)
            var offset: Int64 = 0
            while offset < size {
                let want = Int(min(Int64(buffer.count), size - offset))
                let read = buffer.withUnsafeMutableBytes { b in
                    Result { () throws(SystemError) in
                        try file.read(at: offset, into: UnsafeMutableRawBufferPointer(rebasing: b[..<want]))
                    }
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

extension StoreUpload {
    /// As `receive`, for a body of undeclared length (chunked, no `X-Expected-Entity-Length`;
    /// `request.size` is not looked at): spooled first (`spool`: at most `limit` bytes, room
    /// promised against min-free as it grows), then given to the store as the photo `request`
    /// describes, of the size the body turned out to be (`replay` through the sniffing
    /// `receive`, whose store checks the bytes are of `request.type`). `stop` is asked all along.
    public static func receive(
        undeclared request: StoreRequest, into store: PhotoStore, from body: RequestBody, limit: Int64,
        stop: () -> (Int, String)?
    ) -> Outcome {
        let file: SpoolFile
        switch store.openSpool() {
        case .success(let opened): file = opened
        case .failure(let failure):
            let (status, reason) = Self.status(for: failure)
            return .failed(
                Failure(status: status, reason: reason, detail: "\(Problem(failure))", stage: .begin, received: 0))
        }
        defer { file.close() }
        switch spool(body, into: file, limit: limit, stop: stop) {
        case .failure(.failed(let failure)): return .failed(failure)
        case .failure(.gone(let received)): return .gone(received: received)
        case .success(let size):
            var sized = request
            sized.size = size
            return receive(size: size, reading: replay(file), into: store, decide: { _ in .store(sized) }, stop: stop)
        }
    }
}
