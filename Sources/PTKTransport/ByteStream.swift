import PTKProtocol
import PTKSystem

/// Why a read or write on a connection did not complete.
public enum TransportError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Nothing arrived (or nothing could be sent) before the deadline.
    case timedOut
    /// The interrupt descriptor became readable while waiting (the daemon is shutting down).
    case interrupted
    /// The peer closed or reset the connection.
    case peerClosed
    /// The peer's bytes broke the framing rules.
    case violation(ProtocolViolation)
    /// Any other failed system call.
    case system(SystemError)
    /// The TLS layer failed: a handshake that did not complete, a record that did not decrypt.
    case tls(String)
    /// The peer answered a TLS handshake in something that is not TLS (plaintext ptk, HTTP).
    case notTLS(String)

    /// Lower-case words for log lines and the sender's messages.
    public var description: String {
        switch self {
        case .timedOut: return "timed out"
        case .interrupted: return "interrupted"
        case .peerClosed: return "connection closed by peer"
        case .violation(let v): return v.description
        case .system(let e): return e.description
        case .tls(let m): return "TLS: \(m)"
        case .notTLS(let m): return m
        }
    }
}

/// A reliable, ordered byte stream: a TCP socket (`TCPStream`) or TLS over one (PTKTLS). The protocol code
/// reads and writes through this and nothing else.
public protocol ByteStream: AnyObject, Sendable {
    /// Reads up to `buffer.count` bytes, waiting until `deadline`; 0 means the peer closed.
    /// An `interruptible` read also ends with `.interrupted` when the stream's interrupt (the
    /// daemon's shutdown) fires; a read that drains a closing connection is not.
    func read(into buffer: UnsafeMutableRawBufferPointer, deadline: Instant, interruptible: Bool) throws(TransportError)
        -> Int
    /// Reads into `buffer` and, once it is full, on into `overflow`, waiting until `deadline`
    /// (interruptibly); 0 means the peer closed. A stream that cannot scatter (TLS) may stop
    /// at the end of `buffer`.
    func read(into buffer: UnsafeMutableRawBufferPointer, overflow: UnsafeMutableRawBufferPointer, deadline: Instant)
        throws(TransportError) -> Int
    /// Writes all of `bytes` by `deadline`.
    func write(_ bytes: UnsafeRawBufferPointer, deadline: Instant) throws(TransportError)
    /// Writes `first` and then `second` by `deadline`, as if they were one buffer, without
    /// joining them in memory first (writev). Returns false, having written nothing, when the
    /// stream cannot gather (TLS would make the first a record of its own).
    func write(gathering first: UnsafeRawBufferPointer, _ second: UnsafeRawBufferPointer, deadline: Instant)
        throws(TransportError) -> Bool
    /// Stops sending; the peer reads end of stream.
    func shutdownWrite()
    /// Closes the stream. Called exactly once.
    func close()
    /// The descriptor that becomes readable when the peer's bytes arrive (the socket), for a
    /// session that waits for its peer or for something else at once; nil when there is none.
    var readinessDescriptor: FileDescriptor? { get }
    /// Bytes of the peer already taken off the socket and not yet read (TLS records): reading
    /// would not wait for the descriptor.
    var hasPendingInput: Bool { get }
}

extension ByteStream {
    /// None: a session reads without waiting for anything else (scripted streams in tests).
    public var readinessDescriptor: FileDescriptor? { nil }
    /// None: a stream that keeps no bytes of its own (TCP) has nothing pending.
    public var hasPendingInput: Bool { false }

    /// An interruptible read.
    public func read(into buffer: UnsafeMutableRawBufferPointer, deadline: Instant) throws(TransportError) -> Int {
        try read(into: buffer, deadline: deadline, interruptible: true)
    }

    /// Cannot gather.
    public func write(gathering first: UnsafeRawBufferPointer, _ second: UnsafeRawBufferPointer, deadline: Instant)
        throws(TransportError) -> Bool
    {
        false
    }

    /// Reads into `buffer` only (or into `overflow` when `buffer` is empty).
    public func read(
        into buffer: UnsafeMutableRawBufferPointer, overflow: UnsafeMutableRawBufferPointer, deadline: Instant
    ) throws(TransportError) -> Int {
        try read(into: buffer.isEmpty ? overflow : buffer, deadline: deadline, interruptible: true)
    }
}

/// A `ByteStream` over a connected non-blocking TCP socket, which it owns.
public final class TCPStream: ByteStream, @unchecked Sendable {
    // One session thread uses a stream at a time; `closed` is only touched by that owner.
    /// The connected socket; the stream owns it and closes it in `close()`.
    public let socket: FileDescriptor
    /// The peer's address, for logs.
    public let peer: SocketAddress?
    private let interrupt: FileDescriptor?
    private var closed = false

    /// Wraps `socket`. While a read waits, `interrupt` becoming readable ends it with `.interrupted`.
    public init(socket: FileDescriptor, peer: SocketAddress?, interrupt: FileDescriptor? = nil) {
        self.socket = socket
        self.peer = peer
        self.interrupt = interrupt
    }

    /// A non-blocking receive, polling in between; a reset counts as `.peerClosed`.
    public func read(into buffer: UnsafeMutableRawBufferPointer, deadline: Instant, interruptible: Bool)
        throws(TransportError) -> Int
    {
        try whenReadable(deadline: deadline, interruptible: interruptible) { () throws(SystemError) in
            try Socket.receive(socket, into: buffer)
        }
    }

    /// Scatters into both buffers with one receive, polling in between; always interruptible.
    public func read(
        into buffer: UnsafeMutableRawBufferPointer, overflow: UnsafeMutableRawBufferPointer, deadline: Instant
    ) throws(TransportError) -> Int {
        try whenReadable(deadline: deadline, interruptible: true) { () throws(SystemError) in
            try Socket.receive(socket, into: buffer, then: overflow)
        }
    }

    /// Runs `attempt` (a non-blocking receive: nil when nothing waits) until it returns a count,
    /// polling in between.
    private func whenReadable(deadline: Instant, interruptible: Bool, _ attempt: () throws(SystemError) -> Int?)
        throws(TransportError) -> Int
    {
        while true {
            do {
                if let n = try attempt() { return n }
            } catch {
                if error.code == .connectionReset { throw .peerClosed }
                throw .system(error)
            }
            var fds: [(FileDescriptor, PollEvents)] = [(socket, .readable)]
            if interruptible, let interrupt { fds.append((interrupt, .readable)) }
            let revents: [PollEvents]
            do { revents = try poll(fds, until: deadline) } catch { throw .system(error) }
            if revents.count > 1 && !revents[1].isEmpty { throw .interrupted }
            if revents[0].isEmpty { throw .timedOut }
        }
    }

    /// Sends in pieces as the socket's buffer allows; a broken pipe or reset counts as `.peerClosed`.
    public func write(_ bytes: UnsafeRawBufferPointer, deadline: Instant) throws(TransportError) {
        var done = 0
        while done < bytes.count {
            let rest = UnsafeRawBufferPointer(rebasing: bytes[done...])
            done += try whenWritable(deadline: deadline) { () throws(SystemError) in try Socket.send(socket, rest) }
        }
    }

    /// Always gathers (one send of both buffers), so it returns true or throws.
    public func write(gathering first: UnsafeRawBufferPointer, _ second: UnsafeRawBufferPointer, deadline: Instant)
        throws(TransportError) -> Bool
    {
        var done = 0
        while done < first.count {
            let rest = UnsafeRawBufferPointer(rebasing: first[done...])
            done += try whenWritable(deadline: deadline) { () throws(SystemError) in
                try Socket.send(socket, rest, second)
            }
        }
        try write(UnsafeRawBufferPointer(rebasing: second[(done - first.count)...]), deadline: deadline)
        return true
    }

    /// Runs `attempt` (a non-blocking send: 0 when the socket's buffer is full) and, when it
    /// sent nothing, waits until the socket is writable; returns what `attempt` returned.
    private func whenWritable(deadline: Instant, _ attempt: () throws(SystemError) -> Int) throws(TransportError) -> Int
    {
        let n: Int
        do { n = try attempt() } catch {
            if error.code == .brokenPipe || error.code == .connectionReset { throw .peerClosed }
            throw .system(error)
        }
        if n == 0 {
            let revents: [PollEvents]
            do { revents = try poll([(socket, .writable)], until: deadline) } catch { throw .system(error) }
            if revents[0].isEmpty { throw .timedOut }
        }
        return n
    }

    /// Half-closes the socket: the peer reads end of stream, and this side can still read its answer.
    public func shutdownWrite() { Socket.shutdownWrite(socket) }

    /// The socket: a TCP stream buffers nothing above it, so its readiness is the stream's.
    public var readinessDescriptor: FileDescriptor? { socket }

    /// Closes the socket; a second call is a programming error and traps.
    public func close() {
        precondition(!closed, "TCPStream closed twice")
        closed = true
        socket.close()
    }

    deinit {
        assert(closed, "TCPStream dropped without close()")
    }
}
