import PTKCloudDoor
import PTKConfiguration
import PTKDAVDoor
import PTKDoor
import PTKHTTP
import PTKLibrary
import PTKLog
import PTKProtocol
import PTKStore
import PTKSystem
import PTKTLS
import PTKTransport
import PTKTrust
import PTKWeb

/// ptkd's web interface (docs/OPERATIONS.md, "The web interface"): the gallery, a photo's
/// page and the upload page, over HTTPS on its own port with a certificate of its own (ECDSA
/// P-256, which every browser takes). Only the login page and its static files (and a phone
/// app's login flow's start and poll) are served without a session; sessions come from a
/// one-time link (`ptk web-link`) or the password (`ptk web-password`). Each connection runs
/// on a thread of its own, inside a session slot.
/// This holds what the door needs of the network (its listener, identity and TLS) and the
/// WebDAV door that shares its port; the pages' routes answer from `WebDoor`.
package final class WebEndpoint: @unchecked Sendable {
    // Fixed at init.
    package let listener: Listener
    let identity: Identity
    let context: TLSContext
    /// What the routes answer with: the store, the sessions, the pages.
    let door: WebDoor
    /// The WebDAV door, on this port and certificate at `/dav/` (app passwords, not sessions).
    private(set) var dav: DAVEndpoint!
    /// The Nextcloud-compatible door's own answers (status.php, OCS), checking app passwords
    /// as the WebDAV door does; its files are the WebDAV door's.
    private(set) var cloud: CloudEndpoint!

    var configuration: WebSettings { door.configuration }
    var store: PhotoStore { door.store }
    var arrivals: Arrivals { door.arrivals }
    var shutdown: ShutdownSignal { door.shutdown }
    var access: WebAccess { door.access }
    var guesses: Guesses { door.guesses }
    var throttle: PasswordThrottle { door.throttle }

    /// The session cookie. `__Host-`: browsers keep it only if Secure, for this host, Path=/.
    static var cookieName: String { WebDoor.cookieName }
    /// A kept-alive connection waits this long at most for its next request (browsers keep
    /// idle connections open; each holds a session slot).
    static let keepAlive: Duration = .seconds(15)

    /// Binds the web port's sockets as `configuration` says, unless a test gives its own `listener`.
    package init(
        configuration: WebSettings, store: PhotoStore, arrivals: Arrivals, guesses: Guesses, shutdown: ShutdownSignal,
        listener: Listener? = nil
    ) throws(DaemonError) {
        let access = WebAccess(directory: configuration.webDirectory)
        do {
            try access.prepare()
        } catch {
            throw DaemonError(
                description: "web: cannot create \(configuration.webDirectory): \(error)", exitCode: .directoryUnusable)
        }
        do {
            identity = try Identity.loadOrCreate(
                in: configuration.webDirectory + "/tls", commonName: configuration.name, keyType: .ecP256,
                subjectAltNames: Self.hostNames(configuration))
            context = try TLSContext(server: true, identity: identity, flavor: .web)
        } catch {
            throw DaemonError(description: "web: \(error.description)", exitCode: .identityDamaged)
        }
        if let listener {
            self.listener = listener
        } else {
            self.listener = try doorListener(
                configuration.listen, port: configuration.webPort, purpose: "for browsers",
                instead: "set web-port, or web = off")
        }
        door = WebDoor(
            configuration: configuration, store: store, arrivals: arrivals, guesses: guesses, shutdown: shutdown,
            access: access,
            fingerprint: identity.certificateFingerprint)
        dav = try DAVEndpoint(
            configuration: configuration, store: store, arrivals: arrivals, throttle: door.throttle, guesses: guesses,
            shutdown: shutdown)
        let dav = self.dav!
        cloud = CloudEndpoint(
            authenticate: { r throws(HTTPError) in try dav.authenticate(r) }, usage: { dav.usage(of: $0) },
            date: DAVEndpoint.dateHeader)
    }

    /// The names the certificate is made for: the host name, its `.local` name, `localhost`,
    /// and the host's IPv4 addresses (and those ptkd is told to listen on).
    static func hostNames(_ configuration: WebSettings) -> [String] {
        let host = hostName()
        var names = [host, host + ".local", "localhost", "127.0.0.1", "::1"]
        // Without interfaces to list, the names above still make a certificate.
        names += ((try? ipv4MulticastInterfaces()) ?? []).map(\.address)
        names += configuration.listen.filter { $0 != "::" && $0 != "0.0.0.0" }
        var seen = Set<String>()
        return names.filter { seen.insert($0).inserted }
    }

    package var fingerprint: String { identity.certificateFingerprint }

    /// Writes the app passwords' latest uses now (each is written at most once a minute while
    /// ptkd runs): ptkd is stopping.
    package func flushAppPasswordNotes() { dav.passwords.flushNotes(now: DAVEndpoint.now) }

    /// Serves one connection until it closes, on the calling thread (see `HTTPSServer.serve`).
    func serve(
        _ socket: FileDescriptor, peer: SocketAddress, id: Int, deadline: Instant, busy: String? = nil,
        stage: ((ConnectionStage) -> Void)? = nil, claim: ((String) -> Bool)? = nil
    ) {
        httpsServer().serve(
            socket, peer: peer, id: id, deadline: deadline, busy: busy, stage: stage, claim: claim,
            respond: handler(id: id, peer: peer))
    }

    /// The HTTPS side: the certificate, keep-alive, the security headers on every answer (the
    /// WebDAV door's too), errors the connection answers itself as a page.
    func httpsServer() -> HTTPSServer {
        var server = HTTPSServer(
            context: context, interrupt: shutdown.pipe.readEnd, kind: "web",
            idle: min(Self.keepAlive, configuration.idleTimeout),
            log: { Log.info($0) }, errorBody: door.errorBody)
        server.exchangeTimeout = configuration.idleTimeout
        server.fixedHeaders = WebDoor.securityHeaderLines
        server.logBudget = door.requestLogBudget
        return server
    }

    /// Answers each request of connection `id` through the web door's route table
    /// (`WebDoor.responder`), the WebDAV door's for a target below `/dav` or `/remote.php`
    /// (`DAVEndpoint.isDAVTarget`), or the Nextcloud-compatible door's (`CloudEndpoint.isCloudTarget`).
    func handler(id: Int, peer: SocketAddress) -> (HTTPHead, HTTPConnection, String?) throws(HTTPError) -> Response {
        let connection = WebConnection(
            id: id, peer: peer, directory: configuration.effectiveDirectory, library: configuration.library)
        let web = door.responder(connection: connection)
        let dav = self.dav.responder(connection: connection)
        let cloud = self.cloud.responder()
        return { head, http, certificate throws(HTTPError) in
            if CloudEndpoint.isCloudTarget(head.target) {
                return try cloud.response(to: head, on: http, peer: peer, connectionID: id, certificate: certificate)
            }
            if DAVEndpoint.isDAVTarget(head.target) {
                return try dav.response(to: head, on: http, peer: peer, connectionID: id, certificate: certificate)
            }
            return try web.response(to: head, on: http, peer: peer, connectionID: id, certificate: certificate)
        }
    }
}

/// The web door's state, which its routes reach through their context: the store, the login
/// files and sessions, the pages, the receiver's budgets. No listener, no TLS: its route tests
/// build it alone.
final class WebDoor: @unchecked Sendable {
    // Fixed at init; the throttle and budgets guard their own state.
    let configuration: WebSettings
    let store: PhotoStore
    let arrivals: Arrivals
    let shutdown: ShutdownSignal
    let access: WebAccess
    let pages: WebPages
    /// Wrong guesses at any door, for the whole receiver.
    let guesses: Guesses
    /// One password check (scrypt: 32 MiB, 0.1 s) at a time, and the wrong tries per address
    /// (shared with the WebDAV door's app passwords).
    let throttle = PasswordThrottle()
    /// The request log's lines a minute per address (refusals no handler logged).
    let requestLogBudget = LogBudget(perMinute: 30)
    /// The devices' login flows under way (`WebEndpoint+LoginFlow.swift`), in memory; an IPv6
    /// /64 counts as one address.
    let loginFlows = LoginFlows(addressKey: Guesses.addressKey)

    /// The session cookie. `__Host-`: browsers keep it only if Secure, for this host, Path=/.
    static let cookieName = "__Host-ptk"
    /// Form bodies (rename, note, rate, delete) are read up to this size.
    static let formLimit = 64 << 10
    /// The login form, which anyone may send, is read up to this size (a name and a password).
    static let loginFormLimit = 4 << 10
    /// Headers every response carries.
    static let securityHeaders = [
        ("Content-Security-Policy", "default-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"),
        ("X-Frame-Options", "DENY"), ("Referrer-Policy", "no-referrer"), ("X-Content-Type-Options", "nosniff"),
    ]
    /// `securityHeaders` as the connection sends them after each response's own (`HTTPConnection.fixedHeaders`).
    static let securityHeaderLines = securityHeaders.map { "\($0.0): \($0.1)\r\n" }.joined()

    /// The body of an answer the connection gives itself (a malformed head, a body too slow): the error page.
    var errorBody: @Sendable (String) -> ([UInt8], String) {
        let pages = self.pages
        return { (Array(pages.error($0, viewer: nil).utf8), "text/html; charset=utf-8") }
    }

    /// `access` is prepared (its directory made); `fingerprint` is the certificate's, which the pages show.
    init(
        configuration: WebSettings, store: PhotoStore, arrivals: Arrivals, guesses: Guesses, shutdown: ShutdownSignal,
        access: WebAccess,
        fingerprint: String
    ) {
        self.configuration = configuration
        self.store = store
        self.arrivals = arrivals
        self.guesses = guesses
        self.shutdown = shutdown
        self.access = access
        pages = WebPages(receiver: configuration.name, fingerprint: fingerprint)
    }
}
