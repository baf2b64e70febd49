import PTKSystem
import PTKTransport

/// A door whose connections another object serves (an HTTPS endpoint): its name for
/// `STATE/listening`, its listener, and how one accepted connection is served in the shared
/// slots (`Admission`). The LocalSend and web endpoints make theirs (`door(admission:)`).
package final class ServedDoor: Door, @unchecked Sendable {
    // Fixed at init.
    package let name: String
    package let listener: Listener
    private let serveConnection: (FileDescriptor, FileDescriptor, SocketAddress) -> Void

    package init(
        name: String, listener: Listener,
        serve: @escaping (_ socket: FileDescriptor, _ displacer: FileDescriptor, _ peer: SocketAddress) -> Void
    ) {
        self.name = name
        self.listener = listener
        serveConnection = serve
    }

    package func serve(_ socket: FileDescriptor, displacer: FileDescriptor, peer: SocketAddress) {
        serveConnection(socket, displacer, peer)
    }
}
