import PTKSystem
import PTKTransport

/// A way into the receiver (protocol v1, LocalSend, the web interface with its WebDAV door):
/// the sockets of its own port, and what it does with a connection accepted there. ptkd has one
/// accept loop over all its doors (`AcceptLoop`), and stops them together (`ServingDoors`);
/// adding a door is making one and listing it among the daemon's doors.
public protocol Door: AnyObject, Sendable {
    /// Its name in `STATE/listening` (`ptk web-link` looks up "web"): "v1", "localsend", "web".
    var name: String { get }
    /// Its sockets, bound before ptkd says it listens (a test injects its own).
    var listener: Listener { get }
    /// Takes one connection just accepted on `listener`: `displacer` is a second descriptor of
    /// its socket, kept with its connection slot to end it with should it be displaced
    /// (`Admission`), and the door's to close. Returns at once: the connection is served or
    /// refused on a thread of its own.
    func serve(_ socket: FileDescriptor, displacer: FileDescriptor, peer: SocketAddress)
    /// Accepts no more connections (ptkd is stopping): its listener is closed. Connections
    /// open end on their own, told by the shutdown signal.
    func stop()
}

extension Door {
    /// Closes the door's listener.
    public func stop() { listener.close() }
}
