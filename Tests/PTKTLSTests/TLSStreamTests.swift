import Foundation
import PTKProtocol
import PTKSystem
import PTKTestSupport
import PTKTestTags
import PTKTransport
import Testing

@testable import PTKTLS

/// A connected pair of loopback TCP sockets: (client, server).
func socketPair() throws -> (FileDescriptor, FileDescriptor) {
    let listener = try Socket.listen(on: SocketAddress(numericHost: "127.0.0.1", port: 0)!)
    defer { listener.close() }
    let address = try Socket.localAddress(listener)
    let client = try Socket.connect(to: address, deadline: .now + .seconds(5))
    _ = try poll([(listener, .readable)], until: .now + .seconds(5))
    guard let (server, _) = try Socket.accept(listener) else { throw IdentityError(description: "no connection") }
    return (client, server)
}

/// Runs a server handshake on a thread while the client handshakes here; both results.
func handshake(server: TLSContext, client: TLSContext) throws -> (
    client: Result<TLSStream, TransportError>, server: Result<TLSStream, TransportError>
) {
    let (c, s) = try socketPair()
    let done = Semaphore()
    nonisolated(unsafe) var serverResult: Result<TLSStream, TransportError>? = nil
    try startThread(name: "test") {
        serverResult = Result { () throws(TransportError) in
            try TLSStream(socket: s, peer: nil, context: server, deadline: .now + .seconds(5))
        }
        done.signal()
    }
    let clientResult = Result { () throws(TransportError) in
        try TLSStream(socket: c, peer: nil, context: client, deadline: .now + .seconds(5))
    }
    if case .failure = clientResult {}
    done.wait()
    return (clientResult, serverResult!)
}

@Suite("TLS streams", .tags(.unit))
struct TLSStreamTests {
    @Test("both sides see each other's device ID, ALPN ptk/1 is selected, and bytes go both ways intact")
    func roundTrip() throws {
        let receiver = try Identity.ephemeral()
        let sender = try Identity.ephemeral()
        let (c, s) = try handshake(
            server: TLSContext(server: true, identity: receiver), client: TLSContext(server: false, identity: sender))
        let client = try c.get()
        let server = try s.get()
        defer {
            client.close()
            server.close()
        }
        #expect(client.peerIdentity == .ed25519(receiver.deviceID))
        #expect(server.peerIdentity == .ed25519(sender.deviceID))
        #expect(client.alpn == "ptk/1" && server.alpn == "ptk/1")
        let payload = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        // The writer must be done with `client` before the deferred close frees it: the reader
        // sees the end of the stream while the writer may still be inside shutdownWrite.
        let written = Semaphore()
        defer { written.wait() }
        try startThread(name: "test") {
            try? payload.withUnsafeBytes { try client.write($0, deadline: .now + .seconds(5)) }
            client.shutdownWrite()
            written.signal()
        }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = try buffer.withUnsafeMutableBytes { try server.read(into: $0, deadline: .now + .seconds(5)) }
            if n == 0 { break }
            received += buffer[..<n]
        }
        #expect(received == payload)
    }

    @Test(
        "a sender without a certificate, or with an RSA or EC one, completes the handshake and is told apart",
        arguments: [
            "none", "rsa", "ec",
        ])
    func otherSenders(kind: String) throws {
        let receiver = try Identity.ephemeral()
        let sender: Identity? = kind == "none" ? nil : try Identity.ephemeral(kind == "rsa" ? .rsa : .ecP256)
        let (c, s) = try handshake(
            server: TLSContext(server: true, identity: receiver), client: TLSContext(server: false, identity: sender))
        let client = try c.get()
        let server = try s.get()
        defer {
            client.close()
            server.close()
        }
        #expect(server.peerIdentity.deviceID == nil)
        if kind == "none" {
            #expect(server.peerIdentity == .none)
        } else {
            guard case .otherKey(_, let type) = server.peerIdentity else {
                Issue.record("\(server.peerIdentity)")
                return
            }
            #expect(type == (kind == "rsa" ? "RSA" : "EC"))
        }
    }

    @Test("a TLS 1.2-only peer is refused on both sides")
    func tls12Refused() throws {
        let a = try Identity.ephemeral()
        let b = try Identity.ephemeral()
        let (c, s) = try handshake(
            server: TLSContext(server: true, identity: a),
            client: TLSContext(server: false, identity: b, tls12Only: true))
        guard case .failure = s else {
            Issue.record("server accepted TLS 1.2")
            return
        }
        if case .success(let stream) = c {
            stream.close()
            Issue.record("client finished a TLS 1.2 handshake")
        }
    }

    @Test("a server that answers with something else than TLS is named as such, however fast it answers")
    func notTLS() throws {
        let (c, s) = try socketPair()
        try s.writeAll(Array("SSH-2.0-OpenSSH_9.2\r\n".utf8))
        defer { s.close() }
        let context = try TLSContext(server: false, identity: nil)
        let result = Result { () throws(TransportError) in
            try TLSStream(socket: c, peer: nil, context: context, deadline: .now + .seconds(5))
        }
        // A case of its own, so that callers tell it from other TLS failures without reading the text.
        guard case .failure(.notTLS(let message)) = result else {
            Issue.record("\(String(describing: result))")
            return
        }
        #expect(message.contains("does not speak TLS"))
    }

    @Test("a server that answers a plaintext ptk frame is not TLS either")
    func plaintextAnswer() throws {
        let (c, s) = try socketPair()
        try s.writeAll([0x01, 0x00, 0x00, 0x00, 0x02, 0x7B, 0x7D])
        defer { s.close() }
        let context = try TLSContext(server: false, identity: nil)
        let result = Result { () throws(TransportError) in
            try TLSStream(socket: c, peer: nil, context: context, deadline: .now + .seconds(5))
        }
        guard case .failure(.notTLS(let message)) = result else {
            Issue.record("\(String(describing: result))")
            return
        }
        #expect(message.hasPrefix("the receiver does not speak TLS (it answered "), "\(message)")
    }

    @Test("garbage after 0x16, and silence after it, end the server's handshake (error, deadline)")
    func garbageAndSilence() throws {
        let context = try TLSContext(server: true, identity: try Identity.ephemeral())
        let (c1, s1) = try socketPair()
        try c1.writeAll([0x16, 0x03, 0x01, 0x00, 0x05, 1, 2, 3, 4, 5] + Array(repeating: 0xEE, count: 64))
        let garbage = Result { () throws(TransportError) in
            try TLSStream(socket: s1, peer: nil, context: context, deadline: .now + .seconds(5))
        }
        c1.close()
        guard case .failure(let e1) = garbage else {
            Issue.record("garbage was accepted")
            return
        }
        #expect(e1 != .timedOut)
        let (c2, s2) = try socketPair()
        try c2.writeAll([0x16])
        let start = Instant.now
        let silent = Result { () throws(TransportError) in
            try TLSStream(socket: s2, peer: nil, context: context, deadline: .now + .seconds(0.3))
        }
        c2.close()
        #expect(silent.error == .timedOut)
        #expect(Instant.now - start < .seconds(3))
    }
}

extension Result {
    var error: Failure? {
        if case .failure(let e) = self { return e }
        return nil
    }
}
