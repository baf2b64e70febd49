import PTKSystem
import PTKVocabulary

/// Reading the index: the photos, in an order or one by one, by name, by id or pending;
/// a photo's thumbnail. Reads only, so ptk reads while ptkd writes.
extension PhotoLibrary {
    /// The width or height a row may say (a PNG's limit): within it, any arithmetic on sizes fits.
    static let sideRange: ClosedRange<Int64> = 1...Int64(Int32.max)

    /// The `thumbnail` column's values of the gallery thumbnails' formats (schema 5).
    static let thumbnailTypes: [Int64: PhotoType] = [2: .jpeg, 3: .png]
    /// The `thumbnail` column's value of the 256-pixel `<id>.png` of schemas before 5, kept
    /// until the photo is indexed again.
    static let oldThumbnail: Int64 = 1
    /// The `preview` column's values of previews made, by format.
    static let previewMade: [PhotoType: Int64] = [.jpeg: 1, .png: 3]

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
        let s = try database.prepare("SELECT \(Self.columns) FROM photos WHERE id > ? ORDER BY id LIMIT ?").bind(
            id, limit)
        var list: [Photo] = []
        while try s.step() { list.append(Self.photo(from: s)) }
        return list
    }

    /// The highest id given so far (0 before the first photo): that of a photo since deleted
    /// too, as SQLite's AUTOINCREMENT keeps it.
    public func lastID() throws(LibraryError) -> Int64 {
        let s = try database.prepare(
            "SELECT max(coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'photos'), 0), coalesce((SELECT max(id) FROM photos), 0))"
        ).bind()
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
        for ending in endings + endings.map({ $0.uppercased() }) where !candidates.contains(name + ending) {
            candidates.append(name + ending)
        }
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
                    throw LibraryError(
                        .refused,
                        "'\(name)' names \(inFolders.count) photos: \(inFolders.joined(separator: ", ")); give its folder too"
                    )
                }
            }
        }
        let notIndexed = (try? photos.statusBeneath(name)) != nil  // a file there that the index does not know yet
        throw LibraryError(
            .notFound(suggestions: closestNames(to: name, in: names)),
            notIndexed
                ? "'\(name)' is in \(directory) but not in the library yet (ptkd indexes it shortly, or at its next start)"
                : "no photo named '\(name)' in \(directory)")
    }

    /// How many photos wait to be indexed.
    public func pendingCount() throws(LibraryError) -> Int {
        let s = try database.prepare("SELECT count(*) FROM photos WHERE indexed = 0").bind()
        return try s.step() ? Int(s.int(0) ?? 0) : 0
    }

    /// The ids of photos waiting to be indexed, senders taking turns: each sender's oldest,
    /// oldest first, then each one's second, and so on. A sender is the address it sent from
    /// (without its port: a new connection, or a new certificate, is no new sender), else its
    /// identity; photos found in the directory are one sender. So one sender's hundreds of
    /// photos that are slow to read (decompression bombs within the pixel limit) do not keep
    /// another's first photo waiting behind them.
    public func pending(limit: Int) throws(LibraryError) -> [Int64] {
        try inTurns(where: "indexed = 0", limit: limit)
    }

    /// The ids of the photos `condition` selects, senders taking turns (`pending`).
    func inTurns(where condition: String, limit: Int) throws(LibraryError) -> [Int64] {
        let s = try database.prepare(
            """
            SELECT id FROM (
                SELECT id, row_number() OVER (PARTITION BY coalesce(CASE WHEN sender_address LIKE '[%'
                    THEN substr(sender_address, 1, instr(sender_address, ']')) ELSE rtrim(sender_address, '0123456789') END,
                    sender_id, '') ORDER BY id) AS turn
                FROM photos WHERE \(condition))
            ORDER BY turn, id LIMIT ?
            """
        ).bind(limit)
        var ids: [Int64] = []
        while try s.step() { if let id = s.int(0) { ids.append(id) } }
        return ids
    }

    /// A library folder in `.ptk` ("thumbnails", "previews"), opened below the photos
    /// directory without following a symlink (`.ptk` and the folder are each refused when
    /// they are one).
    func openLibraryFolder(_ name: String) throws(LibraryError) -> FileDescriptor {
        let library = try Self.openFolder(Self.folderName, in: photos, path: folder)
        defer { library.close() }
        return try Self.openFolder(name, in: library, path: folder + "/" + name)
    }

    /// The thumbnails folder, opened as `openLibraryFolder` opens it.
    func openThumbnailFolder() throws(LibraryError) -> FileDescriptor { try openLibraryFolder("thumbnails") }

    /// The file `name` of the library folder `folderName`, read through the folder's
    /// descriptor, without following a symlink or waiting on a FIFO, and only from a regular
    /// file of one name (the library makes no other: one file linked at many photos' names
    /// would have a gallery copy it for each), of at most `limit` bytes, with no holes (the
    /// library writes every byte of what it makes: a sparse file of 16 MiB takes no room on
    /// the service user's disk, and a copy of it 16 MiB on root's). `failure` starts the
    /// error's message.
    private func readLibraryFile(_ name: String, in folderName: String, limit: Int, failure: String)
        throws(LibraryError) -> [UInt8]
    {
        let path = folder + "/" + folderName + "/" + name
        let folder: FileDescriptor
        do { folder = try openLibraryFolder(folderName) } catch {
            throw LibraryError(.io, "\(failure): \(error.description)")
        }
        defer { folder.close() }
        let fd: FileDescriptor
        do {
            fd = try FileDescriptor.open(name, relativeTo: folder, flags: [.readOnly, .nonBlocking, .noFollow])
        } catch {
            if error.code == .tooManySymlinks {
                throw LibraryError(.io, "\(failure): \(path): is a symbolic link; not followed")
            }
            throw LibraryError(.io, "\(failure): \(SystemError(call: error.call, object: path, errno: error.errno))")
        }
        defer { fd.close() }
        do {
            let found = try fd.statusWithLinks()
            guard found.status.isRegularFile else {
                throw LibraryError(.io, "\(failure): \(path): is \(found.kind), not a regular file; not read")
            }
            guard found.links == 1 else {
                throw LibraryError(
                    .io,
                    "\(failure): \(path): has \(found.links) hard links, and the library makes files of one name; not read"
                )
            }
            guard found.status.size <= Int64(limit) else {
                throw LibraryError(
                    .io,
                    "\(failure): \(path): is \(found.status.size) bytes, more than the library makes there (\(limit >> 10) KiB at most); not read"
                )
            }
            guard !fd.hasHoles(size: found.status.size) else {
                throw LibraryError(
                    .io,
                    "\(failure): \(path): is a sparse file (it has holes), which the library never writes; not read")
            }
            return try fd.readAll(limit: limit, name: path)
        } catch let error as LibraryError {
            throw error
        } catch {
            throw LibraryError(.io, "\(failure): \(error)")
        }
    }

    /// The bytes of the largest gallery thumbnail of `photo` (`thumbnail(of:side:)` of the
    /// largest of `Thumbnailer.gallerySides`: a JPEG, or a PNG for a photo with transparency or a small PNG),
    /// nil when it has none: what `ptk thumbnail` writes.
    public func thumbnail(of photo: Photo) throws(LibraryError) -> [UInt8]? {
        try thumbnail(of: photo, side: Thumbnailer.gallerySides.max()!)?.bytes
    }

    /// The gallery thumbnail of `photo` for `side` (one of `Thumbnailer.gallerySides`; nil for
    /// another), nil when it has none: `.ptk/thumbnails/<id>-<side>.<jpg|png>` (the old `<id>.png`
    /// for every side while `Photo.hasOldThumbnail`), read through the
    /// thumbnails folder's descriptor, without following a symlink or waiting on a FIFO, and
    /// only from a regular file of one name without holes of at most
    /// `Thumbnailer.largestThumbnailBytes` (1 MiB). Its width and height are not stored: they
    /// are the photo's size as shown fitted within `side` (`Photo.fitted`, the thumbnailer's
    /// rule; within `Thumbnailer.maxSide`, the old thumbnail's, for every side while
    /// `Photo.hasOldThumbnail`), 0 when the index does not know the photo's size.
    public func thumbnail(of photo: Photo, side: Int) throws(LibraryError) -> Rendition? {
        guard Thumbnailer.gallerySides.contains(side), let type = photo.thumbnailType,
            let name = photo.thumbnailFileName(side: side)
        else { return nil }
        let bytes = try readLibraryFile(
            name, in: "thumbnails", limit: Thumbnailer.largestThumbnailBytes,
            failure: "cannot read the thumbnail of '\(photo.name)'")
        let size =
            Photo.fitted(photo.displayedSize, within: photo.hasOldThumbnail ? Thumbnailer.maxSide : side) ?? (0, 0)
        return Rendition(bytes: bytes, width: size.width, height: size.height, type: type)
    }

    /// The preview of `photo` (`.ptk/previews/<id>.jpg`; `.png` when `Photo.previewType` says
    /// so), nil when none is made; read as `thumbnail(of:side:)` reads, of at most 16 MiB.
    public func preview(of photo: Photo) throws(LibraryError) -> [UInt8]? {
        guard let name = photo.previewFileName else { return nil }
        return try readLibraryFile(
            name, in: "previews", limit: 16 << 20, failure: "cannot read the preview of '\(photo.name)'")
    }

    /// Removes what the library made of photo `id` through its folders' descriptors (`unlinkat`
    /// follows no final symlink; the folders above are opened following none): its gallery
    /// thumbnails of every format but `keeping` (`<id>-<side>.<ext>`), the 256-pixel
    /// `<id>.png` of schemas before 5, and its preview of either format. Files already gone
    /// are no error.
    func removeRenditions(_ id: Int64, keeping: PhotoType? = nil) throws(LibraryError) {
        var names = ["\(id).png"]
        for type in [PhotoType.jpeg, .png] where type != keeping {
            names += Thumbnailer.gallerySides.map { "\(id)-\($0).\(type.fileExtension)" }
        }
        try removeLibraryFiles(names, in: "thumbnails")
        try removeLibraryFiles([PhotoType.jpeg, .png].map { "\(id).\($0.fileExtension)" }, in: "previews")
    }

    /// Removes the files `names` of the library folder `folderName` through its descriptor
    /// (`openLibraryFolder`). Files already gone are no error; so is a missing previews folder
    /// (a library of a ptk before previews).
    func removeLibraryFiles(_ names: [String], in folderName: String) throws(LibraryError) {
        let folder: FileDescriptor
        do { folder = try openLibraryFolder(folderName) } catch {
            // What is there, to tell a folder never made from one that cannot be opened.
            if folderName == "previews", (try? photos.status(of: Self.folderName + "/previews")) == nil { return }
            throw error
        }
        defer { folder.close() }
        for name in names {
            do { try folder.unlink(name) } catch  where error.code == .noSuchFile {} catch {
                throw LibraryError(.io, "cannot remove \(self.folder)/\(folderName)/\(name): \(error)")
            }
        }
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
