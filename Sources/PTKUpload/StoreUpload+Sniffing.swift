import PTKHTTP
import PTKProtocol
import PTKStore
import PTKTime
import PTKVocabulary

extension StoreUpload {
    /// What a door makes of a body's first bytes: the photo to store, or a refusal.
    public enum Decision: Sendable {
        case store(StoreRequest)
        case refuse(Int, String)
    }

    /// How many first bytes tell a photo's type (`PhotoType.sniff`).
    public static let sniffLength = 32

    /// As `receive`, for a door whose clients say nothing of what they send (WebDAV): the
    /// body's first bytes (`sniffLength`, or all of a shorter body) are read before the store
    /// is asked, their type (`PhotoType.sniff`, nil when not a photo) handed to `decide`, and
    /// the photo it names received as `receive` does (no resuming: such clients send again
    /// from the start). A refusal comes back as a failure at stage `.body` (the rest of the
    /// body is not read: the connection closes after the answer). `beforePublishing` is asked
    /// once the whole body is in, before the store publishes the photo: a refusal (its status
    /// and reason) stores nothing, at stage `.finish` (a door whose client's right to send may
    /// end while a body is on its way: a removed app password).
    public static func receive(
        size: Int64, from body: RequestBody, into store: PhotoStore,
        decide: (PhotoType?) -> Decision, stop: () -> (Int, String)?,
        beforePublishing: () -> (Int, String)? = { nil }
    ) -> Outcome {
        receive(
            size: size, reading: { sink, refusal throws(HTTPError) in try body.stream(sink: sink, refusal: refusal) },
            into: store,
            decide: decide, stop: stop, beforePublishing: beforePublishing)
    }

    /// As above, the body's `size` bytes read by `reading`, which passes them to its sink piece
    /// by piece and, when the sink says no, throws `.refused` with the refusal's status and
    /// reason (as `RequestBody.stream` does): a request body, or one spooled first (`spool`).
    public static func receive(
        size: Int64, reading: @escaping BodyReader,
        into store: PhotoStore, decide: (PhotoType?) -> Decision, stop: () -> (Int, String)?,
        beforePublishing: () -> (Int, String)? = { nil }
    ) -> Outcome {
        let wanted = Int(min(Int64(sniffLength), size))
        var head: [UInt8] = []
        var writer: BodyWriter? = nil
        var failure: Failure? = nil
        var count: Int64 = 0
        var lastCheck = Instant.now
        let started = Instant.now
        func fail(_ status: Int, _ reason: String, detail: String? = nil) -> Bool {
            failure = Failure(status: status, reason: reason, detail: detail ?? reason, stage: .body, received: count)
            return false
        }
        /// Asks `decide` and the store, then writes the first bytes.
        func open() -> Bool {
            switch decide(PhotoType.sniff(head)) {
            case .refuse(let status, let reason): return fail(status, reason)
            case .store(let request):
                switch store.begin(request) {
                case .failure(let problem):
                    let (status, reason) = Self.status(for: problem)
                    return fail(status, reason, detail: "\(Problem(problem))")
                case .success(let file):
                    writer = BodyWriter(incoming: file)
                    let refused = head.withUnsafeBytes { writer!.add($0) }
                    if let (status, reason) = refused { return fail(status, reason) }
                    return true
                }
            }
        }
        let read = Result { () throws(HTTPError) in
            try reading(
                { piece in
                    if count + Int64(piece.count) > size {
                        return fail(400, "the body is longer than the \(size) bytes announced")
                    }
                    count += Int64(piece.count)
                    if writer == nil {
                        head.append(contentsOf: piece)
                        return head.count < wanted || open()
                    }
                    if let (status, reason) = writer!.add(piece) { return fail(status, reason) }
                    if Instant.now - lastCheck > .milliseconds(200) {
                        lastCheck = .now
                        if let (status, reason) = stop() { return fail(status, reason) }
                    }
                    return true
                }, { failure.map { ($0.status, $0.reason) } ?? (400, "body refused") })
        }
        if case .failure(let error) = read {
            writer?.incoming.abandon(keepForResume: false)
            if let failure { return .failed(failure) }
            switch error {
            case .refused(let status, let why):
                return .failed(Failure(status: status, reason: why, detail: why, stage: .body, received: count))
            case .status(let status, let why, _):
                return .failed(Failure(status: status.code, reason: why, detail: why, stage: .body, received: count))
            case .timedOut:
                var f = Failure(
                    status: 408, reason: "no bytes within the idle timeout", detail: "idle", stage: .body,
                    received: count)
                f.idle = true
                return .failed(f)
            case .interrupted:
                return .failed(
                    Failure(
                        status: 503, reason: "the receiver is shutting down", detail: "shutdown", stage: .body,
                        received: count))
            case .gone, .bodyRefused: return .gone(received: count)
            }
        }
        // A body shorter than `wanted` (it ended early: the size check below refuses it).
        if writer == nil, !open() {
            return .failed(failure!)
        }
        if let (status, reason) = writer!.flush() ?? beforePublishing() {
            writer!.incoming.abandon(keepForResume: false)
            return .failed(Failure(status: status, reason: reason, detail: reason, stage: .finish, received: count))
        }
        switch writer!.incoming.finish() {
        case .success(let saved): return .saved(saved, seconds: max((Instant.now - started).seconds, 1e-6))
        case .failure(let problem):
            let (status, reason) = Self.status(for: problem)
            return .failed(
                Failure(status: status, reason: reason, detail: "\(Problem(problem))", stage: .finish, received: count))
        }
    }
}
