import Foundation
import Glibc
import PTKDigest
import PTKProtocol
import PTKSystem
import PTKTestSupport
import PTKTestTags
import Testing

/// A sender in the middle of a big photo that sends one chunk every 20 ms and looks for an ERROR
/// after each, as ptk-send does; it stops writing at an ERROR (and keeps the connection open
/// until told to stop), when a write fails, or when told to stop.
private final class TricklingSender: @unchecked Sendable {
    let peer: RawPeer
    private let lock = NSLock()
    private var stopped = false
    private var error: Problem?
    private var writeFailed = false
    private let finished = DispatchSemaphore(value: 0)

    init(port: UInt16, bytes: [UInt8]) throws {
        peer = try RawPeer(port: port)
        try peer.hello(window: 64)
        try peer.send(.offer(Offer(name: "big.png", size: Int64(bytes.count), sha256: SHA256.hex(of: bytes))))
        guard try peer.receive() == .accept(Accept(offset: 0)) else { throw HarnessError("no ACCEPT") }
        let chunks = stride(from: 0, to: bytes.count, by: ProtocolLimits.chunkSize).map {
            Array(bytes[$0..<min($0 + ProtocolLimits.chunkSize, bytes.count)])
        }
        Thread.detachNewThread { [self] in
            sending: for chunk in chunks.dropLast() {
                if lock.withLock({ stopped }) { break }
                guard (try? peer.send(.chunk(chunk))) != nil else {
                    lock.withLock { writeFailed = true }
                    break
                }
                usleep(20_000)
                while let frame = try? peer.connection.receive(deadline: .now + .seconds(0.001)) {
                    if case .error(let p) = frame {
                        lock.withLock { error = p }
                        break sending
                    }
                }
            }
            finished.signal()
        }
    }

    /// The ERROR the receiver answered, and whether a write failed first.
    var outcome: (error: Problem?, writeFailed: Bool) { lock.withLock { (error, writeFailed) } }

    func stop() {
        lock.withLock { stopped = true }
        finished.wait()
        peer.close()
    }
}

@Suite("End to end: shutdown", .serialized, .tags(.endToEnd))
struct ShutdownTests {
    @Test("a second SIGTERM while sessions are still closing exits at once, status 0, the partial upload kept")
    func secondSignal() throws {
        let d = try DaemonProcess()
        let sender = try TricklingSender(port: d.port, bytes: makePNG(size: 5_000_000, seed: 21))
        #expect(eventually { partialBytes(d) >= 2 * ProtocolLimits.chunkSize })
        kill(d.process.processIdentifier, SIGTERM)
        // The session answers ERROR shutting-down and lingers while the sender keeps writing.
        #expect(eventually { d.log.contains("shutting down") })
        #expect(d.stop(signal: SIGTERM, timeout: 5) == 0)
        sender.stop()
        #expect(d.log.contains("second signal: exiting at once; unfinished uploads are kept for resume"))
        #expect(
            !d.log.contains("ptkd stopped"),
            "the first SIGTERM finished before the second came; the test proved nothing")
        #expect(d.visible.isEmpty)
        #expect(d.incoming.count == 1)
    }

    @Test(
        "after one SIGTERM a sender still writing gets ERROR shutting-down (the drain is not cut short), and ptkd stops by itself"
    )
    func oneSignalDrains() throws {
        let d = try DaemonProcess()
        let sender = try TricklingSender(port: d.port, bytes: makePNG(size: 5_000_000, seed: 22))
        #expect(eventually { partialBytes(d) >= 2 * ProtocolLimits.chunkSize })
        let start = Date()
        #expect(d.stop(signal: SIGTERM, timeout: 10) == 0)
        #expect(Date().timeIntervalSince(start) < 5)
        sender.stop()
        #expect(sender.outcome.error?.code == "shutting-down")
        #expect(!sender.outcome.writeFailed)
        #expect(d.log.contains("ptkd stopped"))
        #expect(d.incoming.count == 1)
    }

    @Test(
        "a journal that stops reading stalls no session: 120 photos are saved while nobody reads ptkd's standard error")
    func stalledJournal() throws {
        let root = makeTemporaryDirectory("ptk-e2e")
        defer { removeTree(root) }
        var fds: [CInt] = [0, 0]
        try #require(pipe(&fds) == 0)
        let setPipeSize: CInt = 1031  // F_SETPIPE_SZ: one page, which a few sessions' lines fill
        _ = fcntl(fds[1], setPipeSize, 4096)
        let errRead = FileHandle(fileDescriptor: fds[0], closeOnDealloc: true)
        let errWrite = FileHandle(fileDescriptor: fds[1], closeOnDealloc: true)
        let port = try freeLoopbackPort()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binDirectory + "/ptkd")
        process.arguments = [
            "--config", "/dev/null", "--dir", root + "/photos", "--port", "\(port)", "--listen", "127.0.0.1",
            "--no-mdns",
            // Not the LocalSend endpoint nor the web interface: their fixed ports may be taken
            // (another ptkd, a test beside this one).
            "--localsend", "off", "--web", "off",
        ]
        process.standardError = errWrite
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        try? errWrite.close()
        defer {
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
        }
        // Read only the first line (ptkd is listening), then nobody reads.
        var first = Data()
        while !first.contains(0x0A) {
            let more = errRead.readData(ofLength: 1)
            if more.isEmpty { break }
            first += more
        }
        #expect(String(decoding: first, as: UTF8.self).contains("listening on port \(port)"))
        let paths = (0..<120).map { photo(root, "j\($0).png", size: 2_000 + $0, seed: UInt64($0)) }
        let r = try run("ptk-send", ["--timeout", "5", "--quiet", "127.0.0.1:\(port)"] + paths)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(listDirectory(root + "/photos").filter { $0.hasSuffix(".png") }.count == 120)
        // The lines were held, not lost: read them now.
        kill(process.processIdentifier, SIGTERM)
        let rest = String(decoding: errRead.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        #expect(rest.components(separatedBy: ": saved \"").count - 1 == 120)
        #expect(!rest.contains("dropped"))
        #expect(rest.contains("ptkd stopped"))
    }

    @Test(
        "ptkd that cannot start the thread watching for SIGTERM exits 71 at start instead of running deaf to the first signal",
        .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/strace")))
    func noSignalWatcher() throws {
        let root = makeTemporaryDirectory("ptk-e2e")
        defer { removeTree(root) }
        // With the library, LocalSend and mDNS off, the watcher is the first thread ptkd starts:
        // strace fails its clone3 (and clone, for an older C library) with EAGAIN.
        let r = try run(
            "/usr/bin/strace",
            [
                "-f", "-qq", "-o", "/dev/null", "-e", "trace=clone,clone3",
                "-e", "inject=clone,clone3:error=EAGAIN:when=1",
                binDirectory + "/ptkd", "--config", "/dev/null", "--dir", root + "/photos",
                "--state-dir", root + "/state", "--port", "0", "--listen", "127.0.0.1",
                "--no-mdns", "--localsend", "off", "--web", "off", "--library", "off",
            ],
            timeout: 15, absolute: true)
        #expect(r.status == 71, "\(r.stderr)")
        #expect(r.stderr.contains("ptkd: cannot start the thread that watches for SIGTERM and SIGINT: "), "\(r.stderr)")
    }
}

/// strace attached to the running ptkd (all its threads) with `options`, once it traces.
func attachStrace(_ d: DaemonProcess, _ options: [String]) throws -> Process {
    let strace = Process()
    strace.executableURL = URL(fileURLWithPath: "/usr/bin/strace")
    strace.arguments = ["-f", "-p", String(d.process.processIdentifier)] + options
    strace.standardError = FileHandle.nullDevice
    try strace.run()
    usleep(500_000)
    return strace
}

@Suite(
    "End to end: threads at the stop", .serialized,
    .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/strace"), "needs strace"), .tags(.endToEnd))
struct StopThreadsTests {
    @Test("on a clean stop every thread ptkd started ends by itself (joined) before the process exits through exit()")
    func everyThreadJoined() throws {
        let d = try DaemonProcess(["--localsend", "on", "--localsend-port", "0"])
        // Session, checking and indexing threads have come and gone.
        #expect(try send(d, [photo(d.root, "a.png", size: 3_000_000)]).status == 0)
        let trace = d.root + "/trace"
        let strace = try attachStrace(d, ["-e", "trace=exit,exit_group", "-o", trace])
        // A session open at the stop: its thread answers ERROR shutting-down and ends.
        let peer = try RawPeer(port: d.port)
        try peer.hello(window: 1)
        #expect(eventually { d.log.contains("session 2") })
        #expect(d.stop() == 0)
        #expect(eventually { !strace.isRunning })
        let lines = try String(contentsOfFile: trace, encoding: .utf8).split(separator: "\n")
        func tid(_ line: Substring) -> Int32? { Int32(line.split(separator: " ").first ?? "") }
        // One "+++ exited" per thread; a thread that ended by itself made the exit call first,
        // one that was still running when the process ended did not.
        let ended = Set(lines.filter { $0.contains("+++ exited with") }.compactMap(tid))
        let exitedItself = Set(lines.filter { $0.contains(" exit(") }.compactMap(tid))
        let main = d.process.processIdentifier
        #expect(ended.contains(main) && ended.count >= 4, "\(lines)")
        #expect(
            ended.subtracting([main]) == exitedItself,
            "threads still running at the exit: \(ended.subtracting(exitedItself).subtracting([main]))\n\(lines.joined(separator: "\n"))"
        )
        #expect(lines.contains { tid($0) == main && $0.contains("exit_group(0)") })
        #expect(d.log.contains("ptkd stopped"))
        #expect(!d.log.contains("exiting without"), "\(d.log)")
        peer.close()
    }

    @Test(
        "a session stuck past the deadline (a flush that takes 20 s) ends the process at once, as the documented last resort, status 0"
    )
    func lastResort() throws {
        // Without the library, whose SQLite would be stuck in its own flushes too.
        let d = try DaemonProcess(["--library", "off"])
        // Every fsync ptkd makes from now on takes 20 s before it runs.
        let strace = try attachStrace(
            d, ["-e", "trace=fsync,fdatasync", "-e", "inject=fsync,fdatasync:delay_enter=20000000", "-o", "/dev/null"])
        defer { if strace.isRunning { kill(strace.processIdentifier, SIGKILL) } }
        let png = makePNG(size: 300_000, seed: 23)
        let peer = try RawPeer(port: d.port)
        try peer.hello(window: 64)
        try peer.send(.offer(Offer(name: "stuck.png", size: Int64(png.count), sha256: SHA256.hex(of: png))))
        #expect(try peer.receive() == .accept(Accept(offset: 0)))
        for start in stride(from: 0, to: png.count, by: ProtocolLimits.chunkSize) {
            try peer.send(.chunk(Array(png[start..<min(start + ProtocolLimits.chunkSize, png.count)])))
        }
        try peer.send(.done)
        // The whole photo is written; the session is now in its flush before publishing.
        #expect(eventually { partialBytes(d) == png.count })
        usleep(500_000)
        kill(d.process.processIdentifier, SIGTERM)
        // Well before the flush would end (20 s): the sessions' 4 s, then the last resort.
        // The session waits for its flush round, and the round's thread is in the flush: both named.
        #expect(
            eventually(15) {
                d.log.contains(
                    "warning: exiting without the C library's clean-up: sessions, photo flushes and checks still running"
                )
            }, "\(d.log)")
        #expect(d.log.contains("warning: sessions did not stop in time"), "\(d.log)")
        #expect(d.log.contains("warning: photo flushes and checks did not stop in time"), "\(d.log)")
        // The stuck thread is held by strace, which the exit waits for: strace goes (the
        // kernel lets its tracees go) and the process is gone at once, with the stop's status.
        kill(strace.processIdentifier, SIGKILL)
        #expect(eventually(10) { !d.process.isRunning })
        #expect(d.process.terminationStatus == 0)
        // Never published: the process did not wait for the flush.
        #expect(d.visible.isEmpty)
        peer.close()
    }
}

/// The bytes of the partial uploads in `.incoming`.
private func partialBytes(_ d: DaemonProcess) -> Int {
    d.incoming.reduce(0) { total, name in
        total + ((try? FileManager.default.attributesOfItem(atPath: d.dir + "/.incoming/" + name)[.size] as? Int) ?? 0)
    }
}

/// A TCP port on 127.0.0.1 that was free a moment ago.
func freeLoopbackPort() throws -> UInt16 {
    let listener = try Socket.listen(on: SocketAddress(numericHost: "127.0.0.1", port: 0)!)
    defer { listener.close() }
    return try Socket.localAddress(listener).port
}
