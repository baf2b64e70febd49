import PTKDoor
import PTKInbox
import PTKLibrary
import PTKLog
import PTKStore
import PTKSystem
import PTKVocabulary

extension InboxDoor {
    /// Looks at every file whose time has come, oldest first.
    func lookAtDueFiles() {
        let now = Instant.now
        let due = files.filter { $0.value.due.map { $0 <= now } ?? false }.keys.sorted {
            ($0.folder, $0.path) < ($1.folder, $1.path)
        }
        for key in due {
            if isStopping { return }
            look(at: key)
        }
    }

    /// Observes one file and does what its tracker decides: wait, check and take, or say why not.
    func look(at key: FileKey) {
        guard var file = files[key] else { return }
        let watched = folders[key.folder]
        let components = key.path.parts(separatedBy: "/")
        let label = "\(watched.folder.kind.rawValue) \(watched.folder.path)"
        // Its kind before it is opened: a FIFO, socket or device is never opened (opening a
        // device can do something), only said once.
        // (A status that cannot be taken: gone, or a link on the way; the open below finds it so.)
        if let kind = try? watched.root.statusBeneath(key.path), !kind.isRegularFile {
            sayOnce("kind \(watched.folder.path)/\(key.path)", "\(label): \(key.path) is not a regular file; left")
            file.due = nil
            file.status = kind
            files[key] = file
            return
        }
        // Non-blocking: a FIFO put there in the moment since never holds the door.
        let fd: FileDescriptor
        do { fd = try watched.root.openBeneath(key.path, flags: [.readOnly, .nonBlocking]) } catch {
            files[key] = nil  // gone, or a link: a later event or scan brings it back if it returns
            return
        }
        defer { fd.close() }
        let status: FileStatus
        do { status = try fd.status() } catch {
            files[key] = nil
            return
        }
        guard status.isRegularFile else {
            sayOnce("kind \(watched.folder.path)/\(key.path)", "\(label): \(key.path) is not a regular file; left")
            file.due = nil
            file.status = status
            files[key] = file
            return
        }
        let observation = SettleTracker.Observation(
            size: status.size, modified: status.modified &* 1_000_000_000 &+ status.modifiedNanoseconds,
            changed: status.changedAt, device: status.device, inode: status.inode,
            openForWriting: fd.hasWritersVisible())
        var decision = file.tracker.observe(observation, at: .now)
        file.status = status
        if decision == .check {
            guard let outcome = take(fd, status, key, watched, components) else {
                // The store could not take it now (no room, an I/O error): settled afresh in a minute.
                file.tracker = SettleTracker(settle: settings.settle)
                file.due = .now + .seconds(60)
                files[key] = file
                return
            }
            let after = (try? fd.status()) ?? status  // fstat of an open descriptor fails only on EIO: judged as read
            decision = file.tracker.checked(outcome, observed: Self.observation(after), at: .now)
            file.status = after
            file.incomplete = outcome == .incomplete
        }
        switch decision {
        case .wait(let until): file.due = until
        case .check: file.due = .now
        case .take, .waitForChange: file.due = nil
        case .report(let why):
            Log.warning("\(label): \(key.path) \(why)")
            file.due = nil
        case .refuse(let why):
            Log.warning("\(label): \(key.path) is not taken: \(why); left where it is")
            file.due = nil
        }
        files[key] = file
    }

    /// `status` as the tracker observes it once the file has been read (nobody writing it then).
    static func observation(_ status: FileStatus) -> SettleTracker.Observation {
        SettleTracker.Observation(
            size: status.size, modified: status.modified &* 1_000_000_000 &+ status.modifiedNanoseconds,
            changed: status.changedAt, device: status.device, inode: status.inode, openForWriting: false)
    }

    /// The check and the taking of a settled file, as one step: the store's own checks say
    /// whether it is whole. Answers the outcome for its tracker (`.whole` once it is saved, or
    /// was taken before, unchanged), or nil when the store cannot take it now (no room, an I/O
    /// error): it is tried again later.
    func take(
        _ fd: FileDescriptor, _ status: FileStatus, _ key: FileKey, _ watched: WatchedFolder, _ components: [String]
    ) -> SettleTracker.Outcome? {
        let label = "\(watched.folder.kind.rawValue) \(watched.folder.path)"
        let path = BytePath(key.path)
        // Taken before (this very file, unchanged): nothing to copy. A drop folder's source
        // still there (its removal failed) is removed now.
        if let record = inboxRecord(watched, path), record.isSameFile(as: status) {
            if watched.folder.kind == .dropFolder { removeSource(watched, key, status, label) }
            return .whole
        }
        guard status.size <= settings.maxFileSize else {
            return .notAPhoto(
                "\(formatBytes(Double(status.size))), larger than max-file-size (\(formatBytes(Double(settings.maxFileSize))))"
            )
        }
        var head = [UInt8](repeating: 0, count: 32)
        let got =
            (try? head.withUnsafeMutableBytes { b throws(SystemError) in try fd.read(fromAbsoluteOffset: 0, into: b) })
            ?? 0  // unreadable: sniffed as nothing, so refused until it changes
        guard let type = PhotoType.sniff(head[..<got]) else {
            return got == 0 ? .incomplete : .notAPhoto("it is not a PNG, JPEG or HEIF photo")
        }
        guard settings.types.contains(type) else {
            return .notAPhoto("\(type.mediaType) is not among the types kept (types)")
        }
        guard let source = InboxSource(inbox: watched.name, components: components) else { return .incomplete }
        let sender = Sender(announcedName: source.sender, id: nil, address: watched.folder.path)
        let request = StoreRequest(
            name: source.name, size: status.size, sha256: "", type: type, sender: source.sender,
            modified: status.modifiedTime.milliseconds,
            folder: StoreRequest.folder(arrivals.folder(for: sender), adding: source.relativePath))
        switch store.take(request, from: fd, stop: { [self] in isStopping }) {
        case .success(let saved):
            arrivals.saved(saved, type: type, from: sender, deviceID: nil)
            remember(watched, path, status, saved)
            Log.info(
                "\(label): took \(quotedForTerminal(key.path)) as \(quotedForTerminal(saved.name))\(saved.isDuplicate ? " (its bytes were kept already)" : "")"
            )
            if watched.folder.kind == .dropFolder { removeSource(watched, key, status, label) }
            return .whole
        case .failure(let failure):
            switch failure.kind {
            case .notAPhoto, .sizeMismatch, .hashMismatch:
                // Cut short, or still being written some way we cannot see: waits for a change.
                return .incomplete
            case .typeNotKept:
                return .notAPhoto(failure.message)
            case .noSpace, .io:
                sayOnce(
                    "store \(failure.message)",
                    "\(label): cannot take \(key.path) now: \(failure.message); tried again in a minute")
                return nil
            }
        }
    }

    /// Removes a drop folder's source once its photo is saved, if it is still the file read.
    func removeSource(_ watched: WatchedFolder, _ key: FileKey, _ status: FileStatus, _ label: String) {
        do {
            let place = try watched.root.parentBeneath(key.path)
            defer { place.close() }
            let now = try place.folder.status(of: place.name)
            guard now == status, now.changedAt == status.changedAt else { return }  // changed since: a new candidate
            try place.folder.unlink(place.name)
        } catch {
            sayOnce(
                "remove \(watched.folder.path)/\(key.path)",
                "\(label): saved \(key.path) but cannot remove it (\(error)); it is not taken again")
        }
    }
}
