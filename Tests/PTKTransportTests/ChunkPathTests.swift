import PTKProtocol
import PTKSystem
import PTKTestTags
import PTKTransport
import Testing

/// A stream that serves `incoming` in reads of scripted sizes and, like a TCP socket, scatters
/// a read past the end of the first buffer into the overflow (readv). It records every
/// overflow it was offered.
private final class ScatteringStream: ByteStream, @unchecked Sendable {
    var incoming: [UInt8]
    var sizes: [Int]
    var next = 0
    var overflowsOffered: [Int] = []
    var scatter: Bool
    init(_ incoming: [UInt8], sizes: [Int], scatter: Bool = true) {
        self.incoming = incoming
        self.sizes = sizes
        self.scatter = scatter
    }
    private func take(_ limit: Int) -> [UInt8] {
        let size = sizes[next % sizes.count]
        next += 1
        let n = min(limit, size, incoming.count)
        defer { incoming.removeFirst(n) }
        return Array(incoming[..<n])
    }
    func read(into buffer: UnsafeMutableRawBufferPointer, deadline: Instant, interruptible: Bool) throws(TransportError)
        -> Int
    {
        let bytes = take(buffer.count)
        buffer.copyBytes(from: bytes)
        return bytes.count
    }
    func read(into buffer: UnsafeMutableRawBufferPointer, overflow: UnsafeMutableRawBufferPointer, deadline: Instant)
        throws(TransportError) -> Int
    {
        overflowsOffered.append(overflow.count)
        guard scatter else { return try read(into: buffer, deadline: deadline, interruptible: true) }
        let bytes = take(buffer.count + overflow.count)
        let first = min(bytes.count, buffer.count)
        buffer.copyBytes(from: bytes[..<first])
        overflow.copyBytes(from: bytes[first...])
        return bytes.count
    }
    func write(_ bytes: UnsafeRawBufferPointer, deadline: Instant) throws(TransportError) {}
    func shutdownWrite() {}
    func close() {}
}

private func encoded(_ frames: [Frame]) -> [UInt8] {
    var out: [UInt8] = []
    for f in frames { FrameEncoder.encode(f, into: &out) }
    return out
}

/// A mix of full, short and one-byte chunks with the small frames between them.
private func sampleFrames() -> [Frame] {
    var g = SystemRandomNumberGenerator()
    func chunk(_ n: Int) -> Frame { .chunk((0..<n).map { _ in UInt8.random(in: 0...255, using: &g) }) }
    return [
        .offer(Offer(name: "a.png", size: 9, sha256: String(repeating: "a", count: 64))),
        chunk(ProtocolLimits.chunkSize), chunk(ProtocolLimits.chunkSize), chunk(1), .done,
        chunk(77_777), .ack, chunk(ProtocolLimits.chunkSize), chunk(5), chunk(6), .bye,
    ]
}

@Suite("CHUNK payloads read in place", .tags(.unit))
struct ChunkPathTests {
    @Test(
        "frames arrive intact whatever the read sizes, scattered or not, and the same as the pure decoder gives",
        arguments: [[1], [5], [7, 3], [4096], [65_536, 13], [200_000], [102_405, 1, 102_410]], [true, false])
    func intactWhateverTheReads(sizes: [Int], scatter: Bool) throws {
        let frames = sampleFrames()
        let bytes = encoded(frames)
        var decoder = FrameDecoder()
        decoder.append(contentsOf: bytes)
        var pure: [Frame] = []
        while let f = try decoder.next() { pure.append(f) }
        #expect(pure == frames)

        let s = ScatteringStream(bytes, sizes: sizes, scatter: scatter)
        let c = FramedConnection(stream: s, timeout: .seconds(5))
        var got: [Frame] = []
        while let f = try c.receive() { got.append(f) }
        #expect(got == frames)
        // A read that goes past a payload takes no more than the next frame's header, so the
        // next payload is not read into a buffer it must then be copied out of.
        #expect(s.overflowsOffered.allSatisfy { $0 == ProtocolLimits.headerSize })
        #expect(!s.overflowsOffered.isEmpty)
    }

    @Test(
        "a peer that closes in the middle of a payload is peerClosed; a header over the limit is refused before any payload"
    )
    func truncatedAndOversized() throws {
        var bytes = encoded([.chunk([UInt8](repeating: 3, count: 50_000))])
        bytes.removeLast(10)
        let c = FramedConnection(stream: ScatteringStream(bytes, sizes: [4096]), timeout: .seconds(5))
        #expect(throws: TransportError.peerClosed) { try c.receive() }

        var big: [UInt8] = []
        FrameEncoder.appendHeader(type: .chunk, length: ProtocolLimits.chunkSize + 1, to: &big)
        let s = ScatteringStream(big + [UInt8](repeating: 0, count: 100), sizes: [4096])
        let d = FramedConnection(stream: s, timeout: .seconds(5))
        #expect(throws: TransportError.self) { try d.receive() }
        #expect(s.overflowsOffered.isEmpty)
    }

    @Test("takeHeader moves the buffered part of a payload and leaves what follows")
    func takeHeader() throws {
        var d = FrameDecoder()
        d.append(contentsOf: encoded([.chunk([1, 2, 3, 4, 5, 6])]).prefix(8))
        #expect(try d.peekHeader()?.length == 6)
        var out = [UInt8](repeating: 0, count: 6)
        let moved = out.withUnsafeMutableBytes { d.takeHeader(movingPayloadInto: $0) }
        #expect(moved == 3)
        #expect(out[..<3] == [1, 2, 3])
        #expect(d.bufferedCount == 0)

        var e = FrameDecoder()
        e.append(contentsOf: encoded([.chunk([9, 8]), .ack]))
        var two = [UInt8](repeating: 0, count: 2)
        #expect(two.withUnsafeMutableBytes { e.takeHeader(movingPayloadInto: $0) } == 2)
        #expect(two == [9, 8])
        #expect(try e.next() == .ack)
    }
}

@Suite("Gathered writes and scattered reads on a socket", .tags(.unit))
struct ScatterGatherSocketTests {
    @Test("sendChunk gathers header and payload; the receiver reads the frames back over TCP")
    func overLoopback() throws {
        let shutdown = try WakePipe()
        let any = SocketAddress(numericHost: "127.0.0.1", port: 0)!
        let listener = try Socket.listen(on: any)
        defer { listener.close() }
        let address = SocketAddress(numericHost: "127.0.0.1", port: try Socket.localAddress(listener).port)!
        let clientFD = try Socket.connect(to: address, deadline: .now + .seconds(5))
        var accepted: (FileDescriptor, SocketAddress)? = nil
        while accepted == nil {
            _ = try poll([(listener, .readable)], until: .now + .seconds(5))
            accepted = try Socket.accept(listener)
        }
        let server = TCPStream(socket: try #require(accepted).0, peer: nil, interrupt: shutdown.readEnd)
        let client = TCPStream(socket: clientFD, peer: address)
        let sending = FramedConnection(stream: client, timeout: .seconds(5))
        let receiving = FramedConnection(stream: server, timeout: .seconds(5))
        let payloads = (0..<40).map { i in
            [UInt8](repeating: UInt8(i), count: i % 3 == 0 ? ProtocolLimits.chunkSize : 1000 + i)
        }
        let done = Semaphore()
        try startThread(name: "test") {
            for p in payloads {
                sending.enqueue(.ack)  // an enqueued frame goes first, in order
                try? p.withUnsafeBytes { try sending.sendChunk(payload: $0) }
            }
            try? sending.send(.bye)
            done.signal()
        }
        var got: [Frame] = []
        while got.last != .bye, let f = try receiving.receive() { got.append(f) }
        done.wait()
        var expected: [Frame] = []
        for p in payloads { expected += [.ack, .chunk(p)] }
        #expect(got == expected + [.bye])
        sending.close()
        receiving.close()
    }
}
