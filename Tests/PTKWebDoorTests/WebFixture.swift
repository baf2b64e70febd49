import PTKConfiguration
import PTKDAVDoor
import PTKDoor
import PTKHTTP
import PTKLibrary
import PTKStore
import PTKSystem
import PTKTestSupport
import PTKTrust
import PTKWeb

@testable import PTKWebDoor

/// The web door alone, driven through its route table by `RouteHarness`: its state (store,
/// arrivals, login files, library) in a temporary directory; no daemon, no listener, no TLS
/// identity, no socket.
final class WebFixture {
    let root = makeTemporaryDirectory("ptk-web-door")
    let door: WebDoor
    /// The client's address, as `RouteHarness` gives it.
    let peer = SocketAddress(numericHost: "192.0.2.7", port: 40000)!
    var photos: String { root + "/photos" }
    /// The certificate fingerprint the pages show.
    static let fingerprint = String(repeating: "5e", count: 32)

    init(_ adjust: (inout DaemonConfiguration) -> Void = { _ in }) throws {
        var c = DaemonConfiguration()
        c.directory = root + "/photos"
        c.stateDirectory = root + "/state"
        c.idleTimeout = .seconds(5)
        adjust(&c)
        try makeDirectories(c.effectiveStateDirectory, mode: 0o755)
        let store = try PhotoStore(settings: StoreSettings(directory: c.effectiveDirectory, minFree: c.minFree))
        if c.library { _ = try PhotoLibrary(directory: c.effectiveDirectory, create: true) }
        let trust = TrustStore(directory: c.effectiveStateDirectory)
        let arrivals = Arrivals(
            directory: c.effectiveDirectory, layout: c.layout, trust: trust, library: nil, held: nil, hooks: nil)
        let settings = WebSettings(c)
        let access = WebAccess(directory: settings.webDirectory)
        try access.prepare()
        door = WebDoor(
            configuration: settings, store: store, arrivals: arrivals, guesses: Guesses(),
            shutdown: try ShutdownSignal(),
            access: access, fingerprint: Self.fingerprint)
    }

    deinit { removeTree(root) }

    /// Plays `pieces` (a client's bytes) to the door on one connection, with the security
    /// headers the door's server sets on it; `headOnly` parses the answers as heads alone;
    /// `onStage` is told the connection's stages; `from` is the client's address (`peer` unless given).
    func run(
        _ pieces: [[UInt8]], readSize: Int = 1 << 20, whenEmpty: ScriptedStream.WhenEmpty = .close,
        headOnly: Bool = false, onStage: ((ConnectionStage) -> Void)? = nil, from: SocketAddress? = nil
    ) -> RouteHarness<WebContext>.Exchange {
        let settings = door.configuration
        let peer = from ?? self.peer
        let connection = WebConnection(
            id: 1, peer: peer, directory: settings.effectiveDirectory, library: settings.library)
        var harness = RouteHarness(
            door.responder(connection: connection), idle: settings.idleTimeout, errorBody: door.errorBody)
        harness.peer = peer
        harness.fixedHeaders = WebDoor.securityHeaderLines
        harness.onStage = onStage
        return harness.run(pieces, readSize: readSize, whenEmpty: whenEmpty, headOnly: headOnly)
    }

    /// A logged-in browser's cookie and CSRF token.
    func login(name: String = "ann") throws -> (cookie: String, csrf: String) {
        let (session, secret) = try door.access.login(name: name, address: peer.host)
        return ("\(WebDoor.cookieName)=\(secret)", session.csrf)
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
