import PTKInbox
import PTKLog
import PTKStore
import PTKSystem

/// A configured folder opened: its root's descriptor, and the inotify watches on it and the
/// folders below it (watch descriptor → components below the root).
final class WatchedFolder {
    /// As configured.
    let folder: InboxFolder
    /// Its name as a sender, for files right in its root (`InboxSource.inboxName(root:)`).
    let name: String
    /// The root, open (O_DIRECTORY, never through a link at its last component).
    let root: FileDescriptor
    /// The root's device, to tell mount points below it.
    let device: UInt64
    /// The root's device and inode.
    let id: FileID
    /// How its files become photos (a hard link, a reflink, a copy), each way said once in the log.
    let ways: SourceWays
    /// The folders watched, by watch descriptor.
    var watches: [Int32: [String]] = [:]
    /// The watch descriptors, by the folders' components joined with "/", as bytes (two
    /// folders spelled NFC and NFD are two folders, which `String` keys would make one).
    var watchOf: [[UInt8]: Int32] = [:]

    /// The folder opened; an inbox's sources are linked where they can be when `links` (drop
    /// folders' are never: they are removed once taken).
    init(_ folder: InboxFolder, root: FileDescriptor, status: FileStatus, links: Bool = false) {
        self.folder = folder
        self.name = InboxSource.inboxName(root: folder.path)
        self.root = root
        self.device = status.device
        self.id = FileID(status)
        let label = "\(folder.kind.rawValue) \(folder.path)"
        self.ways = SourceWays(links: links && folder.kind == .inbox) { Log.info("\(label): \($0)") }
    }

    deinit { root.close() }

    /// The folder `components` below the root, opened one component at a time without
    /// following a link (the root itself, not to be closed, for none); nil when it cannot be.
    func openFolder(_ components: [String]) -> FileDescriptor? {
        var current = root
        for component in components {
            let next: FileDescriptor
            do { next = try current.openSubdirectory(component) } catch {
                if current.rawValue != root.rawValue { current.close() }
                return nil
            }
            if current.rawValue != root.rawValue { current.close() }
            current = next
        }
        return current
    }

    /// The components of a file `name` in the folder watched by `watch`, or nil for a watch
    /// not (or no longer) this folder's.
    func components(watch: Int32, name: String) -> [String]? {
        watches[watch].map { $0 + [name] }
    }
}
