import PTKProtocol
import PTKSystem
import PTKTransport
import PTKVocabulary

/// Opens one connection to the receiver for a session: the stream and the peer's name for
/// progress. `Connector.tcp` connects over TCP; tests pass scripted streams.
public typealias Connector = @Sendable () throws(SendFailure) -> (stream: ByteStream, peer: String)

extension SendOptions {
    /// A connector to whichever of `addresses` answers first (RFC 8305, `Socket.connectFirst`),
    /// within `timeout` for the whole attempt.
    public func tcpConnector(to addresses: [SocketAddress]) -> Connector {
        let timeout = self.timeout
        return { () throws(SendFailure) in
            do throws(ConnectFailure) {
                let (socket, address) = try Socket.connectFirst(to: addresses, deadline: .now + timeout)
                return (TCPStream(socket: socket, peer: address), address.description)
            } catch {
                throw .unreachable(error.description)
            }
        }
    }
}

/// How one `ptk-send` call ended.
public struct DeliveryResult: Sendable {
    /// Every file's outcome, by index; a file with none was not sent.
    public var outcomes: [Int: FileOutcome]
    /// The failures of the sessions that failed, in session order (retried refusals excluded).
    public var failures: [SendFailure]
    /// How many files the call had.
    public var fileCount: Int
    /// Seconds the call waited for a busy receiver before it gave up (nil: it did not give up waiting).
    public var gaveUpWaiting: Duration?

    /// The exit status and, when a session failed, the error line to print (`peer` as the user
    /// named it). See `ptk-send --help`.
    public func exitStatus(peer: String) -> (code: SendExitCode, message: String?) {
        if let error = failures.first {
            switch error {
            case .unreachable(let m): return (.unreachable, "cannot connect to \(peer): \(m)")
            case .connectionLost(let m): return (.unreachable, "\(peer): \(m)")
            case .localFile(let m): return (.localFile, m)
            case .remoteError(let p):
                let busy = p.errorCode == .busy || p.errorCode == .shuttingDown
                var hint = ""
                if p.errorCode == .tlsRequired {
                    hint = "; send without --plaintext"
                } else if p.errorCode == .busy, let waited = gaveUpWaiting {
                    hint =
                        waited > .zero
                        ? "; still busy after waiting \(formatSeconds(waited)) (--wait)"
                        : " (--wait 0: not waiting for a turn)"
                } else if p.errorCode == .unauthorized {
                    hint =
                        "; `ptk-send --id` prints this device's ID for the receiver's administrator (`ptk trust allow ID`)"
                }
                return (busy ? .unreachable : .protocolError, "\(peer): the receiver answered ERROR \(p)\(hint)")
            case .protocolError, .notTLS, .tlsFailed: return (.protocolError, "\(peer): \(error)")
            case .identityMismatch(let expected, _):
                let fix =
                    expected.source == .pinned
                    ? "check the ID on the receiver (`ptk id`)"
                    : "if the receiver's identity really changed (check `ptk id` on it), accept the new one with `ptk-send --forget \(peer)`"
                return (
                    .identityMismatch,
                    "\(peer): \(error); nothing was sent. This may be another machine posing as the receiver; \(fix)"
                )
            }
        }
        // A photo of a type the receiver does not keep was not offered, which is no failure.
        let allSaved = (0..<fileCount).allSatisfy {
            switch outcomes[$0] {
            case .saved?, .notKept?: return true
            default: return false
            }
        }
        return (allSaved ? .ok : .notAllSaved, nil)
    }

    /// Files that were not sent because a session failed; empty when none failed, or when none
    /// of the files got past the greeting (unreachable, busy, refused, a TLS or identity
    /// failure: the error line then says it all). A session lost mid-file lists its files,
    /// even when none had been saved yet, so the user learns which photos to send again.
    public var unsent: [Int] {
        guard let first = failures.first else { return [] }
        let unfinished = (0..<fileCount).filter { outcomes[$0] == nil }
        if unfinished.count < fileCount { return unfinished }
        switch first {
        case .connectionLost, .protocolError: return unfinished
        case .remoteError(let p) where ![.busy, .shuttingDown, .unauthorized, .tlsRequired].contains(p.errorCode):
            return unfinished
        default: return []
        }
    }
}

/// ptk-send's exit statuses (their meanings are in its command table, PTKSendCommandLine).
public enum SendExitCode: Int32, CaseIterable, Sendable {
    case ok = 0
    case notAllSaved = 1
    case usage = 64
    case localFile = 66
    case unreachable = 69
    case protocolError = 76
    /// The receiver's device ID is not the one expected (pinned, or remembered).
    case identityMismatch = 77
}

/// Sends a call's files over as many sessions as the receiver and `parallel` allow.
///
/// The files wait in one list (`WorkList`), and every session takes the next file whenever it
/// has offered all it took: a session that ends early, or one that never starts, leaves no
/// files stranded.
///
/// - The first session runs alone. A receiver that answers it ERROR busy is asked again after
///   a pause (`WaitPolicy`), for as long as `waiting.limit` allows; meanwhile the progress
///   callback hears `.waiting`.
/// - Its WELCOME says how many sessions the receiver serves at once for us (protocol-v1.md
///   §4). Up to min(`parallel`, that) − 1 more sessions are opened, one after another, each
///   once the one before it was welcomed, and only while the list still has files; once one
///   is refused (busy, or no answer: a receiver may serve one session at a time and leave the
///   others waiting), no more are opened, and the sessions already held send its share.
public final class Delivery: @unchecked Sendable {
    // Everything under "guarded by lock" is, and `progress` is called under `lock`, so its calls
    // never overlap; the rest is fixed at init.
    /// Every file of the call, checked; progress and outcomes use indices into it.
    public let files: [LocalFile]
    private let options: SendOptions
    private let parallel: Int
    private let connect: Connector
    private let waiting: WaitPolicy
    private let progress: @Sendable (SendProgress) -> Void
    private let lock = Lock()
    // Guarded by lock:
    private var started: Set<Int> = []
    private var outcomes: [Int: FileOutcome] = [:]
    private var failureOfSession: [Int: SendFailure] = [:]
    /// The files no session has taken yet.
    private var work: WorkList
    /// The files each session took, by session.
    private var taken: [Int: [Int]] = [:]
    /// Sessions the receiver welcomed.
    private var welcomed: Set<Int> = []
    /// More sessions still to open, once the first is welcomed; 0 once one is refused.
    private var moreSessions: Int?
    /// Sessions numbered so far, and those still running on threads of their own.
    private var sessionCount = 1
    private var running = 0

    /// `progress` gets every event of every session (file indices into `files`), one at a time.
    public init(
        files: [LocalFile], options: SendOptions, parallel: Int, connect: @escaping Connector,
        waiting: WaitPolicy = WaitPolicy(),
        progress: @escaping @Sendable (SendProgress) -> Void = { _ in }
    ) {
        self.files = files
        self.options = options
        self.parallel = max(1, parallel)
        self.connect = connect
        self.waiting = waiting
        self.progress = progress
        work = WorkList(files)
    }

    /// Sends everything; returns when every session has ended.
    public func run() -> DeliveryResult {
        // One hasher for every session, in the files' order, started now: the first file's
        // SHA-256 (its OFFER carries it) is computed while the first session connects.
        let hashes = HashAhead(files)
        defer { hashes.cancel() }
        let ended = Semaphore()
        var attempt = 0
        var firstBusy: Instant? = nil
        var gaveUp: Duration? = nil
        while true {
            runSession(0, hashes: hashes, ended: ended)
            // Only a busy answer to the first session, before anything was sent, is waited out.
            let busy: Problem? = lock.withLock {
                guard !welcomed.contains(0), case .remoteError(let p)? = failureOfSession[0], p.errorCode == .busy
                else { return nil }
                return p
            }
            guard let busy else { break }
            let now = Instant.now
            let since = firstBusy ?? now
            firstBusy = since
            let left = waiting.limit - (now - since)
            guard left > .zero else {
                gaveUp = waiting.limit
                break
            }
            let pause = min(
                left, waiting.pause(attempt: attempt, ahead: busy.waiting, random: Double.random(in: 0..<1)))
            lock.withLock {
                failureOfSession[0] = nil
                progress(.waiting(ahead: busy.waiting, pause: pause))
            }
            sleep(for: pause)
            attempt += 1
        }
        // The other sessions: none can start once none runs (each is opened by a running one).
        while lock.withLock({ running }) > 0 { ended.wait() }
        return lock.withLock {
            DeliveryResult(
                outcomes: outcomes, failures: failureOfSession.sorted { $0.key < $1.key }.map(\.value),
                fileCount: files.count, gaveUpWaiting: gaveUp)
        }
    }

    /// Runs session number `session` until it ends, taking its files from the list.
    private func runSession(_ session: Int, hashes: HashAhead, ended: Semaphore) {
        let plan = SessionFiles.pulled { [self] welcome in
            next(for: session, welcome: welcome, hashes: hashes, ended: ended)
        }
        let sender = Sender(files: files, plan: plan, options: options, hashes: hashes) { [self] event in handle(event)
        }
        do throws(SendFailure) { try sender.run(connect) } catch { failed(error, session: session) }
        lock.withLock { work.ended(session) }
    }

    /// The next file for `session` (none when no file is left that it may send); on a session's
    /// first call (its WELCOME came), opens the next session when one is due.
    private func next(for session: Int, welcome: Welcome, hashes: HashAhead, ended: Semaphore) -> [Int] {
        let (unit, open) = lock.withLock { () -> ([Int], Int?) in
            let first = welcomed.insert(session).inserted
            if moreSessions == nil { moreSessions = min(parallel, welcome.sessionsAllowed) - 1 }
            let unit = work.next(for: session).map { [$0] } ?? []
            taken[session, default: []] += unit
            guard first, moreSessions! > 0, !work.left.isEmpty else { return (unit, nil) }
            moreSessions! -= 1
            sessionCount += 1
            running += 1
            return (unit, sessionCount - 1)
        }
        if let open {
            do {
                try startThread(name: "send") { [self] in
                    runSession(open, hashes: hashes, ended: ended)
                    lock.withLock { running -= 1 }
                    ended.signal()
                }
            } catch {
                lock.withLock {
                    running -= 1
                    moreSessions = 0
                }
            }
        }
        return unit
    }

    private func handle(_ event: SendProgress) {
        lock.withLock {
            switch event {
            case .started(let i, _): started.insert(i)
            case .finished(let i, let outcome): outcomes[i] = outcome
            case .connected, .acknowledged, .waiting: break
            }
            progress(event)
        }
    }

    /// Session `session` failed. A further session that was never welcomed took no files: it
    /// was refused (busy, or left unanswered or unreachable), which only means no more sessions
    /// are opened. A session that took files gives back those it had not started, for the
    /// sessions still running.
    private func failed(_ failure: SendFailure, session: Int) {
        lock.withLock {
            if session > 0 && !welcomed.contains(session) {
                moreSessions = 0
                switch failure {
                case .remoteError(let p) where p.errorCode == .busy: return
                case .connectionLost, .unreachable: return
                default: break
                }
            }
            failureOfSession[session] = failure
            let untouched = (taken[session] ?? []).filter { outcomes[$0] == nil && !started.contains($0) }
            work.ended(session, returning: untouched)
            taken[session] = nil
        }
    }
}
