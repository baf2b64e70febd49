import PTKDAV
import PTKSystem
import PTKVocabulary

/// A name a WebDAV client PUT, and the kept photo it names (which may be called otherwise: the
/// store's naming rules, a photo kept already with these bytes).
struct DAVNamed: Sendable, Equatable {
    /// The photo's path relative to the received-photos directory.
    var kept: String
    var size: Int64
    var sha256: String
    /// When it was PUT, in seconds since the epoch.
    var modified: Int64
    /// The kept file's inode when the name was given: a name whose file was since moved,
    /// removed or replaced (another file at that path) names nothing any more.
    var inode: UInt64
    /// The PUT found these bytes kept already (another sender's, or under another name): the
    /// name is this client's only, and removing or moving it never touches the kept photo.
    var shared: Bool
}

/// The names each app password's client used, so that what it lists and checks after a PUT is
/// what it sent: for `upload` access its whole view (the photos it sent, the folders it made),
/// for `full` access the names that differ from the kept ones. Placeholders are the names held
/// empty by a 0-byte PUT or a LOCK before the photo's PUT (RFC 4918 7.3, 9.10.4): never a file
/// among the photos, not kept across a restart, gone after `placeholderLife` unless a lock
/// holds them, at most `maxPlaceholders` per password.
///
/// Paths are compared byte for byte (`DAVPath`): "é" precomposed and "e" + U+0301 are two names,
/// as they are two files. Each password's names are kept in `DIR/ID.names`, one line per change
/// appended and flushed before the answer (`F path kept size sha256 modified inode shared`,
/// `D path`, `R path`, the paths percent-encoded), read (and compacted) at the password's first
/// request. Keyed by the password's id: a new password with an old name starts empty.
final class DAVNames: @unchecked Sendable {
    /// One password's names.
    struct Account {
        var files: [DAVPath: DAVNamed] = [:]
        var folders: Set<DAVPath> = []
        var placeholders: [DAVPath: Int64] = [:]
        var log: FileDescriptor?
        /// The file its changes are appended to.
        var file = ""

        /// Names directly in `folder`: files, folders and placeholders.
        func children(of folder: DAVPath) -> [String] {
            var out: [String] = []
            for path in Array(files.keys) + Array(folders) + Array(placeholders.keys) where path.parent == folder {
                out.append(path.name!)
            }
            return out
        }

    }

    static let maxPlaceholders = 1_000
    /// Folders an `upload` password may make (each is a line of its file and a name in memory).
    static let maxFolders = 10_000
    /// A placeholder no lock holds is let go after this long (a LOCK's longest timeout).
    static let placeholderLife: Int64 = 3_600

    /// One password's names under a lock of their own: reading its file and flushing a line
    /// stall only that password's requests.
    private final class Box: @unchecked Sendable {
        let lock = Lock()
        // Guarded by `lock`; nil until first read.
        var account: Account?
    }

    let directory: String
    // Guarded by `lock` (the boxes, not what is in them). Lock order: a box's lock, then the
    // endpoint's lock tables (`expirePlaceholders` asks them); never the other way.
    private let lock = Lock()
    private var boxes: [String: Box] = [:]

    init(directory: String) { self.directory = directory }

    /// Runs `body` on the names of password `id` (read from its file on first use), alone.
    func with<T>(_ id: String, _ body: (inout Account) -> T) -> T {
        let box = lock.withLock { () -> Box in
            if let box = boxes[id] { return box }
            let box = Box()
            boxes[id] = box
            return box
        }
        return box.lock.withLock {
            if box.account == nil { box.account = load(id) }
            return body(&box.account!)
        }
    }

    /// Records a file name; flushed before it returns.
    func setFile(_ id: String, _ path: DAVPath, _ named: DAVNamed) {
        with(id) { a in
            a.files[path] = named
            a.placeholders[path] = nil
            append(&a, Self.line(path, named))
        }
    }

    /// Records a folder; false when the password made `maxFolders` already.
    func addFolder(_ id: String, _ path: DAVPath) -> Bool {
        with(id) { a in
            guard a.folders.count < Self.maxFolders else { return false }
            a.folders.insert(path)
            a.placeholders[path] = nil
            append(&a, "D \(Self.encode(path.string))")
            return true
        }
    }

    /// Forgets `path` and everything below it (files, folders, placeholders).
    func remove(_ id: String, _ path: DAVPath) {
        with(id) { a in
            let hit = a.files.keys.contains { path.contains($0) } || a.folders.contains { path.contains($0) }
            a.files = a.files.filter { !path.contains($0.key) }
            a.folders = a.folders.filter { !path.contains($0) }
            a.placeholders = a.placeholders.filter { !path.contains($0.key) }
            if hit { append(&a, "R \(Self.encode(path.string))") }
        }
    }

    /// Moves `from` and everything below it to `to` (a MOVE of a folder or of a named photo);
    /// `kept` rewrites each name's kept photo (a folder moved on disk).
    func move(_ id: String, _ from: DAVPath, to: DAVPath, kept: (DAVNamed) -> DAVNamed = { $0 }) {
        with(id) { a in
            func moved(_ path: DAVPath) -> DAVPath? {
                from.contains(path) ? DAVPath(to.components + path.components.dropFirst(from.components.count)) : nil
            }
            var files: [DAVPath: DAVNamed] = [:]
            for (path, named) in a.files { if let new = moved(path) { files[new] = kept(named) } else { files[path] = named } }
            a.files = files
            a.folders = Set(a.folders.map { moved($0) ?? $0 })
            var held: [DAVPath: Int64] = [:]
            for (path, at) in a.placeholders { held[moved(path) ?? path] = at }
            a.placeholders = held
            append(&a, "R \(Self.encode(from.string))")
            for (path, named) in a.files where to.contains(path) { append(&a, Self.line(path, named)) }
            for path in a.folders where to.contains(path) { append(&a, "D \(Self.encode(path.string))") }
        }
    }

    /// Holds `path` empty; false when the password holds `maxPlaceholders` already.
    func setPlaceholder(_ id: String, _ path: DAVPath, at time: Int64) -> Bool {
        with(id) { a in
            guard a.placeholders[path] != nil || a.placeholders.count < Self.maxPlaceholders else { return false }
            a.placeholders[path] = time
            return true
        }
    }

    func removePlaceholder(_ id: String, _ path: DAVPath) { with(id) { _ = $0.placeholders.removeValue(forKey: path) } }

    /// Lets go of placeholders older than `placeholderLife` that `isLocked` says no lock holds.
    func expirePlaceholders(_ id: String, now: Int64, isLocked: (DAVPath) -> Bool) {
        with(id) { a in
            a.placeholders = a.placeholders.filter { now - $0.value < Self.placeholderLife || isLocked($0.key) }
        }
    }

    // MARK: The file

    static func line(_ path: DAVPath, _ n: DAVNamed) -> String {
        "F \(encode(path.string)) \(encode(n.kept)) \(n.size) \(n.sha256.isEmpty ? "-" : n.sha256) \(n.modified) \(n.inode) \(n.shared ? 1 : 0)"
    }

    private func path(_ id: String) -> String { directory + "/" + id + ".names" }

    /// Appends one line and flushes it. A failure is logged: the photo is kept all the same;
    /// only this name is not remembered across a restart.
    private func append(_ a: inout Account, _ line: String) {
        do throws(SystemError) {
            if a.log == nil {
                try makeDirectories(directory, mode: 0o700)
                a.log = try FileDescriptor.open(a.file, flags: [.writeOnly, .create, .append, .noFollow], mode: 0o600)
            }
            try a.log!.writeAll(Array((line + "\n").utf8))
            try a.log!.syncData()
        } catch {
            Log.warning("webdav: cannot record a name in \(directory): \(error)")
        }
    }

    /// Reads a password's names; a file with more lines than names is written again compacted.
    private func load(_ id: String) -> Account {
        var a = Account()
        a.file = path(id)
        // No file yet (or unreadable): the password starts with no names.
        guard let bytes = try? readFileBytes(a.file, limit: 1 << 30) else { return a }
        var lines = 0
        for line in bytes.split(separator: UInt8(ascii: "\n")) {
            lines += 1
            let f = String(decoding: line, as: UTF8.self).split(separator: " ").map(String.init)
            switch f.first {
            case "F" where f.count == 8:
                guard let p = Self.decodePath(f[1]), let kept = Self.decode(f[2]), let size = Int64(f[3]), let at = Int64(f[5]),
                      let inode = UInt64(f[6]) else { continue }
                a.files[p] = DAVNamed(kept: kept, size: size, sha256: f[4] == "-" ? "" : f[4], modified: at, inode: inode, shared: f[7] == "1")
            case "D" where f.count == 2:
                if let p = Self.decodePath(f[1]) { a.folders.insert(p) }
            case "R" where f.count == 2:
                guard let p = Self.decodePath(f[1]) else { continue }
                a.files = a.files.filter { !p.contains($0.key) }
                a.folders = a.folders.filter { !p.contains($0) }
            default: continue
            }
        }
        if lines > 2 * (a.files.count + a.folders.count) + 100 {
            let text = a.folders.map { "D \(Self.encode($0.string))\n" }.joined() + a.files.map { Self.line($0.key, $0.value) + "\n" }.joined()
            do { try writeFileAtomically(a.file, Array(text.utf8), mode: 0o600) } catch {
                Log.warning("webdav: cannot compact \(a.file): \(error)")
            }
        }
        do { a.log = try FileDescriptor.open(a.file, flags: [.writeOnly, .append, .noFollow]) } catch { a.log = nil }
        return a
    }

    static func encode(_ path: String) -> String { path.isEmpty ? "%" : percentEncode(path) }

    static func decodePath(_ text: String) -> DAVPath? {
        guard let s = decode(text) else { return nil }
        return DAVPath(s.isEmpty ? [] : pathComponents(s))
    }

    static func decode(_ text: String) -> String? {
        if text == "%" { return "" }
        var bytes: [UInt8] = []
        var it = Array(text.utf8)[...]
        while let b = it.popFirst() {
            if b == UInt8(ascii: "%") {
                guard it.count >= 2, let v = UInt8(String(decoding: it.prefix(2), as: UTF8.self), radix: 16) else { return nil }
                bytes.append(v)
                it = it.dropFirst(2)
            } else {
                bytes.append(b)
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }
}
