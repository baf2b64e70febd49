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
}

/// The names each app password's client used, so that what it lists and checks after a PUT is
/// what it sent: for `upload` access its whole view (the photos it sent, the folders it made),
/// for `full` access the names that differ from the kept ones. Placeholders are the names held
/// empty by a 0-byte PUT or a LOCK before the photo's PUT (RFC 4918 7.3, 9.10.4): never a file
/// among the photos, and not kept across a restart.
///
/// Each password's names are kept in `DIR/ID.names`, one line per change appended and flushed
/// before the answer (`F path kept size sha256 modified`, `D path`, `R path`, the paths
/// percent-encoded), read at the password's first request. Keyed by the password's id: a new
/// password with an old name starts empty.
final class DAVNames: @unchecked Sendable {
    /// One password's names. Paths are `DAVPath.string` ("a/b.jpg"; "" is the root).
    struct Account {
        var files: [String: DAVNamed] = [:]
        var folders: Set<String> = []
        var placeholders: [String: Int64] = [:]
        var log: FileDescriptor?
        /// The file its changes are appended to.
        var file = ""

        /// Names directly in `folder`: files, folders and placeholders.
        func children(of folder: String) -> [String] {
            let prefix = folder.isEmpty ? "" : folder + "/"
            var out = Set<String>()
            for path in Array(files.keys) + Array(folders) + Array(placeholders.keys) where path.hasPrefix(prefix) && path != folder {
                let rest = String(path.dropFirst(prefix.count))
                if !rest.isEmpty, !rest.containsScalar("/") { out.insert(rest) }
            }
            return out.sorted()
        }
    }

    let directory: String
    // Guarded by `lock`.
    private let lock = Lock()
    private var accounts: [String: Account] = [:]

    init(directory: String) { self.directory = directory }

    /// Runs `body` on the names of password `id` (read from its file on first use), alone.
    func with<T>(_ id: String, _ body: (inout Account) -> T) -> T {
        lock.withLock {
            if accounts[id] == nil { accounts[id] = load(id) }
            return body(&accounts[id]!)
        }
    }

    /// Records a file name; flushed before it returns.
    func setFile(_ id: String, _ path: String, _ named: DAVNamed) {
        with(id) { a in
            a.files[path] = named
            a.placeholders[path] = nil
            append(&a, "F \(Self.encode(path)) \(Self.encode(named.kept)) \(named.size) \(named.sha256.isEmpty ? "-" : named.sha256) \(named.modified)")
        }
    }

    func addFolder(_ id: String, _ path: String) {
        with(id) { a in
            a.folders.insert(path)
            append(&a, "D \(Self.encode(path))")
        }
    }

    /// Forgets `path` and everything below it (files, folders, placeholders).
    func remove(_ id: String, _ path: String) {
        with(id) { a in
            let prefix = path + "/"
            let hit = a.files.keys.contains { $0 == path || $0.hasPrefix(prefix) } || a.folders.contains { $0 == path || $0.hasPrefix(prefix) }
            a.files = a.files.filter { $0.key != path && !$0.key.hasPrefix(prefix) }
            a.folders = a.folders.filter { $0 != path && !$0.hasPrefix(prefix) }
            a.placeholders = a.placeholders.filter { $0.key != path && !$0.key.hasPrefix(prefix) }
            if hit { append(&a, "R \(Self.encode(path))") }
        }
    }

    /// Moves `from` and everything below it to `to` (a MOVE of a folder or of a named photo).
    func move(_ id: String, _ from: String, to: String, kept: (DAVNamed) -> DAVNamed = { $0 }) {
        with(id) { a in
            let prefix = from + "/"
            func moved(_ path: String) -> String? {
                if path == from { return to }
                return path.hasPrefix(prefix) ? to + "/" + path.dropFirst(prefix.count) : nil
            }
            for (path, named) in a.files { if let new = moved(path) { a.files[path] = nil; a.files[new] = kept(named) } }
            for path in a.folders { if let new = moved(path) { a.folders.remove(path); a.folders.insert(new) } }
            for (path, at) in a.placeholders { if let new = moved(path) { a.placeholders[path] = nil; a.placeholders[new] = at } }
            append(&a, "R \(Self.encode(from))")
            for (path, named) in a.files where path == to || path.hasPrefix(to + "/") {
                append(&a, "F \(Self.encode(path)) \(Self.encode(named.kept)) \(named.size) \(named.sha256.isEmpty ? "-" : named.sha256) \(named.modified)")
            }
            for path in a.folders where path == to || path.hasPrefix(to + "/") { append(&a, "D \(Self.encode(path))") }
        }
    }

    func setPlaceholder(_ id: String, _ path: String, at time: Int64) { with(id) { $0.placeholders[path] = time } }
    func removePlaceholder(_ id: String, _ path: String) { with(id) { _ = $0.placeholders.removeValue(forKey: path) } }

    // MARK: The file

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

    private func load(_ id: String) -> Account {
        var a = Account()
        a.file = path(id)
        guard let bytes = try? readFileBytes(path(id), limit: 256 << 20) else { return a }  // no file yet (or unreadable): the password starts with no names
        for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") {
            let f = line.split(separator: " ").map(String.init)
            switch f.first {
            case "F" where f.count == 6:
                guard let path = Self.decode(f[1]), let kept = Self.decode(f[2]), let size = Int64(f[3]), let at = Int64(f[5]) else { continue }
                a.files[path] = DAVNamed(kept: kept, size: size, sha256: f[4] == "-" ? "" : f[4], modified: at)
            case "D" where f.count == 2:
                if let path = Self.decode(f[1]) { a.folders.insert(path) }
            case "R" where f.count == 2:
                guard let path = Self.decode(f[1]) else { continue }
                let prefix = path + "/"
                a.files = a.files.filter { $0.key != path && !$0.key.hasPrefix(prefix) }
                a.folders = a.folders.filter { $0 != path && !$0.hasPrefix(prefix) }
            default: continue
            }
        }
        do {
            a.log = try FileDescriptor.open(path(id), flags: [.writeOnly, .append, .noFollow])
        } catch {
            a.log = nil
        }
        return a
    }

    static func encode(_ path: String) -> String { path.isEmpty ? "%" : percentEncode(path) }

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
