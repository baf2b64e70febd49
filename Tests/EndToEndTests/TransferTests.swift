import Foundation
import Glibc
import PTKDigest
import PTKProtocol
import PTKSystem
import PTKTestSupport
import PTKTestTags
import Testing

/// True when a socket can listen on ::1 here.
let hasIPv6Loopback: Bool = {
    guard let sock = try? Socket.listen(on: SocketAddress(numericHost: "::1", port: 0)!) else { return false }
    sock.close()
    return true
}()

@Suite("End to end: photos over loopback with the real binaries", .tags(.endToEnd))
struct TransferTests {
    @Test("a single photo lands byte-identical and ptk-send says where")
    func single() throws {
        let d = try DaemonProcess()
        let src = pngSuiteDirectory() + "/basn6a08.png"
        let r = try send(d, [src])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout == "\(src): saved as \"basn6a08.png\"\n")
        #expect(readFile(d.dir + "/basn6a08.png") == readFile(src))
        #expect(d.incoming.isEmpty)
        #expect(eventually { d.log.contains("saved \"basn6a08.png\"") })
    }

    @Test("on a terminal a progress bar is drawn on stderr; without one, or with --quiet, none")
    func progressBar() throws {
        // The same photo twice is stored twice: the bar is about bytes moving.
        let d = try DaemonProcess(["--duplicates", "keep"])
        let src = photo(d.root, "bar.png", size: 3_000_000)
        let plain = try send(d, [src])
        #expect(plain.status == 0)
        #expect(withoutFirstContact(plain.stderr).isEmpty, "\(plain.stderr)")
        // script(1) gives ptk-send a pseudo-terminal.
        let command = "\(binDirectory)/ptk-send 127.0.0.1:\(d.port) \(src)"
        let tty = try run("/usr/bin/script", ["-qec", command, "/dev/null"], absolute: true)
        #expect(tty.status == 0)
        #expect(tty.stdout.contains("bar.png ["))
        #expect(tty.stdout.contains("100%") || tty.stdout.contains("ETA"))
        #expect(tty.stdout.contains("saved as \"bar (2).png\""))
        let quiet = try run("/usr/bin/script", ["-qec", command + " --quiet", "/dev/null"], absolute: true)
        #expect(quiet.status == 0)
        #expect(!quiet.stdout.contains("ETA"))
    }

    @Test("every PngSuite image in one session, reported in order, all byte-identical")
    func many() throws {
        // Some PngSuite images are byte-identical copies under other names: all are kept.
        let d = try DaemonProcess(["--duplicates", "keep"])
        let suite = pngSuiteDirectory()
        let names = pngSuiteImages()
        try #require(names.count == pngSuiteImageCount, "the PngSuite is missing from \(suite)")
        let r = try send(d, names.map { suite + "/" + $0 }, ["--parallel", "1"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.split(separator: "\n").map(String.init) == names.map { "\(suite)/\($0): saved as \"\($0)\"" })
        for name in names { #expect(readFile(d.dir + "/" + name) == readFile(suite + "/" + name), "\(name)") }
        #expect(d.visible.sorted() == names.sorted())
    }

    @Test("a multi-megabyte photo arrives intact with window 1 and window 16", arguments: [1, 16])
    func large(window: Int) throws {
        let d = try DaemonProcess()
        let src = photo(d.root, "big.png", size: 6_000_000 + 12_345, seed: UInt64(window))
        let r = try send(d, [src], ["--window", String(window)])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(readFile(d.dir + "/big.png") == readFile(src))
    }

    @Test(
        "IPv6 works end to end: ptkd --listen ::1 and ptk-send [::1]:port",
        .enabled(if: hasIPv6Loopback, "this host has no IPv6 loopback (::1)"))
    func ipv6() throws {
        let d = try DaemonProcess(["--listen", "::1"])
        #expect(d.log.contains("[::1]:\(d.port)"))
        let src = pngSuiteDirectory() + "/basn2c16.png"
        let r = try run("ptk-send", ["[::1]:\(d.port)", src])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(readFile(d.dir + "/basn2c16.png") == readFile(src))
    }

    @Test("the same name twice is saved as name and name (2)")
    func collision() throws {
        let d = try DaemonProcess()
        let a = photo(d.root, "x.png", size: 5000, seed: 1)
        let r1 = try send(d, [a])
        writeFile(a, makePNG(size: 6000, seed: 2))
        let r2 = try send(d, [a])
        #expect(r1.status == 0 && r2.status == 0)
        #expect(r2.stdout.contains("saved as \"x (2).png\""))
        #expect(readFile(d.dir + "/x (2).png") == makePNG(size: 6000, seed: 2))
        #expect(readFile(d.dir + "/x.png") == makePNG(size: 5000, seed: 1))
    }

    @Test("an offer over --max-file-size is refused too-large and nothing is left")
    func tooLarge() throws {
        let d = try DaemonProcess(["--max-file-size", "100K"])
        let small = photo(d.root, "small.png", size: 50_000)
        let big = photo(d.root, "big.png", size: 200_000)
        let r = try send(d, [big, small])
        #expect(r.status == 1)
        #expect(r.stdout.contains("\(big): refused: too-large:"))
        #expect(r.stdout.contains("\(small): saved as \"small.png\""))
        #expect(d.visible == ["small.png"])
        #expect(d.incoming.isEmpty)
    }

    @Test("twenty concurrent senders all land intact")
    func concurrent() throws {
        let d = try DaemonProcess()
        let paths = (0..<20).map { photo(d.root, "p\($0).png", size: 300_000 + $0 * 1000, seed: UInt64($0 + 1)) }
        let results = ResultBox()
        DispatchQueue.concurrentPerform(iterations: 20) { i in
            results.set(i, try? send(d, [paths[i]]))
        }
        for i in 0..<20 {
            #expect(results.get(i)?.status == 0, "\(results.get(i)?.stderr ?? "no result")")
            #expect(readFile(d.dir + "/p\(i).png") == readFile(paths[i]))
        }
        #expect(d.visible.count == 20)
    }

    @Test("a silent connection does not delay another sender")
    func silentPeer() throws {
        let d = try DaemonProcess()
        let silent = try RawPeer(port: d.port)
        let halfFrame = try RawPeer(port: d.port)
        try halfFrame.sendRaw([0x01, 0x00, 0x00, 0x00, 0x40, 0x7B])  // HELLO header and one byte of 64
        let start = Date()
        let r = try send(d, [photo(d.root, "a.png", size: 400_000)])
        #expect(r.status == 0)
        #expect(Date().timeIntervalSince(start) < 10)
        silent.close()
        halfFrame.close()
    }

    @Test("an interrupted upload leaves nothing visible and the next send resumes from a chunk boundary")
    func resume() throws {
        let d = try DaemonProcess()
        let bytes = makePNG(size: 1_000_000, seed: 9)
        let src = d.root + "/resume.png"
        writeFile(src, bytes)
        let o = Offer(name: "resume.png", size: Int64(bytes.count), sha256: SHA256.hex(of: bytes))
        let peer = try RawPeer(port: d.port)
        try peer.hello(window: 1)
        try peer.send(.offer(o))
        #expect(try peer.receive() == .accept(Accept(offset: 0)))
        for i in 0..<3 {
            try peer.send(.chunk(Array(bytes[(i * 102_400)..<((i + 1) * 102_400)])))
            #expect(try peer.receive() == .ack)
        }
        // a torn chunk
        try peer.sendRaw(FrameEncoder.encode(.chunk(Array(bytes[307_200..<409_600]))).prefix(50_000).map { $0 })
        peer.close()  // the sender "dies"
        #expect(eventually { d.log.contains("ended") })
        #expect(d.visible.isEmpty)
        #expect(d.incoming.count == 1)

        let r = try send(d, [src])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout == "\(src): saved as \"resume.png\" (resumed at byte 307200)\n")
        #expect(readFile(d.dir + "/resume.png") == bytes)
        #expect(d.incoming.isEmpty)
    }

    @Test("SIGTERM answers an open session with ERROR shutting-down, keeps its partial, and exits 0")
    func sigterm() throws {
        let d = try DaemonProcess()
        let bytes = makePNG(size: 500_000, seed: 3)
        let peer = try RawPeer(port: d.port)
        try peer.hello(window: 1)
        try peer.send(.offer(Offer(name: "t.png", size: Int64(bytes.count), sha256: SHA256.hex(of: bytes))))
        #expect(try peer.receive() == .accept(Accept(offset: 0)))
        try peer.send(.chunk(Array(bytes[..<102_400])))
        #expect(try peer.receive() == .ack)
        let start = Date()
        #expect(d.stop(signal: SIGTERM) == 0)
        #expect(Date().timeIntervalSince(start) < 5)
        #expect(try peer.expectError()?.code == "shutting-down")
        peer.close()
        #expect(d.visible.isEmpty)
        #expect(d.incoming.count == 1)
        #expect(d.log.contains("shutting down"))
    }
}

/// Results collected from concurrent work.
final class ResultBox: @unchecked Sendable {
    // Guarded by `lock`.
    private let lock = NSLock()
    private var values: [Int: Finished] = [:]
    func set(_ i: Int, _ v: Finished?) { lock.withLock { values[i] = v } }
    func get(_ i: Int) -> Finished? { lock.withLock { values[i] } }
}

@Suite("End to end: speed features", .tags(.endToEnd))
struct SpeedFeatureTests {
    /// The photos each session saved, in the order it saved them, by session, from ptkd's log
    /// (once it has logged `count` saves).
    private func savedBySession(_ d: DaemonProcess, count: Int) -> [String: [String]] {
        _ = eventually { d.log.components(separatedBy: ": saved \"").count - 1 >= count }
        var sessions: [String: [String]] = [:]
        for line in d.log.split(separator: "\n") {
            guard let s = line.range(of: "session "),
                let from = line.range(of: " from ", range: s.upperBound..<line.endIndex),
                let saved = line.range(of: ": saved \""), let end = line[saved.upperBound...].firstIndex(of: "\"")
            else { continue }
            sessions[String(line[s.upperBound..<from.lowerBound]), default: []].append(
                String(line[saved.upperBound..<end]))
        }
        return sessions
    }

    /// What holds at any speed when `names` (in the order given) went over at most `limit`
    /// sessions taking their files from one list: each saved once, each session's in order, no
    /// more sessions than the limit. How many sessions opened depends on how fast the first
    /// ones finish, so it is not asked.
    private func expectSpread(_ d: DaemonProcess, _ names: [String], sessions limit: Int) {
        let bySession = savedBySession(d, count: names.count)
        #expect(bySession.values.flatMap { $0 }.sorted() == names.sorted(), "each saved once: \(bySession)")
        #expect((1...limit).contains(bySession.count), "\(bySession.count) sessions: \(bySession)")
        let started = d.log.components(separatedBy: ": started").count - 1
        #expect((1...limit).contains(started), "\(started) sessions started: \(d.log)")
        let position = Dictionary(uniqueKeysWithValues: names.enumerated().map { ($1, $0) })
        for (session, saved) in bySession {
            let order = saved.compactMap { position[$0] }
            #expect(order == order.sorted(), "session \(session) saved out of order: \(saved)")
        }
    }

    @Test(
        "--parallel 4 sends every file over at most four sessions, each saved byte-identical and reported once, each session's in order"
    )
    func parallel() throws {
        let d = try DaemonProcess()
        // Enough to keep four sessions busy while they open, one after another.
        let paths = (0..<20).map { photo(d.root, "par\($0).png", size: 1_000_000 + $0 * 100, seed: UInt64($0 + 50)) }
        let r = try send(d, paths, ["--parallel", "4"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.split(separator: "\n").count == 20)
        for p in paths { #expect(r.stdout.contains("\(p): saved as")) }
        for i in 0..<20 { #expect(readFile(d.dir + "/par\(i).png") == readFile(paths[i])) }
        expectSpread(d, (0..<20).map { "par\($0).png" }, sessions: 4)
    }

    @Test("by default many files go over at most four sessions; same-named files keep their order in one of them")
    func parallelByDefault() throws {
        let d = try DaemonProcess()
        mkdir(d.root + "/x", 0o755)
        mkdir(d.root + "/y", 0o755)
        let paths = (0..<10).map { photo(d.root, "d\($0).png", size: 1_500_000 + $0, seed: UInt64($0 + 70)) }
        let first = photo(d.root + "/x", "same.png", size: 4_000, seed: 90)
        let second = photo(d.root + "/y", "same.png", size: 4_001, seed: 91)
        let r = try send(d, [first] + paths + [second])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("\(first): saved as \"same.png\""))
        #expect(r.stdout.contains("\(second): saved as \"same (2).png\""))
        #expect(readFile(d.dir + "/same (2).png") == readFile(second))
        for i in 0..<10 { #expect(readFile(d.dir + "/d\(i).png") == readFile(paths[i])) }
        expectSpread(d, ["same.png"] + (0..<10).map { "d\($0).png" } + ["same (2).png"], sessions: 4)
    }

    @Test(
        "ptkd's WELCOME says how many sessions one address may hold: its per-address limit, or the overall one if lower",
        arguments: [([], 8), (["--max-sessions-per-address", "3"], 3), (["--max-sessions", "2"], 2)])
    func welcomeSessions(flags: [String], sessions: Int) throws {
        let d = try DaemonProcess(flags)
        let peer = try RawPeer(port: d.port)
        #expect(try peer.hello().sessions == sessions)
    }

    @Test("ptk-send opens no more sessions than WELCOME.sessions allows, so nothing is refused busy")
    func sessionsBounded() throws {
        let d = try DaemonProcess(["--max-sessions-per-address", "2"])
        let paths = (0..<12).map { photo(d.root, "s\($0).png", size: 20_000 + $0, seed: UInt64($0 + 10)) }
        let r = try send(d, paths)
        #expect(r.status == 0, "\(r.stderr)")
        for i in 0..<12 { #expect(readFile(d.dir + "/s\(i).png") == readFile(paths[i])) }
        expectSpread(d, (0..<12).map { "s\($0).png" }, sessions: 2)
        #expect(!d.log.contains("busy"))
    }

    // Run by itself (.alone): once in nine full runs, with the whole suite on two cores (and
    // the 4 GiB video test writing beside it), the test's relay (SequentialProxy) lost the
    // session after the first photo, 422 s in ("the receiver closed the connection"); alone it
    // passes in under a second. The likely cause, the relay's own: it gave up on a side quiet
    // for 30 s (while ptk-send waited for the first photo's flush), and closed the session;
    // it now waits `SequentialProxy.idleLimit`, longer than ptk-send's timeout.
    @Test(
        "a receiver that serves one session at a time and sends no WELCOME.sessions: every file in one session, in order, no connection left waiting",
        .tags(.alone)
    )
    func receiverWithoutSessions() throws {
        let d = try DaemonProcess()
        let proxy = try SequentialProxy(to: d.port, pauseAfterFirst: 0, dropWelcomeSessions: true)
        let paths = (0..<5).map { photo(d.root, "o\($0).png", size: 150_000 + $0, seed: UInt64($0 + 20)) }
        // The default --timeout (30 s): a session left waiting would cost that much and more.
        // The proxy rewrites WELCOME, so it needs to read it: plaintext.
        let r = try run("ptk-send", ["--plaintext", "127.0.0.1:\(proxy.port)"] + paths)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(
            r.stdout.split(separator: "\n").map(String.init)
                == paths.indices.map { "\(paths[$0]): saved as \"o\($0).png\"" })
        for i in 0..<5 { #expect(readFile(d.dir + "/o\(i).png") == readFile(paths[i])) }
        #expect(proxy.stopAndCountConnections() == 1)
        #expect(d.log.components(separatedBy: ": started").count - 1 == 1, "\(d.log)")
    }

    @Test(
        "another sender holding a slot: the further session refused busy opens no more, and the one held sends every file"
    )
    func busyFallsBack() throws {
        let d = try DaemonProcess(["--max-sessions-per-address", "2"])
        // Holds one of this address's two slots, so ptk-send's second session is refused busy.
        let holder = try RawPeer(port: d.port)
        #expect(try holder.hello().sessions == 2)
        let paths = (0..<8).map { photo(d.root, "b\($0).png", size: 3_000 + $0, seed: UInt64($0 + 30)) }
        let r = try send(d, paths)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(withoutFirstContact(r.stderr).isEmpty, "\(r.stderr)")
        for i in 0..<8 {
            #expect(r.stdout.contains("\(paths[i]): saved as \"b\(i).png\""))
            #expect(readFile(d.dir + "/b\(i).png") == readFile(paths[i]))
        }
        #expect(d.log.contains("busy"))
        // The held session and the one refused: nothing more was opened after the refusal.
        #expect(d.log.components(separatedBy: ": started").count - 1 == 2, "\(d.log)")
    }

    @Test(
        "a receiver that serves one session at a time: the session it leaves unanswered takes no files, the first sends them all"
    )
    func sequentialReceiver() throws {
        let d = try DaemonProcess()
        let proxy = try SequentialProxy(to: d.port, pauseAfterFirst: 3)
        defer { proxy.stop() }
        let paths = (0..<6).map { photo(d.root, "q\($0).png", size: 300_000 + $0, seed: UInt64($0 + 40)) }
        // The second session waits unanswered until it gives up (--timeout 2); it took no files,
        // and no further session is opened after it.
        let r = try run("ptk-send", ["--timeout", "2", "127.0.0.1:\(proxy.port)"] + paths)
        #expect(r.status == 0, "\(r.stderr)")
        for i in 0..<6 {
            #expect(r.stdout.contains("\(paths[i]): saved as \"q\(i).png\""))
            #expect(readFile(d.dir + "/q\(i).png") == readFile(paths[i]))
        }
    }

    @Test("--parallel is 1 to 8")
    func parallelRange() throws {
        #expect(try run("ptk-send", ["--parallel", "9", "h", "a.png"]).status == 64)
        #expect(try run("ptk-send", ["--parallel", "0", "h", "a.png"]).status == 64)
    }

    @Test("pipelined OFFERs: a session of many files with refusals and failures in between reports each in order")
    func pipelinedMixed() throws {
        let d = try DaemonProcess(["--max-file-size", "50K"])
        let a = photo(d.root, "a.png", size: 10_000, seed: 1)
        let big = photo(d.root, "big.png", size: 80_000, seed: 2)
        let b = photo(d.root, "b.png", size: 20_000, seed: 3)
        let r = try send(d, [a, big, b, a], ["--parallel", "1"])
        #expect(r.status == 1)
        #expect(
            r.stdout.split(separator: "\n").map(String.init) == [
                "\(a): saved as \"a.png\"",
                "\(big): refused: too-large: 80000 bytes is over this receiver's limit of 51200",
                "\(b): saved as \"b.png\"", "\(a): already there as \"a.png\"",
            ])
    }
}
