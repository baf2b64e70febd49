import PTKStore
import PTKSystem
import PTKVocabulary

/// What ptkd records of the directory: the photos it saves (`record`), what was added,
/// changed or removed behind its back (`reconcile`), and what a killed process left in the
/// thumbnails and previews folders (`sweepThumbnails`).
extension PhotoLibrary {
    /// Enters photos ptkd has just saved, to be indexed; an entry of the same name (a file the
    /// reconcile found first, or a stale one) takes the new photo's facts.
    public func record(_ arrivals: [Arrival]) throws(LibraryError) {
        guard !arrivals.isEmpty else { return }
        try database.writeTransaction { () throws(LibraryError) in
            let s = try database.prepare(
                """
                INSERT INTO photos(name, size, sha256, received, sender_name, sender_address, sender_id) VALUES (?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT(name) DO UPDATE SET size = excluded.size, sha256 = excluded.sha256, received = excluded.received,
                    sender_name = excluded.sender_name, sender_address = excluded.sender_address, sender_id = excluded.sender_id,
                    note = NULL, rating = NULL, indexed = 0, problem = NULL
                """)
            for a in arrivals {
                try s.bind(a.name, a.size, a.sha256, a.received.milliseconds, a.senderName, a.senderAddress, a.senderID)
                    .run()
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
        /// A report of nothing changed, filled in as `reconcile` goes.
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
            try walk(
                photos, prefix: "", depth: 0, files: &files, unreadable: &unreadable,
                unreadableFolders: &unreadableFolders, report: &report)
            struct Known {
                var id: Int64
                var size: Int64
                var inode: Int64?
                var modified: Int64?
            }
            var known: [String: Known] = [:]
            let all = try database.prepare("SELECT id, name, size, inode, mtime FROM photos").bind()
            while try all.step() {
                known[all.text(1) ?? ""] = Known(
                    id: all.int(0) ?? 0, size: all.int(2) ?? 0, inode: all.int(3), modified: all.int(4))
            }
            var unknown = files.filter { known[$0.key] == nil }
            let gone = known.filter { entry in
                files[entry.key] == nil && !unreadable.contains(entry.key)
                    && !unreadableFolders.contains { entry.key.utf8.starts(with: $0.utf8) }
            }
            let rename = try database.prepare("UPDATE photos SET name = ? WHERE id = ?")
            let drop = try database.prepare("DELETE FROM photos WHERE id = ?")
            // The new names by inode and size, so that matching every gone entry is one lookup
            // each (a whole library renamed by hand is not quadratic).
            struct FileKey: Hashable {
                var inode: Int64
                var size: Int64
            }
            var unknownByKey: [FileKey: [String]] = [:]
            if !gone.isEmpty {
                for (name, st) in unknown {
                    unknownByKey[FileKey(inode: Int64(bitPattern: st.inode), size: st.size), default: []].append(name)
                }
            }
            for (_, entry) in gone.sorted(by: { $0.value.id < $1.value.id }) {
                if let inode = entry.inode, let match = unknownByKey[FileKey(inode: inode, size: entry.size)]?.popLast()
                {
                    try rename.bind(match, entry.id).run()
                    unknown[match] = nil
                    report.moved += 1
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
                    || (entry.modified != nil && entry.modified != modified)
                {
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
        // A thumbnail or preview left behind is removed by the next sweep at start.
        for id in removedThumbnails { try? removeRenditions(id) }
        return report
    }

    /// Adds the photo files of `folder` (named with `prefix`, "" for the directory itself) and
    /// of its folders to `files`: folders at most `StoreRequest.maxFolderDepth` deep, hidden
    /// names (`.ptk`, `.incoming`) skipped, symlinks never followed.
    private func walk(
        _ folder: FileDescriptor, prefix: String, depth: Int, files: inout [String: FileStatus],
        unreadable: inout Set<String>,
        unreadableFolders: inout [String], report: inout ReconcileReport
    ) throws(LibraryError) {
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
                do { sub = try folder.openSubdirectory(name) } catch
                    where error.code == .noSuchFile || error.code == .tooManySymlinks || error.code == .notDirectory
                {
                    continue  // gone, or replaced by a symlink since its status was read
                } catch {
                    unreadableFolders.append(path + "/")
                    report.unreadable[path + "/"] = "cannot open the folder: \(error)"
                    continue
                }
                defer { sub.close() }
                try walk(
                    sub, prefix: path + "/", depth: depth + 1, files: &files, unreadable: &unreadable,
                    unreadableFolders: &unreadableFolders, report: &report)
            }
        }
    }

    /// Removes what a process killed mid-write left in the thumbnails and previews folders,
    /// and what no entry names: temporary files of processes that no longer exist
    /// ("<name>.tmp.<pid>", `writeFilesAtomically`), the 256-pixel `<id>.png` thumbnails of
    /// schemas before 5 whose entry no longer shows them (`thumbnail` is not 1), thumbnails (`<id>-<side>.<ext>`) and previews (`<id>.<ext>`) whose
    /// entry is gone or names another format, and previews of photos that need none or whose
    /// preview failed. Returns how many files it removed.
    @discardableResult
    public func sweepThumbnails() throws(LibraryError) -> Int {
        let entries = try database.readTransaction {
            () throws(LibraryError) -> [Int64: (thumbnail: Int64, preview: Int64?)] in
            let s = try database.prepare("SELECT id, thumbnail, preview FROM photos").bind()
            var entries: [Int64: (thumbnail: Int64, preview: Int64?)] = [:]
            while try s.step() { if let id = s.int(0) { entries[id] = (s.int(1) ?? 0, s.int(2)) } }
            return entries
        }
        var removed = 0
        for folderName in ["thumbnails", "previews"] {
            // No such folder (or an unreadable one, or a symlink in its place): nothing to sweep.
            guard let folder = try? openLibraryFolder(folderName) else { continue }
            defer { folder.close() }
            // A folder that cannot be listed has nothing to sweep now; the next start tries again.
            for name in (try? folder.entries()) ?? [] {
                let stale =
                    folderName == "thumbnails"
                    ? Self.isStaleThumbnail(name, entries) : Self.isStalePreview(name, entries)
                // One that cannot be removed now is tried again at the next start.
                if stale, (try? folder.unlink(name)) != nil { removed += 1 }
            }
        }
        return removed
    }

    /// A temporary file of a process that no longer exists: "<name>.tmp.<pid>".
    private static func isStaleTemporary(_ name: String) -> Bool {
        let parts = name.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4, parts[2] == "tmp", let pid = Int32(parts[3]) else { return false }
        return pid != processID() && !processExists(pid)
    }

    /// The format a library file's ending names ("jpg", "png"), nil for another.
    private static func renditionType(_ ending: Substring) -> PhotoType? {
        [PhotoType.jpeg, .png].first { $0.fileExtension == ending }
    }

    /// A file of the thumbnails folder that is to go (`sweepThumbnails`); anything else is left.
    private static func isStaleThumbnail(_ name: String, _ entries: [Int64: (thumbnail: Int64, preview: Int64?)])
        -> Bool
    {
        if isStaleTemporary(name) { return true }
        let parts = name.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2, let type = renditionType(parts[1]) else { return false }
        // "<id>.png" of schemas before 5: kept while its entry still shows it (not indexed again yet).
        if type == .png, let id = Int64(parts[0]) { return entries[id]?.thumbnail != oldThumbnail }
        let stem = parts[0].split(separator: "-", omittingEmptySubsequences: false)
        guard stem.count == 2, let id = Int64(stem[0]), let side = Int(stem[1]), Thumbnailer.gallerySides.contains(side)
        else { return false }
        guard let entry = entries[id] else { return true }
        // Another format than the entry's made one; none made yet: left to the indexing that writes it.
        return thumbnailTypes[entry.thumbnail].map { $0 != type } ?? false
    }

    /// A file of the previews folder that is to go (`sweepThumbnails`); anything else is left.
    private static func isStalePreview(_ name: String, _ entries: [Int64: (thumbnail: Int64, preview: Int64?)]) -> Bool
    {
        if isStaleTemporary(name) { return true }
        let parts = name.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2, let type = renditionType(parts[1]), let id = Int64(parts[0]) else { return false }
        guard let entry = entries[id] else { return true }
        switch entry.preview {
        case nil: return false  // pending: replaced when made
        case 0, 2: return true  // none needed, or failed
        case let made?: return previewMade[type] != made
        }
    }

    /// Photos are the directory's regular files named *.png, *.jpg or *.jpeg (any case), not hidden.
    static func isPhotoName(_ name: String) -> Bool {
        !name.startsWithScalar(".") && PhotoType(fileName: name) != nil
    }
}
