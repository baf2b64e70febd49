import PTKConfiguration
import PTKLibrary
import PTKSystem
import PTKTestSupport

@testable import PTKDaemon

/// A whole receiver for the tests that need what only the daemon puts together (the store with
/// the held index, the library's indexer, the hooks' queue, as `Daemon.init` makes them): a real
/// `Daemon` built in a temporary directory but never run, with protocol v1's door alone (the
/// HTTP doors are tested in their own targets, each built alone).
final class DaemonFixture {
    let root = makeTemporaryDirectory("ptk-daemon")
    let daemon: Daemon
    var photos: String { root + "/photos" }

    init(_ adjust: (inout DaemonConfiguration) -> Void = { _ in }) throws {
        var c = DaemonConfiguration()
        c.directory = root + "/photos"
        c.stateDirectory = root + "/state"
        c.port = 0
        c.listen = ["127.0.0.1"]
        c.mdns = false
        c.localSend = false
        c.web = false
        c.idleTimeout = .seconds(5)
        adjust(&c)
        daemon = try Daemon(configuration: c)
        if c.library { _ = try PhotoLibrary(directory: root + "/photos", create: true) }
    }

    deinit {
        daemon.listener.close()
        removeTree(root)
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
}
