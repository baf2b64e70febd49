import PTKHTTP
import PTKLog
import PTKSystem
import PTKVocabulary

/// The upload folders of chunked upload v2 (`/remote.php/dav/uploads/NAME/ID`, docs/OPERATIONS.md
/// "Chunked uploads"): per app password, each folder's chunks by number, kept on disk in ptkd's
/// state (`STATE/web/uploads/PASSWORD-ID/UPLOAD-ID/CHUNK`), never in the photos directory, until a
/// MOVE of `.file` assembles them into one photo through the store (`DAVEndpoint+Chunks`), a
/// DELETE drops them, or they stay untouched for `maxAge`. Bounded per password (`Limits`: folders,
/// chunks, bytes) and never into the state file system's `min-free`. Upload ids and chunk names
/// are peer text, taken only when `validID` and `chunkNumber` say so, so every name on disk is one
/// component of safe bytes. A chunk is written to a new file (`.part-N` beside the folders,
/// O_EXCL | O_NOFOLLOW), flushed, then renamed into its folder; a folder removed is first renamed
/// away (`.gone-N`) and then emptied, so what a request finds on disk is whole. The index is in
/// memory under one lock (held for renames and checks, never while a body is read); it is read
/// from disk at start, where what is expired, half written or of a removed password is removed.
final class DAVUploads: @unchecked Sendable {
    /// The bounds; tests set smaller ones.
    struct Limits {
        var maxFolders = 100
        var maxChunks = 10_000
        var maxChunkSize: Int64 = 1 << 30
        /// Bytes one password may hold in upload folders (chunks kept and being written).
        var maxHeld: Int64
        /// The largest photo (`max-file-size`): the most a folder's chunks may add up to.
        var maxFileSize: Int64
        var minFree: Int64
        /// Seconds a folder may stay untouched (no MKCOL, chunk PUT or chunk DELETE).
        var maxAge: Int64 = 86_400
        /// MOVEs of `.file` that read a folder's chunks and kept nothing: past them the folder
        /// is not read again (each such MOVE, a few bytes, reads and writes up to
        /// `max-file-size`), and the client must DELETE it and upload again.
        var maxRefusedAssemblies = 3
    }

    /// One chunk: its name as the client sent it (listed back so), its size and time.
    struct Chunk: Equatable {
        var name: String
        var size: Int64
        var modified: Int64
    }

    /// One upload folder.
    struct Folder {
        /// Tells a folder from one of the same id made after it was removed.
        var generation: UInt64
        var touched: Int64
        /// The size OC-Total-Length announced at the MKCOL, if any.
        var total: Int64?
        var chunks: [UInt64: Chunk] = [:]
        /// A MOVE is assembling it: no chunk changes, no removal.
        var busy = false
        /// MOVEs that read its chunks and kept nothing (`Limits.maxRefusedAssemblies`).
        var refusedAssemblies = 0
        var held: Int64 { chunks.values.reduce(0) { $0 + $1.size } }
        /// The chunks in numeric order.
        var ordered: [(number: UInt64, chunk: Chunk)] {
            chunks.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        }
    }

    /// A chunk being written (`beginChunk`): its file, opened for writing, and where it goes.
    struct Ticket {
        let account: String
        let upload: String
        let generation: UInt64
        let number: UInt64
        let name: String
        let size: Int64
        let part: String
        let file: FileDescriptor
    }

    /// Set at init; tests set smaller ones before any request.
    var limits: Limits
    let directory: String
    /// The uploads directory, open; nil when it cannot be made (every upload is refused).
    private let base: FileDescriptor?
    // Guarded by `lock`: the folders by password id and upload id; the bytes being written per
    // password and in all; the passwords dropped while ptkd runs; the counter of new names.
    private let lock = Lock()
    private var folders: [String: [String: Folder]] = [:]
    private var writing: [String: Int64] = [:]
    private var writingAll: Int64 = 0
    private var dropped: Set<String> = []
    private var counter: UInt64 = 0
    private var lastSweep: Int64 = 0

    /// Opens (making it) `directory` and reads what it holds; the folders of passwords not in
    /// `keep`, expired folders and half-written chunks are removed.
    init(directory: String, limits: Limits, keep: Set<String>?, now: Int64) {
        self.directory = directory
        self.limits = limits
        do throws(SystemError) {
            try makeDirectories(directory, mode: 0o700)
            base = try FileDescriptor.open(directory, flags: [.readOnly, .directory, .noFollow])
        } catch {
            Log.warning("webdav: cannot keep upload folders in \(directory): \(error); chunked uploads are refused")
            base = nil
        }
        load(keep: keep, now: now)
        lastSweep = now
    }

    deinit { base?.close() }

    // MARK: Names

    /// Whether `id` may name an upload folder: 1 to 128 bytes of `A-Za-z0-9._-`, not starting with "." (nc-py-api's are 66).
    static func validID(_ id: String) -> Bool {
        let bytes = Array(id.utf8)
        guard (1...128).contains(bytes.count), bytes[0] != UInt8(ascii: ".") else { return false }
        return bytes.allSatisfy { b in
            (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || b == 0x2E || b == 0x2D
                || b == 0x5F
        }
    }

    /// The number a chunk name says: 1 to 16 ASCII digits; nil for anything else.
    static func chunkNumber(_ name: String) -> UInt64? {
        let bytes = Array(name.utf8)
        guard (1...16).contains(bytes.count), bytes.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        return UInt64(name)
    }

    /// Why chunks numbered and sized so cannot be one body, nil when they can: numbered one
    /// after another from 0 or 1 (the desktop clients' and apps' indexes), or each numbered by
    /// the byte it starts at (ownCloud's offsets). Anything else has chunks missing.
    static func gap(_ chunks: [(number: UInt64, size: Int64)]) -> String? {
        guard let first = chunks.first else { return nil }
        var offset: Int64 = 0
        var byOffset = true
        var byIndex = first.number <= 1
        for (i, c) in chunks.enumerated() {
            if c.number != UInt64(offset) { byOffset = false }
            if c.number != first.number + UInt64(i) { byIndex = false }
            offset += c.size
        }
        if byOffset || byIndex { return nil }
        if first.number > 1 { return "the first chunk is numbered \(first.number): chunks before it are missing" }
        let after = chunks.indices.dropFirst().first { chunks[$0].number != first.number + UInt64($0) }!
        return
            "chunk \(chunks[after - 1].number) is followed by \(chunks[after].number): chunks are missing between them"
    }

    // MARK: The index

    /// The folders of password `id` (a copy).
    func folders(of id: String) -> [String: Folder] { lock.withLock { folders[id] ?? [:] } }

    /// One folder of password `id`.
    func folder(_ id: String, _ upload: String) -> Folder? { lock.withLock { folders[id]?[upload] } }

    /// Makes the folder `upload` of password `id`; nil, or the refusal.
    func make(_ id: String, _ upload: String, total: Int64?, now: Int64) -> DAVUploadRefusal? {
        guard let base else { return .init(500, "the receiver cannot keep upload folders now") }
        return lock.withLock { () -> DAVUploadRefusal? in
            if dropped.contains(id) { return .init(401, DAVEndpoint.removedReason) }
            if folders[id]?[upload] != nil { return .init(405, "the upload folder exists already") }
            if (folders[id]?.count ?? 0) >= limits.maxFolders {
                return .init(
                    507,
                    "this app password has \(limits.maxFolders) upload folders already (finish, delete or let them expire first)"
                )
            }
            do throws(SystemError) {
                let made = try base.openDirectoryBeneath(id + "/" + upload, creating: 0o700, ownerOf: directory)
                defer { made.close() }
                if let total {
                    try writeFileAtomically(path(id, upload) + "/.total", Array("\(total)".utf8), mode: 0o600)
                }
            } catch {
                Log.warning("webdav: cannot make the upload folder \(path(id, upload)): \(error)")
                return error.isNoSpace
                    ? .init(507, "the receiver's disk is too full") : .init(500, "cannot make the upload folder")
            }
            counter += 1
            folders[id, default: [:]][upload] = Folder(generation: counter, touched: now, total: total)
            return nil
        }
    }

    /// Checks a chunk of `size` bytes numbered `number` may be added to the folder (its bounds,
    /// the password's, `min-free`), promises its bytes, and opens the file it is written to.
    func beginChunk(_ id: String, _ upload: String, number: UInt64, name: String, size: Int64)
        -> Result<Ticket, DAVUploadRefusal>
    {
        guard let base else { return .failure(.init(500, "the receiver cannot keep upload folders now")) }
        return lock.withLock { () -> Result<Ticket, DAVUploadRefusal> in
            if dropped.contains(id) { return .failure(.init(401, DAVEndpoint.removedReason)) }
            guard let folder = folders[id]?[upload] else {
                return .failure(.init(409, "the upload folder does not exist (MKCOL it first; it may have expired)"))
            }
            if folder.busy { return .failure(.init(423, "the upload folder is being assembled")) }
            let replaced = folder.chunks[number]?.size ?? 0
            let count = (folders[id] ?? [:]).values.reduce(0) { $0 + $1.chunks.count }
            if folder.chunks[number] == nil && count >= limits.maxChunks {
                return .failure(.init(507, "this app password holds \(limits.maxChunks) chunks already"))
            }
            let sum = folder.held - replaced + size
            if sum > limits.maxFileSize {
                return .failure(
                    .init(
                        413,
                        "the chunks add up to \(formatBytes(Double(sum))), over this receiver's limit of \(formatBytes(Double(limits.maxFileSize))) for a photo"
                    ))
            }
            if let total = folder.total, sum > total {
                return .failure(.init(413, "the chunks add up to \(sum) bytes, over the \(total) announced"))
            }
            let held = (folders[id] ?? [:]).values.reduce(Int64(0)) { $0 + $1.held } + writing[id, default: 0]
            if held - replaced + size > limits.maxHeld {
                return .failure(
                    .init(
                        507,
                        "this app password holds \(formatBytes(Double(held))) in upload folders; at most \(formatBytes(Double(limits.maxHeld)))"
                    ))
            }
            // unknown: taken as no room
            let free = (try? base.availableSpace()) ?? 0
            if free - writingAll - size < limits.minFree {
                return .failure(.init(507, "the receiver's disk is too full to hold the chunk (min-free)"))
            }
            counter += 1
            let part = ".part-\(counter)"
            let file: FileDescriptor
            do throws(SystemError) {
                file = try base.openBeneath(
                    id + "/" + part, flags: [.writeOnly, .create, .exclusive, .noFollow], mode: 0o600)
            } catch {
                Log.warning("webdav: cannot write a chunk in \(directory)/\(id): \(error)")
                return .failure(.init(error.isNoSpace ? 507 : 500, "the receiver cannot hold the chunk now"))
            }
            writing[id, default: 0] += size
            writingAll += size
            return .success(
                Ticket(
                    account: id, upload: upload, generation: folder.generation, number: number, name: name,
                    size: size, part: part, file: file))
        }
    }

    /// Ends a chunk `beginChunk` began: `written` (its bytes all in and flushed), it takes its
    /// number's place in its folder (true: it replaced one); otherwise, or when the folder went
    /// meanwhile, its file is removed. Closes the file.
    func finishChunk(_ t: Ticket, written: Bool, now: Int64) -> Result<Bool, DAVUploadRefusal> {
        t.file.close()
        let result = lock.withLock { () -> Result<Bool, DAVUploadRefusal> in
            writing[t.account, default: 0] -= t.size
            writingAll -= t.size
            guard written else { return .failure(.init(0, "")) }
            guard let base, !dropped.contains(t.account) else { return .failure(.init(401, DAVEndpoint.removedReason)) }
            guard var folder = folders[t.account]?[t.upload], folder.generation == t.generation else {
                return .failure(.init(409, "the upload folder was removed while the chunk came"))
            }
            if folder.busy { return .failure(.init(423, "the upload folder is being assembled")) }
            let old = folder.chunks[t.number]
            let into = t.account + "/" + t.upload + "/"
            do throws(SystemError) {
                // Gone already is what is wanted.
                if let old { try? unlinkBeneath(base, into + old.name) }
                try? unlinkBeneath(base, into + t.name)  // as above (a file no index named)
                try base.moveBeneath(t.account + "/" + t.part, to: into + t.name)
            } catch {
                Log.warning("webdav: cannot keep a chunk in \(path(t.account, t.upload)): \(error)")
                if old != nil { folder.chunks[t.number] = nil }
                folders[t.account]?[t.upload] = folder
                return .failure(.init(500, "the receiver cannot keep the chunk now"))
            }
            folder.chunks[t.number] = Chunk(name: t.name, size: t.size, modified: now)
            folder.touched = now
            folders[t.account]?[t.upload] = folder
            return .success(old != nil)
        }
        if case .failure = result, let base {
            try? unlinkBeneath(base, t.account + "/" + t.part)  // gone already: fine
        }
        return result
    }

    /// Marks a folder as being assembled and returns it; the refusal when it is not there or busy.
    func startAssembly(_ id: String, _ upload: String) -> Result<Folder, DAVUploadRefusal> {
        lock.withLock { () -> Result<Folder, DAVUploadRefusal> in
            guard var folder = folders[id]?[upload] else {
                return .failure(.init(404, "no such upload folder (it may have expired)"))
            }
            if folder.busy { return .failure(.init(423, "the upload folder is being assembled already")) }
            if folder.refusedAssemblies >= limits.maxRefusedAssemblies {
                return .failure(
                    .init(
                        409,
                        "this upload folder was assembled \(folder.refusedAssemblies) times and refused each time; DELETE it and upload again"
                    ))
            }
            folder.busy = true
            folders[id]?[upload] = folder
            return .success(folder)
        }
    }

    /// Ends an assembly: the folder removed (`done`), or as it was, with one more refusal
    /// counted when its chunks were `read`.
    func endAssembly(_ id: String, _ upload: String, done: Bool, read: Bool) {
        if done {
            remove(id, upload, force: true)
        } else {
            lock.withLock {
                folders[id]?[upload]?.busy = false
                if read { folders[id]?[upload]?.refusedAssemblies += 1 }
            }
        }
    }

    /// Reads the chunks `ordered` of a folder, one after another, as one body.
    func reader(_ id: String, _ upload: String, _ ordered: [Chunk]) -> DAVChunkReader {
        DAVChunkReader(base: base, folder: id + "/" + upload, chunks: ordered)
    }

    /// Removes a folder (false: not there; nil: being assembled, unless `force`).
    @discardableResult
    func remove(_ id: String, _ upload: String, force: Bool = false) -> Bool? {
        var gone = ""
        let found = lock.withLock { () -> Bool? in
            guard let folder = folders[id]?[upload] else { return false }
            if folder.busy && !force { return nil }
            folders[id]?[upload] = nil
            counter += 1
            gone = ".gone-\(counter)"
            return true
        }
        if found == true { removeOnDisk(id, upload, via: gone) }
        return found
    }

    /// Removes one chunk by number (false: not there; nil: being assembled).
    func removeChunk(_ id: String, _ upload: String, number: UInt64, now: Int64) -> Bool? {
        lock.withLock { () -> Bool? in
            guard var folder = folders[id]?[upload], let chunk = folder.chunks[number] else { return false }
            if folder.busy { return nil }
            // gone already: what was asked
            if let base { try? unlinkBeneath(base, id + "/" + upload + "/" + chunk.name) }
            folder.chunks[number] = nil
            folder.touched = now
            folders[id]?[upload] = folder
            return true
        }
    }

    /// Drops everything kept for password `id` (a removed password's); nothing is kept for it after.
    func drop(_ id: String) {
        let uploads = lock.withLock { () -> [String] in
            dropped.insert(id)
            return Array((folders[id] ?? [:]).keys)
        }
        for upload in uploads { remove(id, upload, force: true) }
        lock.withLock { folders[id] = nil }
        if let base { Self.removeEntry(base, id) }
    }

    /// Removes the folders untouched for `maxAge` (not those being assembled); at most once a minute.
    func sweep(now: Int64) {
        let stale = lock.withLock { () -> [(String, String)] in
            guard now - lastSweep >= 60 || now < lastSweep else { return [] }
            lastSweep = now
            return folders.flatMap { id, uploads in
                uploads.filter { !$0.value.busy && now - $0.value.touched > limits.maxAge }.map { (id, $0.key) }
            }
        }
        for (id, upload) in stale {
            remove(id, upload)
            Log.info("webdav: the upload folder \(quotedForLog(upload)) of app password \(id) expired and was removed")
        }
    }

    // MARK: Disk

    private func path(_ id: String, _ upload: String) -> String { directory + "/" + id + "/" + upload }

    /// Renames the folder away (so nothing finds it half removed), then removes it.
    private func removeOnDisk(_ id: String, _ upload: String, via gone: String) {
        guard let base else { return }
        // Not there (never made, or removed at a start): nothing to remove.
        guard (try? base.moveBeneath(id + "/" + upload, to: id + "/" + gone)) != nil,
            let account = try? base.openSubdirectory(id)
        else { return }  // as above
        defer { account.close() }
        Self.removeEntry(account, gone)
    }

    /// Removes `name` in `parent` and, when it is a folder (never a symlink: one is removed as
    /// the name it is), what is in it. What cannot be removed now is removed at the next start.
    private static func removeEntry(_ parent: FileDescriptor, _ name: String) {
        // gone already: nothing to do
        guard let st = try? parent.status(of: name) else { return }
        if st.isDirectory {
            // unreadable: left for the next start
            if let dir = try? parent.openSubdirectory(name) {
                for inner in (try? dir.entries()) ?? [] { removeEntry(dir, inner) }  // as above
                dir.close()
            }
            try? parent.removeDirectory(name)  // as above
        } else {
            try? parent.unlink(name)  // as above
        }
    }

    /// Reads the index from disk; see `init`.
    private func load(keep: Set<String>?, now: Int64) {
        // none yet (or unreadable: then nothing can be kept either)
        guard let base, let accounts = try? base.entries() else { return }
        for id in accounts {
            if let keep, !keep.contains(id) {
                Self.removeEntry(base, id)
                continue
            }
            // not a folder, or unreadable: nothing in it is offered
            guard let account = try? base.openSubdirectory(id) else { continue }
            defer { account.close() }
            for upload in (try? account.entries()) ?? [] {  // as above
                if upload.hasPrefix(".part-") || upload.hasPrefix(".gone-") {
                    Self.removeEntry(account, upload)
                    continue
                }
                // as above
                guard Self.validID(upload), let st = try? account.status(of: upload), st.isDirectory else { continue }
                if now - st.modified > limits.maxAge {
                    Self.removeEntry(account, upload)
                    continue
                }
                // as above
                guard let folder = try? account.openSubdirectory(upload) else { continue }
                defer { folder.close() }
                counter += 1
                var entry = Folder(generation: counter, touched: st.modified, total: nil)
                for name in (try? folder.entries()) ?? [] {  // as above
                    if name == ".total" {
                        // unreadable: no total to check against
                        entry.total = (try? Self.readSmall(folder, name)).flatMap { Int64($0) }
                        continue
                    }
                    // as above
                    guard let number = Self.chunkNumber(name), let cs = try? folder.status(of: name), cs.isRegularFile
                    else { continue }
                    // Two names for one number (a replacement cut short): the newer is kept.
                    if let other = entry.chunks[number] {
                        let older = other.modified > cs.modified ? name : other.name
                        try? folder.unlink(older)  // gone already is fine
                        if older == name { continue }
                    }
                    entry.chunks[number] = Chunk(name: name, size: cs.size, modified: cs.modified)
                }
                folders[id, default: [:]][upload] = entry
            }
        }
    }

    private static func readSmall(_ folder: FileDescriptor, _ name: String) throws(SystemError) -> String {
        let fd = try FileDescriptor.open(name, relativeTo: folder, flags: [.readOnly, .noFollow, .nonBlocking])
        defer { fd.close() }
        return String(decoding: try fd.readAll(limit: 32, name: name), as: UTF8.self)
    }
}

/// A refusal of `DAVUploads`: HTTP status and reason.
struct DAVUploadRefusal: Error {
    let status: Int
    let reason: String
    init(_ status: Int, _ reason: String) {
        self.status = status
        self.reason = reason
    }
}

/// Removes `path` below `base` (one file; no symlink followed on the way).
private func unlinkBeneath(_ base: FileDescriptor, _ path: String) throws(SystemError) {
    let place = try base.parentBeneath(path)
    defer { place.close() }
    try place.folder.unlink(place.name)
}
