import PTKProtocol
import PTKSystem

/// Frames over a `ByteStream`: decodes incoming frames incrementally with a bounded buffer, and
/// writes whole frames. Reading never buffers more than one read beyond the current frame.
///
/// `send` writes at once. `enqueue` holds small frames back until the connection is about to wait
/// for the peer (`receive` with nothing complete buffered), a large write, or `flush`/close: the
/// answers to frames that arrived together (ACKs for several chunks, SAVED then the next ACCEPT,
/// DONE then the next OFFER) leave in one write, which costs the peer one wake-up instead of
/// several. Nothing is held while this side waits, so neither side can wait for the other.
/// A write that fails (timed out, reset) ends writing for good: the peer may hold part of a
/// frame, and nothing written after it would be read as frames.
public final class FramedConnection: @unchecked Sendable {
    // Used by one thread at a time (the session that owns it).
    /// The stream it frames; the connection owns it and closes it in `close()` or `closeGracefully`.
    public let stream: ByteStream
    /// How long a read or write may wait for progress.
    public var timeout: Duration
    private var decoder: FrameDecoder
    private let readBuffer: UnsafeMutableRawBufferPointer
    /// Frames enqueued and not yet written.
    private var pending: [UInt8] = []
    /// The error of a write that failed. The peer may have taken part of a frame; nothing is
    /// written after it (a torn frame followed by more would be garbage to the peer), and every
    /// later write fails with it, so the session ends rather than dropping queued answers.
    public private(set) var writeFailure: TransportError?

    /// `timeout` bounds each wait for progress; `chunkSize` is the largest CHUNK payload the decoder accepts.
    public init(stream: ByteStream, timeout: Duration, chunkSize: Int = ProtocolLimits.chunkSize) {
        self.stream = stream
        self.timeout = timeout
        self.decoder = FrameDecoder(chunkSize: chunkSize)
        self.readBuffer = .allocate(byteCount: 128 * 1024, alignment: 16)
    }

    deinit { readBuffer.deallocate() }

    /// True when bytes of a frame not yet complete are buffered.
    public var hasBufferedBytes: Bool { decoder.bufferedCount > 0 }

    /// True when `receive` would find bytes without waiting for the socket: buffered here, or
    /// in the stream (TLS records).
    public var hasInputWaiting: Bool { decoder.bufferedCount > 0 || stream.hasPendingInput }

    /// Returns a frame already buffered, without reading.
    public func bufferedFrame() throws(TransportError) -> Frame? {
        do { return try decoder.next() } catch { throw .violation(error) }
    }

    /// The next frame; nil when the peer closed the stream cleanly between frames. The whole
    /// frame must arrive within `timeout` (or by `deadline` when that is sooner), so
    /// a peer trickling bytes cannot hold a session longer than one that sends nothing.
    public func receive(deadline: Instant? = nil) throws(TransportError) -> Frame? {
        var limit = Instant.now + timeout
        if let deadline, deadline < limit { limit = deadline }
        while true {
            if let frame = try bufferedFrame() { return frame }
            if let header = try peekHeader(), header.type == .chunk, header.length > 0 {
                return .chunk(try receivePayload(length: header.length, deadline: limit))
            }
            try flush()
            let n = try stream.read(into: readBuffer, deadline: limit)
            if n == 0 {
                if decoder.bufferedCount == 0 { return nil }
                throw .peerClosed
            }
            decoder.append(UnsafeRawBufferPointer(rebasing: readBuffer[..<n]))
        }
    }

    private func peekHeader() throws(TransportError) -> (type: FrameType, length: Int)? {
        do { return try decoder.peekHeader() } catch { throw .violation(error) }
    }

    /// The payload of the CHUNK whose header is buffered, read into an array of its own (from
    /// `ByteArrayPool.chunks`, to which the checks give it back): what
    /// is buffered is moved in, the rest is read straight into it, and the next frame's header
    /// (at most) behind it in the same call. The array then goes, uncopied, to the file write
    /// and the checks.
    private func receivePayload(length: Int, deadline: Instant) throws(TransportError) -> [UInt8] {
        var failure: TransportError?
        let header = UnsafeMutableRawBufferPointer(rebasing: readBuffer[..<ProtocolLimits.headerSize])
        var payload = ByteArrayPool.chunks.take(count: length)
        payload.withUnsafeMutableBytes { destination in
            var got = decoder.takeHeader(movingPayloadInto: destination)
            while got < length {
                do throws(TransportError) {
                    try flush()
                    let n = try stream.read(
                        into: UnsafeMutableRawBufferPointer(rebasing: destination[got...]), overflow: header,
                        deadline: deadline)
                    if n == 0 { throw .peerClosed }
                    let inPayload = min(n, length - got)
                    got += inPayload
                    if n > inPayload { decoder.append(UnsafeRawBufferPointer(rebasing: header[..<(n - inPayload)])) }
                } catch {
                    failure = error
                    break
                }
            }
        }
        if let failure { throw failure }
        return payload
    }

    /// Sends one frame now (after any enqueued ones).
    public func send(_ frame: Frame) throws(TransportError) {
        enqueue(frame)
        try flush()
    }

    /// Queues one frame to go out with the next write (see the type's comment).
    public func enqueue(_ frame: Frame) {
        FrameEncoder.encode(frame, into: &pending)
    }

    /// Writes the enqueued frames.
    public func flush() throws(TransportError) {
        try flush(deadline: .now + timeout)
    }

    /// Writes what is enqueued; only once it is all written is it dropped. A write that fails
    /// ends writing on this connection (`writeFailure`).
    private func flush(deadline: Instant) throws(TransportError) {
        if let writeFailure { throw writeFailure }
        guard !pending.isEmpty else { return }
        try write { () throws(TransportError) in
            try pending.withUnsafeBytes { b in
                Result { () throws(TransportError) in try stream.write(b, deadline: deadline) }
            }.get()
        }
        pending.removeAll(keepingCapacity: true)
    }

    /// Runs a write on the stream, remembering its failure for good.
    private func write<R>(_ body: () throws(TransportError) -> R) throws(TransportError) -> R {
        if let writeFailure { throw writeFailure }
        do { return try body() } catch {
            writeFailure = error
            throw error
        }
    }

    /// Sends bytes that already hold whole frames, after the enqueued ones.
    public func writeRaw(_ bytes: [UInt8]) throws(TransportError) {
        try bytes.withUnsafeBytes { b in Result { () throws(TransportError) in try writeRaw(b) } }.get()
    }

    /// Sends bytes that already hold whole frames, after the enqueued ones.
    public func writeRaw(_ bytes: UnsafeRawBufferPointer) throws(TransportError) {
        try flush()
        try write { () throws(TransportError) in try stream.write(bytes, deadline: .now + timeout) }
    }

    /// Sends a CHUNK frame of `payload` (after the enqueued frames) without copying it next to
    /// its header: the enqueued frames and the header gathered with it in one call where the
    /// stream can (plaintext TCP), else as two writes (TLS: frames and header make a small
    /// record of their own, which costs less than moving 100 KiB beside them).
    public func sendChunk(payload: UnsafeRawBufferPointer) throws(TransportError) {
        if let writeFailure { throw writeFailure }
        FrameEncoder.appendHeader(type: .chunk, length: payload.count, to: &pending)
        let gathered = try write { () throws(TransportError) in
            try pending.withUnsafeBytes { p in
                Result { () throws(TransportError) in try stream.write(gathering: p, payload, deadline: .now + timeout)
                }
            }.get()
        }
        if gathered {
            pending.removeAll(keepingCapacity: true)
        } else {
            try flush()
            try write { () throws(TransportError) in try stream.write(payload, deadline: .now + timeout) }
        }
    }

    /// Closes after an ERROR so that it reaches the peer: stop writing, read and drop what the
    /// peer still sends until it closes or `linger` passes, then close. Closing at once
    /// with unread bytes would send a TCP reset, and the peer could lose the ERROR. The drain
    /// is not interrupted by the daemon's shutdown: that is when it matters most.
    public func closeGracefully(linger: Duration = .seconds(2)) {
        // Closing: answers the peer will not take are dropped with the connection.
        try? flush(deadline: .now + min(timeout, linger))
        stream.shutdownWrite()
        let deadline = Instant.now + linger
        while Instant.now < deadline {
            // Draining before close: a read error means there is nothing more to drain.
            guard let n = try? stream.read(into: readBuffer, deadline: deadline, interruptible: false), n > 0 else {
                break
            }
        }
        stream.close()
    }

    /// Writes what is enqueued (if the peer still reads it within a second) and closes.
    public func close() {
        // Closing: answers the peer will not take are dropped with the connection.
        try? flush(deadline: .now + min(timeout, .seconds(1)))
        stream.close()
    }
}
