import PTKHTTP
import PTKProtocol
import PTKStore
import PTKTime
import PTKVocabulary

extension StoreUpload {
    /// Whether the request's body is chunked with no length announced (`announcedSize` is nil):
    /// `curl -T -`, `rclone rcat`, a script's pipe. Such a body is taken by `receiveUnsized`.
    public static func isUnsized(_ head: HTTPHead) -> Bool { head.chunked && announcedSize(head) == nil }

    /// Receives a chunked body whose length was not announced as the photo `request` describes
    /// (its `size` is ignored): held in the store's `Spool` as it comes, at most `limit` bytes
    /// (413 beyond: the door's `max-file-size`), the free space checked against `min-free` as
    /// it grows (507), the bytes checked for the type's structure as they come (400 at the
    /// first that cannot be the type's); at its end taken by the store like a body of that
    /// length (`Spool.take`: size, SHA-256 when given, structure, flushed, published). Not
    /// resumable: a cut body leaves nothing. `stop` is asked every 200 ms whether to give up.
    /// Nothing is answered: the door answers the outcome in its own terms, as for `receive`.
    public static func receiveUnsized(_ request: StoreRequest, into store: PhotoStore, from body: RequestBody, limit: Int64,
                                      stop: () -> (Int, String)?) -> Outcome {
        let spool: Spool
        switch store.spool(type: request.type, limit: limit) {
        case .success(let s): spool = s
        case .failure(let failure):
            let (status, reason) = Self.status(for: failure)
            return .failed(Failure(status: status, reason: reason, detail: "\(Problem(failure))", stage: .begin, received: 0))
        }
        defer { spool.close() }
        let started = Instant.now
        var writer = BodyWriter(.spool(spool, request))
        var failure: (Int, String)? = nil
        var received: Int64 = 0
        var lastCheck = Instant.now
        let read = Result { () throws(HTTPError) in
            try body.stream(sink: { piece in
                if received + Int64(piece.count) > limit {
                    failure = (413, "the body is longer than the \(limit) bytes a photo may have here (max-file-size)")
                    return false
                }
                if let refused = writer.add(piece) {
                    failure = refused
                    return false
                }
                received += Int64(piece.count)
                if Instant.now - lastCheck > .milliseconds(200) {
                    lastCheck = .now
                    if let stopped = stop() {
                        failure = stopped
                        return false
                    }
                }
                return true
            }, refusal: { failure ?? (400, "body refused") })
            if let refused = writer.flush() { throw .refused(refused.0, refused.1) }
        }
        if case .failure(let error) = read {
            let (status, reason): (Int, String)
            switch error {
            case .refused(let s, let why): (status, reason) = (s, why)
            case .status(let s, let why, _): (status, reason) = (s.code, why)
            case .timedOut: (status, reason) = (408, "no bytes within the idle timeout")
            case .interrupted: (status, reason) = (503, "the receiver is shutting down")
            case .gone, .bodyRefused: return .gone(received: received)
            }
            var failure = Failure(status: status, reason: reason, detail: reason, stage: .body, received: received)
            if case .timedOut = error { failure.idle = true }
            return .failed(failure)
        }
        switch writer.target.finish() {
        case .success(let saved):
            return .saved(saved, seconds: max((Instant.now - started).seconds, 1e-6))
        case .failure(let failure):
            let (status, reason) = Self.status(for: failure)
            return .failed(Failure(status: status, reason: reason, detail: "\(Problem(failure))", stage: .finish, received: received))
        }
    }
}
