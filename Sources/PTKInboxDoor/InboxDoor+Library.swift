import PTKLibrary
import PTKStore
import PTKSystem

extension InboxDoor {
    /// The library's connection, opened at first use (retried every 10 s while it cannot be).
    func libraryConnection() -> PhotoLibrary? {
        if library == nil && Instant.now >= libraryRetry {
            // Not there yet or locked: the source is looked at again; taking it twice is what the
            // record prevents, and without it the duplicate rule still keeps one copy.
            library = try? PhotoLibrary(directory: settings.directory, create: false)
            if library == nil { libraryRetry = .now + .seconds(10) }
        }
        return library
    }

    /// The record of a source taken from `path` in `watched`, if any.
    func inboxRecord(_ watched: WatchedFolder, _ path: BytePath) -> InboxSourceRecord? {
        guard let library = libraryConnection() else { return nil }
        do { return try library.inboxSource(inbox: watched.folder.path, path: path) } catch {
            self.library = nil
            return nil
        }
    }

    /// Remembers that the source at `path`, of `status`, holds the bytes of SHA-256 `sha256`,
    /// which are the photo `photo` (nil: removed since).
    func remember(_ watched: WatchedFolder, _ path: BytePath, _ status: FileStatus, sha256: String, photo: String?) {
        guard let library = libraryConnection() else {
            sayOnce(
                "library",
                "inbox: the photo library cannot be opened; what an inbox took is not remembered across restarts")
            return
        }
        let record = InboxSourceRecord(
            inbox: watched.folder.path, path: path, identity: .init(status), sha256: sha256, photo: photo,
            taken: .now)
        do { try library.rememberInboxSource(record) } catch {
            sayOnce("remember", "inbox: cannot record what was taken in the library (\(error))")
            self.library = nil
        }
    }
}
