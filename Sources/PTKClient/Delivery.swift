import PTKProtocol
import PTKSystem
import PTKTransport

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

    /// The exit status and, when a session failed, the error line to print (`peer` as the user
    /// named it). See `ptk-send --help`.
    public func exitStatus(peer: String) -> (code: Int32, message: String?) {
        if let error = failures.first {
            switch error {
            case .unreachable(let m): return (SendExitCode.unreachable, "cannot connect to \(peer): \(m)")
            case .connectionLost(let m): return (SendExitCode.unreachable, "\(peer): \(m)")
            case .localFile(let m): return (SendExitCode.localFile, m)
            case .remoteError(let p):
                let busy = p.code == ErrorCode.busy.rawValue || p.code == ErrorCode.shuttingDown.rawValue
                var hint = ""
                if p.code == ErrorCode.tlsRequired.rawValue {
                    hint = "; send without --plaintext"
                } else if p.code == ErrorCode.unauthorized.rawValue {
                    hint = "; `ptk-send --id` prints this device's ID for the receiver's administrator (`ptk trust allow ID`)"
                }
                return (busy ? SendExitCode.unreachable : SendExitCode.protocolError, "\(peer): the receiver answered ERROR \(p)\(hint)")
            case .protocolError, .notTLS, .tlsFailed: return (SendExitCode.protocolError, "\(peer): \(error)")
            case .identityMismatch(let expected, _):
                let fix = expected.source == "--expect-id"
                    ? "check the ID on the receiver (`ptk id`)"
                    : "if the receiver's identity really changed (check `ptk id` on it), accept the new one with `ptk-send --forget \(peer)`"
                return (SendExitCode.identityMismatch, "\(peer): \(error); nothing was sent. This may be another machine posing as the receiver; \(fix)")
            }
        }
        let allSaved = (0..<fileCount).allSatisfy { if case .saved = outcomes[$0] { true } else { false } }
        return (allSaved ? SendExitCode.ok : SendExitCode.notAllSaved, nil)
    }

    /// Files that were not sent because a session failed; empty when none failed, or when none
    /// of the files got anywhere (the error line then says it all).
    public var unsent: [Int] {
        guard !failures.isEmpty else { return [] }
        let unfinished = (0..<fileCount).filter { outcomes[$0] == nil }
        return unfinished.count < fileCount ? unfinished : []
    }
}

/// ptk-send's exit statuses.
public enum SendExitCode {
    public static let ok: Int32 = 0
    public static let notAllSaved: Int32 = 1
    public static let usage: Int32 = 64
    public static let localFile: Int32 = 66
    public static let unreachable: Int32 = 69
    public static let protocolError: Int32 = 76
    /// The receiver's device ID is not the one expected (pinned, or remembered).
    public static let identityMismatch: Int32 = 77
}

/// Sends a call's files over as many sessions as the receiver and `parallel` allow.
///
/// The first session runs alone. Its WELCOME says how many sessions the receiver serves at once
/// for us (protocol-v1.md §4): the files are then dealt (`planSessions`), the first session
/// keeps the first share, and the others start at once. A receiver with fewer free slots than
/// that answers the rest ERROR busy (or, one that serves a session at a time, leaves them
/// unanswered): their files go in one more session once the others are done, and a busy answer
/// there is retried, `retries` times, `retryPause` × the attempt apart.
public final class Delivery: @unchecked Sendable {
    // `started`, `outcomes`, `failureOfSession` and `groups` are guarded by `lock`; the rest is
    // fixed at init. `progress` is called under `lock`, so its calls never overlap.
    public let files: [LocalFile]
    private let options: SendOptions
    private let parallel: Int
    private let connect: Connector
    private let retries: Int
    private let retryPause: Duration
    private let progress: @Sendable (SendProgress) -> Void
    private let lock = Lock()
    private var started: Set<Int> = []
    private var outcomes: [Int: FileOutcome] = [:]
    private var failureOfSession: [Int: SendFailure] = [:]
    private var groups: [[Int]]?

    /// `progress` gets every event of every session (file indices into `files`), one at a time.
    public init(files: [LocalFile], options: SendOptions, parallel: Int, connect: @escaping Connector,
                retries: Int = 9, retryPause: Duration = .milliseconds(100),
                progress: @escaping @Sendable (SendProgress) -> Void = { _ in }) {
        self.files = files
        self.options = options
        self.parallel = max(1, parallel)
        self.connect = connect
        self.retries = retries
        self.retryPause = retryPause
        self.progress = progress
    }

    /// Sends everything; returns when every session has ended.
    public func run() -> DeliveryResult {
        // The first session offers file 0 first (`planSessions`), and its OFFER carries the
        // file's SHA-256: hashing it now overlaps the hash with connecting, TLS and HELLO.
        let head = files.isEmpty ? nil : HashAhead([files[0]])
        defer { head?.cancel() }
        let finished = Semaphore()
        let first = SessionFiles.afterWelcome { [self] welcome in
            let planned = planSessions(files, parallel: parallel, receiverSessions: welcome.sessionsAllowed)
            lock.withLock { groups = planned }
            for (g, indices) in planned.enumerated().dropFirst() {
                do {
                    try startThread { [self] in
                        runSession(.fixed(indices), session: g)
                        finished.signal()
                    }
                } catch {
                    // Its files then go in the session that follows the others.
                    failed(.unreachable("cannot start a thread for another session: \(error)"), session: g)
                    finished.signal()
                }
            }
            return planned[0]
        }
        runSession(first, session: 0, head: head.map { (0, $0) })
        // A first session that failed before its WELCOME planned nothing: it held every file.
        let sessions = lock.withLock { groups } ?? [Array(files.indices)]
        for _ in sessions.dropFirst() { finished.wait() }
        let leftovers = takeLeftovers(sessions)
        var attempt = 0
        while !leftovers.isEmpty {
            let id = sessions.count + attempt
            runSession(.fixed(leftovers), session: id)
            attempt += 1
            guard attempt <= retries, forgetRefusal(of: id, files: leftovers, busyOnly: true) else { break }
            sleep(for: retryPause * attempt)
        }
        return lock.withLock {
            DeliveryResult(outcomes: outcomes, failures: failureOfSession.sorted { $0.key < $1.key }.map(\.value),
                           fileCount: files.count)
        }
    }

    /// Runs one session over the files `plan` picks, as session number `session`.
    private func runSession(_ plan: SessionFiles, session: Int, head: (file: Int, hashes: HashAhead)? = nil) {
        let sender = Sender(files: files, plan: plan, options: options) { [self] event in handle(event) }
        sender.headStart = head
        do throws(SendFailure) { try sender.run(connect) } catch { failed(error, session: session) }
    }

    private func handle(_ event: SendProgress) {
        lock.withLock {
            switch event {
            case .started(let i, _): started.insert(i)
            case .finished(let i, let outcome): outcomes[i] = outcome
            case .connected, .acknowledged: break
            }
            progress(event)
        }
    }

    private func failed(_ failure: SendFailure, session: Int) {
        lock.withLock { failureOfSession[session] = failure }
    }

    /// When some session got through: forgets the failures of sessions that got nowhere (no
    /// file of theirs started) because the receiver was busy, silent or not reachable, and
    /// returns their files, to go again in one more session. A receiver may serve one session
    /// at a time and leave the others waiting unanswered.
    private func takeLeftovers(_ sessions: [[Int]]) -> [Int] {
        guard lock.withLock({ failureOfSession.count }) < sessions.count else { return [] }
        return sessions.indices.filter { forgetRefusal(of: $0, files: sessions[$0], busyOnly: false) }
            .flatMap { sessions[$0] }.sorted()
    }

    /// If session `session` got nowhere (no file of `files` started) because the receiver
    /// answered ERROR busy (or, unless `busyOnly`, was silent or unreachable), forgets that
    /// failure and returns true.
    private func forgetRefusal(of session: Int, files: [Int], busyOnly: Bool) -> Bool {
        lock.withLock {
            guard let failure = failureOfSession[session], files.allSatisfy({ !started.contains($0) }) else { return false }
            switch failure {
            case .remoteError(let p): guard p.code == ErrorCode.busy.rawValue else { return false }
            case .connectionLost, .unreachable: guard !busyOnly else { return false }
            case .protocolError, .localFile, .notTLS, .tlsFailed, .identityMismatch: return false
            }
            failureOfSession[session] = nil
            return true
        }
    }
}
