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
        files = files.filter { $0.value.seen || $0.value.inFlight }
        schedule.record(.scanFinished, at: .now)
    }

    /// At most this many files are said something of in `warningWindow`; the rest are counted
    /// and said in one line when it ends (thousands of FIFOs make 100 lines and one more).
    static let warningsPerScan = 100
    /// The time over which `warningsPerScan` counts.
    static let warningWindow: Duration = .seconds(10)
    /// At most this many files are tracked; beyond it, new ones wait for a scan to find them
    /// once others are taken (a rename storm cannot grow ptkd's memory without bound).
    static let maxTracked = InboxScan.maxFiles

    /// Says `message` of `file` once while it is tracked (`again`: once more after a change, as
    /// the tracker decides), within `warningsPerScan`.
    func warn(_ file: inout TrackedFile, _ message: String, again: Bool = false) {
        if file.warned && !again { return }
        sayLeftOutIfDue()
        file.warned = true
        if warnings < Self.warningsPerScan {
            warnings += 1
            Log.warning(message)
        } else {
            warningsLeftOut += 1
        }
    }

    /// When the count of warnings starts again and the files left out are said: the end of the
    /// window, if anything was left out; else nil.
    var leftOutDue: Instant? { warningsLeftOut > 0 ? warningsSince + Self.warningWindow : nil }

    /// The summary of the files not said in the window, then a fresh count, once the window is over.
    func sayLeftOutIfDue() {
        if Instant.now - warningsSince >= Self.warningWindow { sayLeftOut() }
    }

    /// The summary of the files not said, then a fresh count.
    func sayLeftOut() {
        warningsSince = .now
        if warningsLeftOut > 0 {
            Log.warning(
                "inbox: \(warningsLeftOut) more files not taken, not said one by one (the first \(Self.warningsPerScan) in 10 seconds are)"
            )
        }
        warnings = 0
        warningsLeftOut = 0
    }

    /// Scans the folder `components` below `folders[index]`'s root (its root for none).
    func scan(_ index: Int, _ watched: WatchedFolder, below components: [String]) {
        // Gone or replaced by a link since its event: the next scan sees what is there.
        guard let start = watched.openFolder(components) else { return }
        defer { if !components.isEmpty { start.close() } }
        // Never entered: the photos directory and the other watched folders, reached below this
        // one through a bind mount (their files are not this folder's to take, nor to remove).
        let excluded = Set(folders.filter { $0 !== watched }.map(\.id) + (photosID.map { [$0] } ?? []))
        let scan = InboxScan(
            root: start, rootDevice: watched.device, crossMounts: settings.crossMounts, excluded: excluded)
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
        if result.notUTF8 > 0 {
            sayOnce(
                "utf8 \(watched.folder.path)",
                "\(label): \(result.notUTF8) name(s) that are not UTF-8 left (rename them to be taken)")
        }
        for path in result.excludedSkipped {
            sayOnce(
                "excluded \(watched.folder.path)/\(path)",
                "\(label): \(path) is the photos directory or another watched folder (a mount?); not entered")
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
            } else if files.count < Self.maxTracked {
                files[key] = TrackedFile(tracker: SettleTracker(settle: settings.settle), due: .now)
            }
        }
    }

    /// Watches the folder `components` below `watched`'s root, open as `folder`, unless it is.
    func watch(_ watched: WatchedFolder, _ components: [String], _ folder: FileDescriptor) {
        guard let inotify else { return }
        let path = components.joined(separator: "/")
        let key = Array(path.utf8)
        // Watched under this name already. (A folder moved keeps its watch, which then names
        // the old path: it is mapped to the new one below, when the kernel gives it back.)
        if let wd = watched.watchOf[key], watched.watches[wd].map({ Array($0.joined(separator: "/").utf8) }) == key {
            return
        }
        do {
            let wd = try inotify.addWatch(folder: folder, mask: Self.watchMask)
            if let old = watched.watches[wd] { watched.watchOf[Array(old.joined(separator: "/").utf8)] = nil }
            watched.watches[wd] = components
            watched.watchOf[key] = wd
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
        // One read a turn of the loop: files due are looked at between reads, however fast
        // events come (a rename storm), and each folder that appeared is scanned once a batch.
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
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
        var appeared: [(index: Int, components: [String])] = []
        var seen: Set<[UInt8]> = []
        for event in parsed {
            if case .folderAppeared(let wd, let name) = event.kind {
                for (index, watched) in folders.enumerated() {
                    guard let components = watched.components(watch: wd, name: name),
                        case .enter = InboxName.folderVerdict(components),
                        seen.insert(Array("\(index)/\(components.joined(separator: "/"))".utf8)).inserted
                    else { continue }
                    appeared.append((index, components))
                }
            } else {
                act(on: event.kind)
            }
        }
        for (index, components) in appeared where index < folders.count {
            scan(index, folders[index], below: components)
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
                guard files[key] != nil || files.count < Self.maxTracked else { continue }
                var file = files[key] ?? TrackedFile(tracker: SettleTracker(settle: settings.settle))
                file.due = .now
                files[key] = file
            }
        case .folderAppeared:
            break  // gathered by `readEvents`, each scanned once a batch
        case .folderGone(let wd):
            for watched in folders {
                if let components = watched.watches.removeValue(forKey: wd) {
                    let key = Array(components.joined(separator: "/").utf8)
                    if watched.watchOf[key] == wd { watched.watchOf[key] = nil }
                }
            }
        case .other:
            break
        }
    }

    /// Logs `message` (a warning) the first time `key` is said.
    func sayOnce(_ key: String, _ message: String) {
        // Bounded: past it, a condition may be said again, never remembered without end.
        if said.count >= 4096 { said.removeAll() }
        if said.insert(key).inserted { Log.warning(message) }
    }
}
