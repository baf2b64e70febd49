import PTKConfiguration
import PTKHTTP
import PTKLibrary
import PTKLocalSend
import PTKProtocol
import PTKStore
import PTKSystem
import PTKTLS
import PTKTransport
import PTKTrust
import PTKVocabulary

/// ptkd as a LocalSend v2 receiver (docs/PROTOCOL.md, "LocalSend"): HTTPS on its own port,
/// the routes the apps call, and uploads into the same store, limits, trust list and library
/// as protocol v1. Each connection runs on a thread of its own, inside a session slot.
final class LocalSendEndpoint: @unchecked Sendable {
    // `sessions` is guarded by `lock`; everything else is fixed at init.
    let listener: Listener
    let identity: Identity
    let server: TLSContext
    let client: TLSContext
    // Internal, not private, for LocalSendEndpoint+Routes.swift; `sessions` is guarded by `lock`.
    let configuration: LocalSendSettings
    let store: PhotoStore
    let trust: TrustStore
    let arrivals: Arrivals
    /// Wrong guesses at any door, for the whole receiver.
    let guesses: Guesses
    let shutdown: ShutdownSignal
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

    init(configuration: LocalSendSettings, store: PhotoStore, trust: TrustStore, arrivals: Arrivals, guesses: Guesses,
         shutdown: ShutdownSignal) throws(DaemonError) {
        self.configuration = configuration
        self.guesses = guesses
        self.store = store
        self.trust = trust
        self.arrivals = arrivals
        self.shutdown = shutdown
        do {
            identity = try Identity.loadOrCreate(in: configuration.localSendIdentityDirectory, commonName: "ptkd \(configuration.name)", keyType: .rsa)
            server = try TLSContext(server: true, identity: identity, flavor: .https)
            client = try TLSContext(server: false, identity: identity, flavor: .https)
        } catch {
            throw DaemonError(description: "LocalSend: \(error.description)", exitCode: .identityDamaged)
        }
        let addresses = try Daemon.listenAddresses(configuration.listen, port: configuration.localSendPort)
        do {
            listener = try Listener(addresses: addresses, skipUnavailable: configuration.listen.isEmpty)
        } catch {
            throw DaemonError(description: "cannot listen for LocalSend apps on port \(configuration.localSendPort): \(error) (set localsend-port, or localsend = off)", exitCode: .cannotStart)
        }
        let types = Set(configuration.mediaTypes)
        sessions = LocalSendSessions(policy: LocalSendPolicy(pin: configuration.localSendPIN, acceptedTypes: types,
                                                             maxFileSize: configuration.maxFileSize,
                                                             sessionIdle: max(.seconds(60), configuration.idleTimeout * 2)))
    }

    var fingerprint: String { identity.certificateFingerprint }

    /// How ptkd describes itself to the apps (`info`, `register`, announcements).
    func info(announce: Bool? = nil) -> DeviceInfo {
        DeviceInfo(alias: configuration.name, version: "2.1", deviceModel: "ptkd", deviceType: "headless", fingerprint: fingerprint,
                   port: Int(listener.port), protocol: "https", download: false, announce: announce, announcement: announce)
    }

    // MARK: Connections

    /// Serves one connection until it closes, on the calling thread (see `HTTPSServer.serve`).
    func serve(_ socket: FileDescriptor, peer: SocketAddress, id: Int, deadline: Instant, busy: String? = nil,
               stage: ((ConnectionStage) -> Void)? = nil) {
        httpsServer().serve(socket, peer: peer, id: id, deadline: deadline, busy: busy, stage: stage, handle: handler(id: id, peer: peer))
    }

    /// The HTTPS side: the certificate, keep-alive, errors as `{"message"}`.
    func httpsServer() -> HTTPSServer {
        var server = HTTPSServer(context: self.server, interrupt: shutdown.pipe.readEnd, kind: "localsend", idle: configuration.idleTimeout,
                                 log: { Log.info($0) }, errorBody: { (message($0), "application/json") })
        server.logBudget = requestLogBudget
        return server
    }

    /// Answers each request of connection `id` through the route table (`service()`).
    func handler(id: Int, peer: SocketAddress) -> (HTTPHead, HTTPConnection, String?) throws(HTTPFailure) -> Bool {
        let service = service()
        return { head, http, certificate throws(HTTPFailure) in
            try service.respond(to: head, on: http, peer: peer, connectionID: id, certificate: certificate, context: LocalSendContext())
        }
    }
}

/// `{"message": text}`, the error body the apps show.
func message(_ text: String) -> [UInt8] { LocalSendJSON.encode(["message": text]) }

/// A peer's text (an alias, a file name) fit to stand between the double quotes of a log line:
/// its first 64 scalars, with `"` and `\` escaped and every control, line separator and bidi
/// control as a visible escape (`escapedForQuotes`).
func clean(_ alias: String) -> String {
    escapedForQuotes(String(String.UnicodeScalarView(alias.unicodeScalars.prefix(64))))
}
