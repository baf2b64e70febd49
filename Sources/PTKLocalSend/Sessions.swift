import PTKTime

/// What the receiver accepts over LocalSend, fixed at start.
public struct LocalSendPolicy: Sendable, Equatable {
    /// A PIN every `prepare-upload` must carry (`?pin=`), or nil.
    public var pin: String?
    /// MIME types accepted (`image/png`, and `image/jpeg` when configured); files of other
    /// types are left out of the answer.
    public var acceptedTypes: Set<String>
    /// Files over this size are left out of the answer.
    public var maxFileSize: Int64
    /// A session with no upload for this long is forgotten.
    public var sessionIdle: Duration
    /// Wrong PINs from one address before it gets 429.
    public var pinTries = 3
    /// How long an address that used up its tries is answered 429.
    public var pinLockout: Duration = .seconds(300)
    /// Files all sessions together may hold (each a name, a size and a token until its session
    /// ends): apps at many addresses cannot make the receiver keep more (503).
    public var maxFilesHeld = 20_000

    /// Defaults: no PIN, PNG only, 512 MiB, a minute idle; the PIN limits are set apart (`pinTries`, `pinLockout`).
    public init(
        pin: String? = nil, acceptedTypes: Set<String> = ["image/png"], maxFileSize: Int64 = 512 << 20,
        sessionIdle: Duration = .seconds(60)
    ) {
        self.pin = pin
        self.acceptedTypes = acceptedTypes
        self.maxFileSize = maxFileSize
        self.sessionIdle = sessionIdle
    }
}

/// The answer to a `prepare-upload`.
public enum PrepareOutcome: Equatable, Sendable {
    /// 200: these files (ID to token) may be uploaded in the session.
    case accepted(PrepareUploadResponse)
    /// 204: nothing to transfer (every file was left out).
    case nothingToTransfer
    /// 401: the PIN is missing or wrong.
    case pinRequired(wrong: Bool)
    /// 429: too many wrong PINs from this address.
    case tooManyTries
    /// 403: the sender may not send here.
    case refused
    /// 409: this address has a session that is still running.
    case busy
    /// 503: the sessions hold `maxFilesHeld` files already.
    case full

    /// The HTTP status that answers the `prepare-upload`.
    public var status: Int {
        switch self {
        case .accepted: return 200
        case .nothingToTransfer: return 204
        case .pinRequired: return 401
        case .tooManyTries: return 429
        case .refused: return 403
        case .busy: return 409
        case .full: return 503
        }
    }
}

/// Why an upload is not taken.
public enum UploadRefusal: Error, Equatable, Sendable {
    /// 403: no such session, a wrong token, or another address.
    case forbidden(String)
    /// 409: the file is being uploaded already, or was.
    case conflict(String)

    /// The HTTP status that answers the upload.
    public var status: Int {
        switch self {
        case .forbidden: return 403
        case .conflict: return 409
        }
    }

    /// Why, for the answer's body and the log.
    public var message: String {
        switch self {
        case .forbidden(let m), .conflict(let m): return m
        }
    }
}

/// One accepted file of a session.
public struct SessionFile: Sendable, Equatable {
    /// Where its upload is; a failed file may be uploaded again, a done one may not.
    public enum State: Sendable, Equatable { case waiting, receiving, done, failed }
    /// The file as the `prepare-upload` described it.
    public var info: FileInfo
    /// The token its upload must carry (`?token=`).
    public var token: String
    /// Starts waiting; an upload moves it to receiving, then done or failed.
    public var state: State = .waiting
}

/// A LocalSend session: one sender's accepted files.
public struct LocalSendSession: Sendable, Equatable {
    /// The session's ID, sent in the `prepare-upload` answer.
    public var id: String
    /// The sender's address: uploads from another address are refused.
    public var address: String
    /// The sender as its `prepare-upload` described itself.
    public var sender: DeviceInfo
    /// The sender's certificate fingerprint, when it showed one.
    public var fingerprint: String?
    /// The accepted files, by the sender's file ID.
    public var files: [String: SessionFile]
    /// The last `prepare-upload` or upload; a session idle for `sessionIdle` is forgotten (not while an upload runs).
    public var lastActivity: Instant
    /// The sender cancelled: uploads stop and the address may start a new session.
    public var cancelled = false

    /// Every file is saved or has failed.
    public var isSettled: Bool { files.values.allSatisfy { $0.state == .done || $0.state == .failed } }
}

/// The receiver's LocalSend sessions and PIN tries: the protocol's decisions, without I/O or
/// clocks (every call is told the time). Not thread-safe: the server holds it under a lock.
public struct LocalSendSessions: Sendable {
    /// What the receiver accepts, fixed at start from the configuration.
    public let policy: LocalSendPolicy
    /// Live sessions by ID; `expire` drops idle and cancelled ones, unless an upload is running.
    public private(set) var sessions: [String: LocalSendSession] = [:]
    private var wrongPINs: TryLimiter
    private let generator: @Sendable () -> String

    /// `generator` makes session IDs and tokens (random by default).
    public init(policy: LocalSendPolicy, generator: @escaping @Sendable () -> String = randomToken) {
        self.policy = policy
        self.generator = generator
        wrongPINs = TryLimiter(tries: policy.pinTries, lockout: policy.pinLockout)
    }

    /// Decides a `prepare-upload` from `address`. `allowed` is whether the sender may send at
    /// all (the trust policy, decided by the caller from its certificate).
    public mutating func prepare(
        _ request: PrepareUploadRequest, address: String, fingerprint: String?, pin: String?,
        allowed: Bool, now: Instant
    ) -> PrepareOutcome {
        expire(now: now)
        if let expected = policy.pin {
            if wrongPINs.isLockedOut(address, now: now) { return .tooManyTries }
            guard let pin else { return .pinRequired(wrong: false) }
            guard pin == expected else {
                return wrongPINs.failed(address, now: now) ? .tooManyTries : .pinRequired(wrong: true)
            }
            wrongPINs.succeeded(address)
        }
        guard allowed else { return .refused }
        if let running = sessions.values.first(where: { $0.address == address && !$0.isSettled && !$0.cancelled }) {
            // The same app (the same client certificate) starting over while none of its
            // uploads is running has given the earlier session up: its answer or its connection
            // was lost. That session is dropped rather than the app kept waiting for it to idle
            // out. Anyone else from the address waits.
            let startsOver =
                fingerprint != nil && running.fingerprint == fingerprint
                && !running.files.values.contains { $0.state == .receiving }
            guard startsOver else { return .busy }
            sessions[running.id] = nil
        }
        var files: [String: SessionFile] = [:]
        for (id, file) in request.files where accepts(file) {
            files[id] = SessionFile(info: file, token: generator())
        }
        guard !files.isEmpty else { return .nothingToTransfer }
        guard filesHeld + files.count <= policy.maxFilesHeld else { return .full }
        let session = LocalSendSession(
            id: generator(), address: address, sender: request.info, fingerprint: fingerprint,
            files: files, lastActivity: now)
        sessions[session.id] = session
        return .accepted(PrepareUploadResponse(sessionId: session.id, files: files.mapValues(\.token)))
    }

    /// Whether a file goes into the answer: an accepted type (parameters such as `; charset`
    /// ignored), within the size limit.
    public func accepts(_ file: FileInfo) -> Bool {
        policy.acceptedTypes.contains(file.mediaType) && file.size <= policy.maxFileSize
    }

    /// Marks a file as being received and returns it, if `token` is its token, from the
    /// session's address, and not received (or being received) already.
    public mutating func beginUpload(
        session id: String, file fileID: String, token: String, address: String,
        now: Instant
    ) throws(UploadRefusal) -> (LocalSendSession, FileInfo) {
        guard var session = sessions[id], !session.cancelled else { throw .forbidden("no such session") }
        guard session.address == address else { throw .forbidden("the session belongs to another address") }
        guard var file = session.files[fileID], file.token == token else { throw .forbidden("wrong file ID or token") }
        switch file.state {
        case .receiving: throw .conflict("this file is being uploaded already")
        case .done: throw .conflict("this file was uploaded already")
        case .waiting, .failed: break
        }
        file.state = .receiving
        session.files[fileID] = file
        session.lastActivity = now
        sessions[id] = session
        return (session, file.info)
    }

    /// Records how an upload ended. A failed file may be uploaded again; the session is
    /// forgotten once every file is saved.
    public mutating func endUpload(session id: String, file fileID: String, saved: Bool, now: Instant) {
        guard var session = sessions[id], session.files[fileID] != nil else { return }
        session.files[fileID]!.state = saved ? .done : .failed
        session.lastActivity = now
        if session.files.values.allSatisfy({ $0.state == .done }) {
            sessions[id] = nil
        } else {
            sessions[id] = session
        }
    }

    /// Whether `address` has used up its PIN tries and must wait (its PINs are not checked).
    public func pinLockedOut(_ address: String, now: Instant) -> Bool { wrongPINs.isLockedOut(address, now: now) }

    /// Files held in all sessions (each holds its files' names, sizes and tokens until it ends).
    public var filesHeld: Int { sessions.values.reduce(0) { $0 + $1.files.count } }

    /// Whether uploads of session `id` should stop (it was cancelled or is gone).
    public func isCancelled(_ id: String) -> Bool { sessions[id]?.cancelled ?? true }

    /// Cancels the session `id` (or, without one, the address's sessions: apps before 2.0 sent
    /// no ID). Returns how many were cancelled. Uploads running stop at their next read.
    @discardableResult
    public mutating func cancel(session id: String?, address: String) -> Int {
        var n = 0
        for (key, session) in sessions where session.address == address && (id == nil || id == key) {
            sessions[key]!.cancelled = true
            n += 1
        }
        // A cancelled session with nothing running has no more use.
        sessions = sessions.filter { !$0.value.cancelled || $0.value.files.values.contains { $0.state == .receiving } }
        return n
    }

    /// Forgets sessions idle for `policy.sessionIdle` with nothing running, and PIN lockouts that ran out.
    public mutating func expire(now: Instant) {
        sessions = sessions.filter { _, s in
            s.files.values.contains { $0.state == .receiving }
                || now - s.lastActivity < policy.sessionIdle && !s.cancelled
        }
        wrongPINs.expire(now: now)
    }
}

/// 128 random bits as 32 hex digits.
@Sendable public func randomToken() -> String {
    var g = SystemRandomNumberGenerator()
    let a = g.next() as UInt64
    let b = g.next() as UInt64
    return hex64(a) + hex64(b)
}

func hex64(_ v: UInt64) -> String {
    let s = String(v, radix: 16)
    return String(repeating: "0", count: 16 - s.count) + s
}

/// Wrong guesses (a PIN, a password) counted per address (`addressKey`: an IPv6 /64 is one):
/// `tries` wrong ones within `lockout` of each other lock the address out until `lockout`
/// after the last. Not thread-safe; told the time by every call.
public struct TryLimiter: Sendable {
    /// Wrong guesses an address may make before it is locked out.
    public let tries: Int
    /// How long the wrong guesses are remembered, and how long a lockout lasts after the last one.
    public let lockout: Duration
    private var wrong: [String: (count: Int, until: Instant)] = [:]

    /// Defaults: three tries, then five minutes locked out.
    public init(tries: Int = 3, lockout: Duration = .seconds(300)) {
        self.tries = tries
        self.lockout = lockout
    }

    /// Whether `address` has used up its tries and must wait.
    public func isLockedOut(_ address: String, now: Instant) -> Bool {
        guard let entry = wrong[addressKey(address)] else { return false }
        return entry.count >= tries && now < entry.until
    }

    /// Counts a wrong guess; returns whether the address is now locked out.
    public mutating func failed(_ address: String, now: Instant) -> Bool {
        let address = addressKey(address)
        var entry = wrong[address] ?? (0, now)
        if entry.count >= tries || now >= entry.until { entry.count = 0 }  // an old lockout or old tries ran out
        entry.count += 1
        entry.until = now + lockout
        wrong[address] = entry
        return entry.count >= tries
    }

    /// A right guess clears the address's wrong ones.
    public mutating func succeeded(_ address: String) { wrong[addressKey(address)] = nil }

    /// Forgets the entries that ran out (bounded memory under many addresses).
    public mutating func expire(now: Instant) { wrong = wrong.filter { now < $0.value.until } }

    /// Addresses with wrong guesses still counted.
    public var count: Int { wrong.count }
}
