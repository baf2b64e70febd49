import PTKSystem
import PTKTransport

/// What `loopbackPair` could not do.
public struct LoopbackPairError: Error, CustomStringConvertible {
    /// Why.
    public var description: String
}

/// A connected pair of TCP streams on 127.0.0.1 (a session's `readinessDescriptor` is then a
/// socket, as in ptkd): `server` with `interrupt` as its shutdown pipe, `client` connected to it.
public func loopbackPair(interrupt: FileDescriptor? = nil) throws -> (server: TCPStream, client: TCPStream) {
    let listener = try Socket.listen(on: SocketAddress(numericHost: "127.0.0.1", port: 0)!)
    defer { listener.close() }
    let address = SocketAddress(numericHost: "127.0.0.1", port: try Socket.localAddress(listener).port)!
    let client = try Socket.connect(to: address, deadline: .now + .seconds(5))
    var accepted: (FileDescriptor, SocketAddress)? = nil
    let deadline = Instant.now + .seconds(5)
    while accepted == nil && Instant.now < deadline {
        _ = try poll([(listener, .readable)], until: deadline)
        accepted = try Socket.accept(listener)
    }
    guard let (server, peer) = accepted else {
        client.close()
        throw LoopbackPairError(description: "no connection accepted on \(address) within 5 s")
    }
    return (TCPStream(socket: server, peer: peer, interrupt: interrupt), TCPStream(socket: client, peer: address))
}
