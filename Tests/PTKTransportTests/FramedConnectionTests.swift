import PTKProtocol
import PTKSystem
import PTKTransport
import Testing

/// A stream that records each write and serves scripted reads.
private final class RecordingStream: ByteStream, @unchecked Sendable {
    var writes: [[UInt8]] = []
    var writesBeforeEachRead: [Int] = []
    var incoming: [UInt8] = []
    var closed = false

    func read(into buffer: UnsafeMutableRawBufferPointer, deadline: Instant, interruptible: Bool) throws(TransportError) -> Int {
        writesBeforeEachRead.append(writes.count)
        let n = min(buffer.count, incoming.count)
        buffer.copyBytes(from: incoming[..<n])
        incoming.removeFirst(n)
        return n
    }
    func write(_ bytes: UnsafeRawBufferPointer, deadline: Instant) throws(TransportError) { writes.append(Array(bytes)) }
    func shutdownWrite() {}
    func close() { closed = true }
}

private func encoded(_ frames: [Frame]) -> [UInt8] {
    var out: [UInt8] = []
    for f in frames { FrameEncoder.encode(f, into: &out) }
    return out
}

@Suite("FramedConnection")
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
