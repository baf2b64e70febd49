import Glibc
import PTKSystem
import PTKTestSupport
import PTKTestTags
import Testing

/// Watches on open folders, as issue 56's inboxes use them: the raw events a writer's close
/// and rename give, a folder swapped for a symlink that is not followed, watches removed.
@Suite(.tags(.unit)) struct InotifyTests {
    /// One event as the kernel queues it (struct inotify_event), decoded here for the checks
    /// (a pure module parses them for ptkd).
    struct Event: Equatable, CustomStringConvertible {
        var wd: Int32
        var mask: UInt32
        var name: String
        var description: String { "wd \(wd) mask 0x\(String(mask, radix: 16)) '\(name)'" }
    }

    /// The events queued now: inotify queues a local file system's events within the call that
    /// causes them, so what the test did is all there once poll says readable (or nothing is).
    func queuedEvents(_ inotify: Inotify, wait: Duration = .seconds(2)) throws -> [Event] {
        let ready = try poll([(inotify.descriptor, .readable)], until: .now + wait)
        guard ready[0].contains(.readable) else { return [] }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = try buffer.withUnsafeMutableBytes { try inotify.read(into: $0) }
            if n == 0 { break }
            bytes += buffer[..<n]
        }
        var events: [Event] = []
        var at = 0
        bytes.withUnsafeBytes { raw in
            while at + 16 <= raw.count {
                let length = Int(raw.loadUnaligned(fromByteOffset: at + 12, as: UInt32.self))
                let name = raw[(at + 16)..<(at + 16 + length)].prefix { $0 != 0 }
                events.append(
                    Event(
                        wd: raw.loadUnaligned(fromByteOffset: at, as: Int32.self),
                        mask: raw.loadUnaligned(fromByteOffset: at + 4, as: UInt32.self),
                        name: String(decoding: name, as: UTF8.self)))
                at += 16 + length
            }
        }
        #expect(at == bytes.count, "the events fill the bytes read exactly")
        return events
    }

    @Test("a file written and closed gives IN_CLOSE_WRITE, a file renamed in gives IN_MOVED_TO, each with its name")
    func closeWriteAndMovedTo() throws {
        let dir = makeTemporaryDirectory("ptk-inotify")
        defer { removeTree(dir) }
        let folder = try FileDescriptor.open(dir, flags: [.readOnly, .directory, .noFollow])
        defer { folder.close() }
        let inotify = try Inotify()
        // IN_DONT_FOLLOW in the mask is taken out: with it the watch would be on /proc's link.
        let wd = try inotify.addWatch(folder: folder, mask: Inotify.closeWrite | Inotify.movedTo | Inotify.dontFollow)
        #expect(wd > 0)
        #expect(try queuedEvents(inotify, wait: .milliseconds(50)).isEmpty, "nothing happened yet")

        writeFile(dir + "/a.jpg", [1, 2, 3])
        var events = try queuedEvents(inotify)
        #expect(events == [Event(wd: wd, mask: Inotify.closeWrite, name: "a.jpg")], "\(events)")
        // The first event's mask as the kernel wrote it: only the bits asked for.
        #expect(events.first.map { $0.mask & Inotify.closeWrite != 0 && $0.mask & Inotify.movedTo == 0 } == true)

        // A writer's temporary name, then its rename: the close is of the temporary, the photo arrives by IN_MOVED_TO.
        writeFile(dir + "/.b.jpg.tmp", [4, 5])
        #expect(Glibc.rename(dir + "/.b.jpg.tmp", dir + "/b.jpg") == 0)
        events = try queuedEvents(inotify)
        #expect(
            events == [
                Event(wd: wd, mask: Inotify.closeWrite, name: ".b.jpg.tmp"),
                Event(wd: wd, mask: Inotify.movedTo, name: "b.jpg"),
            ], "\(events)")

        // A folder made inside says IN_ISDIR with its events; an open for reading closed says nothing asked for.
        #expect(mkdir(dir + "/c", 0o755) == 0 && Glibc.rename(dir + "/c", dir + "/d") == 0)
        let reader = try FileDescriptor.open(dir + "/a.jpg", flags: .readOnly)
        reader.close()
        events = try queuedEvents(inotify)
        #expect(events == [Event(wd: wd, mask: Inotify.movedTo | Inotify.isDirectory, name: "d")], "\(events)")
    }

    @Test(
        "a folder opened, then swapped for a symlink before it is watched: the watch is on the folder opened, never the link's target"
    )
    func swappedForSymlink() throws {
        let dir = makeTemporaryDirectory("ptk-inotify")
        defer { removeTree(dir) }
        #expect(mkdir(dir + "/inbox", 0o755) == 0 && mkdir(dir + "/elsewhere", 0o755) == 0)
        let folder = try FileDescriptor.open(dir + "/inbox", flags: [.readOnly, .directory, .noFollow])
        defer { folder.close() }
        // Swapped between the open and the watch: the folder moves away, a symlink takes its name.
        #expect(Glibc.rename(dir + "/inbox", dir + "/moved") == 0)
        #expect(symlink(dir + "/elsewhere", dir + "/inbox") == 0)
        let inotify = try Inotify()
        let wd = try inotify.addWatch(folder: folder, mask: Inotify.closeWrite | Inotify.movedTo)

        writeFile(dir + "/inbox/through-the-link.jpg", [1])  // lands in elsewhere/
        writeFile(dir + "/moved/in-the-folder.jpg", [2])
        let events = try queuedEvents(inotify)
        #expect(events == [Event(wd: wd, mask: Inotify.closeWrite, name: "in-the-folder.jpg")], "\(events)")

        // The symlink itself, opened without following it, is no folder to watch.
        let link = try FileDescriptor.open(dir + "/inbox", flags: [.pathOnly, .noFollow])
        defer { link.close() }
        #expect(
            throws: SystemError(call: "inotify_add_watch", object: "/proc/self/fd/\(link.rawValue)", errno: ENOTDIR)
        ) {
            try inotify.addWatch(folder: link, mask: Inotify.closeWrite)
        }
        // Nor is a file.
        let file = try FileDescriptor.open(dir + "/moved/in-the-folder.jpg", flags: .readOnly)
        defer { file.close() }
        #expect(
            performing: { try inotify.addWatch(folder: file, mask: Inotify.closeWrite) },
            throws: { error in
                (error as? SystemError)?.code == .notDirectory
            })
    }

    @Test(
        "a watch removed says IN_IGNORED and then nothing; removing it again says it was gone; one folder is one watch")
    func removeWatch() throws {
        let dir = makeTemporaryDirectory("ptk-inotify")
        defer { removeTree(dir) }
        let folder = try FileDescriptor.open(dir, flags: [.readOnly, .directory, .noFollow])
        defer { folder.close() }
        let inotify = try Inotify()
        let wd = try inotify.addWatch(folder: folder, mask: Inotify.closeWrite)
        // Another descriptor of the same folder is the same watch.
        let again = try FileDescriptor.open(dir, flags: [.readOnly, .directory, .noFollow])
        defer { again.close() }
        #expect(try inotify.addWatch(folder: again, mask: Inotify.closeWrite | Inotify.movedTo) == wd)

        #expect(inotify.removeWatch(wd))
        writeFile(dir + "/after.jpg", [1])
        let events = try queuedEvents(inotify)
        #expect(events == [Event(wd: wd, mask: Inotify.ignored, name: "")], "\(events)")
        #expect(!inotify.removeWatch(wd), "gone already")
        #expect(try queuedEvents(inotify, wait: .milliseconds(50)).isEmpty)

        // A folder deleted ends its watch by itself.
        #expect(mkdir(dir + "/sub", 0o755) == 0)
        let sub = try FileDescriptor.open(dir + "/sub", flags: [.readOnly, .directory, .noFollow])
        let subWatch = try inotify.addWatch(folder: sub, mask: Inotify.closeWrite)
        sub.close()
        #expect(rmdir(dir + "/sub") == 0)
        let ended = try queuedEvents(inotify)
        #expect(ended.contains(Event(wd: subWatch, mask: Inotify.ignored, name: "")), "\(ended)")
        #expect(!inotify.removeWatch(subWatch))
    }

    @Test("running out of watches is its own error, never a full disk, and says which limit to raise")
    func outOfWatches() throws {
        let limit = Inotify.maxUserWatches()
        #expect((limit ?? 0) > 0, "/proc/sys/fs/inotify/max_user_watches reads as a number")
        let error = SystemError(call: "inotify_add_watch", object: "/proc/self/fd/9", errno: ENOSPC)
        #expect(error.isOutOfInotifyWatches && !error.isNoSpace)
        #expect(error.description.contains("max_user_watches") && !error.description.contains("No space"))
        let disk = SystemError(call: "write", errno: ENOSPC)
        #expect(disk.isNoSpace && !disk.isOutOfInotifyWatches)
        let advice = Inotify.outOfWatchesAdvice(limit: limit)
        #expect(advice.contains("raise fs.inotify.max_user_watches (now \(limit ?? 0))"))
        #expect(SystemError(call: "inotify_init1", errno: EMFILE).isOutOfInotifyInstances)
    }

    @Test("a read into a buffer too small for the next event fails (EINVAL) and loses nothing")
    func smallBuffer() throws {
        let dir = makeTemporaryDirectory("ptk-inotify")
        defer { removeTree(dir) }
        let folder = try FileDescriptor.open(dir, flags: [.readOnly, .directory, .noFollow])
        defer { folder.close() }
        let inotify = try Inotify()
        _ = try inotify.addWatch(folder: folder, mask: Inotify.closeWrite)
        writeFile(dir + "/" + String(repeating: "n", count: 200), [1])
        var small = [UInt8](repeating: 0, count: 32)
        #expect(throws: SystemError(call: "read", object: "inotify", errno: EINVAL)) {
            try small.withUnsafeMutableBytes { try inotify.read(into: $0) }
        }
        var enough = [UInt8](repeating: 0, count: Inotify.minimumReadSize)
        #expect(try enough.withUnsafeMutableBytes { try inotify.read(into: $0) } > 200)
    }
}
