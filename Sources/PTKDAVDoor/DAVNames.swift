import PTKDAV
import PTKLog
import PTKSystem
import PTKVocabulary

/// A kept file as the kernel tells it from any other: its inode on its device and its ctime to
/// the nanosecond. An inode number alone is reused (ext4 and XFS give a removed photo's number
/// to the next file made); ctime is set by the kernel at every change (the rename that made
/// the file its name included) and no call sets it to a chosen value, so a later file at that
/// number has a later ctime (see `DAVView.check` for the margin that makes "later" hold).
struct DAVFileMark: Sendable, Equatable {
    var inode: UInt64
    var device: UInt64
    var changed: Int64
    var changedNanoseconds: Int64

    init(_ st: FileStatus) {
        inode = st.inode
        device = st.device
        changed = st.changed
        changedNanoseconds = st.changedNanoseconds
    }

    init(inode: UInt64, device: UInt64, changed: Int64, changedNanoseconds: Int64) {
        self.inode = inode
        self.device = device
        self.changed = changed
        self.changedNanoseconds = changedNanoseconds
    }

    /// "INODE:DEVICE:SECONDS:NANOSECONDS", as the names file keeps it.
    var text: String { "\(inode):\(device):\(changed):\(changedNanoseconds)" }

    init?(text: String) {
        let f = text.split(separator: ":", omittingEmptySubsequences: false)
        guard f.count == 4, let i = UInt64(f[0]), let d = UInt64(f[1]), let s = Int64(f[2]), let n = Int64(f[3]) else {
            return nil
        }
        self.init(inode: i, device: d, changed: s, changedNanoseconds: n)
    }
}

/// The names each app password's client used, so that what it lists and checks after a PUT is
/// what it sent: for `upload` access its whole view (the photos it sent, the folders it made),
/// for `full` access the names that differ from the kept ones. Placeholders are the names held
/// empty by a 0-byte PUT or a LOCK before the photo's PUT (RFC 4918 7.3, 9.10.4): never a file
/// among the photos, not kept across a restart, gone after `placeholderLife` unless a lock
/// holds them, at most `maxPlaceholders` per password.
///
/// A name is for bytes, not for a path or an inode number: it names its kept file only while
/// that file holds the bytes the client sent (`DAVView.check`); a name whose file was moved,
/// removed (`ptk rm`, a DELETE, a reconcile) or replaced is forgotten when next looked at.
///
/// Bounded: at most `maxShared` names for bytes kept already (a `full` password's), `maxFolders`
/// folders and `maxBytes` of names per password, and none written into the state file system's
/// `min-free` (`room`). An `upload` password's names for bytes kept already count against
/// `maxBytes` only, as its photos' do: its `room` is asked before its PUT's body is read, so
/// what it is told never depends on whether the receiver kept its bytes already (a count of
/// such names alone would tell it at the bound). The other names are each a photo stored,
/// which the store bounds.
///
/// Paths are compared byte for byte (`DAVPath`): "é" precomposed and "e" + U+0301 are two names,
/// as they are two files. Each password's names are kept in `DIR/ID.names`, one line per change
/// appended and flushed before the answer (`F path kept size sha256 modified mark flags`, flags 1 for
/// `shared` plus 2 for `sticky`,
/// `D path`, `R path`, the paths percent-encoded; `mark` is `DAVFileMark.text` or "-"; a line
/// written before marks, with a bare inode number there, is read as "-"), read at the
/// password's first request, and written again compacted whenever it holds twice what is live.
/// Keyed by the password's id: a new password with an old name starts empty; a removed
/// password's are dropped (`drop`).
final class DAVNames: @unchecked Sendable {
    /// One password's names.
    struct Account {
        var files: [DAVPath: DAVNamed] = [:]
        var folders: Set<DAVPath> = []
        var placeholders: [DAVPath: Int64] = [:]
        var log: FileDescriptor?
        /// The file its changes are appended to.
        var file = ""
        /// Bytes in the file, and the bytes of the lines that say what is live now (a
        /// compacted file's size): kept as the names change.
        var fileBytes = 0
        var liveBytes = 0
        /// A compaction that failed is tried again once the file is this large.
        var compactAt = 0
        /// How many of `files` are `shared`.
        var sharedCount = 0
        /// The password was removed (`drop`): what is done to these names is kept nowhere.
        var gone = false
        /// One more at every change of the files or folders (each goes through `append`): what
        /// is worked out from them may be kept while it is the same (`DAVEndpoint.uploadFolder`).
        var generation = 0

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
    /// Names for bytes kept already (a PUT that stored nothing) one `full` password may hold.
    static let maxShared = 10_000
    /// The most bytes of live lines one password's file may hold (about 300,000 photos under
    /// names of usual length; a name's line is at most about 25 kB).
    static let maxBytes = 64 << 20
    /// A file is read up to this size (a file ptkd wrote stays below it: compacted at twice
    /// `maxBytes` at most, plus one line).
    static let readLimit = 256 << 20
    /// A placeholder no lock holds is let go after this long (a LOCK's longest timeout).
    static let placeholderLife: Int64 = 3_600

    /// One password's names under a lock of their own: reading its file and flushing a line
    /// stall only that password's requests.
    private final class Box: @unchecked Sendable {
        let lock = Lock()
        // Guarded by `lock`; nil until first read.
        var account: Account?
        // Guarded by `lock`: dropped (a request that held the box before keeps nothing).
        var dropped = false
    }

    let directory: String
    /// The space the state file system keeps free (`min-free`): no line is written into it.
    let minFree: Int64
    /// `maxShared` and `maxBytes` for this door (tests make them small).
    let sharedLimit: Int
    let byteLimit: Int
    // Guarded by `lock` (the boxes, not what is in them). Lock order: a box's lock, then the
    // endpoint's lock tables (`expirePlaceholders` asks them); never the other way.
    private let lock = Lock()
    private var boxes: [String: Box] = [:]
    /// The passwords dropped while ptkd runs: a request still on its way for one (authorised
    /// before the removal) reads no names and records none, so no file or name comes back.
    private var dropped: Set<String> = []

    init(directory: String, minFree: Int64 = 0, maxShared: Int = DAVNames.maxShared, maxBytes: Int = DAVNames.maxBytes)
    {
        self.directory = directory
        self.minFree = minFree
        sharedLimit = maxShared
        byteLimit = maxBytes
    }

    /// Runs `body` on the names of password `id` (read from its file on first use), alone. A
    /// dropped password's are none, and what `body` does to them is kept nowhere.
    func with<T>(_ id: String, _ body: (inout Account) -> T) -> T {
        var none = Account()
        none.gone = true
        let box = lock.withLock { () -> Box? in
            if dropped.contains(id) { return nil }
            if let box = boxes[id] { return box }
            let box = Box()
            boxes[id] = box
            return box
        }
        guard let box else { return body(&none) }
        return box.lock.withLock {
            if box.dropped { return body(&none) }
            if box.account == nil { box.account = load(id) }
            return body(&box.account!)
        }
    }

    /// Why a new name of about `bytes` bytes cannot be kept for password `id` now, nil when
    /// it can: the password's `maxBytes`, or the state file system's `min-free`.
    func room(_ id: String, bytes: Int) -> String? {
        with(id) { a in room(&a, bytes) }
    }

    private func room(_ a: inout Account, _ bytes: Int) -> String? {
        if a.liveBytes + bytes > byteLimit {
            return "this app password's names take \(formatBytes(Double(byteLimit))) already"
        }
        if let free = freeSpace(a), free - Int64(bytes) < minFree {
            return "the receiver's state directory is down to its min-free"
        }
        return nil
    }

    /// The bytes free on the file system of `a`'s file, or of the folder it will be made in
    /// (nil: not known now).
    private func freeSpace(_ a: Account) -> Int64? {
        if let log = a.log { return try? log.availableSpace() }  // unknown: written, and a failed write logged
        // No file yet: the folder's file system, or its parent's while there is no folder.
        let parent = String(directory.unicodeScalars.lastIndex(of: "/").map { directory[..<$0] } ?? "/")
        for folder in [directory, parent] {
            // not there (yet): the next
            guard let dir = try? FileDescriptor.open(folder, flags: [.readOnly, .directory, .noFollow]) else {
                continue
            }
            defer { dir.close() }
            return try? dir.availableSpace()  // unknown: written, and a failed write logged
        }
        return nil
    }

    /// The length of `line` in the file.
    private static func size(_ line: String) -> Int { line.utf8.count + 1 }

    /// The most bytes the line of a name `path` for a photo kept as `kept` can take.
    static func lineBound(_ path: DAVPath, kept: String) -> Int {
        size(
            line(
                path,
                DAVNamed(
                    kept: kept, size: .max, sha256: String(repeating: "0", count: 64), modified: .max,
                    mark: DAVFileMark(inode: .max, device: .max, changed: .max, changedNanoseconds: 999_999_999),
                    shared: true)))
            + 3 * 12  // the store may add " (NN)" and another extension to the name it keeps
    }

    /// Records a file name; flushed before it returns. A name for bytes kept already
    /// (`shared`) is refused (the reason returned, nothing recorded) past `maxShared` or
    /// without `room`, unless `checked`: its `room` was asked before the PUT's body was read
    /// (an `upload` password's), and whether the bytes were kept already must not change what
    /// it is told (nor, through a count only those names raise, what its next PUT is told).
    /// Any other name is a photo just stored, recorded in memory whatever the file can take
    /// (a failed write is logged: only this name is not remembered across a restart).
    @discardableResult
    func setFile(_ id: String, _ path: DAVPath, _ named: DAVNamed, checked: Bool = false) -> String? {
        with(id) { a in
            let line = Self.line(path, named)
            let old = a.files[path]
            if named.shared && !checked {
                if old?.shared != true, a.sharedCount >= sharedLimit {
                    return "this app password holds \(sharedLimit) names for photos kept already"
                }
                if let why = room(&a, Self.size(line)) { return why }
            }
            if let old {
                a.liveBytes -= Self.size(Self.line(path, old))
                if old.shared { a.sharedCount -= 1 }
            }
            a.files[path] = named
            if named.shared { a.sharedCount += 1 }
            a.liveBytes += Self.size(line)
            a.placeholders[path] = nil
            append(&a, line)
            return nil
        }
    }

    /// Remembers that the file of name `path` was found to hold its bytes with `mark`, if the
    /// name is still `named` (a change meanwhile wins).
    func confirm(_ id: String, _ path: DAVPath, _ named: DAVNamed, mark: DAVFileMark) {
        with(id) { a in
            guard a.files[path] == named else { return }
            var n = named
            n.mark = mark
            a.files[path] = n
            a.liveBytes += Self.size(Self.line(path, n)) - Self.size(Self.line(path, named))
            append(&a, Self.line(path, n))
        }
    }

    /// Forgets the file name `path` if it is still `named`: its file no longer holds its bytes.
    func forget(_ id: String, _ path: DAVPath, _ named: DAVNamed) {
        with(id) { a in
            guard a.files[path] == named else { return }
            a.files[path] = nil
            if named.shared { a.sharedCount -= 1 }
            a.liveBytes -= Self.size(Self.line(path, named))
            append(&a, "R \(Self.encode(path.string))")
        }
    }

    /// Records a folder; false when the password made `maxFolders` already, or when there is
    /// no `room` for it.
    func addFolder(_ id: String, _ path: DAVPath) -> Bool {
        with(id) { a in
            let line = "D \(Self.encode(path.string))"
            let fits = a.folders.count < Self.maxFolders && room(&a, Self.size(line)) == nil
            if fits {
                if a.folders.insert(path).inserted { a.liveBytes += Self.size(line) }
                a.placeholders[path] = nil
                append(&a, line)
            }
            return fits
        }
    }

    /// Forgets `path` and everything below it (files, folders, placeholders).
    func remove(_ id: String, _ path: DAVPath) {
        with(id) { a in
            let hit = a.files.keys.contains { path.contains($0) } || a.folders.contains { path.contains($0) }
            a.files = a.files.filter { !path.contains($0.key) }
            a.folders = a.folders.filter { !path.contains($0) }
            a.placeholders = a.placeholders.filter { !path.contains($0.key) }
            if hit {
                Self.recount(&a)
                append(&a, "R \(Self.encode(path.string))")
            }
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
            for (path, named) in a.files {
                if let new = moved(path) { files[new] = kept(named) } else { files[path] = named }
            }
            a.files = files
            a.folders = Set(a.folders.map { moved($0) ?? $0 })
            var held: [DAVPath: Int64] = [:]
            for (path, at) in a.placeholders { held[moved(path) ?? path] = at }
            a.placeholders = held
            Self.recount(&a)
            append(&a, "R \(Self.encode(from.string))")
            for (path, named) in a.files where to.contains(path) { append(&a, Self.line(path, named)) }
            for path in a.folders where to.contains(path) { append(&a, "D \(Self.encode(path.string))") }
        }
    }

    /// Holds `path` empty; false when the password holds `maxPlaceholders` already.
    func setPlaceholder(_ id: String, _ path: DAVPath, at time: Int64) -> Bool {
        with(id) { a in
            let fits = a.placeholders[path] != nil || a.placeholders.count < Self.maxPlaceholders
            if fits { a.placeholders[path] = time }
            return fits
        }
    }

    func removePlaceholder(_ id: String, _ path: DAVPath) { with(id) { _ = $0.placeholders.removeValue(forKey: path) } }

    /// Lets go of placeholders older than `placeholderLife` that `isLocked` says no lock holds.
    func expirePlaceholders(_ id: String, now: Int64, isLocked: (DAVPath) -> Bool) {
        with(id) { a in
            a.placeholders = a.placeholders.filter { now - $0.value < Self.placeholderLife || isLocked($0.key) }
        }
    }

    /// Drops everything kept for password `id`, in memory and its file (a removed password's);
    /// nothing is recorded for it after.
    func drop(_ id: String) {
        let box = lock.withLock { () -> Box? in
            dropped.insert(id)
            return boxes.removeValue(forKey: id)
        }
        box?.lock.withLock {
            box?.account?.log?.close()
            box?.account = nil
            box?.dropped = true
        }
        // gone already is what was asked; one that cannot be removed now goes at the next start
        try? removeFile(path(id))
    }

    // MARK: The file

    static func line(_ path: DAVPath, _ n: DAVNamed) -> String {
        "F \(encode(path.string)) \(encode(n.kept)) \(n.size) \(n.sha256.isEmpty ? "-" : n.sha256) \(n.modified) \(n.mark?.text ?? "-") \((n.shared ? 1 : 0) + (n.sticky ? 2 : 0))"
    }

    /// The live lines' bytes and the shared names, counted again (after a change of many names).
    private static func recount(_ a: inout Account) {
        a.liveBytes =
            a.files.reduce(0) { $0 + size(line($1.key, $1.value)) }
            + a.folders.reduce(0) { $0 + size("D \(encode($1.string))") }
        a.sharedCount = a.files.values.reduce(0) { $0 + ($1.shared ? 1 : 0) }
    }

    private func path(_ id: String) -> String { directory + "/" + id + ".names" }

    /// Appends one line and flushes it; then, when the file holds more than twice what is live,
    /// writes it again compacted. A line that would go into the state file system's `min-free`
    /// is not written. A failure is logged: only this change is not remembered across a restart.
    private func append(_ a: inout Account, _ line: String) {
        a.generation += 1
        guard !a.gone else { return }
        let bytes = Array((line + "\n").utf8)
        do throws(SystemError) {
            if a.log == nil {
                try makeDirectories(directory, mode: 0o700)
                a.log = try FileDescriptor.open(a.file, flags: [.writeOnly, .create, .append, .noFollow], mode: 0o600)
            }
            // unknown: written, as before
            if let free = try? a.log!.availableSpace(), free - Int64(bytes.count) < minFree {
                Log.warning("webdav: a name is not recorded in \(directory): the file system is down to its min-free")
                return
            }
            try a.log!.writeAll(bytes)
            try a.log!.syncData()
            a.fileBytes += bytes.count
        } catch {
            Log.warning("webdav: cannot record a name in \(directory): \(error)")
            return
        }
        if a.fileBytes > max(2 * a.liveBytes + (64 << 10), a.compactAt) { compact(&a) }
    }

    /// Writes the file again with only the live lines (replaced at once: a crash leaves the old
    /// or the new, both read alike).
    private func compact(_ a: inout Account) {
        let text =
            a.folders.map { "D \(Self.encode($0.string))\n" }.joined()
            + a.files.map { Self.line($0.key, $0.value) + "\n" }.joined()
        do throws(SystemError) {
            try writeFileAtomically(a.file, Array(text.utf8), mode: 0o600)
            a.log?.close()
            a.log = try FileDescriptor.open(a.file, flags: [.writeOnly, .append, .noFollow])
            a.fileBytes = text.utf8.count
        } catch {
            Log.warning("webdav: cannot compact \(a.file): \(error)")
            a.compactAt = 2 * a.fileBytes
        }
    }

    /// Reads a password's names; a file with more lines than names is written again compacted.
    private func load(_ id: String) -> Account {
        var a = Account()
        a.file = path(id)
        // No file yet (or unreadable): the password starts with no names.
        guard let bytes = try? readFileBytes(a.file, limit: Self.readLimit) else { return a }
        for line in bytes.split(separator: UInt8(ascii: "\n")) {
            let f = String(decoding: line, as: UTF8.self).split(separator: " ").map(String.init)
            switch f.first {
            case "F" where f.count == 8:
                guard let p = Self.decodePath(f[1]), let kept = Self.decode(f[2]), let size = Int64(f[3]),
                    let at = Int64(f[5])
                else { continue }
                // A line of before marks holds the inode number alone: a number a later file may
                // have, so the file is hashed at the next look.
                a.files[p] = DAVNamed(
                    kept: kept, size: size, sha256: f[4] == "-" ? "" : f[4], modified: at,
                    mark: DAVFileMark(text: f[6]),
                    shared: f[7] == "1" || f[7] == "3", sticky: f[7] == "2" || f[7] == "3")
            case "D" where f.count == 2:
                if let p = Self.decodePath(f[1]) { a.folders.insert(p) }
            case "R" where f.count == 2:
                guard let p = Self.decodePath(f[1]) else { continue }
                a.files = a.files.filter { !p.contains($0.key) }
                a.folders = a.folders.filter { !p.contains($0) }
            default: continue
            }
        }
        Self.recount(&a)
        a.fileBytes = bytes.count
        do { a.log = try FileDescriptor.open(a.file, flags: [.writeOnly, .append, .noFollow]) } catch { a.log = nil }
        // Lines of removed names, or of before marks: written again as they are now.
        if a.fileBytes != a.liveBytes { compact(&a) }
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
                guard it.count >= 2, let v = UInt8(String(decoding: it.prefix(2), as: UTF8.self), radix: 16) else {
                    return nil
                }
                bytes.append(v)
                it = it.dropFirst(2)
            } else {
                bytes.append(b)
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }
}
