import PTKConfiguration
import PTKLibrary
import PTKLocalSend
import PTKProtocol
import PTKStore
import PTKSystem
import PTKTLS
import PTKTransport
import PTKTrust

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
    let configuration: DaemonConfiguration
    let store: PhotoStore
    let trust: TrustStore
    let arrivals: Arrivals
    let shutdown: ShutdownSignal
    let lock = Lock()
    var sessions: LocalSendSessions

    /// The largest JSON body taken (a prepare-upload of many files with previews).
    static let jsonLimit = 4 << 20
    /// Bodies of requests that need none are read and dropped up to this size.
    static let ignoredBodyLimit = 64 << 10

    init(configuration: DaemonConfiguration, store: PhotoStore, trust: TrustStore, arrivals: Arrivals,
         shutdown: ShutdownSignal) throws(DaemonError) {
        self.configuration = configuration
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
        let addresses = try Daemon.listenAddresses(configuration, port: configuration.localSendPort)
        do {
            listener = try Listener(addresses: addresses, skipUnavailable: configuration.listen.isEmpty)
        } catch {
            throw DaemonError(description: "cannot listen for LocalSend apps on port \(configuration.localSendPort): \(error) (set localsend-port, or localsend = off)", exitCode: .cannotStart)
        }
        let types = Set(configuration.types)
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

    /// Serves one connection until it closes, on the calling thread. The TLS handshake and the
    /// first request's head must arrive by `deadline`; later requests within the idle timeout.
    /// With `busy` (ptkd is over its session limits), the first request is answered 429 with
    /// that reason and the connection closed.
    func serve(_ socket: FileDescriptor, peer: SocketAddress, id: Int, deadline: Instant, busy: String? = nil) {
        let log = { (line: String) in Log.info("localsend \(id) from \(peer): \(line)") }
        // A bare connect-and-close (apps probe the port) ends here without a word.
        guard case .byte(let first) = peekFirstByte(socket, interrupt: shutdown.pipe.readEnd, deadline: deadline) else {
            socket.close()
            return
        }
        let stream: ByteStream
        var certificate: String? = nil
        if first == 0x16 {
            do {
                let tls = try TLSStream(socket: socket, peer: peer, context: server, interrupt: shutdown.pipe.readEnd, deadline: deadline)
                certificate = tls.peerCertificateFingerprint
                stream = tls
            } catch {
                switch error {
                case .timedOut: log("TLS handshake not finished within the handshake timeout; closed")
                case .peerClosed, .interrupted: break
                default: log("TLS handshake failed (\(error)); closed")
                }
                return
            }
        } else {
            // Plain HTTP on the HTTPS port: say so in HTTP, then close.
            let plain = TCPStream(socket: socket, peer: peer, interrupt: shutdown.pipe.readEnd)
            let http = HTTPConnection(stream: plain, kind: .request, bufferSize: 16 << 10)
            log("plain HTTP on the HTTPS port; answered 400")
            // Best effort: the connection closes right after, answered or not.
            try? http.respond(400, message("this port speaks HTTPS only"), close: true, deadline: .now + .seconds(1))
            plain.shutdownWrite()
            http.drain(until: .now + .seconds(1), limit: 1 << 20)
            plain.close()
            return
        }
        let http = HTTPConnection(stream: stream, kind: .request)
        let connection = Connection(id: id, peer: peer, certificate: certificate, http: http)
        var headDeadline = deadline
        var ending = "closed"
        while true {
            do {
                guard let head = try http.nextHead(deadline: headDeadline) else { break }
                if let busy {
                    ending = "refused, \(busy); answered 429"
                    // Best effort: the connection closes right after, answered or not.
                    try? http.respond(429, message(busy + "; try again later"), close: true, deadline: .now + .seconds(1))
                    break
                }
                let keepOpen = try handle(head, connection)
                if !keepOpen || !head.keepAlive { break }
                headDeadline = .now + configuration.idleTimeout
            } catch {
                switch error {
                case .gone, .interrupted, .bodyRefused: break
                case .timedOut(let partial):
                    if partial {
                        ending = "request not finished within the timeout; answered 408"
                        // Best effort: the connection closes right after, answered or not.
                        try? http.respond(408, message("request not finished in time"), close: true, deadline: .now + .seconds(1))
                    }
                case .refused(let status, let why):
                    ending = "\(why); answered \(status)"
                    // Best effort: the connection closes right after, answered or not.
                    try? http.respond(status, message(why), close: true, deadline: .now + .seconds(1))
                }
                break
            }
        }
        if ending != "closed" { log(ending) }
        stream.shutdownWrite()
        if connection.http.refusedMidRequest {
            // The app may still be sending the body we refused: read and drop it for a while, so
            // that closing does not reset the connection before it reads our answer.
            connection.http.drain(until: .now + .seconds(busy == nil ? 2 : 1), limit: 256 << 20)
        }
        stream.close()
    }

    /// One connection's fixed facts.
    struct Connection {
        var id: Int
        var peer: SocketAddress
        /// The SHA-256 of the client certificate the app showed (LocalSend 1.18 does), if any.
        var certificate: String?
        var http: HTTPConnection
        var address: String { peer.host }
    }

    /// The HTTP status for a store failure: 422 for a hash that does not match (as the apps
    /// expect), 400 for bytes that are not what was announced, 507 (Insufficient Storage) for a
    /// full disk or quota, 500 for the receiver's other trouble.
    static func status(for failure: FileFailure) -> (Int, String) {
        switch failure.problem.code {
        case FileErrorCode.hashMismatch.rawValue: return (422, failure.problem.message)
        case FileErrorCode.notPNG.rawValue, FileErrorCode.sizeMismatch.rawValue: return (400, failure.problem.message)
        case FileErrorCode.noSpace.rawValue: return (507, failure.problem.message)
        default: return (500, failure.problem.message)
        }
    }
}

/// `{"message": text}`, the error body the apps show.
func message(_ text: String) -> [UInt8] { LocalSendJSON.encode(["message": text]) }

/// An alias fit for a log line.
func clean(_ alias: String) -> String {
    String(String.UnicodeScalarView(alias.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7F ? " " : $0 }).prefix(64))
}
