import PTKHTTP
import PTKProtocol
import PTKStore
import PTKSystem
import PTKTime
import PTKVocabulary

/// A photo arriving as a request body, the same way through every HTTP door: the store's
/// `begin` (its checks, `.incoming/`), the body streamed into the file as it comes, the store's
/// `finish` (size, SHA-256, structure, flushed and published), and one table from the store's
/// failures to HTTP statuses (`status(for:)`). The door decides who may send and what the
/// photo is called; this decides nothing else.
public enum StoreUpload {
    /// How far an upload got when it failed.
    public enum Stage: Sendable, Equatable {
        /// The store refused it before any of the body was read: the connection must close
        /// after the answer (the client is still sending the body).
        case begin
        /// The body was not read to its end (refused, cut short, too slow): close after the answer.
        case body
        /// The whole body was read and the store refused the bytes: the connection can carry on.
        case finish
    }

    /// An upload that saved nothing.
    public struct Failure: Sendable, Equatable {
        /// The HTTP status to answer with: `status(for:)`'s for the store's refusals, 408 or 503 for the body.
        public var status: Int
        /// What the client is told.
        public var reason: String
        /// What the log says (the store's problem, with its code).
        public var detail: String
        /// How far the upload got, which decides whether the connection may carry on.
        public var stage: Stage
        /// Body bytes read before it ended.
        public var received: Int64
        /// The client sent nothing for the idle timeout.
        public var idle = false
        /// Whether the connection may carry another request after the answer.
        public var keepsConnection: Bool { stage == .finish }
    }

    /// How an upload ended: saved, refused with an answer owed, or the client gone.
    public enum Outcome: Sendable {
        /// Saved (or already kept: `saved.isDuplicate`), in `seconds` from the body's first byte.
        case saved(StoredPhoto, seconds: Double)
        case failed(Failure)
        /// The client went away (closed, reset) after `received` bytes: no one to answer.
        case gone(received: Int64)
    }

    /// The HTTP status and the client's message for a store failure: 422 for a SHA-256 that
    /// does not match (as LocalSend apps expect), 400 for bytes that are not what was announced
    /// (not a photo of its type, not its size), 415 for a type the receiver does not keep, 507
    /// (Insufficient Storage) for a full disk or quota, 500 for the receiver's own trouble. Every
    /// HTTP door answers store failures through this table; protocol v1 has its codes
    /// (`FileErrorCode(_:)`, PTKProtocol). Over `max-file-size` (413) and a name taken (409)
    /// are decided by the doors before the store is asked.
    public static func status(for failure: StoreFailure) -> (status: Int, reason: String) {
        switch failure.kind {
        case .hashMismatch: return (422, failure.message)
        case .notAPhoto, .sizeMismatch: return (400, failure.message)
        case .typeNotKept: return (415, failure.message)
        case .noSpace: return (507, failure.message)
        case .io: return (500, failure.message)
        }
    }

    /// Pieces of a body smaller than this are gathered before they are written.
    static let gatherLimit = 64 << 10

    /// The body's length as the request announces it: Content-Length, or for a chunked body
    /// the `X-Expected-Entity-Length` macOS's WebDAV client sends with it; nil when neither
    /// (the store must know a photo's size before its first byte: the door answers 411).
    public static func announcedSize(_ head: HTTPHead) -> Int64? {
        if let length = head.contentLength { return length }
        guard head.chunked, let text = head.header("x-expected-entity-length"), (1...18).contains(text.utf8.count),
            text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 })
        else { return nil }
        return Int64(text)
    }

    /// Receives the body of the request whose head `http` just read as the photo `request`
    /// describes (`request.size` bytes, Content-Length or chunked). A partial file of the same
    /// content is resumed (`resuming` is told its offset; the client sends from the start and
    /// the bytes the partial holds are passed over). `stop` is asked every 200 ms whether to
    /// give up (its status and reason: a cancelled session, shutdown). Nothing is answered:
    /// the door answers the outcome in its own terms.
    public static func receive(
        _ request: StoreRequest, into store: PhotoStore, from body: RequestBody,
        resuming: (Int64) -> Void = { _ in }, stop: () -> (Int, String)?
    ) -> Outcome {
        let incoming: IncomingFile
        switch store.begin(request) {
        case .success(let file): incoming = file
        case .failure(let failure):
            let (status, reason) = Self.status(for: failure)
            return .failed(
                Failure(status: status, reason: reason, detail: "\(Problem(failure))", stage: .begin, received: 0))
        }
        if incoming.offset > 0 { resuming(incoming.offset) }
        let started = Instant.now
        var received: Int64 = 0
        let read = Result { () throws(HTTPError) in
            try body.stream(into: incoming, size: request.size, skip: incoming.offset, received: &received, stop: stop)
        }
        if case .failure(let error) = read {
            incoming.abandon(keepForResume: false)
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
        switch incoming.finish() {
        case .success(let saved):
            return .saved(saved, seconds: max((Instant.now - started).seconds, 1e-6))
        case .failure(let failure):
            let (status, reason) = Self.status(for: failure)
            return .failed(
                Failure(
                    status: status, reason: reason, detail: "\(Problem(failure))", stage: .finish, received: received))
        }
    }
}

extension RequestBody {
    /// Streams the body into `incoming`: at most
    /// `size` bytes, the first `skip` passed over (a resumed upload, whose bytes the partial
    /// file holds), `stop()` asked every 200 ms whether to give up (its status and reason).
    /// Small pieces (a chunked body of tiny chunks) are gathered up to 64 KiB before they are
    /// written, so a client cannot make each byte a write and a hash update of its own.
    /// `received` counts the bytes read, for the caller's log even when this throws; a store
    /// failure is `.refused` with its status (`StoreUpload.status(for:)`).
    func stream(
        into incoming: IncomingFile, size: Int64, skip: Int64 = 0, received: inout Int64,
        stop: () -> (Int, String)?
    ) throws(HTTPError) {
        var writer = BodyWriter(incoming: incoming)
        var failure: (Int, String)? = nil
        var lastCheck = Instant.now
        var skip = skip
        var count: Int64 = 0
        defer { received = count }
        try stream(
            sink: { piece in
                if count + Int64(piece.count) > size {
                    failure = (400, "the body is longer than the file's \(size) bytes")
                    return false
                }
                let kept = Int(min(skip, Int64(piece.count)))
                skip -= Int64(kept)
                if let refused = writer.add(UnsafeRawBufferPointer(rebasing: piece[kept...])) {
                    failure = refused
                    return false
                }
                count += Int64(piece.count)
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

}

/// Writes a body's pieces into the store's file, gathering small ones (a chunked body of tiny
/// chunks) up to `StoreUpload.gatherLimit` first, so a client cannot make each byte a write
/// and a hash update of its own. A store failure comes back as its status and reason.
struct BodyWriter {
    let incoming: IncomingFile
    private var pending: [UInt8] = []

    init(incoming: IncomingFile) { self.incoming = incoming }

    mutating func add(_ part: UnsafeRawBufferPointer) -> (Int, String)? {
        if part.count >= StoreUpload.gatherLimit && pending.isEmpty {
            do throws(StoreFailure) { try incoming.append(part) } catch { return StoreUpload.status(for: error) }
        } else if !part.isEmpty {
            pending.append(contentsOf: part)
            if pending.count >= StoreUpload.gatherLimit { return flush() }
        }
        return nil
    }

    /// Writes what was gathered.
    mutating func flush() -> (Int, String)? {
        guard !pending.isEmpty else { return nil }
        let written = pending.withUnsafeBytes { b in Result { () throws(StoreFailure) in try incoming.append(b) } }
        if case .failure(let error) = written { return StoreUpload.status(for: error) }
        pending.removeAll(keepingCapacity: true)
        return nil
    }
}
