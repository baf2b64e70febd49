import PTKConfiguration
import PTKHooks
import PTKLog
import PTKDiscovery
import PTKHTTP
import PTKLibrary
import PTKNotify
import PTKProtocol
import PTKStore
import PTKSystem
import PTKTLS
import PTKTransport
import PTKTrust
import PTKVocabulary

/// Shutdown as its own signal, distinct from errors: set once, seen by every session.
public final class ShutdownSignal: @unchecked Sendable {
    // `requested` is guarded by `lock`; the pipe is thread-safe by itself.
    private let lock = Lock()
    private var requested = false
    /// Readable once shutdown is requested, so waiting reads wake up.
    public let pipe: WakePipe

    /// A signal not yet requested; throws when the wake pipe cannot be made.
    public init() throws(SystemError) { pipe = try WakePipe() }

    /// Whether shutdown has been requested; never goes back to false.
    public var isRequested: Bool { lock.withLock { requested } }

    /// Requests shutdown and wakes every wait on `pipe`; safe from any thread, and more than once.
    public func request() {
        lock.withLock { requested = true }
        pipe.signal()
    }
}

/// ptkd could not start.
public struct DaemonError: Error, CustomStringConvertible {
    /// What went wrong, for the one line ptkd prints before it exits.
    public var description: String
    /// The exit status: 73 when the directory is unusable, 71 for other system errors.
    public var exitCode: DaemonExitStatus
}

/// The receiver service: the listener, the store, and a thread per session.
///
/// Who is served when many senders come at once: every connection takes a connection slot when
/// it is accepted (at most `maxSessions` plus `handshakeRoom`, and `maxSessionsPerAddress` per
/// address, an IPv6 /64 counted as one; when all are taken, a newcomer from an address holding
/// fewer displaces the oldest connection of the address holding most that is not working:
/// `ConnectionTable`; beyond that it is answered ERROR busy, or 429, on a short-lived refusal thread).
/// Once its handshake says who the sender is, `turns` decides whether it is served now, and with
/// what share of the sessions (WELCOME.sessions), or answered ERROR busy with its place in line.
public final class Daemon: @unchecked Sendable {
    // `slots`, `displacers`, `turns`, `stopping`, `lingering` and `nextID` are guarded by
    // `lock`; everything else is fixed at init.
    /// The configuration ptkd was started with; fixed for the daemon's life.
    public let configuration: DaemonConfiguration
    /// The received-photos directory, where every door's uploads are saved.
    public let store: PhotoStore
    /// The protocol v1 port's sockets, bound at init.
    public let listener: Listener
    /// Requested to stop the daemon (a signal, a test); `run` returns after it.
    public let shutdown: ShutdownSignal
    /// This receiver's device identity (protocol §6).
    public let identity: Identity
    /// The paired senders and the app passwords, kept in the state directory.
    public let trust: TrustStore
    /// Indexes saved photos in the background; nil with `library = off`.
    public let library: LibraryIndexer?
    /// The layout, duplicates, library and hook around each photo saved.
    let arrivals: Arrivals
    /// The `on-saved` hook; nil when none is set.
    let hooks: HookRunner?
    /// The LocalSend receiver; nil with `localsend = off`.
    let localSend: LocalSendEndpoint?
    /// The web interface; nil with `web = off`.
    let web: WebEndpoint?
    // Internal, not private, for Daemon+Connections.swift (the slots, admission and refusals);
    // the session counts and the turns are guarded by `lock`.
    let tls: TLSContext
    let lock = Lock()
    /// Connections being handled (in their handshake, or served), in all and per address, and
    /// where each is in its life.
    var slots: ConnectionTable
    /// For each connection in `slots`, a duplicate of its socket: shutting it down ends a
    /// displaced connection's reads and writes at once (the duplicate keeps the descriptor
    /// number from being reused while the connection's own thread closes its copy).
    var displacers: [Int: FileDescriptor] = [:]
    /// The sessions served, by sender, and the senders waiting for one.
    var turns: Turns
    /// STOPPING=1 has gone out: no more STATUS updates.
    var stopping = false
    var lingering = 0
    /// The lines a minute per address about connections of the v1 port that never became a
    /// session, or were refused (`connectionLog`): a peer connecting in a loop cannot fill the journal.
    let connectionLogBudget = LogBudget(perMinute: 30)
    var nextID = 0
    /// The threads serving sessions and answering refusals, joined when the sessions stop.
    let sessionThreads = ThreadGroup()
    /// After `run`: the services that did not stop in time (their threads may still be running).
    public private(set) var lateServices: [String] = []
    let settings: ReceiverSettings

    /// Opens the store, identity, state and hooks and binds the sockets; throws with ptkd's exit status.
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
                             pixelLimit: UInt64(configuration.thumbnailMaxMegapixels) * 1_000_000, minFree: configuration.minFree) { Log.info($0) }
            : nil
        if let command = configuration.onSaved {
            do {
                hooks = try HookRunner(command: command, timeout: configuration.onSavedTimeout, stateDirectory: configuration.effectiveStateDirectory)
            } catch {
                throw DaemonError(description: "on-saved: cannot open its queue in \(configuration.effectiveStateDirectory)/hooks: \(error)", exitCode: .directoryUnusable)
            }
        } else {
            hooks = nil
        }
        // Duplicates are found through the library's index (and the photos saved since start).
        let held = configuration.duplicates == .skip && configuration.library ? HeldPhotos(directory: configuration.effectiveDirectory) : nil
        if let held {
            store.findHeld = { sha256, size in held.find(sha256: sha256, size: size) }
        }
        arrivals = Arrivals(directory: configuration.effectiveDirectory, layout: configuration.layout, trust: trust,
                            library: library, held: held, hooks: hooks)
        let addresses = try Self.listenAddresses(configuration.listen, port: configuration.port)
        do {
            listener = try Listener(addresses: addresses, skipUnavailable: configuration.listen.isEmpty)
            shutdown = try ShutdownSignal()
        } catch {
            throw DaemonError(description: "cannot listen on port \(configuration.port): \(error)", exitCode: .cannotStart)
        }
        guard !listener.addresses.isEmpty else {
            throw DaemonError(description: "no address to listen on", exitCode: .cannotStart)
        }
        // One budget of wrong guesses for every door that checks a secret.
        let guesses = Guesses()
        localSend = configuration.localSend
            ? try LocalSendEndpoint(configuration: LocalSendSettings(configuration), store: store, trust: trust, arrivals: arrivals, guesses: guesses, shutdown: shutdown)
            : nil
        web = configuration.web ? try WebEndpoint(configuration: WebSettings(configuration), store: store, arrivals: arrivals, guesses: guesses, shutdown: shutdown) : nil
        // WELCOME.sessions is each session's share when it starts (`turns`).
        settings = ReceiverSettings(name: configuration.name, window: configuration.window, maxFileSize: configuration.maxFileSize,
                                    sessions: nil,
                                    plaintextAllowed: configuration.plaintext == .allow,
                                    trustedSendersOnly: configuration.senders == .trusted,
                                    types: configuration.types)
        turns = Turns(capacity: configuration.maxSessions, perSender: configuration.maxSessionsPerAddress)
        slots = ConnectionTable(capacity: configuration.maxSessions + Self.handshakeRoom(configuration),
                                perAddress: configuration.maxSessionsPerAddress)
    }

    /// Connections now being handled: sessions, and connections in their handshake.
    public var activeSessions: Int { lock.withLock { slots.count } }

    /// Connections that may be in their handshake beyond the sessions served: room for a sender
    /// whose turn has come to be heard while others are being turned away.
    static func handshakeRoom(_ configuration: DaemonConfiguration) -> Int { max(4, configuration.maxSessions / 4) }

    /// Accepts and serves sessions until `shutdown` is requested, then lets sessions reach a
    /// frame boundary (they answer ERROR `shutting-down`) for up to `grace`. Returns
    /// nil after a requested shutdown, or why the accept loop could not go on (it then shuts
    /// down the same way, and ptkd exits non-zero so that `Restart=on-failure` restarts it).
    public func run(grace: Duration = .seconds(4)) -> DaemonError? {
        // What runs besides the accept loop, stopped in the reverse order at the end. The store's
        // checks run from the start (no hash or PNG check may be running when the process exits).
        let services = Services()
        services.add(store, stopWithin: .seconds(2))
        // The library is opened and reconciled first, so ptkd's descriptors are settled once it says it listens.
        if let library {
            do {
                try library.start()
                // Indexing (libpng, SQLite, OpenSSL) stops at its next row; what is left stays pending.
                services.add(library, stopWithin: .seconds(2))
            } catch { Log.warning("cannot start the photo library's indexing: \(error)") }
        }
        // Duplicate lookups share the index with the indexer; stopped after the sessions, before it.
        if let held = arrivals.held { services.add(held, stopWithin: .seconds(1)) }
        // Hooks run from the start (what an earlier run left owed first), and stop after the
        // sessions, so that none is left half-queued.
        if let hooks {
            do {
                try hooks.start()
                services.add(hooks, stopWithin: .seconds(2))
            } catch { Log.warning("on-saved: cannot start the thread that runs hooks: \(error); none runs until ptkd restarts (they stay queued)") }
        }
        // Sessions: when their turn comes, no more are accepted and those open get `grace` to
        // reach a frame boundary (they answer ERROR shutting-down).
        services.add(ServingSessions(self), stopWithin: grace)
        let listed = listener.addresses.map(\.description).joined(separator: ", ")
        Log.info("ptkd listening on port \(listener.port) (\(listed)) as \"\(configuration.name)\", saving photos to \(configuration.effectiveDirectory)")
        Log.info("device ID \(identity.deviceID); TLS 1.3, plaintext \(configuration.plaintext == .allow ? "allowed" : "refused"), senders: \(configuration.senders == .trusted ? "trusted devices only (\(trust.trusted().count) on the list)" : "anyone")")
        // The port accepts connections now: tell systemd before mDNS, which may take a while.
        ServiceNotifier.ready(status: "listening on port \(listener.port), saving to \(configuration.effectiveDirectory)")
        var discovery: LocalSendDiscovery? = nil  // held until the end, like the advertiser
        if let localSend {
            Log.info("LocalSend receiver on port \(localSend.listener.port) (HTTPS), fingerprint \(localSend.fingerprint)")
            if configuration.mdns {
                discovery = LocalSendDiscovery(endpoint: localSend, shutdown: shutdown, listen: configuration.listen)
                // An answer's connection may take its 2 seconds to time out.
                if let discovery { services.add(discovery, stopWithin: .seconds(3)) }
            }
        }
        if let web {
            Log.info("web interface on port \(web.listener.port) (HTTPS), certificate SHA-256 \(colonHex(web.fingerprint)); log in with `ptk web-link`; WebDAV at /dav/ for app passwords (`ptk app-password add`)")
        }
        // STATE/listening: the ports really listened on, for `ptk web-link` (ListeningFile).
        var doors = ListeningRecord.doors("v1", listener.addresses)
        if let localSend { doors += ListeningRecord.doors("localsend", localSend.listener.addresses) }
        if let web { doors += ListeningRecord.doors("web", web.listener.addresses) }
        var listening: ListeningRecord? = nil
        do { listening = try ListeningRecord(stateDirectory: configuration.effectiveStateDirectory, doors: doors) } catch {
            Log.warning("cannot write \(ListeningFile.path(stateDirectory: configuration.effectiveStateDirectory)): \(error); `ptk web-link` uses the configuration's web-port")
        }
        var advertiser: Advertiser? = nil
        if configuration.mdns {
            let txt = ["v=1", "tls=1", "id=\(identity.deviceID.compact)"] + (web.map { ["web=\($0.listener.port)"] } ?? [])
            advertiser = Advertiser(name: configuration.name, port: listener.port, txt: txt) { Log.info($0) }
            if let advertiser { services.add(advertiser, stopWithin: .seconds(1)) } else { Log.warning("cannot start mDNS advertising; serving over TCP only") }
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
            let webSockets = web?.listener.sockets ?? []
            var fds = (listener.sockets + localSockets + webSockets).map { ($0, PollEvents.readable) }
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
            for (i, sock) in (listener.sockets + localSockets + webSockets).enumerated() where !revents[i].isEmpty {
                let isLocalSend = i >= listener.sockets.count && i < listener.sockets.count + localSockets.count
                let isWeb = i >= listener.sockets.count + localSockets.count
                do throws(SystemError) {
                    while let (conn, peer) = try Socket.accept(sock) {
                        // A second descriptor of it, to end it with should it be displaced
                        // (`ConnectionTable`): without one ptkd is out of descriptors, as if
                        // accept itself had failed.
                        let displacer: FileDescriptor
                        do throws(SystemError) { displacer = try conn.duplicate() } catch {
                            conn.close()
                            throw error
                        }
                        if acceptFailing != nil {
                            Log.info("accepting connections again")
                            acceptFailing = nil
                        }
                        if isWeb {
                            serveWeb(conn, displacer: displacer, peer: peer)
                        } else if isLocalSend {
                            serveLocalSend(conn, displacer: displacer, peer: peer)
                        } else {
                            serve(conn, displacer: displacer, peer: peer)
                        }
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
        listening?.remove()
        // Under the lock, so no session's STATUS update can follow STOPPING=1.
        lock.withLock {
            stopping = true
            ServiceNotifier.stopping(status: "shutting down")
        }
        // The advertisement is withdrawn first, then LocalSend discovery, then the sessions
        // (no more accepted, the open ones given their grace), the indexing, the checks.
        lateServices = services.stopAll()
        for name in lateServices { Log.warning("\(name) did not stop in time") }
        // App passwords' last uses are written at most once a minute each: the latest ones now.
        web?.dav.passwords.flushNotes(now: WallTime.now.seconds)
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

    /// The addresses to listen on at `port`: those of `--listen`, else every IPv6 and IPv4
    /// address ("::" and "0.0.0.0", either of which may be missing on this host).
    static func listenAddresses(_ listen: [String], port: UInt16) throws(DaemonError) -> [SocketAddress] {
        var addresses: [SocketAddress] = []
        for text in listen.isEmpty ? ["::", "0.0.0.0"] : listen {
            guard let a = SocketAddress(numericHost: text, port: port) else {
                throw DaemonError(description: "--listen '\(text)' is not an IPv4 or IPv6 address", exitCode: .usage)
            }
            addresses.append(a)
        }
        return addresses
    }
}

/// The sessions as a service: stopping it closes the listeners and waits for the open
/// sessions to end (each answers ERROR shutting-down at its next frame boundary).
private final class ServingSessions: Service {
    private unowned let daemon: Daemon
    init(_ daemon: Daemon) { self.daemon = daemon }

    var serviceName: String { "sessions" }

    func stop(until deadline: Instant) -> Bool {
        daemon.listener.close()
        daemon.localSend?.listener.close()
        daemon.web?.listener.close()
        return daemon.sessionThreads.join(until: deadline)
    }
}
