import PTKDigest
import PTKStore
import PTKSystem
import PTKVocabulary

/// The photo library of a received-photos directory: the photos stay plain PNG files; beside
/// them, `.ptk/index.sqlite` (SQLite, WAL, so ptkd writes while ptk reads) holds what is known
/// of each, and `.ptk/thumbnails/<id>.png` its thumbnail. ptkd and ptk each open their own
/// `PhotoLibrary`; every change of a file and its entry happens inside one write transaction,
/// so two writers never interleave. One instance is used by one thread at a time.
public final class PhotoLibrary {
    /// The library's folder inside the received-photos directory.
    public static let folderName = ".ptk"
    /// 1: the photos table; 2: an index of it by SHA-256 (duplicates are looked up by hash);
    /// 3: what a photo says of itself (orientation, taken, camera, location: yes or no), which
    /// a migration from 2 fills in by indexing every photo again.
    static let schemaVersion: Int64 = 4

    /// The received-photos directory.
    public let directory: String
    public var folder: String { directory + "/" + Self.folderName }
    public var thumbnailFolder: String { folder + "/thumbnails" }
    public var databasePath: String { folder + "/index.sqlite" }
    /// Photos with more pixels get no thumbnail.
    public var pixelLimit = Thumbnailer.defaultPixelLimit
    let database: Database
    let photos: FileDescriptor
    /// How reconcile reads a photo's status in the directory (tests make it fail).
    var statusOf: (FileDescriptor, String) throws(SystemError) -> FileStatus = { dir, name throws(SystemError) in try dir.status(of: name) }
    /// How indexing opens a photo in the directory (tests make it fail). A batch of more than 8
    /// photos calls it from several reading threads at once: a test's replacement must be
    /// thread-safe then.
    var openForIndexing: (String, FileDescriptor) throws(SystemError) -> FileDescriptor = { name, dir throws(SystemError) in
        try dir.openBeneath(name, flags: [.readOnly, .nonBlocking])
    }

    /// Errors that say nothing about the photo but about the moment (out of descriptors or
    /// memory, an interrupted or failing read, a full disk for the thumbnail): indexing is
    /// tried again later instead of recording a problem for good.
    static func isPassing(_ error: SystemError) -> Bool {
        let passing: [Errno] = [.processOutOfDescriptors, .systemOutOfDescriptors, .outOfMemory, .wouldBlock, .interrupted,
                                .ioError, .noBufferSpace, .noSpace, .quotaExceeded]
        return passing.contains(error.code)
    }

    /// Opens the library of `directory`. With `create`, makes `.ptk/` and the index when
    /// missing (run as root, with the directory's owner); without, a missing index is an error.
    /// Whatever is below `directory` may have been planted by its owner (root's `ptk` works on
    /// the service user's directory): `.ptk` and `.ptk/thumbnails` must be directories, not
    /// symlinks; the index and its -wal and -shm files regular files of one link, none a
    /// symlink; and a rollback journal that is not empty (the index runs in WAL mode and never
    /// makes one; SQLite would replay it, and delete the "super-journal" it names) stops the
    /// opening before SQLite sees it.
    public init(directory: String, create: Bool) throws(LibraryError) {
        self.directory = directory
        do { photos = try .open(directory, flags: [.readOnly, .directory]) } catch {
            throw LibraryError(.io, "cannot open the received-photos directory: \(error)")
        }
        let folder = directory + "/" + Self.folderName
        let databasePath = folder + "/index.sqlite"
        do throws(LibraryError) {
            guard let library = try Self.openFolder(Self.folderName, in: photos, path: folder, creatingOwnedLike: create ? directory : nil) else {
                throw LibraryError(.io, "no photo library in \(directory) yet (\(databasePath) is missing; ptkd makes it when it starts)")
            }
            defer { library.close() }
            // A library made before thumbnails had a folder of its own may lack it: made when creating.
            let thumbnails = try Self.openFolder("thumbnails", in: library, path: folder + "/thumbnails", creatingOwnedLike: create ? directory : nil)
            thumbnails?.close()
            if create {
                // Made here, through the folder's descriptor, not by SQLite, so that root gives it
                // the directory's owner (fchown); SQLite gives the -wal and -shm files the owner of
                // the database file. One that is there already (or cannot be made) is left to the
                // checks below and to SQLite, which say what is wrong with it.
                if let fd = try? FileDescriptor.open("index.sqlite", relativeTo: library, flags: [.readWrite, .create, .exclusive, .noFollow], mode: 0o644) {
                    defer { fd.close() }
                    do { try fd.takeOwner(of: directory) } catch { throw LibraryError(.io, "cannot give \(databasePath) its owner: \(error)") }
                }
            }
            try Self.checkIndexFiles(in: library, folder: folder, create: create)
        } catch {
            photos.close()
            throw error
        }
        do {
            // SQLite refuses a symlink anywhere in the path it is given: the links of the
            // directory's own path (the administrator's) are resolved first.
            let file = (resolvedPath(directory) ?? directory) + "/" + Self.folderName + "/index.sqlite"
            database = try Database(file: file, path: databasePath, create: create)
            try migrate()
        } catch {
            photos.close()
            throw error
        }
    }

    /// Opens the folder `name` in `parent` (`path` names it in messages) without following a
    /// symlink; with `creatingOwnedLike`, makes it when missing (0755, run as root given that
    /// path's owner, through its descriptor); nil when it is missing and not to be made. A
    /// symlink or anything else that is not a directory is refused, saying so.
    static func openFolder(_ name: String, in parent: FileDescriptor, path: String, creatingOwnedLike owner: String?) throws(LibraryError) -> FileDescriptor? {
        do {
            if let owner { return try parent.openDirectoryBeneath(name, creating: 0o755, ownerOf: owner) }
            return try parent.openSubdirectory(name)
        } catch where error.code == .noSuchFile && owner == nil {
            return nil
        } catch {
            throw folderError(error, name, in: parent, path: path)
        }
    }

    /// Opens the existing folder `name` in `parent` without following a symlink (`openFolder`).
    static func openFolder(_ name: String, in parent: FileDescriptor, path: String) throws(LibraryError) -> FileDescriptor {
        do { return try parent.openSubdirectory(name) } catch { throw folderError(error, name, in: parent, path: path) }
    }

    /// The error for a folder that could not be opened: a symlink or a file in its place said plainly.
    private static func folderError(_ error: SystemError, _ name: String, in parent: FileDescriptor, path: String) -> LibraryError {
        // What is there, to say why it was refused; when even that cannot be read, the open's error says it.
        if let st = try? parent.status(of: name) {
            if st.isSymlink { return LibraryError(.io, "\(path): is a symbolic link; not followed") }
            if !st.isDirectory { return LibraryError(.io, "\(path): is not a directory") }
        }
        return LibraryError(.io, "cannot open \(path): \(error)")
    }

    /// Refuses to open an index whose files (in `.ptk`, open as `library`) are not what ptk
    /// makes: index.sqlite, -wal or -shm a symlink, not a regular file, or with another name
    /// linked to it; a rollback journal with anything in it (replaying it could delete any file
    /// it names) or not a regular file. Without `create`, a missing index is an error too.
    static func checkIndexFiles(in library: FileDescriptor, folder: String, create: Bool) throws(LibraryError) {
        var indexSize: Int64 = 0
        for suffix in ["", "-wal", "-shm", "-journal"] {
            let path = folder + "/index.sqlite" + suffix
            let found: (status: FileStatus, links: Int, kind: String)
            do { found = try library.statusWithLinks(of: "index.sqlite" + suffix) } catch where error.code == .noSuchFile {
                if suffix.isEmpty && !create {
                    throw LibraryError(.io, "no photo library in \(parentDirectory(of: folder)) yet (\(path) is missing; ptkd makes it when it starts)")
                }
                continue
            } catch {
                throw LibraryError(.io, "cannot read the status of \(path): \(error)")
            }
            let advice = "refusing to open the index: move it away after checking it"
            if found.status.isSymlink { throw LibraryError(.io, "\(path): is a symbolic link; not followed; \(advice)") }
            if !found.status.isRegularFile { throw LibraryError(.io, "\(path): is \(found.kind), not a regular file; \(advice)") }
            if found.links > 1 {
                throw LibraryError(.io, "\(path): has \(found.links) hard links; the index uses only files no other name shares; \(advice)")
            }
            if suffix.isEmpty { indexSize = found.status.size }
            // SQLite replays no journal into an empty database (one being made as this opens).
            // A journal of this process's own user is one its own crash left while the database
            // was being made (before WAL mode): replaying it is how SQLite recovers. One of
            // another user (root opening the service user's index) is not ours to replay.
            if suffix == "-journal" && found.status.size > 0 && indexSize > 0 && found.status.owner != geteuidValue() {
                throw LibraryError(.io, "\(path): a rollback journal another user made, which the index never makes (it runs in WAL mode); refusing to open the index: move it away after checking it")
            }
        }
    }

    /// The buffer photos are hashed through: allocated once, not zeroed for every photo.
    let hashBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 64)

    deinit {
        photos.close()
        hashBuffer.deallocate()
    }

    private func migrate() throws(LibraryError) {
        let current = try database.firstInt("PRAGMA user_version") ?? 0
        if current > Self.schemaVersion {
            throw LibraryError(.refused, "the library index \(databasePath) was made by a newer ptk (schema \(current), this one reads \(Self.schemaVersion))")
        }
        if current == Self.schemaVersion { return }
        try database.writeTransaction { () throws(LibraryError) in
            // Read again inside the transaction: another process may have migrated meanwhile.
            let found = try database.firstInt("PRAGMA user_version") ?? 0
            if found >= Self.schemaVersion { return }
            try database.execute("""
                CREATE TABLE IF NOT EXISTS photos(
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    name TEXT NOT NULL UNIQUE,
                    size INTEGER NOT NULL,
                    sha256 TEXT,
                    width INTEGER, height INTEGER, bit_depth INTEGER, color_type INTEGER, interlace INTEGER,
                    received INTEGER NOT NULL,
                    sender_name TEXT, sender_address TEXT, sender_id TEXT,
                    note TEXT,
                    rating INTEGER CHECK (rating BETWEEN 0 AND 5),
                    indexed INTEGER NOT NULL DEFAULT 0,
                    thumbnail INTEGER NOT NULL DEFAULT 0,
                    problem TEXT,
                    inode INTEGER,
                    mtime INTEGER
                );
                CREATE INDEX IF NOT EXISTS photos_pending ON photos(id) WHERE indexed = 0;
                CREATE INDEX IF NOT EXISTS photos_sha256 ON photos(sha256, size);
                """)
            if found < 3 {
                try database.execute("""
                    ALTER TABLE photos ADD COLUMN orientation INTEGER;
                    ALTER TABLE photos ADD COLUMN taken TEXT;
                    ALTER TABLE photos ADD COLUMN taken_ms INTEGER;
                    ALTER TABLE photos ADD COLUMN camera_make TEXT;
                    ALTER TABLE photos ADD COLUMN camera_model TEXT;
                    ALTER TABLE photos ADD COLUMN location INTEGER;
                    """)
            }
            if found < 4 {
                // Schema 3 added what photos say of themselves; schema 4 makes thumbnails in
                // linear light and true colour (and reads HEIF). Every photo is indexed again.
                try database.execute("UPDATE photos SET indexed = 0 WHERE indexed = 1")
            }
            try database.execute("PRAGMA user_version = \(Self.schemaVersion)")
        }
    }

    // MARK: Reading

    static let columns = "id, name, size, sha256, width, height, bit_depth, color_type, interlace, received, sender_name, sender_address, sender_id, note, rating, indexed, thumbnail, problem, mtime, orientation, taken, camera_make, camera_model, location"

    static func photo(from s: Statement) -> Photo {
        var p = Photo(id: s.int(0) ?? 0, name: s.text(1) ?? "", size: s.int(2) ?? 0, received: WallTime(milliseconds: s.int(9) ?? 0))
        p.sha256 = s.text(3)
        p.width = s.int(4).map(Int.init)
        p.height = s.int(5).map(Int.init)
        p.bitDepth = s.int(6).map(Int.init)
        p.colorType = s.int(7).map(Int.init)
        p.interlace = s.int(8).map(Int.init)
        p.senderName = s.text(10)
        p.senderAddress = s.text(11)
        p.senderID = s.text(12)
        p.note = s.text(13)
        p.rating = s.int(14).map(Int.init)
        p.indexed = s.int(15) == 1
        p.hasThumbnail = s.int(16) == 1
        p.problem = s.text(17)
        p.modified = s.int(18).map { WallTime(milliseconds: $0) }
        p.orientation = s.int(19).map(Int.init)
        p.taken = s.text(20)
        p.cameraMake = s.text(21)
        p.cameraModel = s.text(22)
        p.hasLocation = s.int(23).map { $0 != 0 }
        return p
    }

    /// Every photo the index knows, sorted (oldest, first by name, or smallest first), those
    /// of one sender only when `sender` is given (see `Photo.isFrom`). Reads only the index.
    public func all(sort: SortOrder = .time, from sender: String? = nil) throws(LibraryError) -> [Photo] {
        let order: String
        switch sort {
        case .name: order = "name COLLATE NOCASE, name"
        case .time: order = "received, id"
        case .taken: order = "coalesce(taken_ms, received), id"
        case .size: order = "size, name"
        }
        let s = try database.prepare("SELECT \(Self.columns) FROM photos ORDER BY \(order)").bind()
        var list: [Photo] = []
        while try s.step() {
            let p = Self.photo(from: s)
            if let sender, !p.isFrom(sender) { continue }
            list.append(p)
        }
        return list
    }

    /// Every photo's name, by name: what shell completion offers (one query on one column,
    /// fast on a big library).
    public func names() throws(LibraryError) -> [String] {
        let s = try database.prepare("SELECT name FROM photos ORDER BY name").bind()
        var names: [String] = []
        while try s.step() { if let name = s.text(0) { names.append(name) } }
        return names
    }

    /// The photos whose id is above `id`, by id, at most `limit`: what `ptk watch` follows (ids
    /// only grow and are never reused, so "above the last one seen" misses and repeats nothing).
    public func photos(after id: Int64, limit: Int) throws(LibraryError) -> [Photo] {
        let s = try database.prepare("SELECT \(Self.columns) FROM photos WHERE id > ? ORDER BY id LIMIT ?").bind(id, limit)
        var list: [Photo] = []
        while try s.step() { list.append(Self.photo(from: s)) }
        return list
    }

    /// The highest id given so far (0 before the first photo): that of a photo since deleted
    /// too, as SQLite's AUTOINCREMENT keeps it.
    public func lastID() throws(LibraryError) -> Int64 {
        let s = try database.prepare("SELECT max(coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'photos'), 0), coalesce((SELECT max(id) FROM photos), 0))").bind()
        return try s.step() ? s.int(0) ?? 0 : 0
    }

    /// The photo with this id, if the index has it.
    public func photo(id: Int64) throws(LibraryError) -> Photo? {
        let s = try database.prepare("SELECT \(Self.columns) FROM photos WHERE id = ?").bind(id)
        return try s.step() ? Self.photo(from: s) : nil
    }

    /// The photo named `name` (or `name` + a photo ending: ".png", ".jpg", ".jpeg", ".heic",
    /// ".heif", in lower or upper case, as cameras write "IMG_0001.HEIC"): its path relative to the
    /// directory ("alice/IMG_1.png"), or a bare name when one photo of all folders has it;
    /// `.refused` listing the paths when several do; `.notFound` with the closest names when none.
    public func find(_ name: String) throws(LibraryError) -> Photo {
        let endings = PhotoType.allCases.flatMap(\.endings)
        var candidates = [name]
        for ending in endings + endings.map({ $0.uppercased() }) where !candidates.contains(name + ending) { candidates.append(name + ending) }
        let s = try database.prepare("SELECT \(Self.columns) FROM photos WHERE name = ?")
        for candidate in candidates {
            s.bind(candidate)
            if try s.step() { return Self.photo(from: s) }
        }
        let names = try self.names()
        // By scalars: "a/\u{301}b.png" is in folder "a", though "/\u{301}" is one Character.
        if !name.containsScalar("/") {
            for candidate in candidates {
                let inFolders = names.filter { $0.utf8.reversed().starts(with: ("/" + candidate).utf8.reversed()) }
                if inFolders.count == 1 { return try find(inFolders[0]) }
                if inFolders.count > 1 {
                    throw LibraryError(.refused, "'\(name)' names \(inFolders.count) photos: \(inFolders.joined(separator: ", ")); give its folder too")
                }
            }
        }
        let notIndexed = (try? photos.statusBeneath(name)) != nil  // a file there that the index does not know yet
        throw LibraryError(.notFound(suggestions: closestNames(to: name, in: names)),
                           notIndexed ? "'\(name)' is in \(directory) but not in the library yet (ptkd indexes it shortly, or at its next start)"
                                      : "no photo named '\(name)' in \(directory)")
    }

    /// How many photos wait to be indexed.
    public func pendingCount() throws(LibraryError) -> Int {
        let s = try database.prepare("SELECT count(*) FROM photos WHERE indexed = 0").bind()
        return try s.step() ? Int(s.int(0) ?? 0) : 0
    }

    /// The ids of photos waiting to be indexed, oldest first.
    public func pending(limit: Int) throws(LibraryError) -> [Int64] {
        let s = try database.prepare("SELECT id FROM photos WHERE indexed = 0 ORDER BY id LIMIT ?").bind(limit)
        var ids: [Int64] = []
        while try s.step() { if let id = s.int(0) { ids.append(id) } }
        return ids
    }

    func thumbnailPath(_ id: Int64) -> String { thumbnailFolder + "/\(id).png" }

    /// The thumbnails folder, opened below the photos directory without following a symlink
    /// (`.ptk` and `thumbnails` are each refused when they are one).
    func openThumbnailFolder() throws(LibraryError) -> FileDescriptor {
        let library = try Self.openFolder(Self.folderName, in: photos, path: folder)
        defer { library.close() }
        return try Self.openFolder("thumbnails", in: library, path: thumbnailFolder)
    }

    /// The thumbnail PNG of `photo`, nil when it has none: read through the thumbnails
    /// folder's descriptor, without following a symlink or waiting on a FIFO, and only from a
    /// regular file of at most 16 MiB.
    public func thumbnail(of photo: Photo) throws(LibraryError) -> [UInt8]? {
        guard photo.hasThumbnail else { return nil }
        let path = thumbnailPath(photo.id)
        let failure = "cannot read the thumbnail of '\(photo.name)'"
        let folder: FileDescriptor
        do { folder = try openThumbnailFolder() } catch { throw LibraryError(.io, "\(failure): \(error.description)") }
        defer { folder.close() }
        let fd: FileDescriptor
        do { fd = try FileDescriptor.open("\(photo.id).png", relativeTo: folder, flags: [.readOnly, .nonBlocking, .noFollow]) } catch {
            if error.code == .tooManySymlinks { throw LibraryError(.io, "\(failure): \(path): is a symbolic link; not followed") }
            throw LibraryError(.io, "\(failure): \(SystemError(call: error.call, object: path, errno: error.errno))")
        }
        defer { fd.close() }
        do {
            let found = try fd.statusWithLinks()
            guard found.status.isRegularFile else { throw LibraryError(.io, "\(failure): \(path): is \(found.kind), not a regular file; not read") }
            return try fd.readAll(limit: 16 << 20, name: path)
        } catch let error as LibraryError {
            throw error
        } catch {
            throw LibraryError(.io, "\(failure): \(error)")
        }
    }

    /// Removes the thumbnail of photo `id` through the thumbnails folder's descriptor (`unlinkat`
    /// follows no final symlink; the folders above are opened following none). One already
    /// gone is no error.
    func removeThumbnail(_ id: Int64) throws(LibraryError) {
        let folder = try openThumbnailFolder()
        defer { folder.close() }
        do { try folder.unlink("\(id).png") } catch where error.code == .noSuchFile {} catch {
            throw LibraryError(.io, "cannot remove \(thumbnailPath(id)): \(error)")
        }
    }

    // MARK: Recording and indexing (ptkd)

    /// Enters photos ptkd has just saved, to be indexed; an entry of the same name (a file the
    /// reconcile found first, or a stale one) takes the new photo's facts.
    public func record(_ arrivals: [Arrival]) throws(LibraryError) {
        guard !arrivals.isEmpty else { return }
        try database.writeTransaction { () throws(LibraryError) in
            let s = try database.prepare("""
                INSERT INTO photos(name, size, sha256, received, sender_name, sender_address, sender_id) VALUES (?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT(name) DO UPDATE SET size = excluded.size, sha256 = excluded.sha256, received = excluded.received,
                    sender_name = excluded.sender_name, sender_address = excluded.sender_address, sender_id = excluded.sender_id,
                    note = NULL, rating = NULL, indexed = 0, problem = NULL
                """)
            for a in arrivals {
                try s.bind(a.name, a.size, a.sha256, a.received.milliseconds, a.senderName, a.senderAddress, a.senderID).run()
            }
        }
    }

    /// What `reconcile` changed.
    public struct ReconcileReport: Sendable, Equatable {
        /// Files the index did not know, now entered (to be indexed).
        public var added = 0
        /// Entries whose file is gone, dropped.
        public var dropped = 0
        /// Entries whose file was renamed by hand (same inode and size), following it.
        public var moved = 0
        /// Entries whose file changed (size, inode or modification time), to be indexed again.
        public var changed = 0
        /// Photo files whose status could not be read (any error but "no such file"), with the
        /// error: their entries are left as they are (never dropped with their notes and
        /// ratings), and the next reconcile looks again.
        public var unreadable: [String: String] = [:]
        public init() {}
    }

    /// Brings the index in line with the directory: a PNG file it does not know is entered (its
    /// modification time as received time), an entry whose file is gone is dropped, one renamed
    /// by hand follows its file, one whose file changed (size, inode or modification time) is
    /// indexed again. Done in one write transaction, so no rename or removal by
    /// `ptk` falls between reading the directory and writing the index.
    @discardableResult
    public func reconcile() throws(LibraryError) -> ReconcileReport {
        var report = ReconcileReport()
        var removedThumbnails: [Int64] = []
        try database.writeTransaction { () throws(LibraryError) in
            var files: [String: FileStatus] = [:]
            // A file that vanished since the listing is gone; one whose status cannot be read
            // (EACCES, EIO) is not, and its entry must survive with its note and rating; so
            // must the entries of a folder that cannot be listed.
            var unreadable: Set<String> = []
            var unreadableFolders: [String] = []
            try walk(photos, prefix: "", depth: 0, files: &files, unreadable: &unreadable, unreadableFolders: &unreadableFolders, report: &report)
            struct Known { var id: Int64; var size: Int64; var inode: Int64?; var modified: Int64? }
            var known: [String: Known] = [:]
            let all = try database.prepare("SELECT id, name, size, inode, mtime FROM photos").bind()
            while try all.step() {
                known[all.text(1) ?? ""] = Known(id: all.int(0) ?? 0, size: all.int(2) ?? 0, inode: all.int(3), modified: all.int(4))
            }
            var unknown = files.filter { known[$0.key] == nil }
            let gone = known.filter { entry in
                files[entry.key] == nil && !unreadable.contains(entry.key) && !unreadableFolders.contains { entry.key.utf8.starts(with: $0.utf8) }
            }
            let rename = try database.prepare("UPDATE photos SET name = ? WHERE id = ?")
            let drop = try database.prepare("DELETE FROM photos WHERE id = ?")
            for (name, entry) in gone.sorted(by: { $0.value.id < $1.value.id }) {
                if let inode = entry.inode,
                   let match = unknown.first(where: { Int64(bitPattern: $0.value.inode) == inode && $0.value.size == entry.size }) {
                    try rename.bind(match.key, entry.id).run()
                    unknown[match.key] = nil
                    report.moved += 1
                    _ = name
                } else {
                    try drop.bind(entry.id).run()
                    removedThumbnails.append(entry.id)
                    report.dropped += 1
                }
            }
            let redo = try database.prepare("UPDATE photos SET indexed = 0, sha256 = NULL, size = ? WHERE id = ?")
            for (name, st) in files {
                guard let entry = known[name], gone[name] == nil else { continue }
                let modified = st.modifiedTime.milliseconds
                if entry.size != st.size || (entry.inode != nil && entry.inode != Int64(bitPattern: st.inode))
                    || (entry.modified != nil && entry.modified != modified) {
                    try redo.bind(st.size, entry.id).run()
                    report.changed += 1
                }
            }
            let add = try database.prepare("INSERT INTO photos(name, size, received) VALUES (?, ?, ?)")
            for (name, st) in unknown.sorted(by: { ($0.value.modified, $0.key) < ($1.value.modified, $1.key) }) {
                try add.bind(name, st.size, st.modifiedTime.milliseconds).run()
                report.added += 1
            }
        }
        // A thumbnail left behind is removed by the next sweep at start.
        for id in removedThumbnails { try? removeThumbnail(id) }
        return report
    }

    /// Adds the photo files of `folder` (named with `prefix`, "" for the directory itself) and
    /// of its folders to `files`: folders at most `StoreRequest.maxFolderDepth` deep, hidden
    /// names (`.ptk`, `.incoming`) skipped, symlinks never followed.
    private func walk(_ folder: FileDescriptor, prefix: String, depth: Int, files: inout [String: FileStatus], unreadable: inout Set<String>,
                      unreadableFolders: inout [String], report: inout ReconcileReport) throws(LibraryError) {
        let entries: [String]
        do { entries = try folder.entries() } catch {
            if prefix.isEmpty { throw LibraryError(.io, "cannot list \(directory): \(error)") }
            unreadableFolders.append(prefix)
            report.unreadable[prefix] = "cannot list the folder: \(error)"
            return
        }
        for name in entries where !name.startsWithScalar(".") {
            let path = prefix + name
            let photo = Self.isPhotoName(name)
            let st: FileStatus
            do { st = try statusOf(folder, name) } catch {
                if error.errno == Errno.noSuchFile.rawValue || !photo { continue }
                unreadable.insert(path)
                report.unreadable[path] = error.description
                continue
            }
            if st.isRegularFile && photo {
                files[path] = st
            } else if st.isDirectory && depth < StoreRequest.maxFolderDepth {
                let sub: FileDescriptor
                do { sub = try folder.openSubdirectory(name) } catch where error.code == .noSuchFile || error.code == .tooManySymlinks || error.code == .notDirectory {
                    continue  // gone, or replaced by a symlink since its status was read
                } catch {
                    unreadableFolders.append(path + "/")
                    report.unreadable[path + "/"] = "cannot open the folder: \(error)"
                    continue
                }
                defer { sub.close() }
                try walk(sub, prefix: path + "/", depth: depth + 1, files: &files, unreadable: &unreadable,
                         unreadableFolders: &unreadableFolders, report: &report)
            }
        }
    }

    /// Removes what a process killed mid-write left in the thumbnails folder: temporary files
    /// of processes that no longer exist, and thumbnails whose entry is gone. Returns how many.
    @discardableResult
    public func sweepThumbnails() throws(LibraryError) -> Int {
        let ids = try database.readTransaction { () throws(LibraryError) -> Set<Int64> in
            let s = try database.prepare("SELECT id FROM photos").bind()
            var ids = Set<Int64>()
            while try s.step() { if let id = s.int(0) { ids.insert(id) } }
            return ids
        }
        var removed = 0
        // No thumbnail folder (or an unreadable one, or a symlink in its place): nothing to sweep.
        guard let folder = try? openThumbnailFolder() else { return 0 }
        defer { folder.close() }
        // A folder that cannot be listed has nothing to sweep now; the next start tries again.
        for name in (try? folder.entries()) ?? [] {
            let parts = name.split(separator: ".")
            var stale = false
            if parts.count == 4, parts[1] == "png", parts[2] == "tmp", let pid = Int32(parts[3]) {
                stale = pid != processID() && !processExists(pid)  // "<id>.png.tmp.<pid>" (writeFileAtomically)
            } else if parts.count == 2, parts[1] == "png", let id = Int64(parts[0]) {
                stale = !ids.contains(id)
            }
            // One that cannot be removed now is tried again at the next start.
            if stale, (try? folder.unlink(name)) != nil { removed += 1 }
        }
        return removed
    }

    /// Photos are the directory's regular files named *.png, *.jpg or *.jpeg (any case), not hidden.
    static func isPhotoName(_ name: String) -> Bool {
        !name.startsWithScalar(".") && PhotoType(fileName: name) != nil
    }

    /// Indexes one photo: reads its header, makes its thumbnail (SHA-256 first when the index
    /// has none), and records them; a file that cannot be decoded is recorded with the reason.
    @discardableResult
    public func index(id: Int64, cancel: UnsafePointer<Int32>? = nil) throws(LibraryError) -> IndexOutcome {
        try index(ids: [id], cancel: cancel).first?.outcome ?? .gone
    }

    /// Indexes photos together, as `index(id:)` does one, in one batch: their files are read
    /// on up to `readers` threads (hashes, headers and thumbnails, which need no index), their
    /// thumbnails made durable with one file-system flush and their entries written in one
    /// transaction (per photo, those two cost more than reading a small photo). Returns each
    /// photo's outcome, in order; photos that `cancel` stopped say `.cancelled`.
    public func index(ids: [Int64], readers: Int = 1, cancel: UnsafePointer<Int32>? = nil) throws(LibraryError) -> [(id: Int64, outcome: IndexOutcome)] {
        var outcomes: [Int64: IndexOutcome] = [:]
        let rows = try photos(ids: ids)
        for id in ids where rows[id] == nil { outcomes[id] = .gone }
        let photos = ids.compactMap { rows[$0] }
        let readings = read(photos, readers: readers, cancel: cancel)
        var examined: [Examined] = []
        for (photo, reading) in zip(photos, readings) {
            if case .missing = reading {
                // Renamed by ptk between reading the entry and opening the file, or deleted.
                switch try examine(id: photo.id, cancel: cancel) {
                case .done(let outcome): outcomes[photo.id] = outcome
                case .examined(let e): examined.append(e)
                }
                continue
            }
            switch examination(of: photo, reading) {
            case .done(let outcome): outcomes[photo.id] = outcome
            case .examined(let e): examined.append(e)
            }
        }
        // Thumbnails first, then the entries: an entry never names a thumbnail not yet on disk.
        let made = examined.filter { $0.thumbnail?.outcome == .made }
        let errors = writeThumbnails(made.map { ("\($0.id).png", $0.thumbnail!.png) })
        for (e, error) in zip(made, errors) {
            guard let error else { continue }
            if Self.isPassing(error) {
                outcomes[e.id] = .retryLater(name: e.name, reason: "cannot write the thumbnail: \(error)")
            }
            if let i = examined.firstIndex(where: { $0.id == e.id }) {
                examined[i].thumbnail = nil
                examined[i].problem = "cannot write the thumbnail: \(error)"
            }
        }
        examined.removeAll { outcomes[$0.id] != nil }
        // A stale thumbnail left behind is not shown (the entry says none) and the next sweep removes it.
        for e in examined where e.thumbnail?.outcome != .made { try? removeThumbnail(e.id) }
        let changed = try database.writeTransaction { () throws(LibraryError) -> [Int64: Int] in
            let update = try database.prepare("""
                UPDATE photos SET sha256 = ?, size = coalesce(?, size), width = ?, height = ?, bit_depth = ?, color_type = ?,
                    interlace = ?, indexed = 1, thumbnail = ?, problem = ?, inode = ?, mtime = ?,
                    orientation = ?, taken = ?, taken_ms = ?, camera_make = ?, camera_model = ?, location = ?
                WHERE id = ? AND name = ?
                """)
            var changed: [Int64: Int] = [:]
            for e in examined {
                let header = e.thumbnail.flatMap { $0.width > 0 ? $0 : nil }
                let facts = e.thumbnail?.facts ?? PhotoFacts()
                try update.bind(e.sha256, e.status?.size, header?.width, header?.height, header?.bitDepth, header?.colorType,
                                header?.interlace, e.thumbnail?.outcome == .made, e.problem, e.status.map { Int64(bitPattern: $0.inode) },
                                e.status.map { $0.modifiedTime.milliseconds }, facts.orientation, facts.taken, facts.takenTime?.milliseconds,
                                facts.make, facts.model, e.thumbnail == nil ? nil : (facts.hasLocation ? 1 : 0), e.id, e.name).run()
                changed[e.id] = database.changes
            }
            return changed
        }
        for e in examined {
            let made = e.thumbnail?.outcome == .made
            if changed[e.id] == 0 {
                // The entry went meanwhile (ptk rm), or was renamed: its thumbnail goes too.
                if made, try photo(id: e.id) == nil { try? removeThumbnail(e.id) }
                outcomes[e.id] = .gone
            } else {
                outcomes[e.id] = .indexed(name: e.name, problem: made ? nil : e.problem)
            }
        }
        return ids.map { ($0, outcomes[$0] ?? .gone) }
    }

    /// Writes thumbnails (`writeFilesAtomically`) into the thumbnails folder, once it is seen
    /// to be a folder below the photos directory reached through no symlink (`.ptk` or
    /// `thumbnails` swapped for one since the library was opened writes nothing). Returns each
    /// one's error or nil.
    private func writeThumbnails(_ files: [(name: String, bytes: [UInt8])]) -> [SystemError?] {
        guard !files.isEmpty else { return [] }
        do { try photos.openBeneath(Self.folderName + "/thumbnails", flags: [.readOnly, .directory]).close() } catch {
            let shown = SystemError(call: error.call, object: thumbnailFolder, errno: error.errno)
            return files.map { _ in shown }
        }
        return writeFilesAtomically(in: thumbnailFolder, files, mode: 0o644)
    }

    /// The entries of `ids` that the index has, by id, in one query.
    func photos(ids: [Int64]) throws(LibraryError) -> [Int64: Photo] {
        guard !ids.isEmpty else { return [:] }
        let list = ids.map(String.init).joined(separator: ",")
        let s = try database.prepare("SELECT \(Self.columns) FROM photos WHERE id IN (\(list))").bind()
        var found: [Int64: Photo] = [:]
        while try s.step() {
            let p = Self.photo(from: s)
            found[p.id] = p
        }
        return found
    }

    /// What reading a photo's file gave: everything but the index.
    private enum Reading: @unchecked Sendable {
        // FileStatus and Thumbnail are values; the enum crosses to the reading thread and back once.
        case missing
        case cancelled
        case passing(String)
        case unusable(FileStatus?, sha256: String?, problem: String)
        case read(FileStatus, sha256: String?, Thumbnail)
    }

    /// Reads `photos` on up to `readers` threads (the calling one included), each with a hash
    /// buffer of its own. Threads that cannot be started leave their share to the calling thread.
    private func read(_ photos: [Photo], readers: Int, cancel: UnsafePointer<Int32>?) -> [Reading] {
        let results = ReadingResults<Reading>(count: photos.count)
        // The opener is a plain open, or a test's; either may run on the reading threads.
        let opener = UncheckedSendable(openForIndexing)
        let directory = self.photos
        let limit = pixelLimit
        let cancelFlag = cancel.map { SendablePointer(pointer: $0) }
        let shares = max(1, min(readers, photos.count / 8 + 1))
        // Joined before returning: none of them outlives the call, in a C library or its
        // thread-local clean-up.
        let threads = ThreadGroup()
        for share in 1..<shares {
            let indices = Array(stride(from: share, to: photos.count, by: shares))
            let mine = indices.map { photos[$0] }
            do {
                try threads.start(name: "index-reader") {
                    lowerThreadPriority()
                    let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 64)
                    defer { buffer.deallocate() }
                    for (i, photo) in zip(indices, mine) {
                        results.set(i, Self.read(photo, in: directory, open: opener.value, pixelLimit: limit, buffer: buffer, cancel: cancelFlag?.pointer))
                    }
                }
            } catch {
                // No thread: this share is read here, after the calling thread's own.
                for i in indices { results.set(i, Self.read(photos[i], in: directory, open: opener.value, pixelLimit: limit, buffer: hashBuffer, cancel: cancel)) }
            }
        }
        for i in stride(from: 0, to: photos.count, by: shares) {
            results.set(i, Self.read(photos[i], in: directory, open: opener.value, pixelLimit: limit, buffer: hashBuffer, cancel: cancel))
        }
        threads.join(until: nil)
        return results.all
    }

    /// Opens, checks, hashes (when the index has no hash, or the size changed) and thumbnails
    /// one photo. Touches no index.
    private static func read(_ photo: Photo, in directory: FileDescriptor, open: (String, FileDescriptor) throws(SystemError) -> FileDescriptor,
                             pixelLimit: UInt64, buffer: UnsafeMutableRawBufferPointer, cancel: UnsafePointer<Int32>?) -> Reading {
        if let cancel, cancel.pointee != 0 { return .cancelled }
        let fd: FileDescriptor
        do { fd = try open(photo.name, directory) } catch where error.code == .noSuchFile {
            return .missing
        } catch {
            return isPassing(error) ? .passing("cannot open: \(error)") : .unusable(nil, sha256: photo.sha256, problem: "cannot open: \(error)")
        }
        defer { fd.close() }
        let st: FileStatus
        do { st = try fd.status() } catch {
            return isPassing(error) ? .passing("cannot read its status: \(error)") : .unusable(nil, sha256: photo.sha256, problem: "cannot read its status: \(error)")
        }
        guard st.isRegularFile else { return .unusable(nil, sha256: photo.sha256, problem: "not a regular file") }
        var sha256 = photo.sha256
        if sha256 == nil || photo.size != st.size {
            switch hashFile(fd, buffer: buffer, cancel: cancel) {
            case .success(let digest): sha256 = digest
            case .failure(.cancelled): return .cancelled
            case .failure(.system(let error)):
                return isPassing(error) ? .passing("cannot read: \(error)") : .unusable(st, sha256: nil, problem: "cannot read: \(error)")
            case .failure(.sizeChanged):
                // Read to its end, whatever its size: a file still being written is read again later.
                return .passing("it changed while it was read")
            }
            // The thumbnail reads from the start; a descriptor whose offset cannot be reset is
            // left for the next try.
            do { _ = try fd.seek(to: 0) } catch { return .passing("cannot read: \(error)") }
        }
        let thumbnail = Thumbnailer.make(from: fd, type: PhotoType(fileName: photo.name) ?? .png, pixelLimit: pixelLimit, cancel: cancel)
        if thumbnail.outcome == .cancelled { return .cancelled }
        return .read(st, sha256: sha256, thumbnail)
    }

    /// What is to be written for `photo` after `reading` (never `.missing`, which the caller handles).
    private func examination(of photo: Photo, _ reading: Reading) -> Examination {
        switch reading {
        case .missing, .cancelled: return .done(.cancelled)
        case .passing(let reason): return .done(.retryLater(name: photo.name, reason: reason))
        case .unusable(let st, let sha256, let problem):
            return .examined(Examined(id: photo.id, name: photo.name, status: st, sha256: sha256, thumbnail: nil, problem: problem))
        case .read(let st, let sha256, let thumbnail):
            return .examined(Examined(id: photo.id, name: photo.name, status: st, sha256: sha256, thumbnail: thumbnail,
                                      problem: thumbnail.problem ?? thumbnail.notes))
        }
    }

    /// What `examine` found of one photo, to be written with the others of its batch.
    private struct Examined {
        var id: Int64
        var name: String
        var status: FileStatus?
        var sha256: String?
        var thumbnail: Thumbnail?
        var problem: String?
    }

    private enum Examination {
        /// Nothing to write: gone, cancelled or to be tried later.
        case done(IndexOutcome)
        case examined(Examined)
    }

    /// Reads one photo on this thread, following a rename by ptk between reading the entry and
    /// opening the file; drops the entry of a file that is gone.
    private func examine(id: Int64, cancel: UnsafePointer<Int32>?) throws(LibraryError) -> Examination {
        for _ in 0..<5 {
            guard let photo = try photo(id: id) else { return .done(.gone) }
            let reading = Self.read(photo, in: photos, open: openForIndexing, pixelLimit: pixelLimit, buffer: hashBuffer, cancel: cancel)
            guard case .missing = reading else { return examination(of: photo, reading) }
            if try self.photo(id: id)?.name != photo.name { continue }
            try database.writeTransaction { () throws(LibraryError) in
                try database.prepare("DELETE FROM photos WHERE id = ? AND name = ?").bind(id, photo.name).run()
            }
            // A thumbnail left behind is removed by the next sweep at start.
            try? removeThumbnail(id)
            return .done(.gone)
        }
        return .done(.gone)
    }

    /// What `index` did.
    public enum IndexOutcome: Equatable, Sendable {
        /// Recorded; `problem` says why there is no thumbnail, when there is none.
        case indexed(name: String, problem: String?)
        /// The entry or its file is gone (the entry is dropped with it).
        case gone
        /// `cancel` stopped it: the photo stays pending.
        case cancelled
        /// A passing error (`isPassing`): the photo stays pending, to be tried again later.
        case retryLater(name: String, reason: String)
    }

    // MARK: Changes (ptk)

    /// The name `newName` gives a photo of `type` now at `current`: its last component by the
    /// rules of received names; the folders before it (each by those rules, at most
    /// `StoreRequest.maxFolderDepth`) when it has any, else `current`'s own folder.
    static func renamed(_ current: String, to newName: String, type: PhotoType) -> String {
        // Every "/" is found by scalars: "../\u{301}x.png" has a "/" though no Character is "/".
        var parts = newName.parts(separatedBy: "/", omittingEmpty: true)
        // "bob/" (or "/" for the top folder) moves the photo keeping its name.
        if newName.endsWithScalar("/") { parts.append(current.parts(separatedBy: "/", omittingEmpty: true).last ?? current) }
        let leaf = PhotoStore.finalName(parts.last ?? newName, type: type)
        guard newName.containsScalar("/") else {
            guard let folder = splitLastComponent(current).folder else { return leaf }
            return folder + "/" + leaf
        }
        let folders = parts.dropLast().map(PhotoStore.folderName)
        return (folders + [leaf]).joined(separator: "/")
    }

    /// Renames a photo's file and entry together, moving it to another folder (made as needed)
    /// when the new name has folders ("bob/IMG_1.png"). The new name follows the rules of
    /// received names and never replaces a file. Returns the photo as renamed.
    public func rename(_ name: String, to newName: String) throws(LibraryError) -> Photo {
        var photo = try find(name)
        // A JPEG keeps a JPEG ending (and a PNG a PNG one): the name says what the file is.
        if newName.containsScalar("/") && newName != "/" {
            // "/" alone moves a photo to the top folder; otherwise every folder must be one the store makes.
            let folders = pathComponents(newName).dropLast().joined(separator: "/")
            guard StoreRequest.isValidFolder(folders) else {
                throw LibraryError(.refused, "'\(folders)' is not a folder a photo can move to (at most \(StoreRequest.maxFolderDepth) names, none empty, '..' or starting with a dot)")
            }
        }
        let final = Self.renamed(photo.name, to: newName, type: PhotoType(fileName: photo.name) ?? .png)
        if final == photo.name { throw LibraryError(.refused, "'\(photo.name)' already has that name") }
        try database.writeTransaction { () throws(LibraryError) in
            guard try self.photo(id: photo.id)?.name == photo.name else {
                throw LibraryError(.refused, "'\(photo.name)' changed while renaming it; try again")
            }
            let taken = try database.prepare("SELECT id FROM photos WHERE name = ?").bind(final)
            // Anything at the new name (even what cannot be read) means it is taken.
            if try taken.step() || (try? photos.statusBeneath(final)) != nil {
                throw LibraryError(.refused, "'\(final)' exists; ptk rename never replaces a photo")
            }
            do throws(SystemError) { try move(photo.name, to: final) } catch {
                if error.code == .exists { throw LibraryError(.refused, "'\(final)' exists; ptk rename never replaces a photo") }
                throw LibraryError(.io, "cannot rename '\(photo.name)' to '\(final)': \(error)")
            }
            do throws(LibraryError) {
                try database.prepare("UPDATE photos SET name = ? WHERE id = ?").bind(final, photo.id).run()
            } catch {
                // If even this fails, the next reconcile follows the file to its new name.
                try? move(final, to: photo.name)
                throw error
            }
        }
        photo.name = final
        return photo
    }

    /// Moves the photo file `old` to `new` (both relative to the directory), making the folders
    /// `new` needs; never replaces a file, never follows a symlink.
    private func move(_ old: String, to new: String) throws(SystemError) {
        let from = try photos.parentBeneath(old)
        defer { from.close() }
        let (inFolder, leaf) = splitLastComponent(new)
        let folder = inFolder ?? ""
        let to = folder.isEmpty ? photos : try photos.openDirectoryBeneath(folder, creating: 0o755, ownerOf: directory)
        defer { if !folder.isEmpty { to.close() } }
        try to.move(from.name, in: from.folder, to: leaf)
        try to.sync()
        if from.folder.rawValue != to.rawValue { try from.folder.sync() }
    }

    /// The photo the library keeps with these bytes (SHA-256 and size), if its file is still
    /// there with that size: its name. What `duplicates = skip` looks up.
    public func held(sha256: String, size: Int64) throws(LibraryError) -> String? {
        let s = try database.prepare("SELECT name FROM photos WHERE sha256 = ? AND size = ? ORDER BY id").bind(sha256, size)
        while try s.step() {
            guard let name = s.text(0) else { continue }
            // The file may have gone or changed since it was indexed: only a file still there counts.
            if let st = try? photos.statusBeneath(name), st.isRegularFile, st.size == size { return name }
        }
        return nil
    }

    /// Removes photos' files, entries and thumbnails.
    public func remove(_ name: String) throws(LibraryError) -> Photo {
        let photo = try find(name)
        try database.writeTransaction { () throws(LibraryError) in
            try database.prepare("DELETE FROM photos WHERE id = ?").bind(photo.id).run()
            do throws(SystemError) {
                let place = try photos.parentBeneath(photo.name)
                defer { place.close() }
                try place.folder.unlink(place.name)
            } catch where error.code == .noSuchFile {} catch {
                throw LibraryError(.io, "cannot remove '\(photo.name)': \(error)")
            }
        }
        // A thumbnail left behind is removed by the next sweep at start.
        try? removeThumbnail(photo.id)
        return photo
    }

    /// Sets (or, with nil or "", clears) a photo's note.
    public func setNote(_ name: String, _ note: String?) throws(LibraryError) -> Photo {
        var photo = try find(name)
        let text = note.flatMap { $0.isEmpty ? nil : $0 }
        try database.writeTransaction { () throws(LibraryError) in
            try database.prepare("UPDATE photos SET note = ? WHERE id = ?").bind(text, photo.id).run()
        }
        photo.note = text
        return photo
    }

    /// Sets (0-5) or clears (nil) a photo's rating.
    public func setRating(_ name: String, _ rating: Int?) throws(LibraryError) -> Photo {
        if let rating, !(0...5).contains(rating) { throw LibraryError(.badInput, "a rating is 0 to 5") }
        var photo = try find(name)
        try database.writeTransaction { () throws(LibraryError) in
            try database.prepare("UPDATE photos SET rating = ? WHERE id = ?").bind(rating, photo.id).run()
        }
        photo.rating = rating
        return photo
    }
}

extension Photo {
    /// True when `sender` names this photo's sender: its HELLO name (any case), its address
    /// (with or without the port), or a prefix of its device ID (dashes and case ignored).
    public func isFrom(_ sender: String) -> Bool {
        if let senderName, senderName.lowercased() == sender.lowercased() { return true }
        if let senderAddress {
            if senderAddress == sender { return true }
            if let host = senderAddress.hostPart, host == sender || host == "[\(sender)]" { return true }
        }
        if let senderID {
            let want = String(sender.uppercased().filter { $0 != "-" && $0 != " " })
            if want.count >= 4, senderID.filter({ $0 != "-" }).hasPrefix(want) { return true }
        }
        return false
    }
}

extension String {
    /// "192.0.2.1" of "192.0.2.1:5000", "[2001:db8::1]" of "[2001:db8::1]:5000".
    var hostPart: String? {
        guard let colon = lastIndex(of: ":") else { return nil }
        let host = self[..<colon]
        if host.contains(":") && !host.hasPrefix("[") { return nil }
        return String(host)
    }
}

/// The readings of one batch, filled in by several threads, each its own slots.
private final class ReadingResults<T>: @unchecked Sendable {
    // Each slot is written by one thread, and read after every thread has signalled it is done.
    private var slots: [T?]
    private let lock = Lock()
    init(count: Int) { slots = Array(repeating: nil, count: count) }
    func set(_ i: Int, _ value: T) { lock.withLock { slots[i] = value } }
    var all: [T] { lock.withLock { slots.map { $0! } } }
}

/// A pointer handed to reading threads: the cancel flag, which the indexer owns for its life
/// and the C code polls.
private struct SendablePointer: @unchecked Sendable {
    let pointer: UnsafePointer<Int32>
}

/// A value handed to the reading threads that the compiler cannot see is safe to share.
private struct UncheckedSendable<T>: @unchecked Sendable {
    let value: T
    init(_ value: T) { self.value = value }
}
