import PTKSystem

/// Listening TCP sockets on one port, for one or more local addresses.
public final class Listener: @unchecked Sendable {
    // The descriptors are set at init and closed once by close(), from the accept thread.
    /// The listening sockets, one per address bound; empty after `close()`. The accept loop polls them.
    public private(set) var sockets: [FileDescriptor]
    /// The addresses really bound (the port filled in when 0 was asked for).
    public let addresses: [SocketAddress]

    /// Binds every address in `addresses` on `port`. With port 0 the first socket picks a free
    /// port and the rest use the same one. Addresses that cannot be bound because their
    /// family is unavailable are skipped when `skipUnavailable` is set (the default all-address
    /// set on a host without IPv6).
    public init(addresses: [SocketAddress], skipUnavailable: Bool) throws(SystemError) {
        var socks: [FileDescriptor] = []
        var bound: [SocketAddress] = []
        var port: UInt16? = nil
        for var address in addresses {
            if let port { address.port = port } else if address.port != 0 { port = address.port }
            do {
                let s = try Socket.listen(on: address)
                socks.append(s)
                let local = try Socket.localAddress(s)
                bound.append(local)
                port = local.port
            } catch {
                if skipUnavailable && (error.code == .familyNotSupported || error.code == .addressNotAvailable) {
                    continue
                }
                socks.forEach { $0.close() }
                throw error
            }
        }
        sockets = socks
        self.addresses = bound
    }

    /// The port all sockets listen on.
    public var port: UInt16 { addresses.first?.port ?? 0 }

    /// Stops listening.
    public func close() {
        sockets.forEach { $0.close() }
        sockets = []
    }
}

/// What a new connection's first byte is, looked at without taking it (protocol §6 tells TLS,
/// 0x16, from plaintext by it; the LocalSend port tells HTTPS from plain HTTP).
public enum FirstByte: Equatable, Sendable {
    case byte(UInt8)
    /// The peer closed without sending anything.
    case closed
    /// `interrupt` became readable first (the daemon is shutting down).
    case interrupted
    /// Nothing came by the deadline.
    case timedOut
    case failed(SystemError)
}

/// Waits, until `deadline`, for the first byte of the connection on `socket` and peeks at it.
public func peekFirstByte(_ socket: FileDescriptor, interrupt: FileDescriptor, deadline: Instant) -> FirstByte {
    var first: UInt8 = 0
    while true {
        do {
            // nil: nothing yet (the socket is non-blocking).
            let n = try withUnsafeMutableBytes(of: &first) { b throws(SystemError) in
                try Socket.receive(socket, into: b, peek: true)
            }
            if n == 0 { return .closed }
            if n == 1 { return .byte(first) }
            let revents = try poll([(socket, .readable), (interrupt, .readable)], until: deadline)
            if !revents[1].isEmpty { return .interrupted }
            if revents[0].isEmpty { return .timedOut }
        } catch {
            return .failed(error)
        }
    }
}
