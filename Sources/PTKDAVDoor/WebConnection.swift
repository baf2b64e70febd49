import PTKLibrary
import PTKSystem

/// One connection's facts on the web port, and its own handle on the library (SQLite
/// connections are not shared between threads). Both doors on that port answer with it (a
/// browser's pages, a WebDAV client's requests): it is here, below the web door, which serves
/// this one on its port.
package final class WebConnection {
    package let id: Int
    package let peer: SocketAddress
    package let directory: String
    package let libraryOn: Bool
    private var opened: PhotoLibrary?

    package init(id: Int, peer: SocketAddress, directory: String, library: Bool) {
        self.id = id
        self.peer = peer
        self.directory = directory
        libraryOn = library
    }

    package var address: String { peer.host }

    /// The library, opened on first use.
    package func library() throws(LibraryError) -> PhotoLibrary {
        if let opened { return opened }
        guard libraryOn else {
            throw LibraryError(.refused, "the photo library is off on this receiver (library = off): uploads only")
        }
        let library = try PhotoLibrary(directory: directory, create: false)
        opened = library
        return library
    }
}
