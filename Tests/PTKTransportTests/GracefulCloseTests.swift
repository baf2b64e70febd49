import PTKProtocol
import PTKSystem
import PTKTestSupport
import PTKTestTags
import PTKTransport
import Testing

/// What a sender that is still streaming chunks when the ERROR comes sees.
private final class StreamingPeer: @unchecked Sendable {
    // Written by the peer's thread before `done` is signalled, read after.
    var writeFailure: TransportError?
    var received: [UInt8] = []
    var endedCleanly = false
    let done = Semaphore()

    /// Writes `bursts` chunks of 64 KiB 10 ms apart (as a sender with a full window does), then
    /// reads everything until the receiver closes.
    func run(_ stream: TCPStream, bursts: Int) {
        let chunk = [UInt8](repeating: 7, count: 64 * 1024)
        for _ in 0..<bursts where writeFailure == nil {
            do throws(TransportError) {
                try chunk.withUnsafeBytes { b in
                    Result { () throws(TransportError) in try stream.write(b, deadline: .now + .seconds(5)) }
                }.get()
            } catch {
                writeFailure = error
            }
            sleep(for: .milliseconds(10))
        }
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = buffer.withUnsafeMutableBytes { b in try? stream.read(into: b, deadline: .now + .seconds(5)) }
            guard let n else { break }
            if n == 0 {
                endedCleanly = true
                break
            }
            received += buffer[..<n]
        }
        stream.close()
        done.signal()
    }
}

@Suite("Closing after an ERROR", .tags(.unit))
struct GracefulCloseTests {
    @Test(
        "during shutdown the drain still lets the ERROR reach a sender that is writing: no reset, ERROR then end of stream"
    )
    func drainSurvivesShutdown() throws {
        let shutdown = try WakePipe()
        shutdown.signal()  // the daemon is shutting down: the interrupt is readable throughout
        let (server, client) = try loopbackPair(interrupt: shutdown.readEnd)
        let peer = StreamingPeer()
        try startThread(name: "test") { peer.run(client, bursts: 20) }
        sleep(for: .milliseconds(30))  // the peer is streaming
        let connection = FramedConnection(stream: server, timeout: .seconds(5))
        let error = Frame.error(Problem(.shuttingDown, "ptkd is stopping"))
        connection.enqueue(error)
        let start = Instant.now
        connection.closeGracefully(linger: .seconds(3))
        peer.done.wait()
        var expected: [UInt8] = []
        FrameEncoder.encode(error, into: &expected)
        #expect(peer.writeFailure == nil, "the receiver reset the connection while the sender was still writing")
        #expect(peer.received == expected)
        #expect(peer.endedCleanly)
        // It lingered while the peer wrote, and ended when the peer closed, well before the linger.
        #expect(Instant.now - start >= .seconds(0.1))
        #expect(Instant.now - start < .seconds(2.5))
    }

    @Test("a read for a session is interrupted by the shutdown; a drain is not")
    func interruptibleOnlyWhenAsked() throws {
        let shutdown = try WakePipe()
        shutdown.signal()
        let (server, client) = try loopbackPair(interrupt: shutdown.readEnd)
        defer {
            server.close()
            client.close()
        }
        var buffer = [UInt8](repeating: 0, count: 16)
        try buffer.withUnsafeMutableBytes { b in
            #expect(throws: TransportError.interrupted) { try server.read(into: b, deadline: .now + .seconds(1)) }
            let start = Instant.now
            #expect(throws: TransportError.timedOut) {
                try server.read(into: b, deadline: .now + .seconds(0.2), interruptible: false)
            }
            #expect(Instant.now - start >= .seconds(0.15))
        }
    }
}
