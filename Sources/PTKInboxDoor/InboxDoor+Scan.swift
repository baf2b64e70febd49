import PTKInbox
import PTKLog
import PTKSystem

extension InboxDoor {
    /// The events a folder's watch asks for: files closed after writing or moved in, folders
    /// made or moved in, the folder itself gone.
    static let watchMask =
        InotifyMask.closeWrite | InotifyMask.movedTo | InotifyMask.create
        | InotifyMask.deleteSelf | InotifyMask.moveSelf

    /// Scans every folder: each file found is looked at (at once if new or changed since last
    /// seen), each folder entered is watched, and files no longer there are forgotten.
    func scanAll() {
        schedule.record(.scanStarted, at: .now)
        refreshFolders()
        for key in files.keys { files[key]?.seen = false }
        for (index, watched) in folders.enumerated() {
            if isStopping { return }
            scan(index, watched, below: [])
        }
        files = files.filter(\.value.seen)
        schedule.record(.scanFinished, at: .now)
    }

    /// Scans the folder `components` below `folders[index]`'s root (its root for none).
    func scan(_ index: Int, _ watched: WatchedFolder, below components: [String]) {
        // Gone or replaced by a link since its event: the next scan sees what is there.
        guard let start = watched.openFolder(components) else { return }
        defer { if !components.isEmpty { start.close() } }
        let scan = InboxScan(root: start, rootDevice: watched.device, crossMounts: settings.crossMounts)
        let result = scan.run { below, folder in watch(watched, components + below, folder) }
        let label = "\(watched.folder.kind.rawValue) \(watched.folder.path)"
        for (path, why) in result.unreadable {
            sayOnce(
                "unreadable \(watched.folder.path)/\(path)",
                "\(label): cannot read the folder \(path.isEmpty ? "itself" : path) (\(why)); skipped")
        }
        for path in result.mountsSkipped {
            sayOnce(
                "mount \(watched.folder.path)/\(path)",
                "\(label): \(path) is a mount point of its own, not entered (inbox-mounts = yes enters it)")
        }
        if result.truncated {
            sayOnce(
                "truncated \(watched.folder.path)",
                "\(label): more than \(InboxScan.maxFiles) files; each scan looks at that many")
        }
        for found in result.files {
            let key = FileKey(folder: index, path: (components + found.components).joined(separator: "/"))
            if var known = files[key] {
                known.seen = true
                // Unchanged since last seen and settled one way or another: nothing to do (a
                // truncated one is observed, which says it once when it has waited long).
                if known.due == nil, !known.incomplete, known.status == found.status,
                    known.status?.changedAt == found.status.changedAt
                {
                    files[key] = known
                    continue
                }
                known.due = .now
                files[key] = known
            } else {
                files[key] = TrackedFile(tracker: SettleTracker(settle: settings.settle), due: .now)
            }
        }
    }

    /// Watches the folder `components` below `watched`'s root, open as `folder`, unless it is.
    func watch(_ watched: WatchedFolder, _ components: [String], _ folder: FileDescriptor) {
        guard let inotify else { return }
        let path = components.joined(separator: "/")
        if watched.watchOf[Array(path.utf8)] != nil { return }
        do {
            let wd = try inotify.addWatch(folder: folder, mask: Self.watchMask)
            watched.watches[wd] = components
            watched.watchOf[Array(path.utf8)] = wd
        } catch {
            if error.isOutOfInotifyWatches {
                sayOnce(
                    "watches",
                    "inbox: \(Inotify.outOfWatchesAdvice(limit: Inotify.maxUserWatches())); folders not watched are found by the scans"
                )
            } else {
                sayOnce(
                    "watch \(watched.folder.path)/\(path)",
                    "\(watched.folder.kind.rawValue) \(watched.folder.path): cannot watch \(path.isEmpty ? "the folder" : path) (\(error)); found by the scans"
                )
            }
        }
    }

    /// Reads what inotify has, and acts on it: a file written is looked at once it settles, a
    /// new folder is watched and scanned, lost events make a scan due.
    func readEvents() {
        guard let inotify else { return }
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let n: Int
            do { n = try buffer.withUnsafeMutableBytes { b throws(SystemError) in try inotify.read(into: b) } } catch {
                schedule.record(.parseError, at: .now)
                return
            }
            if n == 0 { return }
            let parsed: [InotifyEvent]
            do { parsed = try events.feed(buffer[..<n]) } catch {
                events.reset()
                schedule.record(.parseError, at: .now)
                return
            }
            for event in parsed { act(on: event.kind) }
        }
    }

    private func act(on kind: InotifyEventKind) {
        switch kind {
        case .overflow:
            sayOnce("overflow", "inbox: more changes at once than inotify's queue holds; scanning every folder again")
            schedule.record(.overflow, at: .now)
        case .fileWritten(let wd, let name):
            for (index, watched) in folders.enumerated() {
                guard let components = watched.components(watch: wd, name: name),
                    case .candidate = InboxName.verdict(components)
                else { continue }
                let key = FileKey(folder: index, path: components.joined(separator: "/"))
                var file = files[key] ?? TrackedFile(tracker: SettleTracker(settle: settings.settle))
                file.due = .now
                files[key] = file
            }
        case .folderAppeared(let wd, let name):
            for (index, watched) in folders.enumerated() {
                guard let components = watched.components(watch: wd, name: name),
                    case .enter = InboxName.folderVerdict(components)
                else { continue }
                scan(index, watched, below: components)
            }
        case .folderGone(let wd):
            for watched in folders {
                if let components = watched.watches.removeValue(forKey: wd) {
                    watched.watchOf[Array(components.joined(separator: "/").utf8)] = nil
                }
            }
        case .other:
            break
        }
    }

    /// Logs `message` (a warning) the first time `key` is said.
    func sayOnce(_ key: String, _ message: String) {
        if said.insert(key).inserted { Log.warning(message) }
    }
}
