import PTKConfiguration
import PTKDiscovery
import PTKDoor
import PTKHooks
import PTKInboxDoor
import PTKLibrary
import PTKLocalSendDiscovery
import PTKLocalSendDoor
import PTKLog
import PTKNotify
import PTKProtocol
import PTKStore
import PTKSystem
import PTKTLS
import PTKTransport
import PTKTrust
import PTKV1Door
import PTKVocabulary
import PTKWebDoor

/// The receiver service, and ptkd's composition root: it opens the store, the identity, the
/// trust list, the library and the hooks, makes the doors (protocol v1, LocalSend, the web
/// interface with its WebDAV door) over them, runs one accept loop over every door
/// (`AcceptLoop`), and stops it all in order. Who is served when many senders come at once is
/// `Admission`'s, shared by every door.
public final class Daemon: @unchecked Sendable {
    // Everything but `lateServices` (set by `run`) is fixed at init; each part is thread-safe.
    /// The configuration ptkd was started with; fixed for the daemon's life.
    public let configuration: DaemonConfiguration
    /// The received-photos directory, where every door's uploads are saved.
    public let store: PhotoStore
    /// Requested to stop the daemon (a signal, a test); `run` returns after it.
    public let shutdown: PTKDoor.ShutdownSignal
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
    /// The connection slots and turns every door shares, and the connections' threads.
    let admission: Admission
    /// Protocol v1's door.
    let v1: V1Door
    /// The LocalSend receiver; nil with `localsend = off`.
    let localSend: LocalSendEndpoint?
    /// The web interface; nil with `web = off`.
    let web: WebEndpoint?
    /// Every door, in the order the accept loop polls them and STATE/listening lists them.
    let doors: [any Door]
    /// The watched inboxes and drop folders; nil when none is configured.
    let inbox: InboxDoor?
    /// After `run`: the services that did not stop in time (their threads may still be running).
    public private(set) var lateServices: [String] = []

    /// The protocol v1 port's sockets, bound at init.
    public var listener: Listener { v1.listener }

    /// Opens the store, identity, state and hooks and binds the sockets; throws with ptkd's exit status.
    public init(configuration: DaemonConfiguration) throws(DaemonError) {
        self.configuration = configuration
        do {
            store = try PhotoStore(
                settings: StoreSettings(
                    directory: configuration.effectiveDirectory,
                    minFree: configuration.minFree,
                    partialMaxAge: configuration.partialMaxAge,
                    fileMode: configuration.fileMode))
        } catch {
            throw DaemonError(description: error.description, exitCode: .directoryUnusable)
        }
        let tls: TLSContext
        do {
            try makeDirectories(configuration.effectiveStateDirectory, mode: 0o755)
            identity = try Identity.loadOrCreate(
                in: configuration.identityDirectory, commonName: "ptkd \(configuration.name)")
            tls = try TLSContext(server: true, identity: identity)
        } catch let error as IdentityError {
            throw DaemonError(description: error.description, exitCode: .identityDamaged)
        } catch {
            throw DaemonError(description: "cannot create the state directory: \(error)", exitCode: .directoryUnusable)
        }
        trust = TrustStore(directory: configuration.effectiveStateDirectory)
        library =
            configuration.library
            ? LibraryIndexer(
                directory: configuration.effectiveDirectory,
                pixelLimit: UInt64(configuration.thumbnailMaxMegapixels) * 1_000_000, minFree: configuration.minFree
            ) { Log.info($0) }
            : nil
        if let command = configuration.onSaved {
            do {
                hooks = try HookRunner(
                    command: command, timeout: configuration.onSavedTimeout,
                    stateDirectory: configuration.effectiveStateDirectory)
            } catch {
                throw DaemonError(
                    description:
                        "on-saved: cannot open its queue in \(configuration.effectiveStateDirectory)/hooks: \(error)",
                    exitCode: .directoryUnusable)
            }
        } else {
            hooks = nil
        }
        // Duplicates are found through the library's index (and the photos saved since start).
        let held =
            configuration.duplicates == .skip && configuration.library
            ? HeldPhotos(directory: configuration.effectiveDirectory) : nil
        if let held {
            store.findHeld = { sha256, size in held.find(sha256: sha256, size: size) }
        }
        arrivals = Arrivals(
            directory: configuration.effectiveDirectory, layout: configuration.layout, trust: trust,
            library: library, held: held, hooks: hooks)
        let listener = try doorListener(configuration.listen, port: configuration.port, purpose: "", instead: nil)
        do {
            shutdown = try ShutdownSignal()
        } catch {
            throw DaemonError(
                description: "cannot listen on port \(configuration.port): \(error)", exitCode: .cannotStart)
        }
        guard !listener.addresses.isEmpty else {
            throw DaemonError(description: "no address to listen on", exitCode: .cannotStart)
        }
        // One budget of wrong guesses for every door that checks a secret.
        let guesses = Guesses()
        localSend =
            configuration.localSend
            ? try LocalSendEndpoint(
                configuration: LocalSendSettings(configuration), store: store, trust: trust, arrivals: arrivals,
                guesses: guesses, shutdown: shutdown)
            : nil
        web =
            configuration.web
            ? try WebEndpoint(
                configuration: WebSettings(configuration), store: store, arrivals: arrivals, guesses: guesses,
                shutdown: shutdown) : nil
        let port = listener.port
        admission = Admission(
            maxSessions: configuration.maxSessions, perAddress: configuration.maxSessionsPerAddress,
            handshakeTimeout: configuration.handshakeTimeout
        ) { count in
            ServiceNotifier.status("listening on port \(port); \(count) session(s)")
        }
        // WELCOME.sessions is each session's share when it starts (`turns`).
        let settings = ReceiverSettings(
            name: configuration.name, window: configuration.window, maxFileSize: configuration.maxFileSize,
            sessions: nil,
            plaintextAllowed: configuration.plaintext == .allow,
            trustedSendersOnly: configuration.senders == .trusted,
            types: configuration.types)
        v1 = V1Door(
            listener: listener, tls: tls, store: store, trust: trust, arrivals: arrivals, settings: settings,
            shutdown: shutdown,
            admission: admission, idleTimeout: configuration.idleTimeout)
        // The doors: one line each. A new door is made above, with its settings, and listed here.
        var doors: [any Door] = [v1]
        if let localSend { doors.append(localSend.door(admission: admission)) }
        if let web { doors.append(web.door(admission: admission)) }
        self.doors = doors
        // Folders are a door without a socket: a thread of its own, started with the services.
        if configuration.inboxes.isEmpty && configuration.dropFolders.isEmpty {
            inbox = nil
        } else {
            do {
                inbox = try InboxDoor(
                    settings: InboxSettings(configuration), store: store, arrivals: arrivals, shutdown: shutdown)
            } catch {
                throw DaemonError(description: "cannot watch the inboxes: \(error)", exitCode: .cannotStart)
            }
        }
    }

    /// Connections now being handled: sessions, and connections in their handshake.
    public var activeSessions: Int { admission.count }

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
            } catch {
                Log.warning(
                    "on-saved: cannot start the thread that runs hooks: \(error); none runs until ptkd restarts (they stay queued)"
                )
            }
        }
        // The inboxes and drop folders: stopped before the library, the lookups and the hooks
        // they use (a copy in progress is abandoned, nothing kept).
        if let inbox {
            do {
                try inbox.start()
                services.add(inbox, stopWithin: .seconds(2))
            } catch {
                Log.warning("inbox: cannot start its thread: \(error); no folder is watched until ptkd restarts")
            }
        }
        // Sessions: when their turn comes, no more are accepted and those open get `grace` to
        // reach a frame boundary (they answer ERROR shutting-down).
        services.add(ServingDoors(doors, threads: admission.threads), stopWithin: grace)
        let listed = listener.addresses.map(\.description).joined(separator: ", ")
        Log.info(
            "ptkd listening on port \(listener.port) (\(listed)) as \"\(configuration.name)\", saving photos to \(configuration.effectiveDirectory)"
        )
        Log.info(
            "device ID \(identity.deviceID); TLS 1.3, plaintext \(configuration.plaintext == .allow ? "allowed" : "refused"), senders: \(configuration.senders == .trusted ? "trusted devices only (\(trust.trusted().count) on the list)" : "anyone")"
        )
        // The port accepts connections now: tell systemd before mDNS, which may take a while.
        ServiceNotifier.ready(
            status: "listening on port \(listener.port), saving to \(configuration.effectiveDirectory)")
        var discovery: LocalSendDiscovery? = nil  // held until the end, like the advertiser
        if let localSend {
            Log.info(
                "LocalSend receiver on port \(localSend.listener.port) (HTTPS), fingerprint \(localSend.fingerprint)")
            if configuration.mdns {
                let settings = localSend.configuration
                let ownPorts = Set([
                    Int(localSend.listener.port), Int(settings.port), Int(settings.webPort),
                    Int(settings.localSendPort),
                ])
                discovery = LocalSendDiscovery(
                    info: { [localSend] in localSend.info(announce: $0) }, client: localSend.client,
                    fingerprint: localSend.fingerprint, ownPorts: ownPorts, shutdown: shutdown,
                    listen: configuration.listen)
                // An answer's connection may take its 2 seconds to time out.
                if let discovery { services.add(discovery, stopWithin: .seconds(3)) }
            }
        }
        if let web {
            Log.info(
                "web interface on port \(web.listener.port) (HTTPS), certificate SHA-256 \(colonHex(web.fingerprint)); log in with `ptk web-link`; WebDAV at /dav/ and Nextcloud-compatible apps at / for app passwords (`ptk app-password add`)"
            )
        }
        // STATE/listening: the ports really listened on, for `ptk web-link` (ListeningFile).
        var listening: ListeningRecord? = nil
        do {
            listening = try ListeningRecord(
                stateDirectory: configuration.effectiveStateDirectory, doors: ListeningRecord.doors(doors))
        } catch {
            Log.warning(
                "cannot write \(ListeningFile.path(stateDirectory: configuration.effectiveStateDirectory)): \(error); `ptk web-link` uses the configuration's web-port"
            )
        }
        var advertiser: Advertiser? = nil
        if configuration.mdns {
            let txt =
                ["v=1", "tls=1", "id=\(identity.deviceID.compact)"] + (web.map { ["web=\($0.listener.port)"] } ?? [])
            advertiser = Advertiser(name: configuration.name, port: listener.port, txt: txt) { Log.info($0) }
            if let advertiser {
                services.add(advertiser, stopWithin: .seconds(1))
            } else {
                Log.warning("cannot start mDNS advertising; serving over TCP only")
            }
        } else {
            Log.info("mDNS advertising is off")
        }
        let removed = store.removeStalePartials()
        if removed > 0 { Log.info("removed \(removed) stale partial upload(s)") }
        var failure: DaemonError? = nil
        let loop = AcceptLoop(
            doors: doors, shutdown: shutdown, every: .seconds(3600), tick: { [store] in store.removeStalePartials() },
            remedy: { [configuration] in Self.remedy(for: $0, configuration) })
        if let why = loop.run() {
            failure = DaemonError(description: why, exitCode: .acceptFailed)
            Log.warning("\(why); shutting down")
        }
        listening?.remove()
        // Under the slots' lock, so no session's STATUS update can follow STOPPING=1.
        admission.stop { ServiceNotifier.stopping(status: "shutting down") }
        // The advertisement is withdrawn first, then LocalSend discovery, then the sessions
        // (no more accepted, the open ones given their grace), the indexing, the checks.
        lateServices = services.stopAll()
        for name in lateServices { Log.warning("\(name) did not stop in time") }
        // App passwords' last uses are written at most once a minute each: the latest ones now.
        web?.flushAppPasswordNotes()
        let left = activeSessions
        Log.info(left == 0 ? "ptkd stopped" : "ptkd stopped with \(left) session(s) still closing")
        return failure
    }

    /// What to do about an accept error that lasts, as the end of its log line.
    static func remedy(for errno: Errno, _ configuration: DaemonConfiguration) -> String {
        switch errno {
        case .processOutOfDescriptors, .systemOutOfDescriptors:
            return
                "; ptkd is out of file descriptors: raise LimitNOFILE= (systemctl edit ptkd) or lower max-sessions (now \(configuration.maxSessions))"
        case .noBufferSpace, .outOfMemory:
            return "; the system is out of memory for sockets"
        default:
            return ""
        }
    }
}
