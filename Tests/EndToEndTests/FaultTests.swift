import Foundation
import Glibc
import PTKDigest
import PTKProtocol
import PTKSystem
import PTKTestSupport
import PTKTestTags
import PTKTransport
import Testing

let isRoot = geteuid() == 0

/// Sends OFFER and `chunks` whole chunks of `bytes` with window 1, reading each ACK.
func startUpload(_ peer: RawPeer, _ bytes: [UInt8], name: String, chunks: Int) throws {
    try peer.hello(window: 1)
    try peer.send(.offer(Offer(name: name, size: Int64(bytes.count), sha256: SHA256.hex(of: bytes))))
    guard case .accept? = try peer.receive() else { throw HarnessError("no ACCEPT") }
    for i in 0..<chunks {
        try peer.send(.chunk(Array(bytes[(i * 102_400)..<((i + 1) * 102_400)])))
        guard try peer.receive() == .ack else { throw HarnessError("no ACK") }
    }
}

/// Closes a socket with a TCP reset rather than a FIN (SO_LINGER 0).
func reset(_ peer: RawPeer) {
    if let tcp = peer.connection.stream as? TCPStream {
        var l = linger(l_onoff: 1, l_linger: 0)
        setsockopt(tcp.socket.rawValue, SOL_SOCKET, SO_LINGER, &l, socklen_t(MemoryLayout<linger>.size))
    }
    peer.close()
}

@Suite("End to end: limits, faults and the directory boundary", .tags(.endToEnd))
struct FaultTests {
    @Test("beyond --max-sessions-per-address one address gets ERROR busy; a freed slot is reused")
    func perAddressLimit() throws {
        let d = try DaemonProcess(["--max-sessions-per-address", "2"])
        let a = try RawPeer(port: d.port)
        let b = try RawPeer(port: d.port)
        try a.hello()
        try b.hello()
        let c = try RawPeer(port: d.port)
        try c.send(.hello(Hello(name: "c", window: 1)))
        let error = try c.expectError()
        #expect(error?.code == "busy")
        #expect(error?.message.contains("127.0.0.1 already has 2 sessions") == true)
        a.close()
        #expect(eventually { (try? send(d, [photo(d.root, "p.png", size: 2000)]))?.status == 0 })
    }

    @Test("HELLO must arrive within the handshake deadline, even trickled a byte at a time")
    func handshakeDeadline() throws {
        let d = try DaemonProcess(["--handshake-timeout", "1"])
        let peer = try RawPeer(port: d.port)
        let hello = FrameEncoder.encode(.hello(Hello(name: "slow", window: 1)))
        let start = Date()
        var error: Problem?
        for byte in hello.prefix(20) {
            try? peer.sendRaw([byte])
            usleep(200_000)
            if Date().timeIntervalSince(start) > 1.5 { break }
        }
        error = try peer.expectError()
        #expect(error?.code == "timeout")
        #expect(Date().timeIntervalSince(start) < 5)
    }

    @Test("a frame trickled slower than the idle timeout is cut off")
    func trickledFrame() throws {
        let d = try DaemonProcess(["--idle-timeout", "1"])
        let bytes = makePNG(size: 300_000)
        let peer = try RawPeer(port: d.port)
        try startUpload(peer, bytes, name: "slow.png", chunks: 1)
        let frame = FrameEncoder.encode(.chunk(Array(bytes[102_400..<204_800])))
        let start = Date()
        for i in 0..<15 {
            do { try peer.sendRaw(Array(frame[(i * 100)..<((i + 1) * 100)])) } catch { break }
            usleep(200_000)
        }
        #expect(try peer.expectError()?.code == "timeout")
        #expect(Date().timeIntervalSince(start) < 5)
        #expect(eventually { d.incoming.count == 1 })  // kept for resume: nothing was lost
    }

    @Test("a peer that stops reading cannot pin its session: writes time out too")
    func stopsReading() throws {
        let d = try DaemonProcess(["--idle-timeout", "1"])
        let peer = try RawPeer(port: d.port)
        if let tcp = peer.connection.stream as? TCPStream {
            var small: CInt = 4096
            setsockopt(tcp.socket.rawValue, SOL_SOCKET, SO_RCVBUF, &small, socklen_t(MemoryLayout<CInt>.size))
        }
        try peer.hello()
        // Each tiny OFFER earns a REJECT that this peer never reads.
        var offers: [UInt8] = []
        let o = FrameEncoder.encode(
            .offer(
                Offer(
                    name: String(repeating: "n", count: 900) + ".jpg", size: 9,
                    sha256: String(repeating: "0", count: 64), mediaType: "image/jpeg")))
        for _ in 0..<4000 { offers += o }
        let start = Date()
        try? peer.sendRaw(offers)
        #expect(eventually(10) { d.log.contains("session 1 from") && d.log.contains("ended") })
        #expect(Date().timeIntervalSince(start) < 10)
        peer.close()
        #expect(try stillServes(d))
    }

    @Test("after 500 sessions, hostile ones included, descriptors are back to idle and memory stays bounded")
    func noLeaks() throws {
        let d = try DaemonProcess(["--max-sessions-per-address", "64"])
        let png = makePNG(size: 250_000)
        let o = Offer(name: "leak.png", size: Int64(png.count), sha256: SHA256.hex(of: png))
        func session(_ kind: Int) throws {
            let peer = try RawPeer(port: d.port)
            switch kind % 5 {
            case 0:  // a whole photo
                try peer.hello(window: 4)
                try peer.send(.offer(o))
                guard case .accept(let a)? = try peer.receive() else { throw HarnessError("no ACCEPT") }
                var chunks = 0
                for i in stride(from: Int(a.offset), to: png.count, by: 102_400) {
                    try peer.send(.chunk(Array(png[i..<min(i + 102_400, png.count)])))
                    chunks += 1
                }
                for _ in 0..<chunks { _ = try peer.receive() }
                try peer.send(.done)
                _ = try peer.receive()
                try peer.send(.bye)
                peer.close()
            case 1:  // garbage: not a ptk session at all (closed without a word)
                try peer.sendRaw(Array("GET / HTTP/1.0\r\n\r\n".utf8))
                _ = try? peer.expectError()
                peer.close()
            case 2:  // a 4 GB frame claim
                try peer.sendRaw([0x01, 0xFF, 0xFF, 0xFF, 0xFF])
                _ = try peer.expectError()
                peer.close()
            case 3:  // vanish mid-file with a reset
                try peer.hello(window: 4)
                try peer.send(.offer(o))
                guard case .accept(let a)? = try peer.receive() else { throw HarnessError("no ACCEPT") }
                let start = Int(a.offset)
                try peer.send(.chunk(Array(png[start..<min(start + 102_400, png.count)])))
                _ = try peer.receive()
                reset(peer)
            default:  // connect and leave
                peer.close()
            }
        }
        /// Sessions that have ended: served ones log "ended", ones that never became sessions "; closed".
        func ended() -> Int {
            d.log.components(separatedBy: "ended").count + d.log.components(separatedBy: "; closed").count - 2
        }
        for i in 0..<10 { try session(i) }
        #expect(eventually { ended() == 10 })
        #expect(waitForIndexing(d))
        let idleFDs = d.openDescriptors
        let rssBefore = d.residentKB
        for i in 10..<500 { try session(i) }
        #expect(eventually(20) { d.openDescriptors == idleFDs }, "descriptors: \(d.openDescriptors) vs \(idleFDs) idle")
        let growth = d.residentKB - rssBefore
        print(
            "after 500 sessions: \(d.openDescriptors) descriptors (\(idleFDs) idle), resident memory \(rssBefore) kB -> \(d.residentKB) kB"
        )
        #expect(growth < 32_768, "resident memory grew by \(growth) kB")
        #expect(try stillServes(d))
    }

    @Test(
        "out of file descriptors: logged once with the remedy, and serving again once descriptors are free",
        .enabled(
            if: geteuid() == 0 && FileManager.default.fileExists(atPath: "/usr/bin/prlimit"),
            "needs root and prlimit (util-linux)"), .tags(.root))
    func outOfDescriptors() throws {
        let d = try DaemonProcess(["--max-sessions", "50"])
        // Room for eight more descriptors, counted by number: RLIMIT_NOFILE bounds the number a
        // new descriptor gets, and ptkd's open ones need not be the lowest (a library's may sit
        // higher). Four connections fill it (each is two: itself and its displacer); once they
        // are gone a whole send (its connection, displacer, file and library) fits in it.
        let open = Set(listDirectory("/proc/\(d.process.processIdentifier)/fd").compactMap { Int($0) })
        var limit = 0
        var room = 0
        while room < 8 {
            if !open.contains(limit) { room += 1 }
            limit += 1
        }
        #expect(
            try run(
                "/usr/bin/prlimit", ["--pid", String(d.process.processIdentifier), "--nofile=\(limit):\(limit)"],
                absolute: true
            ).status == 0)
        var peers: [FileDescriptor] = []
        for _ in 0..<8 {
            peers.append(
                try Socket.connect(
                    to: SocketAddress(numericHost: "127.0.0.1", port: d.port)!, deadline: .now + .seconds(5)))
        }
        #expect(eventually(5) { d.log.contains("cannot accept connections") })
        usleep(1_000_000)  // ten more rounds of the accept loop, which must not log again
        let lines = d.log.split(separator: "\n").filter { $0.contains("cannot accept connections") }
        // accept4 itself, or the second descriptor each connection takes (fcntl), runs out first.
        #expect(
            lines.count == 1
                && ["accept4", "fcntl"].contains {
                    lines[0]
                        == "warning: cannot accept connections: \($0): Too many open files; ptkd is out of file descriptors: raise LimitNOFILE= (systemctl edit ptkd) or lower max-sessions (now 50)"
                }, "\(lines)")
        for p in peers { p.close() }
        let src = photo(d.root, "after.png", size: 9_000)
        #expect(eventually(10) { (try? send(d, [src]))?.status == 0 }, "\(d.log)")
        #expect(d.log.contains("accepting connections again"))
        #expect(d.stop() == 0)
    }

    @Test("ptkd's threads are named by their role (ps -L, top -H), a session's while it runs")
    func threadNames() throws {
        let d = try DaemonProcess()
        func names() -> [String] {
            listDirectory("/proc/\(d.process.processIdentifier)/task").compactMap { tid in
                readFile("/proc/\(d.process.processIdentifier)/task/\(tid)/comm").map {
                    String(decoding: $0, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
                }
            }
        }
        #expect(eventually { Set(names()).isSuperset(of: ["ptkd", "signals", "index", "log"]) }, "\(names())")
        let peer = try RawPeer(port: d.port)
        try peer.hello()
        #expect(eventually { names().contains("session") }, "\(names())")
        peer.close()
    }

    @Test("a symlink planted at a partial upload's name is replaced, never followed")
    func symlinkedPartial() throws {
        let d = try DaemonProcess()
        let png = makePNG(size: 300_000, seed: 5)
        let target = d.root + "/outside"
        writeFile(target, [1, 2, 3])
        symlink(target, d.dir + "/.incoming/\(SHA256.hex(of: png))-\(png.count).part")
        let src = d.root + "/p.png"
        writeFile(src, png)
        let r = try send(d, [src])
        #expect(r.status == 0, "\(r.stdout) \(r.stderr)")
        #expect(readFile(target) == [1, 2, 3])
        #expect(readFile(d.dir + "/p.png") == png)
    }

    @Test("a symlink planted at the final name is never followed or replaced")
    func symlinkedFinal() throws {
        let d = try DaemonProcess()
        let target = d.root + "/outside"
        writeFile(target, [1, 2, 3])
        symlink(target, d.dir + "/f.png")
        let r = try send(d, [photo(d.root, "f.png", size: 4000)])
        #expect(r.stdout.contains("saved as \"f (2).png\""))
        #expect(readFile(target) == [1, 2, 3])
    }

    @Test("ptkd refuses to start when .incoming is a symlink (73)")
    func symlinkedIncoming() throws {
        let root = makeTemporaryDirectory()
        defer { removeTree(root) }
        mkdir(root + "/photos", 0o755)
        mkdir(root + "/elsewhere", 0o755)
        symlink(root + "/elsewhere", root + "/photos/.incoming")
        let r = try run("ptkd", ["--dir", root + "/photos", "--port", "0", "--no-mdns"])
        #expect(r.status == 73)
        #expect(r.stderr.contains("is not usable"))
        #expect(listDirectory(root + "/elsewhere").isEmpty)
    }

    @Test("--file-mode sets saved photos' permissions; .incoming is 0700")
    func fileMode() throws {
        let d = try DaemonProcess(["--file-mode", "0600"])
        #expect(try send(d, [photo(d.root, "m.png", size: 3000)]).status == 0)
        var st = stat()
        stat(d.dir + "/m.png", &st)
        #expect(st.st_mode & 0o777 == 0o600)
        stat(d.dir + "/.incoming", &st)
        #expect(st.st_mode & 0o777 == 0o700)
    }

    @Test(
        "ptkd refuses to start, with a clear message, when the directory is not writable",
        .enabled(
            if: isRoot && FileManager.default.fileExists(atPath: "/usr/bin/setpriv"),
            "needs root and setpriv to drop to nobody"), .tags(.root))
    func notWritable() throws {
        let root = makeTemporaryDirectory()
        defer { removeTree(root) }
        chmod(root, 0o755)
        mkdir(root + "/photos", 0o755)  // owned by root; nobody cannot write it
        let r = try run(
            "/usr/bin/setpriv",
            [
                "--reuid=65534", "--regid=65534", "--clear-groups", binDirectory + "/ptkd",
                "--dir", root + "/photos", "--port", "0", "--no-mdns",
            ], absolute: true)
        #expect(r.status == 73, "\(r.stderr)")
        #expect(
            r.stderr.hasPrefix(
                "ptkd: the received-photos directory '\(root)/photos' is not usable: mkdir '.incoming': Permission denied"
            ))
    }

    @Test("kill -9 mid-file: nothing visible after restart, and the next send resumes and lands intact")
    func killNine() throws {
        let first = try DaemonProcess()
        let bytes = makePNG(size: 900_000, seed: 11)
        let peer = try RawPeer(port: first.port)
        try startUpload(peer, bytes, name: "k.png", chunks: 4)
        #expect(first.stop(signal: SIGKILL) == nil || !first.process.isRunning)
        peer.close()
        let second = try DaemonProcess(root: first.root)
        #expect(second.visible.isEmpty)
        #expect(second.incoming.count == 1)
        let src = first.root + "/k.png"
        writeFile(src, bytes)
        let r = try send(second, [src])
        #expect(r.stdout == "\(src): saved as \"k.png\" (resumed at byte 409600)\n", "\(r.stderr)")
        #expect(readFile(second.dir + "/k.png") == bytes)
        #expect(second.incoming.isEmpty)
    }

    @Test(
        "a full disk: REJECT no-space up front, FAILED no-space mid-file, nothing partial, serving again once freed",
        .enabled(
            if: isRoot && FileManager.default.fileExists(atPath: "/usr/bin/unshare"),
            "needs root to mount a tmpfs in a private mount namespace"), .tags(.root))
    func diskFull() throws {
        let root = makeTemporaryDirectory()
        defer { removeTree(root) }
        mkdir(root + "/photos", 0o755)
        // ptkd runs in its own mount namespace with a 4 MB tmpfs as its directory; the test
        // sees that file system through /proc/PID/root.
        let d = try DaemonProcess(
            ["--min-free", "0"], root: root,
            wrapper: [
                "/usr/bin/unshare", "-m", "--propagation", "private", "/bin/sh", "-c",
                "mount -t tmpfs -o size=4m tmpfs \"$0\" && exec \"$@\"", root + "/photos",
            ])
        let view = "/proc/\(d.process.processIdentifier)/root" + d.dir
        func visible() -> [String] { listDirectory(view).filter { $0 != ".incoming" && $0 != ".ptk" } }

        let huge = d.root + "/huge.png"
        writeFile(huge, makePNG(size: 6_000_000))
        let r = try send(d, [huge])
        #expect(r.status == 1)
        #expect(r.stdout.contains("refused: no-space"))

        let bytes = makePNG(size: 3_000_000, seed: 4)
        let peer = try RawPeer(port: d.port)
        try startUpload(peer, bytes, name: "mid.png", chunks: 1)
        writeFile(view + "/filler", [UInt8](repeating: 0, count: 2_500_000))  // the disk fills up meanwhile
        var failed: Problem?
        for i in 1..<29 {
            try peer.send(.chunk(Array(bytes[(i * 102_400)..<((i + 1) * 102_400)])))
            let answer = try peer.receive()
            if case .failed(let p)? = answer {
                failed = p
                break
            }
        }
        #expect(failed?.code == "no-space")
        peer.close()
        #expect(visible() == ["filler"])
        #expect(eventually { listDirectory(view + "/.incoming").isEmpty })

        unlink(view + "/filler")
        let small = photo(d.root, "after.png", size: 1_000_000)
        #expect(try send(d, [small]).status == 0)
        #expect(readFile(view + "/after.png") == readFile(small))
    }

    @Test("peers that reset the connection at every point leave no descriptor behind", arguments: [0, 1, 2, 3, 4])
    func resets(point: Int) throws {
        let d = try DaemonProcess()
        _ = try stillServes(d)
        #expect(eventually { d.log.contains("ended") })
        #expect(waitForIndexing(d))
        let idle = d.openDescriptors
        let png = makePNG(size: 300_000)
        let peer = try RawPeer(port: d.port)
        if point >= 1 { try peer.hello(window: 1) }
        if point >= 2 {
            try peer.send(.offer(Offer(name: "r.png", size: Int64(png.count), sha256: SHA256.hex(of: png))))
            _ = try peer.receive()
        }
        if point >= 3 {
            try peer.send(.chunk(Array(png[..<102_400])))
            _ = try peer.receive()
        }
        if point >= 4 {
            for i in 1..<3 {
                try peer.send(.chunk(Array(png[(i * 102_400)..<min((i + 1) * 102_400, png.count)])))
                _ = try peer.receive()
            }
            try peer.send(.done)
        }
        reset(peer)
        #expect(eventually { d.openDescriptors == idle }, "\(d.openDescriptors) descriptors, \(idle) when idle")
        #expect(try stillServes(d))
    }
}

@Suite("End to end: power-cut safety", .tags(.endToEnd))
struct DurabilityTests {
    @Test(
        "SAVED is sent only after the file is flushed, moved to its name, and the directory is flushed",
        .enabled(if: FileManager.default.fileExists(atPath: "/usr/bin/strace"), "needs strace"))
    func flushBeforeSaved() throws {
        let d = try DaemonProcess()
        let trace = d.root + "/trace"
        // Attach strace to the running ptkd (all its threads) and wait until it is tracing.
        let strace = Process()
        strace.executableURL = URL(fileURLWithPath: "/usr/bin/strace")
        strace.arguments = [
            "-f", "-p", String(d.process.processIdentifier), "-e", "trace=fsync,fdatasync,linkat,renameat2,sendto",
            "-o", trace,
        ]
        let straceErr = Pipe()
        strace.standardError = straceErr
        try strace.run()
        usleep(500_000)
        let src = pngSuiteDirectory() + "/basn0g01.png"
        // Plaintext, so the frames can be read in the trace (TLS would write them encrypted).
        #expect(try send(d, [src], ["--plaintext"]).status == 0)
        #expect(d.stop() == 0)
        #expect(eventually { !strace.isRunning })
        let lines = (try String(contentsOfFile: trace, encoding: .utf8)).split(separator: "\n").map(String.init)
        func index(_ pattern: String, after start: Int = 0) -> Int? {
            lines.indices.first { $0 >= start && lines[$0].contains(pattern) }
        }
        // Published in one step from .incoming (renameat2 without replacing).
        let link = try #require(index("renameat2("), "no renameat2 in the trace")
        #expect(lines[link].contains("\"basn0g01.png\", RENAME_NOREPLACE"))
        #expect(!lines.contains { $0.contains("linkat(") })
        let fileSync = try #require(lines[..<link].lastIndex { $0.contains("fsync(") }, "no fsync before renameat2")
        let dirSync = try #require(index("fsync(", after: link), "no fsync after renameat2")
        let saved = try #require(index("sendto(", after: link), "no SAVED sent")
        #expect(lines[saved].contains("\\6\\0\\0\\0"), "the first frame after publishing is SAVED: \(lines[saved])")
        #expect(fileSync < link && link < dirSync && dirSync < saved)
        func descriptor(_ line: String) -> Substring? {
            line.split(separator: "(").dropFirst().first?.split(separator: ")").first
        }
        #expect(
            descriptor(lines[fileSync]) != descriptor(lines[dirSync]),
            "two different descriptors: \(lines[fileSync]) \(lines[dirSync])")
    }

    @Test(
        "in flush rounds, for every photo: its data flushed before its rename, the rename before its directory's flush, that flush before its SAVED (issue 46)",
        .enabled(if: FileManager.default.fileExists(atPath: "/usr/bin/strace"), "needs strace"),
        arguments: [["--parallel", "1"], []])
    func flushRoundsBeforeSaved(parallel: [String]) throws {
        let d = try DaemonProcess()
        let trace = d.root + "/trace"
        // -y: each descriptor with its path; -s: SAVED's JSON (the photo's name) whole. Each flush
        // takes 20 ms longer, as on an SD card, so photos arrive while a round runs.
        let strace = try attachStrace(
            d,
            [
                "-qq", "-y", "-s", "65536", "-e", "trace=fsync,renameat2,sendto,write",
                "-e", "inject=fsync:delay_enter=20000", "-o", trace,
            ])
        defer { if strace.isRunning { kill(strace.processIdentifier, SIGKILL) } }
        mkdir(d.root + "/src", 0o755)
        let photos = (0..<16).map { i -> (name: String, bytes: [UInt8]) in
            ("p\(i).png", makePNG(size: 150_000 + i * 1_000, seed: UInt64(i + 40)))
        }
        for p in photos { writeFile(d.root + "/src/" + p.name, p.bytes) }
        // Plaintext, so the frames can be read in the trace.
        let r = try send(d, photos.map { d.root + "/src/" + $0.name }, ["--plaintext"] + parallel)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(d.stop() == 0)
        #expect(eventually { !strace.isRunning })
        let raw = (try String(contentsOfFile: trace, encoding: .utf8)).split(separator: "\n").map(String.init)
        // A call another thread interrupted is written in two lines; it is done where it resumed.
        var lines: [String] = []
        var unfinished: [String: Int] = [:]
        for line in raw {
            let pid = String(line.prefix { $0 != " " })
            if line.hasSuffix("<unfinished ...>") {
                unfinished[pid] = lines.count
                lines.append(line)
            } else if line.contains(" resumed>"), let at = unfinished.removeValue(forKey: pid) {
                lines.append(lines[at].replacingOccurrences(of: "<unfinished ...>", with: "") + " " + line)
                lines[at] = ""
            } else {
                lines.append(line)
            }
        }
        let photosDir = d.dir
        var rounds = Set<Int>()
        for p in photos {
            let part = "\(SHA256.hex(of: p.bytes))-\(p.bytes.count).part"
            let rename = try #require(
                lines.firstIndex { $0.contains("renameat2(") && $0.contains(part) && $0.contains("\"\(p.name)\"") },
                "no rename of \(p.name)")
            let fileSync = try #require(
                lines.firstIndex { $0.contains("fsync(") && $0.contains(".incoming/" + part + ">") },
                "no flush of \(p.name)'s data")
            let dirSync = try #require(
                lines.indices.first {
                    $0 > rename && lines[$0].contains("fsync(") && lines[$0].contains("<\(photosDir)>")
                },
                "no flush of the directory after \(p.name)'s rename")
            let saved = try #require(
                lines.firstIndex {
                    ($0.contains("sendto(") || $0.contains("write(")) && $0.contains("\\6")
                        && $0.contains("\\\"name\\\":\\\"\(p.name)\\\"")
                },
                "no SAVED of \(p.name)")
            #expect(
                fileSync < rename && rename < dirSync && dirSync < saved,
                "\(p.name): data \(fileSync), rename \(rename), directory \(dirSync), SAVED \(saved)")
            rounds.insert(dirSync)
            #expect(readFile(photosDir + "/" + p.name) == p.bytes)
        }
        // Photos shared directory flushes (rounds): fewer than one per photo.
        #expect(rounds.count < photos.count, "\(rounds.count) directory flushes for \(photos.count) photos")
    }

    /// The trace of `body` run against a ptkd started with `flags`, under `strace -f -y` (paths
    /// beside descriptors) for `calls`, one line per call.
    func traced(_ flags: [String], calls: String, _ body: (DaemonProcess) throws -> Void) throws -> [String] {
        let d = try DaemonProcess(flags)
        let trace = d.root + "/trace"
        let strace = try attachStrace(d, ["-qq", "-y", "-e", "trace=" + calls, "-o", trace])
        defer { if strace.isRunning { kill(strace.processIdentifier, SIGKILL) } }
        try body(d)
        #expect(d.stop() == 0)
        #expect(eventually { !strace.isRunning })
        return (try String(contentsOfFile: trace, encoding: .utf8)).split(separator: "\n").map(String.init)
    }

    @Test(
        "a thumbnail is flushed and named, and its directory flushed, before the index row that points to it; the index's WAL is flushed before it is copied into the database",
        .enabled(if: FileManager.default.fileExists(atPath: "/usr/bin/strace"), "needs strace"))
    func thumbnailsAndIndex() throws {
        let lines = try traced([], calls: "write,pwrite64,fsync,fdatasync,syncfs,rename,renameat,renameat2") {
            (d: DaemonProcess) throws in
            #expect(try send(d, [pngSuiteDirectory() + "/basn2c08.png"]).status == 0)
            #expect(waitForIndex(d, ["basn2c08.png"]))
        }
        func index(after start: Int = 0, _ match: (String) -> Bool) -> Int? {
            lines.indices.first { $0 >= start && match(lines[$0]) }
        }
        // Thumbnails are written through the folder's descriptor: renameat(fd</…/.ptk/thumbnails>, "temporary", …).
        let rename = try #require(
            index { ($0.contains("renameat(") || $0.contains("renameat2(")) && $0.contains("/.ptk/thumbnails>") },
            "no thumbnail renamed")
        let temporary = try #require(lines[rename].split(separator: "\"").dropFirst().first.map(String.init))
        let lastWrite = try #require(
            lines[..<rename].lastIndex { $0.contains("write(") && $0.contains(temporary + ">") },
            "no write of \(temporary)")
        let flush = try #require(
            index(after: lastWrite) {
                $0.contains("syncfs(") || ($0.contains("fsync(") && $0.contains(temporary + ">"))
            })
        #expect(flush < rename, "the thumbnail is flushed before it is named: \(lines[flush])")
        let dirFlush = try #require(
            index(after: rename) { $0.contains("fsync(") && $0.contains("/.ptk/thumbnails>") },
            "no flush of the thumbnails directory")
        let row = try #require(
            index(after: rename) { $0.contains("pwrite64(") && $0.contains("index.sqlite-wal>") },
            "no index write after the thumbnail")
        #expect(dirFlush < row)
        // The checkpoint: database pages are written only from a flushed WAL, and flushed themselves.
        let pageWrite = try #require(
            index { $0.contains("pwrite64(") && $0.contains("index.sqlite>") }, "no checkpoint")
        let walFlush = try #require(
            lines[..<pageWrite].lastIndex { $0.contains("fdatasync(") || $0.contains("fsync(") })
        #expect(lines[walFlush].contains("index.sqlite-wal>"), "\(lines[walFlush])")
        #expect(
            index(after: pageWrite) {
                ($0.contains("fdatasync(") || $0.contains("fsync(")) && $0.contains("index.sqlite>")
            } != nil)
    }

    @Test(
        "the trust files (here the pending senders) are flushed before they are renamed into place, and their directory after",
        .enabled(if: FileManager.default.fileExists(atPath: "/usr/bin/strace"), "needs strace"))
    func trustFiles() throws {
        let lines = try traced(["--senders", "trusted"], calls: "write,fsync,fdatasync,rename,renameat,renameat2") {
            (d: DaemonProcess) throws in
            #expect(try send(d, [photo(d.root, "x.png", size: 20_000)]).status != 0)
            #expect(eventually { FileManager.default.fileExists(atPath: d.stateDir + "/pending-senders") })
        }
        // Renamed within the state directory's descriptor (no link followed on the way):
        // renameat(17</STATE>, ".pending-senders.tmp.PID.HEX", 17</STATE>, "pending-senders").
        let rename = try #require(
            lines.firstIndex { $0.contains("renameat(") && $0.contains("\"pending-senders\"") },
            "pending-senders not replaced: \(lines)")
        let temporary = try #require(lines[rename].split(separator: "\"").dropFirst().first.map(String.init))
        let directory = try #require(
            lines[rename].split(separator: "<").dropFirst().first?.split(separator: ">").first.map(String.init))
        #expect(directory.hasSuffix("/state"), "renamed in \(directory)")
        let write = try #require(
            lines[..<rename].lastIndex { $0.contains("write(") && $0.contains(directory + "/" + temporary + ">") })
        let flush = try #require(
            lines[write..<rename].firstIndex { $0.contains("fsync(") && $0.contains(temporary + ">") },
            "not flushed before the rename")
        #expect(write < flush)
        #expect(
            lines[rename...].contains { $0.contains("fsync(") && $0.contains("<" + directory + ">") },
            "the state directory is not flushed after the rename")
    }
}
