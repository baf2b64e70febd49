import PTKConfiguration
import PTKDigest
import PTKDoor
import PTKHTTP
import PTKLibrary
import PTKStore
import PTKSystem
import PTKTestSupport
import PTKTransport
import PTKTrust

@testable import PTKWebDoor

/// The web port's door alone (the web interface with its WebDAV door at /dav/), driven without
/// sockets or TLS: a `WebEndpoint` over its own store, arrivals and login files in a temporary
/// directory, its certificate (ECDSA P-256) made there, and a loopback listener of its own that
/// is never accepted on; no daemon, no other door. Each "connection" is a `ScriptedHTTPStream`
/// playing a client's bytes to the door's `HTTPSServer.converse` with the door's own handler,
/// as `serve` does after TLS.
final class DoorFixture {
    let root = makeTemporaryDirectory("ptk-doors")
    let web: WebEndpoint
    let peer = SocketAddress(numericHost: "192.0.2.7", port: 40000)!
    var photos: String { root + "/photos" }

    init(_ adjust: (inout DaemonConfiguration) -> Void = { _ in }) throws {
        var c = DaemonConfiguration()
        c.directory = root + "/photos"
        c.stateDirectory = root + "/state"
        c.webPort = 0
        c.listen = ["127.0.0.1"]
        c.mdns = false
        c.idleTimeout = .seconds(5)
        adjust(&c)
        // What ptkd makes before its doors (Daemon.init), as the web port's door sees it.
        try makeDirectories(c.effectiveStateDirectory, mode: 0o755)
        let store = try PhotoStore(
            settings: StoreSettings(
                directory: c.effectiveDirectory, minFree: c.minFree,
                partialMaxAge: c.partialMaxAge, fileMode: c.fileMode))
        let library =
            c.library
            ? LibraryIndexer(
                directory: c.effectiveDirectory, pixelLimit: UInt64(c.thumbnailMaxMegapixels) * 1_000_000,
                minFree: c.minFree
            ) { _ in }
            : nil
        let held = c.duplicates == .skip && c.library ? HeldPhotos(directory: c.effectiveDirectory) : nil
        if let held { store.findHeld = { sha256, size in held.find(sha256: sha256, size: size) } }
        let arrivals = Arrivals(
            directory: c.effectiveDirectory, layout: c.layout, trust: TrustStore(directory: c.effectiveStateDirectory),
            library: library, held: held, hooks: nil)
        let listener = try Listener(
            addresses: [SocketAddress(numericHost: "127.0.0.1", port: 0)!], skipUnavailable: false)
        web = try WebEndpoint(
            configuration: WebSettings(c), store: store, arrivals: arrivals, guesses: Guesses(),
            shutdown: try ShutdownSignal(),
            listener: listener)
        if c.library { _ = try PhotoLibrary(directory: root + "/photos", create: true) }
    }

    deinit {
        web.listener.close()
        removeTree(root)
    }

    /// What one scripted connection came to: the responses in order, how it ended (the log's
    /// words, nil for a plain close), whether the client's end was left open, and log lines.
    struct Exchange {
        var responses: [ParsedResponse]
        var ending: String?
        var raw: [UInt8]
        var stream: ScriptedHTTPStream
        var first: ParsedResponse { responses.first ?? ParsedResponse(status: 0, headers: [:], body: []) }
    }

    /// Plays `pieces` (a client's bytes) to the web door on one connection.
    func web(
        _ pieces: [[UInt8]], readSize: Int = 1 << 20, whenEmpty: ScriptedStream.WhenEmpty = .close,
        headOnly: Bool = false,
        certificate: String? = nil
    ) -> Exchange {
        let server = web.httpsServer()
        return converse(
            server, web.handler(id: 1, peer: peer), pieces, readSize: readSize, whenEmpty: whenEmpty,
            headOnly: headOnly,
            certificate: certificate)
    }

    private func converse(
        _ server: HTTPSServer, _ respond: @escaping (HTTPHead, HTTPConnection, String?) throws(HTTPError) -> Response,
        _ pieces: [[UInt8]], readSize: Int, whenEmpty: ScriptedStream.WhenEmpty, headOnly: Bool,
        certificate: String?
    ) -> Exchange {
        let stream = ScriptedHTTPStream(pieces, readSize: readSize, whenEmpty: whenEmpty)
        let http = server.connection(over: stream)
        let ending = server.conversation.converse(
            http, certificate: certificate, deadline: .now + .seconds(5), respond: respond)
        let responses = ParsedResponse.all(in: stream.written, headOnly: headOnly)
        return Exchange(responses: responses, ending: ending, raw: stream.written, stream: stream)
    }

    /// A logged-in browser's cookie and CSRF token.
    func login(name: String = "ann") throws -> (cookie: String, csrf: String) {
        let (session, secret) = try web.access.login(name: name, address: peer.host)
        return ("\(WebEndpoint.cookieName)=\(secret)", session.csrf)
    }

    /// Names of the files in the photos directory (recursively, without hidden folders).
    func kept() -> [String] {
        func walk(_ folder: String, _ prefix: String) -> [String] {
            listDirectory(folder).filter { !$0.hasPrefix(".") }.flatMap { name -> [String] in
                let path = folder + "/" + name
                return isDirectory(path) ? walk(path, prefix + name + "/") : [prefix + name]
            }
        }
        return walk(photos, "").sorted()
    }

    /// Files waiting in `.incoming/` (none after any finished or refused upload).
    func incoming() -> [String] { listDirectory(photos + "/.incoming") }
}
