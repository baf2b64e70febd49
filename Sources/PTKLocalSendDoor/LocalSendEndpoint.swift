import PTKConfiguration
import PTKDoor
import PTKHTTP
import PTKLibrary
import PTKLocalSend
import PTKLog
import PTKProtocol
import PTKStore
import PTKSystem
import PTKTLS
import PTKTransport
import PTKTrust
import PTKVocabulary

/// ptkd as a LocalSend v2 receiver (docs/PROTOCOL.md, "LocalSend"): HTTPS on its own port,
/// the routes the apps call (`LocalSendDoor`), and uploads into the same store, limits, trust
/// list and library as protocol v1. Each connection runs on a thread of its own, inside a
/// session slot. This holds what the door needs of the network: its listener, identity and TLS.
package final class LocalSendEndpoint: @unchecked Sendable {
    // Fixed at init.
    package let listener: Listener
    let identity: Identity
    let server: TLSContext
    package let client: TLSContext
    /// What the routes answer with: the sessions, the store, the trust list.
    let door: LocalSendDoor

    package var configuration: LocalSendSettings { door.configuration }
    var trust: TrustStore { door.trust }

    package init(
        configuration: LocalSendSettings, store: PhotoStore, trust: TrustStore, arrivals: Arrivals, guesses: Guesses,
        shutdown: ShutdownSignal
    ) throws(DaemonError) {
        do {
            identity = try Identity.loadOrCreate(
                in: configuration.localSendIdentityDirectory, commonName: "ptkd \(configuration.name)", keyType: .rsa)
            server = try TLSContext(server: true, identity: identity, flavor: .https)
            client = try TLSContext(server: false, identity: identity, flavor: .https)
        } catch {
            throw DaemonError(description: "LocalSend: \(error.description)", exitCode: .identityDamaged)
        }
        listener = try doorListener(
            configuration.listen, port: configuration.localSendPort, purpose: "for LocalSend apps",
            instead: "set localsend-port, or localsend = off")
        door = LocalSendDoor(
            configuration: configuration, store: store, trust: trust, arrivals: arrivals, guesses: guesses,
            shutdown: shutdown,
            fingerprint: identity.certificateFingerprint, port: listener.port)
    }

    package var fingerprint: String { identity.certificateFingerprint }

    /// How ptkd describes itself to the apps (`info`, `register`, announcements).
    package func info(announce: Bool? = nil) -> DeviceInfo { door.info(announce: announce) }

    // MARK: Connections

    /// Serves one connection until it closes, on the calling thread (see `HTTPSServer.serve`).
    func serve(
        _ socket: FileDescriptor, peer: SocketAddress, id: Int, deadline: Instant, busy: String? = nil,
        stage: ((ConnectionStage) -> Void)? = nil
    ) {
        let responder = door.responder()
        httpsServer().serve(socket, peer: peer, id: id, deadline: deadline, busy: busy, stage: stage) {
            (head, http, certificate) throws(HTTPError) in
            try responder.response(to: head, on: http, peer: peer, connectionID: id, certificate: certificate)
        }
    }

    /// The HTTPS side: the certificate, keep-alive, errors as `{"message"}`.
    func httpsServer() -> HTTPSServer {
        var server = HTTPSServer(
            context: self.server, interrupt: door.shutdown.pipe.readEnd, kind: "localsend",
            idle: configuration.idleTimeout,
            log: { Log.info($0) }, errorBody: LocalSendDoor.errorBody)
        server.logBudget = door.requestLogBudget
        return server
    }
}

/// The LocalSend door's state, which its routes reach through their context: the sessions and
/// their lock, the store, the trust list, the receiver's budgets. No listener, no TLS: its
/// route tests build it alone.
final class LocalSendDoor: @unchecked Sendable {
    // `sessions` is guarded by `lock`; everything else is fixed at init.
    let configuration: LocalSendSettings
    let store: PhotoStore
    let trust: TrustStore
    let arrivals: Arrivals
    /// Wrong guesses at any door, for the whole receiver.
    let guesses: Guesses
    let shutdown: ShutdownSignal
    /// The certificate's SHA-256 and the port the apps are told.
    let fingerprint: String
    let port: UInt16
    let lock = Lock()
    var sessions: LocalSendSessions

    /// The largest JSON body taken (a prepare-upload of many files with previews).
    static let jsonLimit = 4 << 20
    /// The largest JSON body of a sender not on the trust list that is read without a share of
    /// `largeBodies` (about 250 files).
    static let smallJSONLimit = 64 << 10
    /// How fast a large body must come (after the first 10 s).
    static let largeBodyRate = 64 << 10
    /// Large JSON bodies being read and decoded at once, in bytes.
    let largeBodies = LargeBodies()
    /// The request log's lines a minute per address (refusals no handler logged).
    let requestLogBudget = LogBudget(perMinute: 30)

    init(
        configuration: LocalSendSettings, store: PhotoStore, trust: TrustStore, arrivals: Arrivals, guesses: Guesses,
        shutdown: ShutdownSignal,
        fingerprint: String, port: UInt16
    ) {
        self.configuration = configuration
        self.guesses = guesses
        self.store = store
        self.trust = trust
        self.arrivals = arrivals
        self.shutdown = shutdown
        self.fingerprint = fingerprint
        self.port = port
        let types = Set(configuration.mediaTypes)
        sessions = LocalSendSessions(
            policy: LocalSendPolicy(
                pin: configuration.localSendPIN, acceptedTypes: types,
                maxFileSize: configuration.maxFileSize,
                sessionIdle: max(.seconds(60), configuration.idleTimeout * 2)))
    }

    /// How ptkd describes itself to the apps (`info`, `register`, announcements).
    func info(announce: Bool? = nil) -> DeviceInfo {
        DeviceInfo(
            alias: configuration.name, version: "2.1", deviceModel: "ptkd", deviceType: "headless",
            fingerprint: fingerprint,
            port: Int(port), protocol: "https", download: false, announce: announce, announcement: announce)
    }

    /// The body of an answer the connection gives itself (a malformed head, a body too slow).
    static let errorBody: @Sendable (String) -> ([UInt8], String) = { (message($0), "application/json") }
}

/// `{"message": text}`, the error body the apps show.
func message(_ text: String) -> [UInt8] { LocalSendJSON.encode(["message": text]) }
