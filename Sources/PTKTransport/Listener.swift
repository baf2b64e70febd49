import PTKSystem

/// Listening TCP sockets on one port, for one or more local addresses.
public final class Listener: @unchecked Sendable {
    // The descriptors are set at init and closed once by close(), from the accept thread.
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
                if skipUnavailable && (error.code == .familyNotSupported || error.code == .addressNotAvailable) { continue }
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
