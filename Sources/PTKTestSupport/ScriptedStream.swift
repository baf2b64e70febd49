import PTKProtocol
import PTKSystem
import PTKTransport

/// A `ByteStream` whose other end is a script, so a sender or a receiver session can be tested
/// without a network (as swift-nio tests a handler with EmbeddedChannel). Every frame the code
/// under test writes is decoded, recorded and handed to `respond`, which answers by `feed`ing
/// frames (or raw bytes) for it to read, or by choosing what an empty stream does.
public final class ScriptedStream: ByteStream, @unchecked Sendable {
    // Used by the one thread that runs the code under test (respond runs inside its writes).

    /// What a read finds once everything fed has been read.
    public enum WhenEmpty: Sendable {
        /// The peer says nothing: the read times out (at once; no test waits for a deadline).
        case silent
        /// The peer resets the connection.
        case reset
        /// The peer closes cleanly: end of stream.
        case close
    }

    /// Every frame written so far, in order.
    public private(set) var written: [Frame] = []
    /// Bytes a read returns at most: 1 feeds the code under test one byte at a time.
    public var readSize: Int
    /// What a read finds once everything fed is read; silent by default.
    public var whenEmpty: WhenEmpty = .silent
    /// Reads done.
    public private(set) var reads = 0
    /// The code under test closed the stream; later writes throw `.peerClosed`.
    public private(set) var isClosed = false
    /// The code under test shut down its sending side; later writes throw `.peerClosed`.
    public private(set) var wroteEnd = false

    private var inbound: [UInt8] = []
    /// Bytes of `inbound` already read (dropped in bulk, so one-byte reads stay cheap).
    private var consumed = 0
    private var decoder = FrameDecoder(chunkSize: ProtocolLimits.chunkSize)
    private let respond: (Frame, ScriptedStream) -> Void

    /// `respond` is called with each frame the code under test writes, on its thread, inside the write.
    public init(readSize: Int = 1 << 20, respond: @escaping (Frame, ScriptedStream) -> Void) {
        self.readSize = readSize
        self.respond = respond
    }

    /// Queues `frame` for the code under test to read.
    public func feed(_ frame: Frame) { FrameEncoder.encode(frame, into: &inbound) }
    /// Queues raw bytes for the code under test to read.
    public func feed(raw bytes: [UInt8]) { inbound += bytes }

    /// Up to `readSize` bytes of what was fed; once all is read, as `whenEmpty` says (silent times out at once).
    public func read(into buffer: UnsafeMutableRawBufferPointer, deadline: Instant, interruptible: Bool)
        throws(TransportError) -> Int
    {
        reads += 1
        if consumed == inbound.count {
            switch whenEmpty {
            case .silent: throw .timedOut
            case .reset: throw .peerClosed
            case .close: return 0
            }
        }
        let n = min(buffer.count, readSize, inbound.count - consumed)
        buffer.copyBytes(from: inbound[consumed..<(consumed + n)])
        consumed += n
        if consumed == inbound.count || consumed >= 1 << 20 {
            inbound.removeFirst(consumed)
            consumed = 0
        }
        return n
    }

    /// Decodes whole frames, records each and calls `respond`; a malformed frame traps, as a test failure.
    public func write(_ bytes: UnsafeRawBufferPointer, deadline: Instant) throws(TransportError) {
        if wroteEnd || isClosed { throw .peerClosed }
        decoder.append(bytes)
        while true {
            let frame: Frame?
            do { frame = try decoder.next() } catch {
                preconditionFailure("the code under test wrote a malformed frame: \(error)")
            }
            guard let frame else { break }
            written.append(frame)
            respond(frame, self)
        }
    }

    /// Records it in `wroteEnd`.
    public func shutdownWrite() { wroteEnd = true }
    /// Records it in `isClosed`; a second close is not caught here.
    public func close() { isClosed = true }
}
