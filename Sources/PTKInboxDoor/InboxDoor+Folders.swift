import PTKInbox
import PTKLog
import PTKSystem
import PTKVocabulary

/// A file below a watched folder: the folder's index and the path below its root.
///
/// Equal only byte for byte: Swift's `String` equality is canonical equivalence, under which
/// "café" precomposed (NFC) and "cafe" + U+0301 (NFD) are one key, while the folder holds two
/// files (issue 56: NFC and NFD spellings from two sources never overwrite each other).
struct FileKey: Hashable {
    /// Which of `InboxDoor.folders`.
    var folder: Int
    /// The components joined with "/".
    var path: String

    static func == (a: FileKey, b: FileKey) -> Bool { a.folder == b.folder && a.path.utf8.elementsEqual(b.path.utf8) }

    func hash(into hasher: inout Hasher) {
        hasher.combine(folder)
        for byte in path.utf8 { hasher.combine(byte) }
    }
}

/// What the door knows of one file it has seen.
struct TrackedFile {
    /// Where it is in its settling.
    var tracker: SettleTracker
    /// When to look at it again; nil: only when an event or a scan shows a change.
    var due: Instant?
    /// Its status when last seen, to skip a file that has not changed at a scan.
    var status: FileStatus?
    /// Seen by the scan in progress (files not seen are forgotten when it ends).
    var seen = true
    /// Its last check found it cut short: each scan observes it (to say so once, after long).
    var incomplete = false
    /// Something was said of it in the log (it is not a regular file, it cannot be removed):
    /// not said again while it is tracked.
    var warned = false
    /// Its photo is in a flush round (`InboxDoor.flying`): not looked at until it has landed,
    /// nor forgotten by a scan.
    var inFlight = false
}

extension InboxDoor {
    /// Opens each configured folder not open yet, and opens afresh one whose path now leads to
    /// another folder (deleted and made again, a mount): run at start and before every scan,
    /// so a folder that appears later is watched from the next scan on. One that cannot be
    /// used is said in the log once (per reason) and left out; the others are served.
    func refreshFolders() {
        // The store has checked it at start; nil only if it is gone since.
        let photos = try? openDirectory(settings.directory, followingLinks: true)
        defer { photos?.close() }
        if let photos, let st = try? photos.status() { photosID = FileID(st) }  // as photos: nil only if gone
        for folder in settings.folders {
            if let i = folders.firstIndex(where: { $0.folder == folder }) {
                // Gone: its scans list nothing until it returns. The same: nothing to do.
                guard let now = try? fileStatus(folder.path), now.isDirectory, FileID(now) != folders[i].id else {
                    continue
                }
                guard let fresh = opened(folder, photos, besides: i) else { continue }
                retire(i)
                folders[i] = fresh
                Log.info("\(folder.kind.rawValue) \(folder.path): the folder there is another one now; watching it")
            } else if let fresh = opened(folder, photos, besides: nil) {
                folders.append(fresh)
                Log.info(
                    "\(folder.kind.rawValue) \(folder.path): watched; photos from it are \(folder.kind == .inbox ? "copied, the sources left as they are" : "moved in once saved")"
                )
                // (A file system whose kind cannot be read is taken as local: the scans run anyway.)
                if let kind = try? fresh.root.fileSystemKind(), kind != .local {
                    Log.info(
                        "\(folder.kind.rawValue) \(folder.path): on \(kind.name), where inotify gives no event for what other machines write; such files are found by the scans, every \(formatSeconds(settings.scanInterval))"
                    )
                }
            }
        }
    }

    /// `folder` opened and checked against the photos directory and the folders watched
    /// already (but `besides`, the one it replaces): nil, said once, when it cannot be used.
    func opened(_ folder: InboxFolder, _ photos: FileDescriptor?, besides: Int?) -> WatchedFolder? {
        let label = "\(folder.kind.rawValue) \(folder.path)"
        func refuse(_ why: String) -> WatchedFolder? {
            sayOnce("folder \(folder.path): \(why)", "\(label): \(why); not watched")
            return nil
        }
        let root: FileDescriptor
        do { root = try openDirectory(folder.path, followingLinks: true) } catch {
            return refuse("cannot be read (\(error))")
        }
        let status: FileStatus
        do { status = try root.status() } catch {
            root.close()
            return refuse("cannot be read (\(error))")
        }
        let others = folders.indices.filter { $0 != besides }.map { folders[$0] }
        var why: String? = photos.flatMap { Self.overlap(root, status, $0) }
        if why == nil, let other = others.first(where: { $0.id == FileID(status) }) {
            why = "the same folder as \(other.folder.path), watched already"
        }
        // Nested folders would take one file twice, each by its own rules: the first watched keeps it.
        if why == nil {
            let above = Self.ancestors(of: root)
            if let outer = others.first(where: { above.contains($0.id) }) {
                why = "it is inside \(outer.folder.path), watched already"
            } else if let inner = others.first(where: { Self.ancestors(of: $0.root).contains(FileID(status)) }) {
                why = "it holds \(inner.folder.path), watched already"
            }
        }
        if let why {
            root.close()
            return refuse(why)
        }
        return WatchedFolder(folder, root: root, status: status, links: settings.links)
    }

    /// Forgets folder `index`'s watches and files (it is being replaced).
    func retire(_ index: Int) {
        for wd in folders[index].watches.keys { inotify?.removeWatch(wd) }
        files = files.filter { $0.key.folder != index }
    }

    /// Why a folder (open as `root`, of `status`) cannot be watched beside the photos directory
    /// (open as `photos`): it is that directory, or inside it, or holds it (ptk would take its
    /// own photos in again). Judged by device and inode up the ".." chains, never by path.
    static func overlap(_ root: FileDescriptor, _ status: FileStatus, _ photos: FileDescriptor) -> String? {
        // The store has it open: only a vanished directory fails, and then there is nothing to overlap.
        guard let photosStatus = try? photos.status() else { return nil }
        let photosID = FileID(photosStatus)
        if FileID(status) == photosID { return "it is the received-photos directory" }
        if ancestors(of: root).contains(photosID) { return "it is inside the received-photos directory" }
        if ancestors(of: photos).contains(FileID(status)) { return "it holds the received-photos directory" }
        return nil
    }

    /// The folders above `folder`, up to "/", by device and inode (at most 256 levels).
    static func ancestors(of folder: FileDescriptor) -> [FileID] {
        var out: [FileID] = []
        // Out of descriptors: no chain, so no overlap is found (ptkd is starting: it has plenty).
        guard var current = try? folder.duplicate() else { return out }
        defer { current.close() }
        // A status that cannot be read only makes the "/" check one step later.
        var previous = (try? current.status()).map(FileID.init)
        for _ in 0..<256 {
            guard let parent = try? FileDescriptor.open("..", relativeTo: current, flags: [.readOnly, .directory]),
                let st = try? parent.status()
            else { break }  // a folder above that cannot be read ends the chain
            current.close()
            current = parent
            let id = FileID(st)
            if id == previous { break }  // "/" is its own parent
            out.append(id)
            previous = id
        }
        return out
    }
}

/// A file's identity while it is open or known to be there: device and inode.
struct FileID: Hashable {
    var device: UInt64
    var inode: UInt64
    init(_ status: FileStatus) {
        device = status.device
        inode = status.inode
    }
}
