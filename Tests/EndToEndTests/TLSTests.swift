import Foundation
import Glibc
import PTKProtocol
import PTKSystem
import PTKTLS
import PTKTestSupport
import PTKTestTags
import PTKTransport
import Testing

/// Runs the admin command `ptk` on `daemon`'s state directory.
func ptk(_ daemon: DaemonProcess, _ args: [String]) throws -> Finished {
    try run("ptk", ["--config", "/dev/null", "--state-dir", daemon.stateDir] + args)
}

/// `daemon`'s device ID, as `ptk id` prints it.
func receiverID(_ daemon: DaemonProcess) throws -> DeviceID {
    let r = try ptk(daemon, ["id"])
    guard r.status == 0, let id = DeviceID(parsing: r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) else {
        throw HarnessError("ptk id: \(r.status) \(r.stderr)")
    }
    return id
}

/// The device ID of ptk-send with configuration directory `config`.
func senderID(config: String) throws -> DeviceID {
    let r = try run("ptk-send", ["--id"], environment: ["XDG_CONFIG_HOME": config])
    guard let id = DeviceID(parsing: r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) else {
        throw HarnessError("ptk-send --id: \(r.stderr)")
    }
    return id
}

/// A TLS session to `port` as a hand-driven peer presenting `identity` (none when nil).
func tlsConnection(_ port: UInt16, identity: Identity?, tls12Only: Bool = false) throws -> FramedConnection {
    let address = SocketAddress(numericHost: "127.0.0.1", port: port)!
    let sock = try Socket.connect(to: address, deadline: .now + .seconds(5))
    let context = try TLSContext(server: false, identity: identity, tls12Only: tls12Only)
    let stream = try TLSStream(socket: sock, peer: address, context: context, deadline: .now + .seconds(5))
    return FramedConnection(stream: stream, timeout: .seconds(10))
}

/// A man in the middle: terminates TLS with its own identity and relays every session to
/// `target` as a TLS client with that same identity.
final class TLSRelay: @unchecked Sendable {
    let identity: Identity
    let port: UInt16
    private let listener: FileDescriptor
    private let stop: WakePipe

    init(to target: UInt16) throws {
        identity = try Identity.ephemeral()
        listener = try Socket.listen(on: SocketAddress(numericHost: "127.0.0.1", port: 0)!)
        port = try Socket.localAddress(listener).port
        stop = try WakePipe()
        let server = try TLSContext(server: true, identity: identity)
        let client = try TLSContext(server: false, identity: identity)
        let (listener, stop) = (self.listener, self.stop)
        try startThread(name: "test") {
            while true {
                guard let r = try? poll([(listener, .readable), (stop.readEnd, .readable)], until: nil), r[1].isEmpty
                else { return }
                guard let (conn, peer) = (try? Socket.accept(listener)) ?? nil else { continue }
                try? startThread(name: "test") {
                    guard
                        let inner = try? TLSStream(
                            socket: conn, peer: peer, context: server, deadline: .now + .seconds(5))
                    else { return }
                    let address = SocketAddress(numericHost: "127.0.0.1", port: target)!
                    guard let sock = try? Socket.connect(to: address, deadline: .now + .seconds(5)),
                        let outer = try? TLSStream(
                            socket: sock, peer: address, context: client, deadline: .now + .seconds(5))
                    else {
                        inner.close()
                        return
                    }
                    // An OpenSSL connection must not be read and written by two threads at once:
                    // each side's lock serialises them.
                    let done = Semaphore()
                    let (innerLock, outerLock) = (Lock(), Lock())
                    for (from, fromLock, to, toLock) in [
                        (inner as ByteStream, innerLock, outer as ByteStream, outerLock),
                        (outer, outerLock, inner, innerLock),
                    ] {
                        try? startThread(name: "test") {
                            pump(from: from, fromLock, to: to, toLock)
                            done.signal()
                        }
                    }
                    done.wait()
                    done.wait()
                    inner.close()
                    outer.close()
                }
            }
        }
    }

    deinit {
        stop.signal()
        usleep(50_000)
        listener.close()
    }
}

/// Copies `from` to `to` until end of stream, an error or 20 s of silence, then ends `to`'s
/// sending side. Each stream is used only under its lock, and reads wait briefly, so the other
/// direction can write in between.
private func pump(from: ByteStream, _ fromLock: Lock, to: ByteStream, _ toLock: Lock) {
    let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 65536, alignment: 1)
    defer { buffer.deallocate() }
    var silentSince = Instant.now
    loop: while Instant.now - silentSince < .seconds(20) {
        let result = fromLock.withLock { () -> Result<Int, TransportError> in
            Result { () throws(TransportError) in try from.read(into: buffer, deadline: .now + .seconds(0.02)) }
        }
        switch result {
        case .failure(.timedOut): continue
        case .failure, .success(0): break loop
        case .success(let n):
            silentSince = .now
            let wrote = toLock.withLock {
                (try? to.write(UnsafeRawBufferPointer(rebasing: buffer[..<n]), deadline: .now + .seconds(20))) != nil
            }
            if !wrote { break loop }
        }
    }
    toLock.withLock { to.shutdownWrite() }
}

@Suite("End to end: TLS, device identities and the trust list (protocol §6)", .tags(.endToEnd))
struct TLSTests {
    @Test(
        "plaintext to a receiver that refuses it: ERROR tls-required, exit 76 naming --plaintext, nothing saved; logs say plaintext"
    )
    func plaintextRefused() throws {
        let d = try DaemonProcess(["--plaintext", "refuse"])
        let src = photo(d.root, "p.png", size: 5_000)
        let r = try send(d, [src], ["--plaintext"])
        #expect(r.status == 76)
        #expect(r.stderr.contains("ERROR tls-required") && r.stderr.contains("send without --plaintext"), "\(r.stderr)")
        #expect(d.visible.isEmpty)
        #expect(eventually { d.log.contains("(plaintext): ended with ERROR tls-required") })
        // The same sender over TLS is served, and the log names its device ID.
        let id = try senderID(config: d.senderConfig)
        #expect(try send(d, [src]).status == 0)
        #expect(eventually { d.log.contains("(device \(id)): saved \"p.png\"") })
    }

    @Test(
        "first contact is remembered; a receiver with another key at that address is stopped before HELLO (77) until --forget"
    )
    func trustOnFirstUse() throws {
        let config = makeTemporaryDirectory("ptk-sender")
        defer { removeTree(config) }
        let first = try DaemonProcess()
        let port = first.port
        let firstID = try receiverID(first)
        let src = photo(first.root, "t.png", size: 40_000)
        let peer = "127.0.0.1:\(port)"
        func sendTo(_ extra: [String] = []) throws -> Finished {
            try run("ptk-send", ["--timeout", "10"] + extra + [peer, src], environment: ["XDG_CONFIG_HOME": config])
        }
        let r1 = try sendTo()
        #expect(r1.status == 0, "\(r1.stderr)")
        #expect(
            r1.stderr
                == "ptk-send: first contact with \(peer): its device ID is \(firstID); remembered in \(config)/ptk/known-receivers\n"
        )
        let r2 = try sendTo()
        #expect(r2.status == 0 && r2.stderr.isEmpty, "\(r2.stderr)")
        #expect(first.stop() == 0)

        let impostor = try DaemonProcess(["--port", String(port)])
        let impostorID = try receiverID(impostor)
        let r3 = try sendTo()
        #expect(r3.status == 77)
        #expect(
            r3.stderr.contains("device ID is \(impostorID), but \(config)/ptk/known-receivers (first seen "),
            "\(r3.stderr)")
        #expect(
            r3.stderr.contains("says \(firstID)") && r3.stderr.contains("ptk-send --forget \(peer)")
                && r3.stderr.contains("nothing was sent"))
        #expect(impostor.visible.isEmpty)
        #expect(eventually { impostor.log.contains("ended after") })
        #expect(!impostor.log.contains("saved \""))

        let forgot = try run("ptk-send", ["--forget", peer], environment: ["XDG_CONFIG_HOME": config])
        #expect(forgot.status == 0)
        #expect(try run("ptk-send", ["--forget", peer], environment: ["XDG_CONFIG_HOME": config]).status == 1)
        let r4 = try sendTo()
        #expect(r4.status == 0, "\(r4.stderr)")
        #expect(r4.stderr.contains("first contact with \(peer): its device ID is \(impostorID)"))
        #expect(readFile(impostor.dir + "/t.png") == readFile(src))
    }

    @Test(
        "--expect-id: another ID stops the call before anything is sent (77); the right one, in any case and with or without dashes, sends"
    )
    func expectID() throws {
        let d = try DaemonProcess()
        let id = try receiverID(d)
        let src = photo(d.root, "e.png", size: 7_000)
        let wrong = DeviceID(sha256: Array(repeating: 0xAB, count: 32))
        let r = try send(d, [src], ["--expect-id", wrong.compact])
        #expect(r.status == 77)
        #expect(r.stderr.contains("but --expect-id says \(wrong)"), "\(r.stderr)")
        #expect(d.visible.isEmpty)
        let ok = try send(d, [src], ["--expect-id", id.description.lowercased()])
        #expect(ok.status == 0, "\(ok.stderr)")
        #expect(try send(d, [src], ["--expect-id", "ABC"]).status == 64)
        #expect(try send(d, [src], ["--expect-id", id.compact, "--plaintext"]).status == 64)
    }

    @Test(
        "a relay with its own identity in the middle: a pinned sender stops before HELLO, and a trusting receiver refuses the relay's ID"
    )
    func manInTheMiddle() throws {
        let d = try DaemonProcess(["--senders", "trusted"])
        let relay = try TLSRelay(to: d.port)
        let src = photo(d.root, "m.png", size: 150_000)
        let sender = try senderID(config: d.senderConfig)
        #expect(try ptk(d, ["trust", "allow", sender.compact, "laptop"]).status == 0)
        // Directly: trusted, saved.
        #expect(try send(d, [src]).status == 0)
        // Through the relay with the receiver pinned: the relay's ID is not the receiver's.
        let viaRelay = "127.0.0.1:\(relay.port)"
        let pinned = try run(
            "ptk-send", ["--timeout", "10", "--expect-id", try receiverID(d).compact, viaRelay, src],
            environment: ["XDG_CONFIG_HOME": d.senderConfig])
        #expect(pinned.status == 77, "\(pinned.stderr)")
        #expect(pinned.stderr.contains("device ID is \(relay.identity.deviceID)"))
        // Unpinned (a first contact the sender cannot check): the receiver sees the relay, not the sender.
        let unpinned = try run(
            "ptk-send", ["--timeout", "10", viaRelay, src], environment: ["XDG_CONFIG_HOME": d.senderConfig])
        #expect(unpinned.status == 76)
        #expect(
            unpinned.stderr.contains("ERROR unauthorized: device \(relay.identity.deviceID) is not trusted"),
            "\(unpinned.stderr)")
        #expect(d.visible == ["m.png"])
        let pending = try ptk(d, ["trust", "pending"])
        #expect(pending.stdout.hasPrefix("ptk        \(relay.identity.deviceID)  "), "\(pending.stdout)")
    }

    @Test(
        "--senders trusted: refused and recorded as pending (counted); `ptk trust allow PREFIX` admits without a restart; remove refuses again; a hand edit is seen"
    )
    func trustedSenders() throws {
        let d = try DaemonProcess(["--senders", "trusted"])
        let src = photo(d.root, "s.png", size: 9_000)
        let sender = try senderID(config: d.senderConfig)
        for _ in 0..<2 {
            let r = try send(d, [src], ["--name", "alice laptop"])
            #expect(r.status == 76)
            #expect(
                r.stderr.contains("ERROR unauthorized: device \(sender) is not trusted by this receiver"), "\(r.stderr)"
            )
            #expect(r.stderr.contains("ptk-send --id"))
        }
        // ptkd writes the pending list at most once a second: the second attempt within a second.
        #expect(eventually(5) { (try? ptk(d, ["trust", "pending"]).stdout.contains("2 attempt(s)")) == true })
        let pending = try ptk(d, ["trust", "pending"])
        #expect(pending.stdout.hasPrefix("ptk        \(sender)  \"alice laptop\" from 127.0.0.1:"), "\(pending.stdout)")
        #expect(d.visible.isEmpty)

        let allowed = try ptk(d, ["trust", "allow", String(sender.compact.prefix(5))])
        #expect(allowed.stdout == "trusted \(sender) as \"alice laptop\"\n", "\(allowed.stderr)")
        #expect(try ptk(d, ["trust", "list"]).stdout == "ptk        \(sender)  alice laptop\n")
        #expect(try ptk(d, ["trust", "pending"]).stdout.isEmpty)
        let r = try send(d, [src])
        #expect(r.status == 0, "\(r.stderr)")

        #expect(try ptk(d, ["trust", "remove", sender.description]).status == 0)
        #expect(try send(d, [src]).status == 76)
        #expect(eventually(5) { (try? ptk(d, ["trust", "pending"]).stdout.isEmpty) == false })
        #expect(try ptk(d, ["trust", "deny", String(sender.compact.prefix(4))]).status == 0)
        #expect(try ptk(d, ["trust", "deny", String(sender.compact.prefix(4))]).status == 1)
        writeFile(
            d.stateDir + "/trusted-senders", Array("# by hand\n\(sender.compact.lowercased()) edited by hand\n".utf8))
        #expect(try send(d, [src]).status == 0)
        #expect(
            try ptk(d, ["trust", "allow", "QQQQ"]).stderr.contains("no pending or trusted device ID starts with 'QQQQ'")
        )
        #expect(try ptk(d, ["trust", "frobnicate"]).status == 64)
    }

    @Test(
        "no certificate, or one that is not Ed25519: served under `anyone`, refused under `trusted`",
        arguments: ["none", "rsa"])
    func foreignCertificates(kind: String) throws {
        let identity: Identity? = kind == "none" ? nil : try Identity.ephemeral(.rsa)
        let open = try DaemonProcess()
        let c1 = try tlsConnection(open.port, identity: identity)
        try c1.send(.hello(Hello(name: "foreign", window: 1)))
        guard case .welcome? = try c1.receive() else {
            Issue.record("no WELCOME under anyone")
            return
        }
        c1.close()
        let closed = try DaemonProcess(["--senders", "trusted"])
        let c2 = try tlsConnection(closed.port, identity: identity)
        try c2.send(.hello(Hello(name: "foreign", window: 1)))
        guard case .error(let p)? = try c2.receive() else {
            Issue.record("no ERROR under trusted")
            return
        }
        #expect(p.code == "unauthorized" && p.message.contains("no Ed25519 device identity"))
        c2.close()
        #expect(try ptk(closed, ["trust", "pending"]).stdout.isEmpty)
        #expect(eventually { closed.log.contains(kind == "none" ? "(TLS, no device ID)" : "(TLS, no device ID)") })
    }

    @Test("hostile TLS: garbage after 0x16 and a TLS 1.2-only client are refused and logged; ptkd keeps serving")
    func hostileHandshakes() throws {
        let d = try DaemonProcess()
        let peer = try RawPeer(port: d.port)
        try peer.sendRaw([0x16, 0x03, 0x01, 0x00, 0x10] + Array(repeating: 0xEE, count: 16))
        #expect((try? peer.receive()) == nil)
        peer.close()
        #expect(eventually { d.log.contains("TLS handshake failed") })
        #expect(throws: (any Error).self) {
            _ = try tlsConnection(d.port, identity: try Identity.ephemeral(), tls12Only: true)
        }
        #expect(eventually { d.log.components(separatedBy: "TLS handshake failed").count == 3 })
        #expect(try stillServes(d))
    }

    @Test("a ClientHello then silence holds its slot (limits count it) until the handshake deadline frees it")
    func clientHelloThenSilence() throws {
        // Capture a real ClientHello: a client's first flight to a listener that never answers.
        let listener = try Socket.listen(on: SocketAddress(numericHost: "127.0.0.1", port: 0)!)
        defer { listener.close() }
        let address = try Socket.localAddress(listener)
        let sock = try Socket.connect(to: address, deadline: .now + .seconds(5))
        _ = try? TLSStream(
            socket: sock, peer: address, context: try TLSContext(server: false, identity: try Identity.ephemeral()),
            deadline: .now + .seconds(0.3))
        _ = try poll([(listener, .readable)], until: .now + .seconds(5))
        let (conn, _) = try #require(try Socket.accept(listener))
        var hello = [UInt8](repeating: 0, count: 4096)
        let n = try hello.withUnsafeMutableBytes { try Socket.receive(conn, into: $0) } ?? 0
        conn.close()
        #expect(n > 100 && hello[0] == 0x16)

        let d = try DaemonProcess(["--max-sessions-per-address", "1", "--handshake-timeout", "1.5"])
        let stuck = try RawPeer(port: d.port)
        try stuck.sendRaw(Array(hello[..<n]))
        usleep(200_000)
        // The slot is taken: a plaintext HELLO from the same address is refused busy.
        let other = try RawPeer(port: d.port)
        try other.send(.hello(Hello(name: "x", window: 1)))
        #expect(try other.expectError()?.code == "busy")
        other.close()
        #expect(eventually(5) { d.log.contains("TLS handshake not finished within the handshake timeout") })
        #expect(try stillServes(d))
        stuck.close()
    }
}
