import PTKDAV
import PTKDigest
import PTKLibrary
import PTKSystem
import PTKTrust
import PTKVocabulary

/// What a WebDAV path names for one app password.
enum DAVResource: Equatable {
    /// A folder: `real` in the received-photos directory (`full`), or one the client made
    /// (`upload`: its view has only its own).
    case collection(real: Bool, modified: Int64)
    /// A kept photo (`kept`: its path in the directory), with its SHA-256 when known; `mark`:
    /// the file a name was checked to name (what is opened to answer must be that file).
    case photo(kept: String, size: Int64, modified: Int64, sha256: String?, mark: DAVFileMark? = nil)
    /// A file an operating system wrote beside photos (`DAVSidecars`).
    case sidecar(size: Int64, modified: Int64)
    /// A name held empty (a 0-byte PUT, a LOCK before the PUT).
    case placeholder(modified: Int64)
    /// A photo an `upload` password sent through the Nextcloud-compatible door (a `sticky`
    /// name) whose file the receiver has moved or removed since: listed as it was sent, never
    /// read (its path may hold another file now).
    case remembered(size: Int64, modified: Int64, sha256: String)
    case missing

    var exists: Bool { self != .missing }
    var isCollection: Bool { if case .collection = self { true } else { false } }
    var isPlaceholder: Bool { if case .placeholder = self { true } else { false } }
    var isSidecar: Bool { if case .sidecar = self { true } else { false } }
}

/// One app password's view of the door: `full` sees the directory (hidden names never), with
/// the names it PUT in place of the kept ones where they differ; `upload` sees only what it
/// sent and the folders it made.
struct DAVView {
    let endpoint: DAVEndpoint
    let account: AppPassword
    /// The requesting connection's library handle (nil: the library is off).
    let library: PhotoLibrary?
    /// Where the request was sent: its hrefs' prefix, and whether the compatible dialect is spoken.
    let mount: DAVMount

    var full: Bool { account.access == .full }

    /// The lock table this view's resources are in: `full` passwords share the directory's,
    /// each `upload` password has its own (its view is its own), so an upload password's
    /// locks never stand in anyone else's way.
    var lockSpace: String { full ? "full" : "upload " + account.id }

    func resolve(_ path: DAVPath) -> DAVResource {
        if path.isRoot {
            // unreadable: shown as of 1970
            return .collection(real: full, modified: full ? ((try? endpoint.photos.status().modified) ?? 0) : 0)
        }
        let key = path.string
        if DAVName.kind(path.name ?? "") == .sidecar {
            if let e = endpoint.sidecars.entry(account.id, key) { return .sidecar(size: e.size, modified: e.modified) }
            return placeholder(path)
        }
        let (named, folder, held) = endpoint.names.with(account.id) { a in
            (a.files[path], a.folders.contains(path), a.placeholders[path])
        }
        if let named {
            // A file of the directory at the very path wins over a name for another (two PUTs
            // of one name at once, a photo that came through another door later).
            if full, !Array(named.kept.utf8).elementsEqual(Array(key.utf8)), case let real = disk(path), real.exists {
                return real
            }
            // The photo the name was given for: the file at its path holds the bytes it was
            // given for. Gone (moved, removed, replaced): the name is gone too.
            if let mark = check(path, named) {
                return .photo(
                    kept: named.kept, size: named.size, modified: named.modified, sha256: named.sha256, mark: mark)
            }
            if named.sticky && !full && !named.sha256.isEmpty {
                return .remembered(size: named.size, modified: named.modified, sha256: named.sha256)
            }
            if let held { return .placeholder(modified: held) }
            return full ? disk(path) : .missing
        }
        if let held { return .placeholder(modified: held) }
        guard full else { return folder ? .collection(real: false, modified: 0) : .missing }
        return disk(path)
    }

    /// A name's kept file, if it still holds the bytes the name was given for (nil: it does
    /// not, and the name is forgotten). An inode number names nothing for sure: ext4 and XFS
    /// give a removed photo's number to the next file made, which may take the photo's path.
    /// So the file is hashed (its SHA-256 against the name's), unless its inode, device and
    /// ctime are those it had when it was last hashed and found to hold them (`mark`). Such a
    /// finding is kept only when the file's ctime was `settled` seconds old by then: any file
    /// made later (after the hash, so after its ctime by as much) has a later ctime, even on a
    /// file system whose clock ticks in milliseconds. A name's file has no other check than its
    /// bytes: not the library's entry, which lags (the indexer) and is not there with
    /// `library = off`; the bytes are what a password may read, and they are its own.
    func check(_ path: DAVPath, _ named: DAVNamed) -> DAVFileMark? {
        // Nothing there (or a symlink on the way) names nothing; an error that may pass (out of
        // descriptors, EIO) hides the name for now and forgets nothing.
        // A sticky name is never forgotten this way (`resolve` lists it as remembered).
        func failed(_ error: SystemError) -> DAVFileMark? {
            if [.noSuchFile, .notDirectory, .tooManySymlinks].contains(error.code), !named.sticky {
                endpoint.names.forget(account.id, path, named)
            }
            return nil
        }
        func other() -> DAVFileMark? {
            if !named.sticky { endpoint.names.forget(account.id, path, named) }
            return nil
        }
        let st: FileStatus
        do { st = try endpoint.photos.statusBeneath(named.kept) } catch { return failed(error) }
        guard st.isRegularFile, st.size == named.size else { return other() }
        let now = DAVFileMark(st)
        if named.mark == now { return now }
        guard !named.sha256.isEmpty else { return other() }
        let fd: FileDescriptor
        do { fd = try endpoint.photos.openBeneath(named.kept, flags: [.readOnly, .nonBlocking]) } catch {
            return failed(error)
        }
        defer { fd.close() }
        let opened: FileStatus
        do { opened = try fd.status() } catch { return failed(error) }
        // Replaced between the two looks: not the file that was looked at.
        guard opened.isRegularFile, DAVFileMark(opened) == now else { return other() }
        switch SHA256.hex(ofFile: fd, size: named.size) {
        case .success(let hex) where hex == named.sha256: break
        case .failure(.system(let error)): return failed(error)
        case .failure(.cancelled): return nil
        default: return other()  // other bytes, or a size that changed meanwhile
        }
        if WallTime.now.seconds - opened.changed >= Self.settled {
            endpoint.names.confirm(account.id, path, named, mark: now)
        }
        return now
    }

    /// How old (seconds) a file's ctime must be for a hash of it to be remembered by its mark.
    static let settled: Int64 = 2

    /// What the directory holds at `path` (a `full` view), following no symlink.
    private func disk(_ path: DAVPath) -> DAVResource {
        let key = path.string
        // nothing there (or not reachable without a symlink)
        guard let st = try? endpoint.photos.statusBeneath(key) else { return .missing }
        if st.isDirectory { return .collection(real: true, modified: st.modified) }
        if st.isRegularFile {
            // no entry: the ETag falls back to size and time
            return .photo(kept: key, size: st.size, modified: st.modified, sha256: try? library?.sha256(exactly: key))
        }
        return .missing
    }

    private func placeholder(_ path: DAVPath) -> DAVResource {
        endpoint.names.with(account.id) { $0.placeholders[path] }.map { .placeholder(modified: $0) } ?? .missing
    }

    /// The members of the collection `path`, by name, sorted.
    func children(_ path: DAVPath) -> [(name: String, resource: DAVResource)] {
        let key = path.string
        // By bytes: two spellings of one name ("é" and "e" + U+0301) are two files.
        var out: [[UInt8]: (String, DAVResource)] = [:]
        // The names first (each checked, and forgotten when it names nothing any more).
        var named: [[UInt8]: (String, DAVResource)] = [:]
        for name in endpoint.names.with(account.id, { $0.children(of: path) }) {
            let resource = resolve(path.appending(name))
            if resource.exists { named[Array(name.utf8)] = (name, resource) }
        }
        // unreadable: listed empty
        if full, let dir = try? (path.isRoot ? endpoint.photos.openSubdirectory(".") : openFolder(key)) {
            defer { dir.close() }
            let hashes = (try? library?.hashes(inFolder: key)) ?? [:]  // no library: ETags from size and time
            // Photos this password PUT under another name (the store's naming rules) are shown
            // under that name; kept photos a name only shares are shown as they are too.
            let aliased = endpoint.names.with(account.id) { a in
                Set(
                    a.files.filter { !$0.value.shared && $0.key.string.utf8.elementsEqual($0.value.kept.utf8) == false }
                        .map { Array($0.value.kept.utf8) })
            }
            for name in (try? dir.entries()) ?? [] where DAVName.kind(name) == .ordinary {  // unreadable: listed empty
                let child = key.isEmpty ? name : key + "/" + name
                // gone meanwhile: not listed
                guard !aliased.contains(Array(child.utf8)), let st = try? dir.status(of: name) else { continue }
                if st.isDirectory {
                    out[Array(name.utf8)] = (name, .collection(real: true, modified: st.modified))
                } else if st.isRegularFile {
                    out[Array(name.utf8)] = (
                        name,
                        .photo(kept: child, size: st.size, modified: st.modified, sha256: hashes[Array(name.utf8)])
                    )
                }
            }
        }
        for (bytes, entry) in named where out[bytes] == nil { out[bytes] = entry }
        for (name, e) in endpoint.sidecars.children(account.id, of: key) {
            out[Array(name.utf8)] = (name, .sidecar(size: e.size, modified: e.modified))
        }
        return out.sorted { $0.key.lexicographicallyPrecedes($1.key) }.map { $0.value }
    }

    /// The real folder `key` below the directory, opened without following a symlink.
    private func openFolder(_ key: String) throws(SystemError) -> FileDescriptor {
        let place = try endpoint.photos.parentBeneath(key)
        defer { place.close() }
        return try place.folder.openSubdirectory(place.name)
    }
}
