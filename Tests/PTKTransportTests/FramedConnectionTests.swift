import PTKProtocol
import PTKSystem
import PTKTestTags
import PTKTransport
import Testing

/// A stream that records each write and serves scripted reads.
private final class RecordingStream: ByteStream, @unchecked Sendable {
    var writes: [[UInt8]] = []
    var writesBeforeEachRead: [Int] = []
    var incoming: [UInt8] = []
    var closed = false

    func read(into buffer: UnsafeMutableRawBufferPointer, deadline: Instant, interruptible: Bool) throws(TransportError)
        -> Int
    {
        writesBeforeEachRead.append(writes.count)
        let n = min(buffer.count, incoming.count)
        buffer.copyBytes(from: incoming[..<n])
        incoming.removeFirst(n)
        return n
    }
    func write(_ bytes: UnsafeRawBufferPointer, deadline: Instant) throws(TransportError) {
        writes.append(Array(bytes))
    }
    func shutdownWrite() {}
    func close() { closed = true }
}

private func encoded(_ frames: [Frame]) -> [UInt8] {
    var out: [UInt8] = []
    for f in frames { FrameEncoder.encode(f, into: &out) }
    return out
}

@Suite("FramedConnection", .tags(.unit))
struct FramedConnectionTests {
    @Test("enqueued frames leave in one write when the connection next waits for the peer")
    func coalescesBeforeWaiting() throws {
        let s = RecordingStream()
        let c = FramedConnection(stream: s, timeout: .seconds(5))
        let saved = Frame.saved(Saved(name: "a.png", size: 9, sha256: String(repeating: "a", count: 64)))
        c.enqueue(saved)
        c.enqueue(.accept(Accept(offset: 0)))
        #expect(s.writes.isEmpty)
        s.incoming = encoded([.ack])
        #expect(try c.receive() == .ack)
        #expect(s.writes == [encoded([saved, .accept(Accept(offset: 0))])])
        #expect(s.writesBeforeEachRead == [1])
    }

    @Test("a frame already buffered is returned without flushing; the flush comes before the next read")
    func bufferedFramesFirst() throws {
        let s = RecordingStream()
        let c = FramedConnection(stream: s, timeout: .seconds(5))
        s.incoming = encoded([.chunk([1, 2, 3]), .chunk([4])])
        #expect(try c.receive() == .chunk([1, 2, 3]))
        c.enqueue(.ack)
        #expect(try c.receive() == .chunk([4]))
        #expect(s.writes.isEmpty)
        c.enqueue(.ack)
        #expect(try c.receive() == nil)
        #expect(s.writes == [encoded([.ack, .ack])])
    }

    @Test("send, writeRaw and close write what is enqueued first, in order")
    func orderKept() throws {
        let s = RecordingStream()
        let c = FramedConnection(stream: s, timeout: .seconds(5))
        c.enqueue(.done)
        try c.writeRaw([0x10, 0, 0, 0, 1, 7])
        c.enqueue(.bye)
        try c.send(.done)
        c.enqueue(.bye)
        c.close()
        #expect(s.writes == [encoded([.done]), [0x10, 0, 0, 0, 1, 7], encoded([.bye, .done]), encoded([.bye])])
        #expect(s.closed)
    }
}

/// A stream that takes `accept` bytes, then fails every write as a peer that stopped reading
/// does (the part of a write it took stays taken).
private final class StallingStream: ByteStream, @unchecked Sendable {
    var taken: [UInt8] = []
    var accept: Int
    var writeCalls = 0
    init(accept: Int) { self.accept = accept }
    func read(into buffer: UnsafeMutableRawBufferPointer, deadline: Instant, interruptible: Bool) throws(TransportError)
        -> Int
    { throw .timedOut }
    func write(_ bytes: UnsafeRawBufferPointer, deadline: Instant) throws(TransportError) {
        writeCalls += 1
        let n = min(accept, bytes.count)
        taken += bytes[..<n]
        accept -= n
        if n < bytes.count { throw .timedOut }
    }
    func shutdownWrite() {}
    func close() {}
}

@Suite("FramedConnection: a write that fails partway (issue 54)", .tags(.unit))
struct FramedConnectionWriteFailureTests {
    static let saved = Frame.saved(Saved(name: "a.png", size: 9, sha256: String(repeating: "a", count: 64)))

    @Test(
        "after a write that timed out partway nothing more is written (no frame after the torn one), and every later write and read fails: the session ends rather than going on without the answers"
    )
    func noTornFrames() throws {
        let s = StallingStream(accept: 20)
        let c = FramedConnection(stream: s, timeout: .seconds(5))
        c.enqueue(Self.saved)
        c.enqueue(.ack)
        #expect(throws: TransportError.timedOut) { try c.flush() }
        #expect(s.taken.count == 20)
        // The peer reads again; the session's next answers must not follow the torn frame.
        s.accept = 1 << 20
        c.enqueue(.saved(Saved(name: "b.png", size: 9, sha256: String(repeating: "b", count: 64))))
        #expect(throws: TransportError.timedOut) { try c.flush() }
        #expect(throws: TransportError.timedOut) { try c.send(.ack) }
        #expect(throws: TransportError.timedOut) { try c.writeRaw(encoded([.ack])) }
        let payload = [UInt8](repeating: 1, count: 10)
        #expect(throws: TransportError.timedOut) {
            try payload.withUnsafeBytes { b in Result { () throws(TransportError) in try c.sendChunk(payload: b) } }
                .get()
        }
        #expect(throws: TransportError.timedOut) { try c.receive() }
        c.close()
        #expect(s.taken.count == 20 && s.writeCalls == 1, "\(s.taken.count) bytes in \(s.writeCalls) writes")
    }

    @Test("a flush that wrote everything leaves nothing queued: the next flush writes only what came after")
    func wholeWrites() throws {
        let s = StallingStream(accept: 1 << 20)
        let c = FramedConnection(stream: s, timeout: .seconds(5))
        c.enqueue(Self.saved)
        try c.flush()
        c.enqueue(.ack)
        try c.flush()
        #expect(s.taken == encoded([Self.saved, .ack]))
    }
}
