import PTKDigest
import PTKSystem
import PTKVocabulary

/// How the received-photos directory is run.
public struct StoreSettings: Sendable, Equatable {
    /// The received-photos directory.
    public var directory: String
    /// An offer that would leave less than this many bytes free is REJECTed `no-space`.
    public var minFree: Int64
    /// Partial uploads older than this many seconds are deleted.
    public var partialMaxAge: Duration
    /// Permission bits of saved photos.
    public var fileMode: FileMode
    /// How many big photos at most are checked (SHA-256, structure) on a thread of their own at
    /// once; the others are checked inline by their session. Nil: half the CPUs this process may
    /// use (`availableProcessorCount`), so a checking thread gets a core beside its session's,
    /// and many concurrent senders do not pay for hand-overs between more threads than cores.
    public var checkingThreads: Int?

    /// Settings as configured: 100 MiB kept free, partial uploads kept a day, photos saved 0644,
    /// checking threads half the usable CPUs.
    public init(
        directory: String, minFree: Int64 = 100 << 20, partialMaxAge: Duration = .seconds(86_400),
        fileMode: FileMode = 0o644,
        checkingThreads: Int? = nil
    ) {
        self.directory = directory
        self.minFree = minFree
        self.partialMaxAge = partialMaxAge
        self.fileMode = fileMode
        self.checkingThreads = checkingThreads
    }
}

/// The store could not be opened.
public struct StoreError: Error, Sendable, CustomStringConvertible {
    /// The message, naming what failed.
    public var description: String
    /// The bytes were refused (not a PNG, wrong size or hash), rather than the store failing.
    public var badInput: Bool
    /// A failure described by `description`; `badInput` when the sender's bytes, not the store, were at fault.
    public init(_ description: String, badInput: Bool = false) {
        self.description = description
        self.badInput = badInput
    }
    init(_ failure: StoreFailure) {
        description = failure.message
        badInput = failure.isBadInput
    }
}

/// The received-photos directory. Every path is opened relative to a descriptor of the
/// directory or of its `.incoming/` folder, with O_NOFOLLOW, so nothing is written elsewhere.
public final class PhotoStore: @unchecked Sendable {
    // The descriptors are fixed for the store's life; each IncomingFile works on its own file,
    // the file system arbitrates names (O_EXCL, renameat2 without replacing) and flock arbitrates partial uploads.
    /// As given at init; fixed for the store's life.
    public let settings: StoreSettings
    let directory: FileDescriptor
    let incoming: FileDescriptor
    /// Photos in flush rounds whose sessions read on meanwhile (late answers), store-wide: each
    /// keeps its file open until its round is over, so the descriptors they hold are bounded
    /// whatever the number of sessions. A session that gets no slot waits for its round.
    public let lateFinishes = Slots(limit: PhotoStore.maxLateFinishes)
    /// At most this many photos finish late at once, store-wide: the descriptors they hold stay bounded.
    public static let maxLateFinishes = 256

    /// Every photo published goes through its flush rounds (group commit, issue 46). Set at
    /// init (tests replace it before the first photo, to fail a flush).
    var rounds: FlushRounds!
    /// Every hash and PNG check of the store passes through it (see `stopChecks`).
    let checks = ExitGate()
    /// What sessions knew of the partial uploads they let go, so an unchanged one is not hashed again.
    let resumeStates = ResumeStates()
    /// Bytes promised to uploads in flight and not written yet (`Reservation`).
    let ledger = ReservationLedger()
    /// What `freeSpace` says instead of the file system (tests set it before the first upload).
    var freeSpaceForTests: (@Sendable () -> Int64)?
    /// The bytes free for the store's files (the directory's file system).
    func freeSpace() throws(SystemError) -> Int64 {
        if let freeSpaceForTests { return freeSpaceForTests() }
        return try directory.availableSpace()
    }
    /// Big photos being checked on a thread of their own now (`StoreSettings.checkingThreads`).
    let checkingThreads: Slots
    /// Those threads, joined by `stopChecks`.
    let checkingGroup = ThreadGroup()
    /// Finds a photo the directory keeps with these bytes (SHA-256, size): its name, relative to
    /// the directory. Set once by ptkd with `duplicates = skip`, before any photo is received;
    /// nil keeps every photo sent.
    public var findHeld: (@Sendable (_ sha256: String, _ size: Int64) -> String?)? {
        get { heldLock.withLock { heldFinder } }
        set { heldLock.withLock { heldFinder = newValue } }
    }
    private let heldLock = Lock()
    // Guarded by `heldLock`.
    private var heldFinder: (@Sendable (String, Int64) -> String?)?

    /// The name of a photo the directory keeps with these bytes, when duplicates are looked for.
    public func heldPhoto(sha256: String, size: Int64) -> String? {
        guard !sha256.isEmpty, let find = findHeld else { return nil }
        return find(sha256, size)
    }

    /// The name of the temporary folder inside the directory.
    public static let incomingName = ".incoming"

    /// Opens (creating if needed) the directory and its `.incoming/` folder. With `opened`, the
    /// directory is that one, already open (`settings.directory` only names it): root's `ptk
    /// import` adds to the very directory it decided whom to act as for.
    public init(settings: StoreSettings, opened: FileDescriptor? = nil) throws(StoreError) {
        self.settings = settings
        checkingThreads = Slots(limit: settings.checkingThreads ?? availableProcessorCount() / 2)
        let path = settings.directory
        let dir: FileDescriptor
        if let opened {
            do { dir = try opened.duplicate() } catch {
                throw StoreError("cannot use the received-photos directory: \(error)")
            }
        } else {
            do { try makeDirectories(path) } catch {
                throw StoreError("cannot create the received-photos directory: \(error)")
            }
            do { dir = try .open(path, flags: [.readOnly, .directory]) } catch {
                throw StoreError("cannot open the received-photos directory: \(error)")
            }
        }
        do {
            var created = true
            do { try dir.makeDirectory(Self.incomingName, mode: 0o700) } catch  where error.code == .exists {
                created = false
            }
            incoming = try .open(Self.incomingName, relativeTo: dir, flags: [.readOnly, .directory, .noFollow])
            if created { try incoming.takeOwner(of: dir) }
            // Prove the directory is writable now rather than on the first photo.
            let probe = ".probe-\(processID())"
            let fd = try FileDescriptor.open(
                probe, relativeTo: incoming, flags: [.writeOnly, .create, .exclusive, .noFollow], mode: 0o600)
            fd.close()
            try incoming.unlink(probe)
        } catch {
            dir.close()
            throw StoreError("the received-photos directory '\(path)' is not usable: \(error)")
        }
        directory = dir
        rounds = FlushRounds(store: self)
    }

    deinit {
        directory.close()
        incoming.close()
    }

    /// Joins the checking threads (until `deadline`), then waits for the hash and PNG checks
    /// still running on other threads and holds every later one for good: after it, nothing of
    /// the store is inside OpenSSL or zlib, so the process can exit (the C library's exit
    /// handlers tear OpenSSL down). Sessions that are still open stop at their next check.
    /// Returns false if a checking thread or a check was still running.
    @discardableResult
    public func stopChecks(waitingUntil deadline: Instant) -> Bool {
        // Joined first: a checking thread concludes through the gate, which closing would hold.
        let joined = checkingGroup.join(until: deadline)
        return checks.close(waitingUntil: deadline) && joined
    }

    /// A partial upload is taken up at a multiple of this many bytes (`begin`'s `chunkSize`):
    /// protocol v1's CHUNK size, the step its senders resume at. Written here, not taken from the
    /// protocol, so the store stays below every door (a test checks the two agree).
    public static let resumeStep = 102_400

    /// Decides about a photo: checks free space and opens its temporary file, resuming from a
    /// partial upload of the same content (same size and SHA-256) when one is there. A request
    /// whose `sha256` is empty is saved without a hash to compare (its own is reported in the StoredPhoto).
    public func begin(_ request: StoreRequest, chunkSize: Int = PhotoStore.resumeStep) -> Result<
        IncomingFile, StoreFailure
    > {
        guard StoreRequest.isValidFolder(request.folder) else {
            return .failure(
                StoreFailure(
                    .io,
                    "'\(request.folder)' is not a folder the store makes (at most \(StoreRequest.maxFolderDepth) valid names)"
                ))
        }
        do throws(SystemError) {
            let (fd, name, resumable, length) = try openTemporary(for: request)
            let file = IncomingFile(store: self, request: request, fd: fd, name: name, resumable: resumable)
            do throws(SystemError) {
                // Taken whatever the length: a session that opens the partial may change it.
                let remembered = resumable ? resumeStates.take(name) : nil
                if length > 0 { try file.resume(length: length, chunkSize: chunkSize, remembered: remembered) }
                // Reserved until written, so that uploads begun together do not each count the same free bytes.
                let needed = request.size - file.offset
                let reservation = Reservation(store: self)
                do throws(StoreFailure) { try reservation.grow(by: needed) } catch {
                    // Kept for a later session when the disk is full; not when its space could not be read.
                    file.abandon(keepForResume: error.kind == .noSpace)
                    return .failure(error)
                }
                file.reservation = reservation
            } catch {
                file.abandon(keepForResume: false)
                throw error
            }
            return .success(file)
        } catch {
            return .failure(StoreFailure(error.isNoSpace ? .noSpace : .io, error.description))
        }
    }

    private static let uniqueCounter = Counter()

    /// The partial upload file for this content, locked, and its length; or a fresh unique file
    /// when another session holds that one.
    /// An offer without a SHA-256 (a LocalSend app may leave it out) cannot be resumed: it
    /// always gets a fresh unique file.
    private func openTemporary(for request: StoreRequest) throws(SystemError) -> (FileDescriptor, String, Bool, Int64) {
        let partName = "\(request.sha256)-\(request.size).part"
        for _ in 0..<(request.sha256.isEmpty ? 0 : 8) {
            let fd: FileDescriptor
            do {
                fd = try FileDescriptor.open(
                    partName, relativeTo: incoming, flags: [.readWrite, .create, .noFollow, .nonBlocking], mode: 0o600)
            } catch
                where error.code == .tooManySymlinks || error.code == .isDirectory
                || error.code == .noSuchDeviceOrAddress
            {
                // Something planted at our name (a symlink, a directory, a socket): never follow
                // or reuse it. Remove what can be removed, else fall back to a unique name.
                if (try? incoming.unlink(partName)) == nil { break }
                continue
            }
            // A part file whose status cannot be read is not reused.
            guard let st = try? fd.status(), st.isRegularFile else {
                fd.close()
                // As above: removed if it can be, else a unique name is used.
                if (try? incoming.unlink(partName)) == nil { break }
                continue
            }
            guard try fd.tryLock() else {
                fd.close()
                break
            }
            // The name may have been unlinked (published) between open and lock: check it is still ours.
            if let named = try? incoming.status(of: partName), named.inode == st.inode {
                return (fd, partName, true, st.size)
            }
            fd.close()
        }
        let unique =
            "\(request.sha256.isEmpty ? "unhashed" : request.sha256)-\(request.size).\(processID()).\(Self.uniqueCounter.next()).tmp"
        let fd = try FileDescriptor.open(
            unique, relativeTo: incoming, flags: [.readWrite, .create, .exclusive, .noFollow], mode: 0o600)
        return (fd, unique, false, 0)
    }

    /// Deletes partial uploads not touched for `settings.partialMaxAge` seconds and not in use.
    /// Returns how many were deleted.
    @discardableResult
    public func removeStalePartials() -> Int {
        // An unreadable .incoming: nothing to clean now; the next start tries again.
        guard let names = try? incoming.entries() else { return 0 }
        let now = WallTime.now.seconds
        var removed = 0
        for name in names {
            // Gone meanwhile (published or removed by another session): nothing to clean.
            guard let st = try? incoming.status(of: name) else { continue }
            let age = Double(now - st.modified)
            guard age >= settings.partialMaxAge.seconds else { continue }
            if st.isRegularFile {
                // Gone meanwhile, or not openable: left for the next clean-up.
                guard let fd = try? FileDescriptor.open(name, relativeTo: incoming, flags: [.readOnly, .noFollow])
                else { continue }
                defer { fd.close() }
                // Locked (a session is writing it) or unlockable: not stale, left alone.
                guard (try? fd.tryLock()) == true else { continue }
            }
            // Gone meanwhile: nothing to count.
            if (try? incoming.unlink(name)) != nil { removed += 1 }
        }
        return removed
    }

    /// The name a photo offered (or renamed) as `name` gets, before collision suffixes: the
    /// same rules for every way a photo enters the directory (protocol-v1.md section 5).
    public static func finalName(_ name: String, type: PhotoType = .png) -> String {
        FileName.sanitize(name, type: type)
    }

    /// The folder name a piece of text gives by the same rules (`FileName.folderComponent`).
    public static func folderName(_ text: String) -> String { FileName.folderComponent(text) }

    /// Adds the `size` bytes read from `source` as a photo named after `name`, through the same
    /// path as a received one: a temporary file, the size, SHA-256 (which must be `sha256`) and
    /// structural checks for `type`, fsync, and publishing without replacing. Returns the name used.
    public func add(
        from source: FileDescriptor, size: Int64, sha256: String, name: String, type: PhotoType = .png,
        modified: WallTime? = nil
    ) throws(StoreError) -> String {
        let request = StoreRequest(name: name, size: size, sha256: sha256, type: type, modified: modified?.milliseconds)
        switch take(request, from: source) {
        case .success(let saved): return saved.name
        case .failure(let failure): throw StoreError(failure)
        }
    }

    /// A photo moved to its final name in a flush round, its directory not yet flushed.
    struct Placed {
        /// The directory it is in (the store's own, or a folder's, opened for this photo).
        var directory: FileDescriptor
        /// True when `directory` was opened for it (closed after the round).
        var ownsDirectory: Bool
        /// Its folder below the received-photos directory ("" for the directory itself).
        var folder: String
        /// Its name in `directory`.
        var name: String
        /// Its name with its folder: "2024/IMG_1.png".
        var path: String
    }

    /// Moves the flushed temporary file to its final name in `folder` (created as needed, with
    /// the directory's owner, mode 0755, never through a symlink and never outside the
    /// directory), never replacing a file: `name`, `name (2)`, `name (3)`, ... The directory is
    /// not flushed here: the flush round flushes each directory once for all its photos.
    func place(temporary: String, offeredName: String, type: PhotoType, folder: String = "") throws(SystemError)
        -> Placed
    {
        let base = FileName.sanitize(offeredName, type: type)
        // A folder name taken by a symlink or a file (planted, or a sender's name that clashes)
        // is sidestepped to "name (2)": the photo lands inside, never through the link.
        let (target, folder) =
            folder.isEmpty
            ? (directory, "")
            : try directory.openDirectoryBeneath(
                folder, creating: 0o755, ownerOf: settings.directory, sidestepping: true)
        var n = 1
        while true {
            let candidate = FileName.withSuffix(base, counter: n, type: type)
            do throws(SystemError) {
                // One step, so no complete copy is ever left in .incoming: a crash or a failed
                // unlink between a link and the unlink of the temporary name would leave one,
                // which a resend would resume at its end and save a second time.
                do throws(SystemError) { try target.move(temporary, in: incoming, to: candidate) } catch
                    where error.code == .invalidArgument || error.code == .notSupported || error.code == .noSystemCall
                {
                    // A file system without RENAME_NOREPLACE: link, which never replaces either.
                    try target.link(temporary, in: incoming, to: candidate)
                    // Published under its final name; a temporary name left is cleaned with stale partials.
                    try? incoming.unlink(temporary)
                }
                return Placed(
                    directory: target, ownsDirectory: !folder.isEmpty, folder: folder, name: candidate,
                    path: folder.isEmpty ? candidate : folder + "/" + candidate)
            } catch  where error.code == .exists && n < 100_000 {
                n += 1
            } catch {
                if !folder.isEmpty { target.close() }
                throw error
            }
        }
    }
}

/// A thread-safe counter for unique temporary names.
final class Counter: @unchecked Sendable {
    // Guarded by `lock`.
    private var value = 0
    private let lock = Lock()
    func next() -> Int {
        lock.withLock {
            value += 1
            return value
        }
    }
}

extension PhotoStore: Service {
    /// "photo flushes and checks", for the log.
    public var serviceName: String { "photo flushes and checks" }
    /// Finishes the flush rounds (their photos answered), then stops the checking threads; true when
    /// both ended by `deadline`.
    public func stop(until deadline: Instant) -> Bool {
        // Rounds first: a round's photos are answered before the checks close.
        let flushed = rounds.stop(until: deadline)
        return stopChecks(waitingUntil: deadline) && flushed
    }
}
