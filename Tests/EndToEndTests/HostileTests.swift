import Foundation
import Glibc
import PTKDigest
import PTKProtocol
import PTKSystem
import PTKTestSupport
import PTKTestTags
import Testing

func header(_ type: UInt8, _ length: UInt32) -> [UInt8] {
    [type, UInt8(length >> 24), UInt8((length >> 16) & 0xFF), UInt8((length >> 8) & 0xFF), UInt8(length & 0xFF)]
}

/// After a hostile case, ptkd must still be alive and serving.
func stillServes(_ d: DaemonProcess) throws -> Bool {
    let src = photo(d.root, "check-\(UInt32.random(in: 0...UInt32.max)).png", size: 3000)
    let r = try send(d, [src])
    return d.process.isRunning && r.status == 0
}

@Suite("End to end: hostile peers get the protocol's error and ptkd keeps serving", .tags(.endToEnd))
struct HostileTests {
    @Test(
        "malformed streams get the right ERROR",
        arguments: [
            (header(0x01, 70_000), "frame-too-large"),
            (header(0x01, 0xFFFF_FFFF), "frame-too-large"),
            (header(0x01, 5) + Array("{nope".utf8), "bad-frame"),
            (FrameEncoder.encode(.hello(Hello(version: 2, name: "x", window: 1))), "unsupported-version"),
            (FrameEncoder.encode(.hello(Hello(name: "x", window: 1))) + header(0x42, 0), "bad-frame"),
        ])
    func malformed(bytes: [UInt8], code: String) throws {
        let d = try DaemonProcess()
        let peer = try RawPeer(port: d.port)
        try peer.sendRaw(bytes)
        #expect(try peer.expectError()?.code == code)
        peer.close()
        #expect(try stillServes(d))
    }

    @Test(
        "a first byte that starts neither HELLO nor TLS is closed at once, without a word (protocol §6)",
        arguments: [
            header(0x10, 0xFFFF_FFFF),
            header(0x42, 0),
            Array("GET / HTTP/1.1\r\nHost: x\r\n\r\n".utf8),
            FrameEncoder.encode(.offer(Offer(name: "a.png", size: 10, sha256: String(repeating: "0", count: 64)))),
        ])
    func notPTK(bytes: [UInt8]) throws {
        let d = try DaemonProcess()
        let peer = try RawPeer(port: d.port)
        try peer.sendRaw(bytes)
        // Closed: end of stream, or a reset when ptkd closed with our bytes unread.
        let answer = try? peer.receive()
        #expect(answer == nil)
        peer.close()
        #expect(
            eventually { d.log.contains("not a ptk session (first byte 0x\(String(bytes[0], radix: 16))); closed") })
        #expect(try stillServes(d))
    }

    @Test("frames out of order mid-session get ERROR unexpected-frame")
    func outOfOrder() throws {
        let d = try DaemonProcess()
        let peer = try RawPeer(port: d.port)
        try peer.hello()
        try peer.send(.chunk([1, 2, 3]))
        #expect(try peer.expectError()?.code == "unexpected-frame")
        peer.close()
        #expect(try stillServes(d))
    }

    @Test("content that is not a PNG gets FAILED not-png on the first chunk, and the session goes on")
    func notPNG() throws {
        let d = try DaemonProcess()
        let junk = [UInt8](repeating: 0x41, count: 250_000)
        let peer = try RawPeer(port: d.port)
        try peer.hello(window: 4)
        try peer.send(.offer(Offer(name: "fake.png", size: Int64(junk.count), sha256: SHA256.hex(of: junk))))
        #expect(try peer.receive() == .accept(Accept(offset: 0)))
        for i in stride(from: 0, to: junk.count, by: 102_400) {
            try peer.send(.chunk(Array(junk[i..<min(i + 102_400, junk.count)])))
        }
        guard case .failed(let p)? = try peer.receive() else {
            Issue.record("no FAILED")
            return
        }
        #expect(p.code == "not-png")
        // The rest of the chunks were discarded unacknowledged; the session still works.
        let good = makePNG(size: 1000)
        try peer.send(.offer(Offer(name: "good.png", size: 1000, sha256: SHA256.hex(of: good))))
        #expect(try peer.receive() == .accept(Accept(offset: 0)))
        try peer.send(.chunk(good))
        #expect(try peer.receive() == .ack)
        try peer.send(.done)
        #expect(try peer.receive() == .saved(Saved(name: "good.png", size: 1000, sha256: SHA256.hex(of: good))))
        try peer.send(.bye)
        #expect(try peer.receive() == nil)
        #expect(d.visible == ["good.png"])
        #expect(d.incoming.isEmpty)
    }

    @Test("a wrong hash gets FAILED hash-mismatch and leaves nothing")
    func wrongHash() throws {
        let d = try DaemonProcess()
        let png = makePNG(size: 150_000)
        let peer = try RawPeer(port: d.port)
        try peer.hello(window: 1)
        try peer.send(.offer(Offer(name: "h.png", size: Int64(png.count), sha256: String(repeating: "ab", count: 32))))
        #expect(try peer.receive() == .accept(Accept(offset: 0)))
        try peer.send(.chunk(Array(png[..<102_400])))
        #expect(try peer.receive() == .ack)
        try peer.send(.chunk(Array(png[102_400...])))
        #expect(try peer.receive() == .ack)
        try peer.send(.done)
        guard case .failed(let p)? = try peer.receive() else {
            Issue.record("no FAILED")
            return
        }
        #expect(p.code == "hash-mismatch")
        peer.close()
        #expect(d.visible.isEmpty)
        #expect(eventually { d.incoming.isEmpty })
        #expect(try stillServes(d))
    }

    @Test(
        "a media type the receiver does not keep is REJECTed unsupported-type, a tiny size not-png; the session goes on"
    )
    func rejectNotPNG() throws {
        let d = try DaemonProcess(["--types", "image/png"])
        let peer = try RawPeer(port: d.port)
        #expect(try peer.hello().types == ["image/png"])
        try peer.send(
            .offer(Offer(name: "a.jpg", size: 100, sha256: String(repeating: "0", count: 64), mediaType: "image/jpeg")))
        guard case .reject(let p)? = try peer.receive() else {
            Issue.record("no REJECT")
            return
        }
        #expect(
            p.code == "unsupported-type" && p.message == "image/jpeg is not a type this receiver keeps (image/png)",
            "\(p)")
        try peer.send(
            .offer(Offer(name: "a.gif", size: 100, sha256: String(repeating: "0", count: 64), mediaType: "image/gif")))
        guard case .reject(let g)? = try peer.receive() else {
            Issue.record("no REJECT")
            return
        }
        #expect(g.code == "unsupported-type")
        try peer.send(.offer(Offer(name: "a.png", size: 7, sha256: String(repeating: "0", count: 64))))
        guard case .reject(let q)? = try peer.receive() else {
            Issue.record("no REJECT")
            return
        }
        #expect(q.code == "not-png")
        peer.close()
    }

    @Test("more unacknowledged chunks than the window never crash the receiver")
    func windowFlood() throws {
        let d = try DaemonProcess(["--window", "1"])
        let png = makePNG(size: 800_000)
        let peer = try RawPeer(port: d.port)
        #expect(try peer.hello(window: 64).window == 1)
        try peer.send(.offer(Offer(name: "w.png", size: Int64(png.count), sha256: SHA256.hex(of: png))))
        #expect(try peer.receive() == .accept(Accept(offset: 0)))
        // A sender that ignores the window: the receiver reads at its own pace and answers each chunk.
        var out: [UInt8] = []
        for i in stride(from: 0, to: png.count, by: 102_400) {
            FrameEncoder.encode(.chunk(Array(png[i..<min(i + 102_400, png.count)])), into: &out)
        }
        try peer.sendRaw(out)
        for _ in 0..<8 { #expect(try peer.receive() == .ack) }
        try peer.send(.done)
        guard case .saved? = try peer.receive() else {
            Issue.record("not saved")
            return
        }
        peer.close()
        #expect(try stillServes(d))
    }

    @Test("beyond --max-sessions a peer gets ERROR busy with its place in line; ptk-send --wait 0 exits 69 at once")
    func busy() throws {
        let d = try DaemonProcess(["--max-sessions", "1"])
        let holder = try RawPeer(port: d.port)
        try holder.hello()
        let second = try RawPeer(port: d.port)
        try second.send(.hello(Hello(name: "b", window: 1)))
        let error = try second.expectError()
        #expect(error?.code == "busy")
        #expect(error?.waiting == 0)
        #expect(error?.message == "the receiver is serving its limit of 1 sessions; try again later")
        second.close()
        let r = try send(d, [photo(d.root, "b.png", size: 2000)], ["--wait", "0"])
        #expect(r.status == 69)
        #expect(
            withoutFirstContact(r.stderr)
                == "ptk-send: 127.0.0.1:\(d.port): the receiver answered ERROR busy: the receiver is serving its limit of 1 sessions; try again later (--wait 0: not waiting for a turn)\n"
        )
        holder.close()
        #expect(eventually { (try? send(d, [photo(d.root, "c.png", size: 2000)], ["--wait", "0"]))?.status == 0 })
    }

    @Test("ptk-send refused while it still hashes a big file exits 69 cleanly, every time")
    func busyWhileHashing() throws {
        // ptk-send once crashed here: it exited while a thread was still hashing with
        // OpenSSL, whose exit-time clean-up pulled state from under it.
        let d = try DaemonProcess(["--max-sessions", "1"])
        let holder = try RawPeer(port: d.port)
        try holder.hello()
        let files =
            (0..<4).map { photo(d.root, "s\($0).png", size: 3000, seed: UInt64($0 + 1)) }
            + [photo(d.root, "big.png", size: 40_000_000, seed: 9)]
        for _ in 0..<8 {
            let r = try send(d, files, ["--wait", "0"])
            #expect(r.status == 69, "\(r.stderr)")
        }
        holder.close()
    }

    @Test("a silent session is closed with ERROR timeout after --idle-timeout")
    func idleTimeout() throws {
        let d = try DaemonProcess(["--idle-timeout", "1"])
        let peer = try RawPeer(port: d.port)
        try peer.hello()
        let start = Date()
        #expect(try peer.expectError()?.code == "timeout")
        #expect(Date().timeIntervalSince(start) < 5)
        peer.close()
    }

    @Test("peers that vanish at every point of a session are cleaned up", arguments: [0, 1, 2, 3, 4])
    func vanishing(point: Int) throws {
        let d = try DaemonProcess()
        let png = makePNG(size: 300_000)
        let peer = try RawPeer(port: d.port)
        if point >= 1 { try peer.hello(window: 1) }
        if point >= 2 {
            try peer.send(.offer(Offer(name: "v.png", size: Int64(png.count), sha256: SHA256.hex(of: png))))
            _ = try peer.receive()
        }
        if point >= 3 {
            try peer.send(.chunk(Array(png[..<102_400])))
            _ = try peer.receive()
        }
        if point >= 4 {
            try peer.send(.chunk(Array(png[102_400..<204_800])))
            _ = try peer.receive()
            try peer.send(.chunk(Array(png[204_800...])))
            _ = try peer.receive()
            try peer.send(.done)
        }
        peer.close()
        #expect(
            eventually {
                d.log.contains("session 1 from")
                    && (d.log.contains("ended") || d.log.contains("closed before saying anything"))
            })
        #expect(try stillServes(d))
    }
}

@Suite("End to end: command-line behaviour", .tags(.endToEnd))
struct CommandLineTests {
    @Test("ptk-send without arguments is a usage error (64)")
    func noArgs() throws {
        let r = try run("ptk-send", [])
        #expect(r.status == 64)
        #expect(r.stderr.hasPrefix("ptk-send: missing <peer>: ptk-send [OPTIONS] <peer> FILE...\n"), "\(r.stderr)")
        #expect(r.stdout.isEmpty)
    }

    @Test(
        "ptk-send refuses unusable local files before connecting (66)",
        arguments: [
            ("/nonexistent/a.png", "cannot send /nonexistent/a.png: no such file or directory"),
            ("/dev/null", "cannot send /dev/null: not a regular file"),
        ])
    func unusableFile(path: String, message: String) throws {
        let r = try run("ptk-send", ["127.0.0.1:1", path])
        #expect(r.status == 66)
        #expect(r.stderr == "ptk-send: \(message)\n")
    }

    @Test("ptk-send refuses a file given that is not a photo (66), naming it")
    func notAPNG() throws {
        let dir = makeTemporaryDirectory()
        defer { removeTree(dir) }
        writeFile(dir + "/fake.png", Array("hello".utf8))
        let r = try run("ptk-send", ["127.0.0.1:1", pngSuiteDirectory() + "/basn0g01.png", dir + "/fake.png"])
        #expect(r.status == 66)
        #expect(
            r.stderr
                == "ptk-send: cannot send \(dir)/fake.png: not a photo (its first bytes are not a PNG's, a JPEG's or a HEIC's)\n",
            "\(r.stderr)")
    }

    @Test("ptk-send to a port nobody listens on exits 69")
    func unreachable() throws {
        let r = try run("ptk-send", ["--timeout", "3", "127.0.0.1:1", pngSuiteDirectory() + "/basn0g01.png"])
        #expect(r.status == 69)
        #expect(r.stderr.contains("connection refused"), "\(r.stderr)")
    }

    @Test(
        "ptk-send to a peer that speaks something else exits 76: over TLS it says the peer does not speak TLS and names --plaintext",
        arguments: [[], ["--plaintext"]])
    func wrongPeer(flags: [String]) throws {
        let address = SocketAddress(numericHost: "127.0.0.1", port: 0)!
        let listener = try Socket.listen(on: address)
        defer { listener.close() }
        let port = try Socket.localAddress(listener).port
        let server = Thread {
            _ = try? poll([(listener, .readable)], until: .now + .seconds(10))
            guard let (conn, _) = (try? Socket.accept(listener)) ?? nil else { return }
            let junk = Array("SSH-2.0-OpenSSH_9.2\r\n".utf8)
            try? conn.writeAll(junk)
            usleep(500_000)
            conn.close()
        }
        server.start()
        let r = try run(
            "ptk-send", ["--timeout", "5"] + flags + ["127.0.0.1:\(port)", pngSuiteDirectory() + "/basn0g01.png"])
        #expect(r.status == 76, "\(r.stderr)")
        #expect(
            r.stderr.contains(flags.isEmpty ? "does not speak TLS" : "does not speak ptk protocol v1"), "\(r.stderr)")
        if flags.isEmpty { #expect(r.stderr.contains("--plaintext")) }
    }

    @Test(
        "bad peers and bad flag values are usage errors",
        arguments: [
            ["[::1", "a.png"], ["host:99999", "a.png"], ["--window", "0", "h", "a.png"], ["--bogus", "h", "a.png"],
            ["h"],
        ])
    func badUsage(args: [String]) throws {
        let r = try run("ptk-send", args)
        #expect(r.status == 64)
        #expect(r.stderr.hasPrefix("ptk-send: "))
    }

    @Test("--help and --version print and exit 0")
    func help() throws {
        for bin in ["ptkd", "ptk-send"] {
            let h = try run(bin, ["--help"])
            #expect(h.status == 0)
            #expect(h.stdout.contains("Usage: \(bin)"))
            #expect(h.stdout.contains("Exit status"))
            let v = try run(bin, ["--version"])
            #expect(v.status == 0)
            #expect(v.stdout.hasPrefix("\(bin) "))
        }
    }

    @Test("ptkd refuses bad flags and bad configuration lines with 64, naming file and line")
    func ptkdUsage() throws {
        let r = try run("ptkd", ["--window", "99"])
        #expect(r.status == 64)
        #expect(r.stderr.hasPrefix("ptkd: invalid value '99' for window"))
        let dir = makeTemporaryDirectory()
        defer { removeTree(dir) }
        writeFile(dir + "/ptkd.conf", Array("port = 0\nwindw = 4\n".utf8))
        let c = try run("ptkd", ["--config", dir + "/ptkd.conf"])
        #expect(c.status == 64)
        #expect(c.stderr.hasPrefix("ptkd: \(dir)/ptkd.conf:2: unknown key 'windw'"))
    }

    @Test("ptkd reads its configuration file and flags override it")
    func ptkdConfig() throws {
        let dir = makeTemporaryDirectory()
        defer { removeTree(dir) }
        writeFile(dir + "/ptkd.conf", Array("name = from-file\nmax-file-size = 1K\n".utf8))
        let d = try DaemonProcess(["--config", dir + "/ptkd.conf", "--max-file-size", "1M"])
        #expect(d.log.contains("as \"from-file\""))
        let r = try send(d, [photo(d.root, "m.png", size: 500_000)])
        #expect(r.status == 0)
    }

    @Test("ptkd refuses a directory it cannot use (73)")
    func badDirectory() throws {
        let dir = makeTemporaryDirectory()
        defer { removeTree(dir) }
        writeFile(dir + "/file", [1])
        let r = try run("ptkd", ["--dir", dir + "/file/sub", "--port", "0", "--no-mdns"])
        #expect(r.status == 73)
        #expect(r.stderr.hasPrefix("ptkd: cannot create the received-photos directory"))
    }
}
