import PTKDigest
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
        let due = files.filter { !$0.value.inFlight && $0.value.due.map { $0 <= now } ?? false }.keys.sorted {
            ($0.folder, $0.path) < ($1.folder, $1.path)
        }
        for key in due {
            if isStopping { return }
            // Photos whose rounds are over are concluded between files; at most `maxInFlight`
            // wait for theirs while the next file is read.
            land(keeping: Self.maxInFlight - 1)
            look(at: key)
        }
    }

    /// Observes one file and does what its tracker decides: wait, check and take, or say why not.
    func look(at key: FileKey) {
        guard var file = files[key], !file.inFlight else { return }
        let watched = folders[key.folder]
        let components = key.path.parts(separatedBy: "/")
        let label = "\(watched.folder.kind.rawValue) \(watched.folder.path)"
        // Its kind before it is opened: a FIFO, socket or device is never opened (opening a
        // device can do something), only said once.
        // Left, said once, and looked at again only when a scan sees it change.
        func leaveNotRegular(_ kind: FileStatus) {
            warn(&file, "\(label): \(key.path) is not a regular file; left")
            file.due = nil
            file.status = kind
            files[key] = file
        }
        // (A status that cannot be taken: gone, or a link on the way; the open below finds it so.)
        if let kind = try? watched.root.statusBeneath(key.path), !kind.isRegularFile { return leaveNotRegular(kind) }
        // Non-blocking: a FIFO put there in the moment since never holds the door.
        let fd: FileDescriptor
        do { fd = try watched.root.openBeneath(key.path, flags: [.readOnly, .nonBlocking]) } catch {
            files[key] = nil  // gone, or a link: a later event or scan brings it back if it returns
            return
        }
        var inFlight = false  // then `land` closes it, once its photo is concluded
        defer { if !inFlight { fd.close() } }
        let status: FileStatus
        do { status = try fd.status() } catch {
            files[key] = nil
            return
        }
        guard status.isRegularFile else { return leaveNotRegular(status) }
        var decision = file.tracker.observe(Self.observation(status, openForWriting: fd.hasWritersVisible()), at: .now)
        file.status = status
        if decision == .check {
            switch take(fd, status, key, watched, components, &file) {
            case .inFlight(let photo, let landed):
                // Its flush round runs while the door reads the next file; `land` does the rest.
                inFlight = true
                file.inFlight = true
                file.due = nil
                files[key] = file
                flying.append(Flight(key: key, fd: fd, status: status, label: label, photo: photo, landed: landed))
                return
            case .over(let outcome):
                guard let checked = checked(outcome, fd, status, &file) else {
                    files[key] = file
                    return
                }
                decision = checked
            }
        }
        follow(decision, key, label, &file)
    }

    /// What the tracker decides of `file` (open as `fd`, of `status` when it was read) once its
    /// check and taking gave `outcome`; nil when the store could not take it now (no room, an
    /// I/O error): then it is settled afresh in a minute.
    func checked(
        _ outcome: SettleTracker.Outcome?, _ fd: FileDescriptor, _ status: FileStatus, _ file: inout TrackedFile
    ) -> SettleTracker.Decision? {
        guard let outcome else {
            file.tracker = SettleTracker(settle: settings.settle)
            file.due = .now + .seconds(60)
            return nil
        }
        let after = (try? fd.status()) ?? status  // fstat of an open descriptor fails only on EIO: judged as read
        let decision = file.tracker.checked(outcome, observed: Self.observation(after, openForWriting: false), at: .now)
        file.status = after
        file.incomplete = outcome == .incomplete
        return decision
    }

    /// Does what the tracker decided of the file at `key`, and keeps what is known of it.
    func follow(_ decision: SettleTracker.Decision, _ key: FileKey, _ label: String, _ file: inout TrackedFile) {
        switch decision {
        case .wait(let until): file.due = until
        case .check: file.due = .now
        case .take, .waitForChange: file.due = nil
        case .report(let why):
            warn(&file, "\(label): \(key.path) \(why)", again: true)
            file.due = nil
        case .refuse(let why):
            warn(&file, "\(label): \(key.path) is not taken: \(why); left where it is", again: true)
            file.due = nil
        }
        files[key] = file
    }

    /// `status` as the tracker observes it (`openForWriting`: whether a writer was seen; false
    /// once the file has been read through the check, which nobody interrupted).
    static func observation(_ status: FileStatus, openForWriting: Bool?) -> SettleTracker.Observation {
        SettleTracker.Observation(
            size: status.size, modified: status.modified &* 1_000_000_000 &+ status.modifiedNanoseconds,
            changed: status.changedAt, device: status.device, inode: status.inode, openForWriting: openForWriting)
    }

    /// The check and the taking of a settled file, as one step: the store's own checks say
    /// whether it is whole. Answers `.over` with the outcome for its tracker (`.whole` when it
    /// was taken before), or with nil when the store cannot take it now (no room, an I/O
    /// error): it is tried again later. A photo the store has read is answered `.inFlight`: its
    /// outcome (`.whole` once it is saved, or nil as above) comes from `landed` once its flush
    /// round is over (`land`).
    func take(
        _ fd: FileDescriptor, _ status: FileStatus, _ key: FileKey, _ watched: WatchedFolder, _ components: [String],
        _ file: inout TrackedFile
    ) -> Taking {
        let label = "\(watched.folder.kind.rawValue) \(watched.folder.path)"
        let path = BytePath(key.path)
        // Taken before: this very file, unchanged, or the same bytes with only its metadata
        // changed (a chmod, a chown, a hard link made elsewhere change its change time): nothing
        // to copy, whatever `duplicates` says. A drop folder's source still there (its removal
        // failed) is removed now.
        let record = inboxRecord(watched, path)
        if let record, record.isSameFile(as: status) || sameBytes(fd, status, record) {
            if !record.isSameFile(as: status) {
                remember(watched, path, status, sha256: record.sha256, photo: record.photo)
            }
            if watched.folder.kind == .dropFolder {
                removeSource(watched, key, status, photo: record.photo, label, &file)
            }
            return .over(.whole)
        }
        // A shorter copy of the photo taken from this very path (an interrupted copy made
        // again): the complete file is the photo; this one stores nothing and replaces nothing.
        if let record, let why = startOfTakenPhoto(fd, status, record) { return .over(.notAPhoto(why)) }
        guard status.size <= settings.maxFileSize else {
            return .over(
                .notAPhoto(
                    "\(formatBytes(Double(status.size))), larger than max-file-size (\(formatBytes(Double(settings.maxFileSize))))"
                ))
        }
        var head = [UInt8](repeating: 0, count: 32)
        let got =
            (try? head.withUnsafeMutableBytes { b throws(SystemError) in try fd.read(fromAbsoluteOffset: 0, into: b) })
            ?? 0  // unreadable: sniffed as nothing, so refused until it changes
        guard let type = PhotoType.sniff(head[..<got]) else {
            return .over(got == 0 ? .incomplete : .notAPhoto("it is not a PNG, JPEG or HEIF photo"))
        }
        guard settings.types.contains(type) else {
            return .over(.notAPhoto("\(type.mediaType) is not among the types kept (types)"))
        }
        guard let source = InboxSource(inbox: watched.name, components: components) else { return .over(.incomplete) }
        let sender = Sender(announcedName: source.sender, id: nil, address: watched.folder.path)
        let request = StoreRequest(
            name: source.name, size: status.size, sha256: "", type: type, sender: source.sender,
            modified: status.modifiedTime.milliseconds,
            folder: StoreRequest.folder(arrivals.folder(for: sender), adding: source.relativePath))
        let photo = store.startTaking(
            request, from: fd, ways: watched.ways, mayLink: mayLink(status, key, watched, record),
            stop: { [self] in isStopping },
            notify: { [wake] in wake.signal() },
            owner: ObjectIdentifier(self).hashValue, held: { [self] in heldInFlight(sha256: $0, size: $1) })
        return .inFlight(photo) { [self] result, file in
            switch result {
            case .success(let saved):
                arrivals.saved(saved, type: type, from: sender, deviceID: nil)
                remember(watched, path, status, sha256: saved.sha256, photo: saved.name)
                Log.info(
                    "\(label): took \(quotedForTerminal(key.path)) as \(quotedForTerminal(saved.name))\(saved.isDuplicate ? " (its bytes were kept already)" : "")"
                )
                if watched.folder.kind == .dropFolder {
                    removeSource(watched, key, status, photo: saved.name, label, &file)
                }
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
    }

    /// True when the file open as `fd` (of `status`) holds the bytes `record` took: same size
    /// and SHA-256 (read whole, as a copy would be).
    func sameBytes(_ fd: FileDescriptor, _ status: FileStatus, _ record: InboxSourceRecord) -> Bool {
        guard status.size == record.size, !record.sha256.isEmpty else { return false }
        var hasher = SHA256()
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        var position: Int64 = 0
        while position < status.size {
            if isStopping { return false }
            let want = Int(min(Int64(buffer.count), status.size - position))
            let n: Int
            do {
                n = try buffer.withUnsafeMutableBytes { b throws(SystemError) in
                    try fd.read(fromAbsoluteOffset: position, into: UnsafeMutableRawBufferPointer(rebasing: b[..<want]))
                }
            } catch { return false }
            if n == 0 { return false }
            buffer.withUnsafeBytes { hasher.update(UnsafeRawBufferPointer(rebasing: $0[..<n])) }
            position += Int64(n)
        }
        return hasher.finalizeHex() == record.sha256
    }

    /// Removes a drop folder's source once its photo (`photo`, below the photos directory) is
    /// saved, if it is still the file read and not that photo itself (a folder of the photos
    /// directory bind-mounted into the drop folder). Never deletes another file put there
    /// meanwhile: the name is first moved to a name of ptk's own (which no writer uses),
    /// checked there, and only then removed; another file found there is moved back.
    func removeSource(
        _ watched: WatchedFolder, _ key: FileKey, _ status: FileStatus, photo: String?, _ label: String,
        _ file: inout TrackedFile
    ) {
        if let photo, let kept = try? fileStatus(settings.directory + "/" + photo),  // gone: no photo to be
            kept.device == status.device && kept.inode == status.inode
        {
            warn(&file, "\(label): \(key.path) is the photo \(photo) itself (a mount of the photos directory?); left")
            return
        }
        do {
            let place = try watched.root.parentBeneath(key.path)
            defer { place.close() }
            asideCount += 1
            let aside = ".ptk-taken.\(processID()).\(asideCount)"
            try place.folder.move(place.name, in: place.folder, to: aside)
            // The file read is still open (its inode cannot be reused), so its device and inode
            // name it; the same size and modification time say nobody wrote it since. (Not the
            // change time: the move itself sets it.)
            let now = try place.folder.status(of: aside)
            guard now == status else {
                // Another file took the name meanwhile: it goes back, a new candidate.
                do { try place.folder.move(aside, in: place.folder, to: place.name) } catch {
                    Log.warning("\(label): a file put at \(key.path) while it was taken is left as \(aside) (\(error))")
                }
                return
            }
            try place.folder.unlink(aside)
        } catch {
            warn(&file, "\(label): saved \(key.path) but cannot remove it (\(error)); it is not taken again")
        }
    }
}
