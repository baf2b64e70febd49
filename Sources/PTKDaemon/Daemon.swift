import PTKConfiguration
import PTKDiscovery
import PTKLibrary
import PTKNotify
import PTKProtocol
import PTKStore
import PTKSystem
import PTKTLS
import PTKTransport
import PTKTrust

/// Shutdown as its own signal, distinct from errors: set once, seen by every session.
public final class ShutdownSignal: @unchecked Sendable {
    // `requested` is guarded by `lock`; the pipe is thread-safe by itself.
    private let lock = Lock()
    private var requested = false
    /// Readable once shutdown is requested, so waiting reads wake up.
    public let pipe: WakePipe

    public init() throws(SystemError) { pipe = try WakePipe() }

    public var isRequested: Bool { lock.withLock { requested } }

    public func request() {
        lock.withLock { requested = true }
        pipe.signal()
    }
}

/// ptkd could not start.
public struct DaemonError: Error, CustomStringConvertible {
    public var description: String
    /// The exit status: 73 when the directory is unusable, 71 for other system errors.
    public var exitCode: DaemonExitStatus
}

/// The receiver service: the listener, the store, and a thread per session.
///
/// Who is served when many senders come at once: every connection takes a connection slot when
/// it is accepted (at most `maxSessions` plus `handshakeRoom`, and `maxSessionsPerAddress` per
/// address; beyond them it is answered ERROR busy, or 429, on a short-lived refusal thread).
/// Once its handshake says who the sender is, `turns` decides whether it is served now, and with
/// what share of the sessions (WELCOME.sessions), or answered ERROR busy with its place in line.
public final class Daemon: @unchecked Sendable {
    // `active`, `perAddress`, `turns`, `stopping`, `lingering` and `nextID` are guarded by
    // `lock`; everything else is fixed at init.
    public let configuration: DaemonConfiguration
    public let store: PhotoStore
    public let listener: Listener
    public let shutdown: ShutdownSignal
    /// This receiver's device identity (protocol §6).
    public let identity: Identity
    public let trust: TrustStore
    /// Indexes saved photos in the background; nil with `library = off`.
    public let library: LibraryIndexer?
    /// The LocalSend receiver; nil with `localsend = off`.
    let localSend: LocalSendEndpoint?
    private let tls: TLSContext
    private let lock = Lock()
    /// Connections being handled (in their handshake, or served), in all and per address.
    private var active = 0
    private var perAddress: [String: Int] = [:]
    /// The sessions served, by sender, and the senders waiting for one.
    private var turns: Turns
    /// STOPPING=1 has gone out: no more STATUS updates.
    private var stopping = false
    private var lingering = 0
    private var nextID = 0
    private let settings: ReceiverSettings

    public init(configuration: DaemonConfiguration) throws(DaemonError) {
        self.configuration = configuration
        do {
            store = try PhotoStore(settings: StoreSettings(directory: configuration.effectiveDirectory,
                                                          minFree: configuration.minFree,
                                                          partialMaxAge: configuration.partialMaxAge,
                                                          fileMode: configuration.fileMode))
        } catch {
            throw DaemonError(description: error.description, exitCode: .directoryUnusable)
        }
        do {
            try makeDirectories(configuration.effectiveStateDirectory, mode: 0o755)
            identity = try Identity.loadOrCreate(in: configuration.identityDirectory, commonName: "ptkd \(configuration.name)")
            tls = try TLSContext(server: true, identity: identity)
        } catch let error as IdentityError {
            throw DaemonError(description: error.description, exitCode: .identityDamaged)
        } catch {
            throw DaemonError(description: "cannot create the state directory: \(error)", exitCode: .directoryUnusable)
        }
        trust = TrustStore(directory: configuration.effectiveStateDirectory)
        library = configuration.library
            ? LibraryIndexer(directory: configuration.effectiveDirectory,
                             pixelLimit: UInt64(configuration.thumbnailMaxMegapixels) * 1_000_000) { Log.info($0) }
            : nil
        let addresses = try Self.listenAddresses(configuration, port: configuration.port)
        do {
            listener = try Listener(addresses: addresses, skipUnavailable: configuration.listen.isEmpty)
            shutdown = try ShutdownSignal()
        } catch {
            throw DaemonError(description: "cannot listen on port \(configuration.port): \(error)", exitCode: .cannotStart)
        }
        guard !listener.addresses.isEmpty else {
            throw DaemonError(description: "no address to listen on", exitCode: .cannotStart)
        }
        localSend = configuration.localSend
            ? try LocalSendEndpoint(configuration: configuration, store: store, trust: trust, library: library, shutdown: shutdown)
            : nil
        // WELCOME.sessions is each session's share when it starts (`turns`).
        settings = ReceiverSettings(name: configuration.name, window: configuration.window, maxFileSize: configuration.maxFileSize,
                                    sessions: nil,
                                    plaintextAllowed: configuration.plaintext == .allow,
                                    trustedSendersOnly: configuration.senders == .trusted)
        turns = Turns(capacity: configuration.maxSessions, perSender: configuration.maxSessionsPerAddress)
    }

    /// Connections now being handled: sessions, and connections in their handshake.
    public var activeSessions: Int { lock.withLock { active } }

    /// Connections that may be in their handshake beyond the sessions served: room for a sender
    /// whose turn has come to be heard while others are being turned away.
    var handshakeRoom: Int { max(4, configuration.maxSessions / 4) }

    /// Accepts and serves sessions until `shutdown` is requested, then lets sessions reach a
    /// frame boundary (they answer ERROR `shutting-down`) for up to `grace`. Returns
    /// nil after a requested shutdown, or why the accept loop could not go on (it then shuts
    /// down the same way, and ptkd exits non-zero so that `Restart=on-failure` restarts it).
    public func run(grace: Duration = .seconds(4)) -> DaemonError? {
        // The library is opened and reconciled first, so ptkd's descriptors are settled once it says it listens.
        if let library {
            do { try library.start() } catch { Log.warning("cannot start the photo library's indexing: \(error)") }
        }
        let listed = listener.addresses.map(\.description).joined(separator: ", ")
        Log.info("ptkd listening on port \(listener.port) (\(listed)) as \"\(configuration.name)\", saving photos to \(configuration.effectiveDirectory)")
        Log.info("device ID \(identity.deviceID); TLS 1.3, plaintext \(configuration.plaintext == .allow ? "allowed" : "refused"), senders: \(configuration.senders == .trusted ? "trusted devices only (\(trust.trusted().count) on the list)" : "anyone")")
        // The port accepts connections now: tell systemd before mDNS, which may take a while.
        ServiceNotifier.ready(status: "listening on port \(listener.port), saving to \(configuration.effectiveDirectory)")
        var discovery: LocalSendDiscovery? = nil
        if let localSend {
            Log.info("LocalSend receiver on port \(localSend.listener.port) (HTTPS), fingerprint \(localSend.fingerprint)")
            if configuration.mdns {
                discovery = LocalSendDiscovery(endpoint: localSend, shutdown: shutdown, listen: configuration.listen)
            }
        }
        var advertiser: Advertiser? = nil
        if configuration.mdns {
            advertiser = Advertiser(name: configuration.name, port: listener.port,
                                    txt: ["v=1", "tls=1", "id=\(identity.deviceID.compact)"]) { Log.info($0) }
            if advertiser == nil { Log.warning("cannot start mDNS advertising; serving over TCP only") }
        } else {
            Log.info("mDNS advertising is off")
        }
        let removed = store.removeStalePartials()
        if removed > 0 { Log.info("removed \(removed) stale partial upload(s)") }
        var nextCleanup = Instant.now + .seconds(3600)
        var failure: DaemonError? = nil
        // Set while accept keeps failing, so a lasting condition is logged once, not every 100 ms.
        var acceptFailing: Errno? = nil
        while !shutdown.isRequested {
            let localSockets = localSend?.listener.sockets ?? []
            var fds = (listener.sockets + localSockets).map { ($0, PollEvents.readable) }
            fds.append((shutdown.pipe.readEnd, .readable))
            let revents: [PollEvents]
            do { revents = try poll(fds, until: nextCleanup) } catch {
                failure = DaemonError(description: "the accept loop failed: \(error)", exitCode: .acceptFailed)
                Log.warning("\(failure!.description); shutting down")
                break
            }
            if Instant.now >= nextCleanup {
                store.removeStalePartials()
                nextCleanup = .now + .seconds(3600)
            }
            for (i, sock) in (listener.sockets + localSockets).enumerated() where !revents[i].isEmpty {
                let isLocalSend = i >= listener.sockets.count
                do {
                    while let (conn, peer) = try Socket.accept(sock) {
                        if acceptFailing != nil {
                            Log.info("accepting connections again")
                            acceptFailing = nil
                        }
                        if isLocalSend { serveLocalSend(conn, peer: peer) } else { serve(conn, peer: peer) }
                    }
                } catch {
                    if acceptFailing != error.code {
                        acceptFailing = error.code
                        Log.warning("cannot accept connections: \(error)" + Self.remedy(for: error.code, configuration))
                    }
                    // Out of descriptors or memory: back off instead of spinning on a readable socket.
                    sleep(for: .milliseconds(100))
                }
            }
        }
        // Withdraw the advertisement first, then stop accepting, then give sessions their grace period.
        // Under the lock, so no session's STATUS update can follow STOPPING=1.
        lock.withLock {
            stopping = true
            ServiceNotifier.stopping(status: "shutting down")
        }
        advertiser?.stop()
        discovery?.stop()
        listener.close()
        localSend?.listener.close()
        let deadline = Instant.now + grace
        while activeSessions > 0 && Instant.now < deadline {
            sleep(for: .milliseconds(20))
        }
        // Nor indexing (libpng, SQLite, OpenSSL): it stops at its next row; what is left stays pending.
        if let library, !library.stop(waitingUntil: .now + .seconds(2)) { Log.warning("the photo library's indexing did not stop in time") }
        // No hash or PNG check may be running when the process exits (see PhotoStore.stopChecks).
        if !store.stopChecks(waitingUntil: .now + .seconds(2)) { Log.warning("a photo check did not stop in time") }
        let left = activeSessions
        Log.info(left == 0 ? "ptkd stopped" : "ptkd stopped with \(left) session(s) still closing")
        return failure
    }

    /// What to do about an accept error that lasts, as the end of its log line.
    static func remedy(for errno: Errno, _ configuration: DaemonConfiguration) -> String {
        switch errno {
        case .processOutOfDescriptors, .systemOutOfDescriptors:
            return "; ptkd is out of file descriptors: raise LimitNOFILE= (systemctl edit ptkd) or lower max-sessions (now \(configuration.maxSessions))"
        case .noBufferSpace, .outOfMemory:
            return "; the system is out of memory for sockets"
        default:
            return ""
        }
    }

    /// Tells systemd how many sessions are open, unless STOPPING=1 has gone out. Call under `lock`.
    private func reportSessions() {
        if !stopping { ServiceNotifier.status("listening on port \(listener.port); \(active) session(s)") }
    }

    /// Why a connection was refused as it was accepted.
    private struct Refusal {
        var reason: String
        /// The refusal was for lack of sessions, so the sender joins the line for one; not
        /// when its address is at its own limit (a place at the front it could not take would
        /// hold a free session back from everyone behind it).
        var joinsLine: Bool
    }

    /// Takes a connection slot for a connection from `host`: its number, and why it is refused
    /// when the limits are reached (then no slot is taken).
    private func takeSlot(_ host: String) -> (Int, Refusal?) {
        lock.withLock {
            nextID += 1
            if active >= configuration.maxSessions + handshakeRoom {
                return (nextID, Refusal(reason: "the receiver is at its limit of \(configuration.maxSessions) sessions", joinsLine: true))
            }
            if perAddress[host, default: 0] >= configuration.maxSessionsPerAddress {
                return (nextID, Refusal(reason: "\(host) already has \(configuration.maxSessionsPerAddress) sessions open", joinsLine: false))
            }
            active += 1
            perAddress[host, default: 0] += 1
            reportSessions()
            return (nextID, nil)
        }
    }

    private func releaseSlot(_ host: String) {
        lock.withLock {
            active -= 1
            perAddress[host, default: 1] -= 1
            if perAddress[host] == 0 { perAddress[host] = nil }
            reportSessions()
        }
    }

    /// A LocalSend connection: served in a session slot on a thread of its own; over the
    /// limits its first request is answered 429 (see `refuseBusy`).
    private func serveLocalSend(_ socket: FileDescriptor, peer: SocketAddress) {
        guard let localSend else { socket.close(); return }
        let host = peer.host
        let (id, refusal) = takeSlot(host)
        if let refusal {
            refuseBusy(socket, peer: peer, id: id, refusal) { [localSend] in
                localSend.serve(socket, peer: peer, id: id, deadline: .now + .seconds(1), busy: refusal.reason)
            }
            return
        }
        let deadline = Instant.now + configuration.handshakeTimeout
        do {
            try startThread { [self] in
                // LocalSend apps retry a 429 on their own: they take a session only from those
                // no sender in line is owed, and do not wait in line.
                let key = "localsend \(host)"
                if lock.withLock({ turns.take(key, now: Instant.now.seconds) }) {
                    localSend.serve(socket, peer: peer, id: id, deadline: deadline)
                    lock.withLock { turns.release(key) }
                } else {
                    let reason = "the receiver is serving its limit of \(configuration.maxSessions) sessions, or owes the free ones to senders waiting"
                    localSend.serve(socket, peer: peer, id: id, deadline: .now + .seconds(1), busy: reason)
                }
                releaseSlot(host)
            }
        } catch {
            Log.warning("cannot start a session thread: \(error)")
            socket.close()
            releaseSlot(host)
        }
    }

    private func serve(_ socket: FileDescriptor, peer: SocketAddress) {
        let host = peer.host
        let (id, refusal) = takeSlot(host)
        let deadline = Instant.now + configuration.handshakeTimeout
        if let refusal {
            refuseBusy(socket, peer: peer, id: id, refusal)
            return
        }
        let release: @Sendable () -> Void = { [self] in releaseSlot(host) }
        do {
            try startThread { [self] in
                // The handshake runs on the session's thread, inside its slot: a connection stuck
                // there counts against the limits until the handshake deadline frees it.
                if let (stream, sender) = open(socket, peer: peer, id: id, deadline: deadline) {
                    let key = sender.turnKey(address: host)
                    switch lock.withLock({ turns.admit(key, now: Instant.now.seconds) }) {
                    case .busy(let ahead):
                        answerBusy(stream, sender: sender, peer: peer, id: id, reason: servingAll(ahead: ahead), ahead: ahead)
                    case .serve(let sessions):
                        var settings = settings
                        settings.sessions = sessions
                        let connection = FramedConnection(stream: stream, timeout: configuration.idleTimeout)
                        let driver = ReceiverDriver(id: id, connection: connection, peer: peer, sender: sender, store: store,
                                                    trust: trust, library: library, settings: settings, shutdown: shutdown, handshakeDeadline: deadline)
                        driver.run()
                        lock.withLock { turns.release(key) }
                    }
                }
                release()
            }
        } catch {
            Log.warning("cannot start a session thread: \(error)")
            socket.close()
            release()
        }
    }

    /// The addresses to listen on at `port`: those of `--listen`, else every IPv6 and IPv4
    /// address ("::" and "0.0.0.0", either of which may be missing on this host).
    static func listenAddresses(_ configuration: DaemonConfiguration, port: UInt16) throws(DaemonError) -> [SocketAddress] {
        var addresses: [SocketAddress] = []
        for text in configuration.listen.isEmpty ? ["::", "0.0.0.0"] : configuration.listen {
            guard let a = SocketAddress(numericHost: text, port: port) else {
                throw DaemonError(description: "--listen '\(text)' is not an IPv4 or IPv6 address", exitCode: .usage)
            }
            addresses.append(a)
        }
        return addresses
    }

    /// Tells a TLS session from a plaintext one by its first byte (protocol §6) and runs the TLS
    /// handshake, by `deadline`. Returns the stream and who the sender is, or nil (logged, and
    /// the socket closed) when the connection is not a ptk session.
    private func open(_ socket: FileDescriptor, peer: SocketAddress, id: Int, deadline: Instant,
                      quiet: Bool = false) -> (ByteStream, SenderCredentials)? {
        func drop(_ why: String) -> (ByteStream, SenderCredentials)? {
            if !quiet { Log.info("session \(id) from \(peer): \(why); closed") }
            return nil
        }
        let first: UInt8
        switch peekFirstByte(socket, interrupt: shutdown.pipe.readEnd, deadline: deadline) {
        case .byte(let b): first = b
        case .closed: socket.close(); return drop("closed before saying anything")
        case .interrupted: socket.close(); return drop("shutting down")
        case .timedOut: socket.close(); return drop("sent nothing within the handshake timeout")
        case .failed(let error): socket.close(); return drop("connection failed (\(error))")
        }
        switch first {
        case FrameType.hello.rawValue:
            return (TCPStream(socket: socket, peer: peer, interrupt: shutdown.pipe.readEnd), .plaintext)
        case 0x16:
            let stream: TLSStream
            do {
                stream = try TLSStream(socket: socket, peer: peer, context: tls, interrupt: shutdown.pipe.readEnd, deadline: deadline)
            } catch {
                switch error {
                case .timedOut: return drop("TLS handshake not finished within the handshake timeout")
                case .interrupted: return drop("shutting down during the TLS handshake")
                case .peerClosed: return drop("closed during the TLS handshake")
                default: return drop("TLS handshake failed (\(error))")
                }
            }
            let deviceID = stream.peerIdentity.deviceID
            return (stream, .tls(deviceID, trusted: deviceID.map(trust.isTrusted) ?? false))
        default:
            socket.close()
            return drop("not a ptk session (first byte 0x\(String(first, radix: 16)))")
        }
    }

    /// Answers ERROR busy (inside TLS when the sender starts it, with a deadline of a second)
    /// and closes gracefully, on a short-lived thread; at most 64 at once, beyond which the
    /// connection is simply closed. `answer`, when given, answers instead (LocalSend's 429).
    private func refuseBusy(_ socket: FileDescriptor, peer: SocketAddress, id: Int, _ refusal: Refusal,
                            answer: (@Sendable () -> Void)? = nil) {
        let ok = lock.withLock { () -> Bool in
            if lingering >= 64 { return false }
            lingering += 1
            return true
        }
        guard ok else {
            Log.info("\(answer == nil ? "session" : "localsend") \(id) from \(peer): refused, \(refusal.reason) (closed: too many refusals at once)")
            socket.close()
            return
        }
        let body: @Sendable () -> Void = { [self] in
            if let answer {
                answer()
                lock.withLock { lingering -= 1 }
                return
            }
            if let (stream, sender) = open(socket, peer: peer, id: id, deadline: .now + .seconds(1), quiet: true) {
                let key = sender.turnKey(address: peer.host)
                let now = Instant.now.seconds
                let ahead = lock.withLock { refusal.joinsLine ? turns.refused(key, now: now) : turns.waiting(now: now).count }
                answerBusy(stream, sender: sender, peer: peer, id: id, reason: refusal.reason, ahead: ahead)
            } else {
                Log.info("session \(id) from \(peer): refused, \(refusal.reason) (closed)")
            }
            lock.withLock { lingering -= 1 }
        }
        do { try startThread(body) } catch {
            socket.close()
            lock.withLock { lingering -= 1 }
        }
    }
}

extension Daemon {
    /// Why a sender is not served now, for ERROR busy and the log.
    fileprivate func servingAll(ahead: Int) -> String {
        "the receiver is serving its limit of \(configuration.maxSessions) sessions"
            + (ahead > 0 ? " and \(ahead) sender\(ahead == 1 ? " waits" : "s wait") ahead of this one" : "")
    }

    /// Answers ERROR busy with the sender's place in line (`waiting`), logs it, and closes.
    fileprivate func answerBusy(_ stream: ByteStream, sender: SenderCredentials, peer: SocketAddress, id: Int, reason: String, ahead: Int) {
        Log.info("session \(id) from \(peer) (\(sender.logText)): refused, \(reason) (ERROR busy, \(ahead) ahead)")
        let connection = FramedConnection(stream: stream, timeout: .seconds(1))
        // The refused sender may already have gone: it is refused either way.
        try? connection.send(.error(Problem(.busy, reason + "; try again later", waiting: ahead)))
        connection.closeGracefully(linger: .seconds(1))
    }
}

extension SenderCredentials {
    /// Who a sender is for taking turns: its device ID over TLS (several devices behind one
    /// address are several senders), else its address.
    func turnKey(address: String) -> String {
        if case .tls(let id?, _) = self { return "device \(id.compact)" }
        return "address \(address)"
    }

    /// How log lines name the sender: its device ID, or "plaintext".
    var logText: String {
        switch self {
        case .plaintext: return "plaintext"
        case .tls(let id?, _): return "device \(id)"
        case .tls(nil, _): return "TLS, no device ID"
        }
    }
}

extension ReceiverDriver: @unchecked Sendable {}
// A driver is handed to exactly one thread, which alone touches it afterwards.
