import PTKSystem
import PTKVocabulary

extension PhotoStore {
    /// Link names in `.incoming`, unique in this process.
    private static let linkCounter = Counter()

    /// The source itself made the photo (`inbox-links = yes`): its bytes read from the open
    /// descriptor through the store's checks while nobody is seen writing it, then the open
    /// file linked into `.incoming` (never by its path, so it is the file read whatever its name
    /// has become) and published from there as every photo is: the source's data flushed
    /// (fsync), the name the store gives without replacing anything, its folder's rules, the
    /// duplicates rule, the directory flushed. Nothing is linked under any name unless its
    /// bytes passed. Refused (taken another way) where the kernel will not link it: another
    /// file system (EXDEV), fs.protected_hardlinks (EPERM: a file ptkd's user neither owns nor
    /// may read and write), too many links (EMLINK), a source removed meanwhile (ENOENT).
    ///
    /// The photo keeps the source's mode, owner and time: it is the same file. It stays the
    /// bytes checked only as long as its writer replaces files by rename; one written in place
    /// changes the photo too (the inbox door says so, and takes the new bytes by copy).
    func link(_ request: StoreRequest, from source: FileDescriptor, status: FileStatus, stop: () -> Bool) -> Attempt {
        // A writer's next bytes would be the photo's: not while anyone is seen writing it.
        // (Nil, the kernel cannot tell: the door's settle time decided, as for a copy.)
        if source.hasWritersVisible() == true {
            return .taken(.failure(StoreFailure(.sizeMismatch, "it is open for writing")))
        }
        let fd: FileDescriptor
        do { fd = try source.duplicate() } catch {
            return .taken(.failure(StoreFailure(.io, "cannot take the source: \(error)")))
        }
        let name = "linked-\(request.size).\(processID()).\(Self.linkCounter.next()).tmp"
        let file = IncomingFile(store: self, request: request, fd: fd, name: name, resumable: false)
        file.linked = true
        // Until the link below, abandoning unlinks a name not there (harmless).
        do { try file.checkHeldBytes(stop: stop) } catch {
            file.abandon(keepForResume: false)
            return .taken(.failure(error))
        }
        // EIO only: the file is then not linked.
        guard let read = try? fd.status(), Self.unchanged(status, read, changeTime: true),
            source.hasWritersVisible() != true
        else {
            file.abandon(keepForResume: false)
            return .taken(.failure(StoreFailure(.sizeMismatch, "the file changed while it was read")))
        }
        // Locked, so the stale-partial clean-up (which skips locked files) leaves its link name
        // alone: its modification time is the source's, maybe older than partial-max-age.
        // Another holder of the lock keeps the clean-up away as well.
        _ = try? fd.tryLock()
        do { try fd.linkInto(directory: incoming, name: name) } catch {
            file.abandon(keepForResume: false)
            switch error.code {
            case .notPermitted:
                return .refused(
                    "ptk's user may not link files it does not own (fs.protected_hardlinks); run the writer (syncthing) as ptk's user, see OPERATIONS",
                    remember: true)
            case .crossDevice:
                return .refused("the inbox is not on the photos directory's file system (mount)", remember: true)
            case .tooManyLinks:
                return .refused("the source has as many links as its file system allows", remember: false)
            case .noSuchFile:
                return .refused("the source was removed while it was taken", remember: false)
            case .notSupported:
                return .refused("the file system makes no hard links", remember: true)
            default:
                return .taken(.failure(StoreFailure(error.isNoSpace ? .noSpace : .io, "linking the photo: \(error)")))
            }
        }
        // Written between the check and the link: unlinked again, looked at once it settles.
        guard let linked = try? fd.status(), Self.unchanged(status, linked, changeTime: false) else {
            file.abandon(keepForResume: false)
            return .taken(.failure(StoreFailure(.sizeMismatch, "the file changed while it was linked")))
        }
        return .taken(.success(file))
    }
}
