import PTKConfiguration
import PTKDoor
import PTKHTTP
import PTKStore
import PTKSystem
import PTKTestSupport
import PTKTrust

@testable import PTKLocalSendDoor

/// The LocalSend door alone, driven through its route table by `RouteHarness`: its state
/// (store, trust list, arrivals, sessions) in a temporary directory; no daemon, no listener,
/// no TLS identity, no socket.
final class LocalSendFixture {
    let root = makeTemporaryDirectory("ptk-localsend-door")
    let door: LocalSendDoor
    var photos: String { root + "/photos" }
    /// The certificate fingerprint the door tells the apps.
    static let fingerprint = String(repeating: "5e", count: 32)

    init(_ adjust: (inout DaemonConfiguration) -> Void = { _ in }) throws {
        var c = DaemonConfiguration()
        c.directory = root + "/photos"
        c.stateDirectory = root + "/state"
        c.library = false
        c.idleTimeout = .seconds(5)
        adjust(&c)
        try makeDirectories(c.effectiveStateDirectory, mode: 0o755)
        let store = try PhotoStore(settings: StoreSettings(directory: c.effectiveDirectory, minFree: c.minFree))
        let trust = TrustStore(directory: c.effectiveStateDirectory)
        let arrivals = Arrivals(
            directory: c.effectiveDirectory, layout: c.layout, trust: trust, library: nil, held: nil, hooks: nil)
        door = LocalSendDoor(
            configuration: LocalSendSettings(c), store: store, trust: trust, arrivals: arrivals, guesses: Guesses(),
            shutdown: try ShutdownSignal(),
            fingerprint: Self.fingerprint, port: 53317)
    }

    deinit { removeTree(root) }

    /// Plays `pieces` (a client's bytes) to the door on one connection, showing `certificate`.
    func run(
        _ pieces: [[UInt8]], readSize: Int = 1 << 20, whenEmpty: ScriptedStream.WhenEmpty = .close,
        certificate: String? = nil
    ) -> RouteHarness<LocalSendContext>.Exchange {
        RouteHarness(door.responder(), idle: door.configuration.idleTimeout, errorBody: LocalSendDoor.errorBody)
            .run(pieces, certificate: certificate, readSize: readSize, whenEmpty: whenEmpty)
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
