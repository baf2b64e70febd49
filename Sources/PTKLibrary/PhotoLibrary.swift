import PTKSystem

/// The photo library of a received-photos directory: the photos stay plain PNG files; beside
/// them, `.ptk/index.sqlite` (SQLite, WAL, so ptkd writes while ptk reads) holds what is known
/// of each, `.ptk/thumbnails/<id>-<side>.jpg` (or `.png`) its gallery thumbnails and
/// `.ptk/previews/<id>.jpg` its preview, when it needs one. ptkd and ptk each open their own
/// `PhotoLibrary`; every change of a file and its entry happens inside one write transaction,
/// so two writers never interleave. One instance is used by one thread at a time.
public final class PhotoLibrary {
    /// The library's folder inside the received-photos directory.
    public static let folderName = ".ptk"

    /// The received-photos directory.
    public let directory: String
    /// Where the library keeps what it makes: `.ptk/` of the directory.
    public var folder: String { directory + "/" + Self.folderName }
    /// The gallery thumbnails, `<id>-<side>.jpg` (or `.png`) each.
    public var thumbnailFolder: String { folder + "/thumbnails" }
    /// The previews, `<id>.jpg` (or `.png`) each.
    public var previewFolder: String { folder + "/previews" }
    /// The index, SQLite (with its -wal and -shm files beside it).
    public var databasePath: String { folder + "/index.sqlite" }
    /// Photos with more pixels get no thumbnail.
    public var pixelLimit = Thumbnailer.defaultPixelLimit
    /// Bytes the file system keeps free (ptkd's `min-free`): previews, which may take a quarter
    /// of what the photos take, are not written into them (they wait until there is room).
    public var minFree: Int64 = 0
    /// The largest photo an export copies (ptkd's `max-file-size`, which no photo it received
    /// exceeds); nil: no bound but the index's size of each photo.
    public var maxFileSize: Int64?
    let database: Database
    let photos: FileDescriptor
    /// How reconcile reads a photo's status in the directory (tests make it fail).
    var statusOf: (FileDescriptor, String) throws(SystemError) -> FileStatus = { dir, name throws(SystemError) in
        try dir.status(of: name)
    }
    /// How indexing opens a photo in the directory (tests make it fail). A batch of more than 8
    /// photos calls it from several reading threads at once: a test's replacement must be
    /// thread-safe then.
    var openForIndexing: (String, FileDescriptor) throws(SystemError) -> FileDescriptor = {
        name, dir throws(SystemError) in
        try dir.openBeneath(name, flags: [.readOnly, .nonBlocking])
    }

    /// Errors that say nothing about the photo but about the moment (out of descriptors or
    /// memory, an interrupted or failing read, a full disk for the thumbnail): indexing is
    /// tried again later instead of recording a problem for good.
    static func isPassing(_ error: SystemError) -> Bool {
        let passing: [Errno] = [
            .processOutOfDescriptors, .systemOutOfDescriptors, .outOfMemory, .wouldBlock, .interrupted,
            .ioError, .noBufferSpace, .noSpace, .quotaExceeded,
        ]
        return passing.contains(error.code)
    }

    /// Opens the library of `directory`. With `create`, makes `.ptk/` and the index when
    /// missing (run as root, with the directory's owner); without, a missing index is an error.
    /// Whatever is below `directory` may have been planted by its owner (root's `ptk` works on
    /// the service user's directory): `.ptk`, `.ptk/thumbnails` and `.ptk/previews` must be directories, not
    /// symlinks; the index and its -wal and -shm files regular files of one link, none a
    /// symlink; and a rollback journal that is not empty (the index runs in WAL mode and never
    /// makes one; SQLite would replay it, and delete the "super-journal" it names) stops the
    /// opening before SQLite sees it.
    ///
    /// `opened` is the directory already open (root's `ptk` decided whom to act as from the
    /// folders it opened on the way to it): the library works in that very directory, never in
    /// what its path leads to now. SQLite can only be given a path: it gets the one the kernel
    /// now gives that descriptor, and once it has opened the index every regular file it holds
    /// must be one the library opened through the descriptor first (else the way changed
    /// meanwhile, and the library is refused).
    ///
    /// `lockPatience` is a short-lived command's (ptk's) bound on its waits for a lock another
    /// process holds on the index: all together last at most its limit (then an `.io` error
    /// that says so), and its `waiting` is told once one lasts long. Nil (ptkd): each wait lasts
    /// at most 10 s. With it, the index's files are also opened (to write; -wal and -shm made
    /// when missing) through `.ptk`'s descriptor before SQLite opens them, waiting at most as
    /// long for a lease another process holds on one (`holdIndexFiles`), and kept open while
    /// the library is: no lease can be taken on them then, so SQLite's opens never wait.
    public init(directory: String, opened: FileDescriptor? = nil, create: Bool, lockPatience: LockPatience? = nil)
        throws(LibraryError)
    {
        self.directory = directory
        if let opened {
            do { photos = try opened.duplicate() } catch {
                throw LibraryError(.io, "cannot use the received-photos directory \(directory): \(error)")
            }
        } else {
            do { photos = try .open(directory, flags: [.readOnly, .directory]) } catch {
                throw LibraryError(.io, "cannot open the received-photos directory: \(error)")
            }
        }
        let folder = directory + "/" + Self.folderName
        let databasePath = folder + "/index.sqlite"
        var held: [FileDescriptor] = []
        do throws(LibraryError) {
            guard
                let library = try Self.openFolder(
                    Self.folderName, in: photos, path: folder, creatingOwnedLike: create ? directory : nil)
            else {
                throw LibraryError(
                    .io,
                    "no photo library in \(directory) yet (\(databasePath) is missing; ptkd makes it when it starts)")
            }
            defer { library.close() }
            // A library made before thumbnails had a folder of its own may lack it: made when creating.
            let thumbnails = try Self.openFolder(
                "thumbnails", in: library, path: folder + "/thumbnails", creatingOwnedLike: create ? directory : nil)
            thumbnails?.close()
            // Likewise a library made before previews (issue 45).
            let previews = try Self.openFolder(
                "previews", in: library, path: folder + "/previews", creatingOwnedLike: create ? directory : nil)
            previews?.close()
            if create {
                // Made here, through the folder's descriptor, not by SQLite, so that root gives it
                // the directory's owner (fchown); SQLite gives the -wal and -shm files the owner of
                // the database file. One that is there already (or cannot be made) is left to the
                // checks below and to SQLite, which say what is wrong with it.
                if let fd = try? FileDescriptor.open(
                    "index.sqlite", relativeTo: library, flags: [.readWrite, .create, .exclusive, .noFollow],
                    mode: 0o644)
                {
                    defer { fd.close() }
                    do { try fd.takeOwner(of: photos) } catch {
                        throw LibraryError(.io, "cannot give \(databasePath) its owner: \(error)")
                    }
                }
            }
            try Self.checkIndexFiles(in: library, folder: folder, create: create)
            if let lockPatience { held = try Self.holdIndexFiles(in: library, folder: folder, patience: lockPatience) }
        } catch {
            photos.close()
            throw error
        }
        // SQLite refuses a symlink anywhere in the path it is given: the links of the
        // directory's own path (the administrator's) are resolved first.
        let base =
            opened == nil
            ? resolvedPath(directory) ?? directory : photos.currentPath() ?? resolvedPath(directory) ?? directory
        let before = opened == nil ? [] : openRegularFileIdentities()
        do {
            // The held files are the connection's from here on: closed only after it is (closing
            // any descriptor of a file drops the process's POSIX locks on it, SQLite's included).
            database = try Database(
                file: base + "/" + Self.folderName + "/index.sqlite", path: databasePath, create: create,
                patience: lockPatience,
                holding: held)
        } catch {
            photos.close()
            throw error
        }
        // From here on `deinit` closes what is open.
        try migrate()
        if opened != nil {
            let gained = openRegularFileIdentities().subtracting(before)
            guard gained.isEmpty else {
                throw LibraryError(
                    .io,
                    "\(databasePath): the index SQLite opened (by the path \(base)) is not the one in the directory ptk opened: "
                        + "something moved the way to it meanwhile; nothing was done")
            }
        }
    }

    /// Opens the index's files in `.ptk` (open as `library`; `folder` names it) through that
    /// descriptor, before SQLite opens them by path, and returns them, to be held open as long
    /// as the connection is: index.sqlite, -wal and -shm to write (the last two made when
    /// missing, with the index's mode and, run as root, its owner, as SQLite makes them), a
    /// rollback journal when there is one; each O_NOFOLLOW and only a regular file of one link.
    /// A file this process may not write (another user's library it reads) is opened to read.
    /// Another process's lease on one makes the open wait, at most as `patience` says
    /// (`FileDescriptor.openWaitingOutLeases`, then an `.io` error saying so); once they are
    /// held open to write, nobody can take a lease on them (the kernel allows a read lease only
    /// on a file nobody has open to write), so SQLite's own opens never wait in the kernel.
    static func holdIndexFiles(in library: FileDescriptor, folder: String, patience: LockPatience) throws(LibraryError)
        -> [FileDescriptor]
    {
        var held: [FileDescriptor] = []
        // One patience for all of the index's files, as promised (30 s in all), not one each.
        let start = Instant.now
        // none yet: checkIndexFiles let it pass only when creating, and SQLite makes it
        let index = try? library.status(of: "index.sqlite")
        do {
            for suffix in ["", "-wal", "-shm", "-journal"] {
                let name = "index.sqlite" + suffix
                let path = folder + "/" + name
                // cannot be told: as if missing, and made (or not) below
                let exists = (try? library.status(of: name)) != nil
                guard exists || suffix == "-wal" || suffix == "-shm", index != nil else { continue }
                func open(_ flags: OpenFlags) throws -> FileDescriptor {
                    try library.openWaitingOutLeases(
                        name, flags: flags, mode: index?.permissions ?? 0o644, path: path, patience: patience,
                        since: start)
                }
                // To write (made when missing); made meanwhile by another: to write as it is; not
                // ours to write (a library another user reads): to read, as SQLite opens it then;
                // not even that, or not ours to make: left to SQLite, which says why.
                var flags: OpenFlags = exists ? .readWrite : [.readWrite, .create, .exclusive]
                var opened: FileDescriptor?
                while opened == nil {
                    do { opened = try open(flags) } catch let error as SystemError where error.code == .exists {
                        flags = .readWrite
                    } catch let error as SystemError
                        where error.code == .permissionDenied || error.code == .readOnlyFileSystem
                    {
                        guard flags == .readWrite else { break }
                        flags = .readOnly
                    }
                }
                guard let fd = opened else { continue }
                held.append(fd)
                if flags.contains(.create), geteuidValue() == 0, let index, index.owner != 0 || index.group != 0 {
                    try fd.give(to: Credentials(user: index.owner, group: index.group, name: nil))
                }
                let found = try fd.statusWithLinks()
                guard found.status.isRegularFile, found.links == 1 else {
                    throw LibraryError(
                        .io,
                        "\(path): is \(found.kind) with \(found.links) link(s) now, not the regular file of one link it was a moment ago; "
                            + "refusing to open the index: move it away after checking it")
                }
            }
            return held
        } catch {
            held.forEach { $0.close() }
            if let error = error as? LibraryError { throw error }
            if let error = error as? SystemError, error.code == .tooManySymlinks {
                throw LibraryError(
                    .io,
                    "\(error.object ?? folder): is a symbolic link now; not followed; refusing to open the index: move it away after checking it"
                )
            }
            throw LibraryError(.io, "\(error)")
        }
    }

    /// Opens the folder `name` in `parent` (`path` names it in messages) without following a
    /// symlink; with `creatingOwnedLike`, makes it when missing (0755, run as root given that
    /// path's owner, through its descriptor); nil when it is missing and not to be made. A
    /// symlink or anything else that is not a directory is refused, saying so.
    static func openFolder(_ name: String, in parent: FileDescriptor, path: String, creatingOwnedLike owner: String?)
        throws(LibraryError) -> FileDescriptor?
    {
        do {
            if let owner { return try parent.openDirectoryBeneath(name, creating: 0o755, ownerOf: owner) }
            return try parent.openSubdirectory(name)
        } catch  where error.code == .noSuchFile && owner == nil {
            return nil
        } catch {
            throw folderError(error, name, in: parent, path: path)
        }
    }

    /// Opens the existing folder `name` in `parent` without following a symlink (`openFolder`).
    static func openFolder(_ name: String, in parent: FileDescriptor, path: String) throws(LibraryError)
        -> FileDescriptor
    {
        do { return try parent.openSubdirectory(name) } catch { throw folderError(error, name, in: parent, path: path) }
    }

    /// The error for a folder that could not be opened: a symlink or a file in its place said plainly.
    private static func folderError(_ error: SystemError, _ name: String, in parent: FileDescriptor, path: String)
        -> LibraryError
    {
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
            do { found = try library.statusWithLinks(of: "index.sqlite" + suffix) } catch
                where error.code == .noSuchFile
            {
                if suffix.isEmpty && !create {
                    throw LibraryError(
                        .io,
                        "no photo library in \(parentDirectory(of: folder)) yet (\(path) is missing; ptkd makes it when it starts)"
                    )
                }
                continue
            } catch {
                throw LibraryError(.io, "cannot read the status of \(path): \(error)")
            }
            let advice = "refusing to open the index: move it away after checking it"
            if found.status.isSymlink {
                throw LibraryError(.io, "\(path): is a symbolic link; not followed; \(advice)")
            }
            if !found.status.isRegularFile {
                throw LibraryError(.io, "\(path): is \(found.kind), not a regular file; \(advice)")
            }
            if found.links > 1 {
                throw LibraryError(
                    .io,
                    "\(path): has \(found.links) hard links; the index uses only files no other name shares; \(advice)")
            }
            if suffix.isEmpty { indexSize = found.status.size }
            // SQLite replays no journal into an empty database (one being made as this opens).
            // A journal of this process's own user is one its own crash left while the database
            // was being made (before WAL mode): replaying it is how SQLite recovers. One of
            // another user (root opening the service user's index) is not ours to replay.
            if suffix == "-journal" && found.status.size > 0 && indexSize > 0 && found.status.owner != geteuidValue() {
                throw LibraryError(
                    .io,
                    "\(path): a rollback journal another user made, which the index never makes (it runs in WAL mode); refusing to open the index: move it away after checking it"
                )
            }
        }
    }

    /// The buffer photos are hashed through: allocated once, not zeroed for every photo.
    let hashBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 64)

    deinit {
        photos.close()
        hashBuffer.deallocate()
    }
}
