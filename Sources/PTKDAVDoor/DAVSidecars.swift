import PTKDigest
import PTKLog
import PTKSystem
import PTKVocabulary

/// The files operating systems write beside photos (`._NAME` AppleDouble, `.DS_Store`,
/// `Thumbs.db`, `desktop.ini`: `DAVName.Kind.sidecar`), kept apart from the photos and the
/// library, per app password, in `DIR/ID.sidecars/`, and shown back to the client that wrote
/// them: Finder's copy fails if these writes fail. Each is two files named by the SHA-256 of
/// its path (so a long or non-ASCII path never meets the file system's name limit): `HASH`
/// holds its bytes, `HASH.path` its path. Small and bounded: at most `maxSize` bytes each,
/// `maxCount` and `maxTotal` bytes per password, never into the state directory's file
/// system's `min-free`. A password's index is read on its first use and kept in memory, under
/// a lock of its own: a client rewriting megabytes of them stalls only its own password's
/// requests. A removed password's are dropped (`drop`), and nothing is kept for it after.
final class DAVSidecars: @unchecked Sendable {
    static let maxSize = 1 << 20
    static let maxCount = 10_000
    static let maxTotal: Int64 = 64 << 20

    struct Entry: Sendable, Equatable {
        var size: Int64
        var modified: Int64
    }

    typealias Index = [[UInt8]: (path: String, entry: Entry)]

    /// One password's sidecars by path, under its own lock.
    private final class Box: @unchecked Sendable {
        let lock = Lock()
        // Guarded by `lock`: nil until first read.
        var index: Index?
        // Guarded by `lock`: the password was removed (`drop`).
        var dropped = false
    }

    let directory: String
    // Guarded by `lock` (the boxes, not what is in them), with the passwords dropped while
    // ptkd runs. A box's lock is taken once this one is let go, never inside it.
    private let lock = Lock()
    private var boxes: [String: Box] = [:]
    private var dropped: Set<String> = []

    init(directory: String) { self.directory = directory }

    private func folder(_ id: String) -> String { directory + "/" + id + ".sidecars" }
    private func file(_ id: String, _ path: String) -> String { folder(id) + "/" + SHA256.hex(of: Array(path.utf8)) }

    /// Runs `body` on password `id`'s index, alone (other passwords' go on meanwhile); nil,
    /// with `body` not run, for a dropped password.
    func with<T>(_ id: String, _ body: (inout Index) -> T) -> T? {
        let box = lock.withLock { () -> Box? in
            if dropped.contains(id) { return nil }
            if let box = boxes[id] { return box }
            let box = Box()
            boxes[id] = box
            return box
        }
        guard let box else { return nil }
        return box.lock.withLock {
            if box.dropped { return nil }
            if box.index == nil { box.index = load(id) }
            return body(&box.index!)
        }
    }

    private func load(_ id: String) -> Index {
        var out: Index = [:]
        // None kept yet (or unreadable): none shown.
        guard
            let names = try? FileDescriptor.open(folder(id), flags: [.readOnly, .directory, .noFollow])
                .entriesAndClose()
        else { return out }
        for name in names where name.hasSuffix(".path") {
            // A pair that cannot be read is not shown (and not counted).
            guard let text = try? readFileBytes(folder(id) + "/" + name, limit: 4096),
                let path = String(validating: text, as: UTF8.self),
                let st = try? fileStatus(file(id, path)), st.isRegularFile
            else { continue }  // as above
            out[Array(path.utf8)] = (path, Entry(size: st.size, modified: st.modified))
        }
        return out
    }

    /// The sidecar `path` of password `id`, nil when it has none.
    func entry(_ id: String, _ path: String) -> Entry? { with(id) { $0[Array(path.utf8)]?.entry } ?? nil }

    /// Its bytes (nil: gone meanwhile, answered empty).
    // as the doc says
    func read(_ id: String, _ path: String) -> [UInt8]? { try? readFileBytes(file(id, path), limit: Self.maxSize) }

    /// The sidecars directly in `folder`, by name (compared by bytes: two spellings are two names).
    func children(_ id: String, of folder: String) -> [(name: String, entry: Entry)] {
        let prefix = Array((folder.isEmpty ? "" : folder + "/").utf8)
        return with(id) { all in
            all.compactMap { key, value in
                guard key.starts(with: prefix) else { return nil }
                let rest = key.dropFirst(prefix.count)
                guard !rest.isEmpty, !rest.contains(UInt8(ascii: "/")) else { return nil }
                return (String(decoding: rest, as: UTF8.self), value.entry)
            }
        } ?? []
    }

    /// Keeps `bytes` as the sidecar `path`; nil, or the reason it cannot (the detail is logged).
    func write(_ id: String, _ path: String, _ bytes: [UInt8], minFree: Int64) -> String? {
        with(id) { all -> String? in
            let before = all[Array(path.utf8)]?.entry.size
            if before == nil && all.count >= Self.maxCount {
                return "this password keeps \(Self.maxCount) such files already"
            }
            let total = all.values.reduce(Int64(0)) { $0 + $1.entry.size }
            if total - (before ?? 0) + Int64(bytes.count) > Self.maxTotal {
                return "this password keeps \(formatBytes(Double(Self.maxTotal))) of such files already"
            }
            do throws(SystemError) {
                try makeDirectories(folder(id), mode: 0o700)
                let dir = try FileDescriptor.open(folder(id), flags: [.readOnly, .directory, .noFollow])
                defer { dir.close() }
                if try dir.availableSpace() - Int64(bytes.count) < minFree { return "no space for it (min-free)" }
                try writeFileAtomically(file(id, path), bytes, mode: 0o600)
                try writeFileAtomically(file(id, path) + ".path", Array(path.utf8), mode: 0o600)
                all[Array(path.utf8)] = (path, Entry(size: Int64(bytes.count), modified: WallTime.now.seconds))
                return nil
            } catch {
                Log.warning("webdav: cannot keep a sidecar in \(folder(id)): \(error)")
                return "the receiver cannot keep it now"
            }
        } ?? "this app password was removed"
    }

    func remove(_ id: String, _ path: String) {
        _ = with(id) { all in
            all[Array(path.utf8)] = nil
            // Gone already is what was asked.
            try? removeFile(file(id, path) + ".path")
            try? removeFile(file(id, path))  // as above
        }
    }

    /// Removes every sidecar at or below `path`.
    func removeAll(_ id: String, within path: String) {
        for p in with(id, { $0.values.map(\.path) }) ?? [] where Self.within(p, path) { remove(id, p) }
    }

    /// Moves the sidecars at or below `from` to `to`, replacing what is there (these files are
    /// the client's own); one that cannot be read stays where it was.
    func move(_ id: String, _ from: String, to: String) {
        for p in with(id, { $0.values.map(\.path) }) ?? [] where Self.within(p, from) {
            let new = to + String(decoding: Array(p.utf8).dropFirst(from.utf8.count), as: UTF8.self)
            guard let bytes = read(id, p), write(id, new, bytes, minFree: 0) == nil else { continue }
            remove(id, p)
        }
    }

    /// Drops everything kept for password `id`, in memory and on disk (a removed password's).
    func drop(_ id: String) {
        let box = lock.withLock { () -> Box? in
            dropped.insert(id)
            return boxes.removeValue(forKey: id)
        }
        // A write that held the box finishes first; its files go with the folder.
        box?.lock.withLock {
            box?.index = nil
            box?.dropped = true
        }
        Self.removeFolder(folder(id))
    }

    /// Removes everything kept for password `id` (a removed password's, at ptkd's start).
    static func removeFolder(_ path: String) {
        // What cannot be removed is tried again at the next start.
        guard let names = try? FileDescriptor.open(path, flags: [.readOnly, .directory, .noFollow]).entriesAndClose()
        else { return }
        for name in names { try? removeFile(path + "/" + name) }  // as above
        try? removeDirectory(path)  // as above
    }

    /// Whether `path` is `folder` or below it, by bytes ("" holds everything).
    static func within(_ path: String, _ folder: String) -> Bool {
        folder.isEmpty || Array(path.utf8) == Array(folder.utf8)
            || Array(path.utf8).starts(with: Array((folder + "/").utf8))
    }
}
