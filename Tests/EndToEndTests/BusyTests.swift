import Foundation
import Glibc
import PTKProtocol
import PTKSystem
import PTKTestSupport
import PTKTestTags
import PTKVocabulary
import Testing

/// Results of processes run on threads of their own.
final class Runs: @unchecked Sendable {
    private let lock = NSLock()
    private var results: [Int: Result<Finished, Error>] = [:]
    private let group = DispatchGroup()

    /// Runs `body` on a thread of its own, as run number `index`.
    func start(_ index: Int, _ body: @escaping @Sendable () throws -> Finished) {
        group.enter()
        Thread.detachNewThread { [self] in
            let r = Result { try body() }
            lock.lock()
            results[index] = r
            lock.unlock()
            group.leave()
        }
    }

    /// Waits for every run; their results by index.
    func wait() -> [Int: Result<Finished, Error>] {
        group.wait()
        lock.lock()
        defer { lock.unlock() }
        return results
    }
}

@Suite("End to end: busy is never a failure (every sender gets its turn)", .tags(.endToEnd))
struct BusyTests {
    @Test(
        "a receiver limited to 2 sessions and 8 senders of 5 photos each at once: every sender exits 0, every photo lands once, byte-identical"
    )
    func eightSendersTwoSessions() throws {
        let d = try DaemonProcess(["--max-sessions", "2"])
        var paths: [[String]] = []
        for s in 0..<8 {
            paths.append(
                (0..<5).map {
                    photo(d.root, "s\(s)-p\($0).png", size: 40_000 + 1000 * s + $0, seed: UInt64(100 * s + $0 + 1))
                })
        }
        let runs = Runs()
        for s in 0..<8 {
            // Each sender a device of its own.
            let files = paths[s]
            let config = d.root + "/device\(s)"
            runs.start(s) {
                try run(
                    "ptk-send", ["--timeout", "20", "127.0.0.1:\(d.port)"] + files, timeout: 120,
                    environment: ["XDG_CONFIG_HOME": config])
            }
        }
        let results = runs.wait()
        for s in 0..<8 {
            let r = try #require(try results[s]?.get())
            #expect(r.status == 0, "sender \(s): \(r.stderr)")
            for (p, path) in paths[s].enumerated() {
                #expect(r.stdout.contains("\(path): saved as \"s\(s)-p\(p).png\""), "sender \(s): \(r.stdout)")
            }
        }
        let expected = paths.flatMap { $0 }.map { ($0 as NSString).lastPathComponent }
        #expect(d.visible.sorted() == expected.sorted())
        for s in 0..<8 {
            for (p, path) in paths[s].enumerated() { #expect(readFile(d.dir + "/s\(s)-p\(p).png") == readFile(path)) }
        }
        #expect(d.incoming.isEmpty)
        // They did have to wait: ptkd turned some away, telling each its place in line.
        #expect(d.log.contains("(ERROR busy, "), "\(d.log)")
    }

    @Test(
        "ptk-send waits its turn: on a terminal it says how many are ahead in place of the bar; without one, one line; then it sends"
    )
    func waitsAndSays() throws {
        let d = try DaemonProcess(["--max-sessions", "1"])
        let holder = try RawPeer(port: d.port)
        try holder.hello()
        let a = photo(d.root, "waited.png", size: 30_000, seed: 3)
        let b = photo(d.root, "tty.png", size: 30_000, seed: 4)
        let runs = Runs()
        let port = d.port
        let config = d.senderConfig
        runs.start(0) { try send(d, [a]) }
        // script(1) gives this one a pseudo-terminal.
        let command = "\(binDirectory)/ptk-send --timeout 20 127.0.0.1:\(port) \(b)"
        runs.start(1) {
            try run(
                "/usr/bin/script", ["-qec", command, "/dev/null"], timeout: 60, absolute: true,
                environment: ["XDG_CONFIG_HOME": config])
        }
        // Both are turned away (each at least once; how often depends on the machine's speed),
        // then the holder lets go.
        #expect(eventually(20) { d.log.components(separatedBy: "(ERROR busy, ").count - 1 >= 2 }, "\(d.log)")
        holder.close()
        let results = runs.wait()
        let plain = try #require(try results[0]?.get())
        #expect(plain.status == 0, "\(plain.stderr)")
        #expect(
            withoutFirstContact(plain.stderr)
                == "ptk-send: 127.0.0.1:\(port) is busy serving other senders; waiting for a turn (up to 10m, --wait)\n"
        )
        #expect(plain.stdout == "\(a): saved as \"waited.png\"\n")
        let tty = try #require(try results[1]?.get())
        #expect(tty.status == 0, "\(tty.stdout)")
        #expect(
            tty.stdout.contains("waiting for 127.0.0.1:\(port) (busy, next in line)")
                || tty.stdout.contains("waiting for 127.0.0.1:\(port) (busy, 1 sender ahead)"), "\(tty.stdout)")
        #expect(tty.stdout.contains("\(b): saved as \"tty.png\""))
        #expect(readFile(d.dir + "/waited.png") == readFile(a))
        #expect(readFile(d.dir + "/tty.png") == readFile(b))
    }

    @Test("a receiver busy for longer than --wait: exit 69 once the wait has run out, naming it")
    func waitRunsOut() throws {
        let d = try DaemonProcess(["--max-sessions", "1"])
        let holder = try RawPeer(port: d.port)
        try holder.hello()
        let start = Date()
        let r = try send(d, [photo(d.root, "late.png", size: 2000)], ["--wait", "1.5", "--quiet"])
        let took = Date().timeIntervalSince(start)
        #expect(r.status == 69)
        #expect(took >= 1.5 && took < 10, "\(took) s")
        #expect(
            withoutFirstContact(r.stderr)
                == "ptk-send: 127.0.0.1:\(d.port): the receiver answered ERROR busy: the receiver is serving its limit of 1 sessions; try again later; still busy after waiting 1.5 s (--wait)\n"
        )
        #expect(d.visible.isEmpty)
        holder.close()
    }

    @Test("--wait takes a duration", arguments: ["-1", "soon", ""])
    func waitValues(value: String) throws {
        let r = try run("ptk-send", ["--wait", value, "h", "a.png"])
        #expect(r.status == 64)
        #expect(r.stderr.contains("invalid value '\(value)' for --wait"), "\(r.stderr)")
    }

    @Test(
        "WELCOME.sessions is the sender's share of the sessions when its session starts; a further session within it is served, beyond it refused",
        .enabled(if: hasIPv6Loopback))
    func shareOfSessions() throws {
        // Plaintext peers are known by their address: 127.0.0.1 and ::1 are two senders.
        let d = try DaemonProcess(["--max-sessions", "4", "--listen", "::1"])
        let a = try RawPeer(port: d.port)
        #expect(try a.hello().sessions == 4)
        let b = try RawPeer(port: d.port, host: "::1")
        #expect(try b.hello().sessions == 2)
        // a's second session: within its share now (2).
        let a2 = try RawPeer(port: d.port)
        #expect(try a2.hello().sessions == 2)
        // Its third: over its share, though a session is free.
        let a3 = try RawPeer(port: d.port)
        try a3.send(.hello(Hello(name: "a3", window: 1)))
        #expect(try a3.expectError()?.code == "busy")
        a3.close()
        // b's second takes the last one; then a newcomer would wait in line, first.
        let b2 = try RawPeer(port: d.port, host: "::1")
        #expect(try b2.hello().sessions == 2)
        for p in [a, b, a2, b2] { p.close() }
        #expect(eventually { d.log.components(separatedBy: ": ended").count - 1 >= 4 })
        let again = try RawPeer(port: d.port)
        #expect(try again.hello().sessions == 4)
        again.close()
    }

    @Test(
        "a device turned away by its address's own limit takes no place in line: a sender from another address gets the free session",
        .enabled(if: hasIPv6Loopback))
    func perAddressRefusalDoesNotQueue() throws {
        let d = try DaemonProcess(["--max-sessions", "2", "--max-sessions-per-address", "1", "--listen", "::1"])
        let holder = try RawPeer(port: d.port)
        #expect(try holder.hello().sessions == 1)
        // A second device behind 127.0.0.1 asks for a second: refused by the per-address limit, again and again.
        let r = try send(d, [photo(d.root, "nat.png", size: 2000)], ["--wait", "1", "--quiet"])
        #expect(r.status == 69)
        #expect(
            withoutFirstContact(r.stderr)
                == "ptk-send: 127.0.0.1:\(d.port): the receiver answered ERROR busy: 127.0.0.1 already has 1 sessions open; try again later; still busy after waiting 1 s (--wait)\n"
        )
        // Had it joined the line it would be at the front (for 10 s), owed the one free session.
        let other = try RawPeer(port: d.port, host: "::1")
        #expect(try other.hello().sessions == 1)
        other.close()
        holder.close()
    }
}
