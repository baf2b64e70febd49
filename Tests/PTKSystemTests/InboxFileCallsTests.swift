import Glibc
import PTKTestSupport
import PTKTestTags
import Testing

@testable import PTKSystem

/// The file calls issue 56's inboxes take a photo in with: a clone or a copy that leaves the
/// source as it is, whether anyone still writes a file, a hard link of an open file, and
/// whether a folder is a mount of its own.
@Suite(.tags(.unit)) struct InboxFileCallsTests {
    /// `count` bytes that differ from one offset to the next (no run a file system could fold).
    func pattern(_ count: Int) -> [UInt8] { (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 8) } }

    @Test("a clone gives identical bytes where the file system can reflink, and a 'cannot clone' errno where it cannot")
    func cloneOrCannot() throws {
        let dir = makeTemporaryDirectory("ptk-clone")
        defer { removeTree(dir) }
        let bytes = pattern(300_000)
        writeFile(dir + "/source", bytes)
        let source = try FileDescriptor.open(dir + "/source", flags: .readOnly)
        defer { source.close() }
        let copy = try FileDescriptor.open(dir + "/copy", flags: [.writeOnly, .create, .exclusive])
        do {
            try copy.cloneContents(of: source)
            copy.close()
            #expect(readFile(dir + "/copy") == bytes)
        } catch {
            copy.close()
            // ext4 and tmpfs, where the tests run: EOPNOTSUPP.
            #expect(error.call == "ioctl FICLONE" && error.code.meansCannotClone, "\(error)")
        }
        // Across file systems (/dev/shm is a tmpfs where there is one): EXDEV, a 'cannot clone' too.
        var template = Array("/dev/shm/ptk-clone.XXXXXX".utf8CString)
        let other = FileDescriptor(rawValue: mkstemp(&template))
        if other.rawValue >= 0 {
            defer {
                other.close()
                template.withUnsafeBufferPointer { _ = unlink($0.baseAddress!) }
            }
            if try other.status().device != source.status().device {
                #expect(
                    performing: { try other.cloneContents(of: source) },
                    throws: { error in
                        (error as? SystemError)?.code.meansCannotClone == true
                    })
            }
        }
        // A real error is not 'cannot clone': the target open for reading only.
        let readOnly = try FileDescriptor.open(dir + "/source", flags: .readOnly)
        defer { readOnly.close() }
        #expect(throws: SystemError(call: "ioctl FICLONE", errno: EBADF)) { try readOnly.cloneContents(of: source) }
        #expect(!Errno.badDescriptor.meansCannotClone && !Errno.noSpace.meansCannotClone)
        #expect([Errno.notSupported, .crossDevice, .invalidArgument, .noSuchIoctl].allSatisfy { $0.meansCannotClone })
    }

    @Test("copy_file_range copies the exact bytes asked for, at the same offsets, in as many calls as it takes")
    func copyRange() throws {
        let dir = makeTemporaryDirectory("ptk-copyrange")
        defer { removeTree(dir) }
        let bytes = pattern(1_048_576 + 123)
        writeFile(dir + "/source", bytes)
        let source = try FileDescriptor.open(dir + "/source", flags: .readOnly)
        defer { source.close() }
        // The whole file.
        let whole = try FileDescriptor.open(dir + "/whole", flags: [.writeOnly, .create, .exclusive])
        var offset: Int64 = 0
        while true {
            let n = try whole.copyRange(from: source, offset: offset, count: bytes.count - Int(offset) + 4096)
            if n == 0 { break }
            offset += Int64(n)
        }
        whole.close()
        #expect(offset == Int64(bytes.count))
        #expect(readFile(dir + "/whole") == bytes)
        // A range in the middle lands at its own offset; nothing else is written.
        let part = try FileDescriptor.open(dir + "/part", flags: [.readWrite, .create, .exclusive])
        defer { part.close() }
        #expect(try part.copyRange(from: source, offset: 1000, count: 5000) == 5000)
        let got = try part.status()
        #expect(got.size == 6000)
        #expect(readFile(dir + "/part").map { Array($0[1000...]) } == Array(bytes[1000..<6000]))
        #expect(readFile(dir + "/part").map { $0[..<1000].allSatisfy { $0 == 0 } } == true)
        // Neither file offset moved.
        #expect(try part.seek(to: 0) == 0 && lseek(source.rawValue, 0, SEEK_CUR) == 0)
        // Past the end of the source: nothing.
        #expect(try part.copyRange(from: source, offset: Int64(bytes.count), count: 10) == 0)
        // A descriptor not open for reading is a real error, not one to fall back from.
        let writeOnly = try FileDescriptor.open(dir + "/whole", flags: .writeOnly)
        defer { writeOnly.close() }
        #expect(
            performing: { try part.copyRange(from: writeOnly, offset: 0, count: 10) },
            throws: { error in
                (error as? SystemError)?.code == .badDescriptor
            })
        #expect(!Errno.badDescriptor.meansCannotCopyInKernel && Errno.crossDevice.meansCannotCopyInKernel)
    }

    @Test(
        "open for writing: false when nobody writes, true while a descriptor of this process or another process writes, nil where a lease cannot tell"
    )
    func writersVisible() throws {
        let dir = makeTemporaryDirectory("ptk-writers")
        defer { removeTree(dir) }
        writeFile(dir + "/photo.jpg", pattern(1000))
        let reader = try FileDescriptor.open(dir + "/photo.jpg", flags: .readOnly)
        defer { reader.close() }
        #expect(reader.hasWritersVisible() == false)
        #expect(reader.hasWritersVisible() == false, "the lease was let go: asked again, the same answer")

        // A writer in this same process is seen like any other: a lease counts every open for writing.
        let writer = try FileDescriptor.open(dir + "/photo.jpg", flags: .writeOnly)
        #expect(reader.hasWritersVisible() == true)
        writer.close()
        #expect(reader.hasWritersVisible() == false)

        // Another process holding it open to write (descriptor 3 of a sleeping shell).
        let child = try Child.spawn(
            ["/bin/sh", "-c", "exec 3>>\"$F\"; echo open; exec sleep 30"], environment: ["F=\(dir)/photo.jpg"])
        var seen = false
        let deadline = Instant.now + .seconds(10)
        while !seen && Instant.now < deadline {
            seen = reader.hasWritersVisible() == true
            if !seen { sleep(for: .milliseconds(5)) }
        }
        #expect(seen, "another process's writer was never seen")
        child.signalGroup(Child.killSignal)
        var ending: Child.Ending?
        while ending == nil && Instant.now < deadline {
            ending = child.ended()
            if ending == nil { sleep(for: .milliseconds(5)) }
        }
        #expect(ending == .signalled(SIGKILL))
        #expect(reader.hasWritersVisible() == false, "the writer is gone")

        // Cannot tell: through a descriptor that writes itself, or of a directory (no leases).
        let both = try FileDescriptor.open(dir + "/photo.jpg", flags: .readWrite)
        #expect(both.hasWritersVisible() == nil)
        both.close()
        let folder = try FileDescriptor.open(dir, flags: [.readOnly, .directory])
        defer { folder.close() }
        #expect(folder.hasWritersVisible() == nil)
    }

    @Test("a writer opening the file in the instant the lease is held does not end this process (SIGIO is ignored)")
    func leaseBreakSignal() throws {
        let dir = makeTemporaryDirectory("ptk-writers")
        defer { removeTree(dir) }
        writeFile(dir + "/photo.jpg", [1])
        let reader = try FileDescriptor.open(dir + "/photo.jpg", flags: .readOnly)
        defer { reader.close() }
        #expect(reader.hasWritersVisible() == false)
        var action = sigaction()
        #expect(sigaction(SIGIO, nil, &action) == 0)
        let isDefault = action.sa_flags & SA_SIGINFO == 0 && action.__sigaction_handler.sa_handler == nil
        // Were it still at its default, the lease break below would end the whole test process.
        try #require(!isDefault, "SIGIO is still at its default after the first lease")

        // The instant stretched: the lease held by hand while another process opens the file to write.
        #expect(fcntl(reader.rawValue, 1024 /* F_SETLEASE */, Int32(F_RDLCK)) == 0)
        let child = try Child.spawn(
            ["/bin/sh", "-c", "exec 3>>\"$F\"; echo opened"], environment: ["F=\(dir)/photo.jpg"])
        // The kernel breaks the lease (SIGIO to this process: F_GETLEASE says F_UNLCK, the lease
        // being broken) and the writer's open waits for it.
        var broken = false
        let deadline = Instant.now + .seconds(10)
        while !broken && Instant.now < deadline {
            broken = fcntl(reader.rawValue, 1025 /* F_GETLEASE */) == Int32(F_UNLCK)
            if !broken { sleep(for: .milliseconds(5)) }
        }
        #expect(broken, "the writer's open never broke the lease")
        sleep(for: .milliseconds(100))
        #expect(child.ended() == nil, "the writer's open waits for the lease")
        #expect(fcntl(reader.rawValue, 1024 /* F_SETLEASE */, Int32(F_UNLCK)) == 0)
        var ending: Child.Ending?
        while ending == nil && Instant.now < deadline {
            ending = child.ended()
            if ending == nil { sleep(for: .milliseconds(5)) }
        }
        #expect(ending == .exited(0))
    }

    @Test(
        "a hard link of an open file: the same inode under a second name, never replacing a name, the file opened whatever its name became"
    )
    func linkInto() throws {
        let dir = makeTemporaryDirectory("ptk-link")
        defer { removeTree(dir) }
        #expect(mkdir(dir + "/photos", 0o755) == 0)
        let photos = try FileDescriptor.open(dir + "/photos", flags: [.readOnly, .directory])
        defer { photos.close() }
        writeFile(dir + "/source.jpg", [1, 2, 3])
        let file = try FileDescriptor.open(dir + "/source.jpg", flags: .readOnly)
        defer { file.close() }
        // Renamed and its name taken by another file after the open: the open file is linked.
        #expect(Glibc.rename(dir + "/source.jpg", dir + "/renamed.jpg") == 0)
        writeFile(dir + "/source.jpg", [9])
        try file.linkInto(directory: photos, name: "photo.jpg")
        let linked = try photos.statusWithLinks(of: "photo.jpg")
        #expect(linked.status.inode == (try file.status()).inode && linked.links == 2)
        #expect(readFile(dir + "/photos/photo.jpg") == [1, 2, 3])

        // A name taken is refused, and left as it was.
        writeFile(dir + "/photos/taken.jpg", [7])
        #expect(throws: SystemError(call: "link", object: "taken.jpg", errno: EEXIST)) {
            try file.linkInto(directory: photos, name: "taken.jpg")
        }
        #expect(readFile(dir + "/photos/taken.jpg") == [7])
        #expect(throws: SystemError(call: "link", object: "photo.jpg", errno: EEXIST)) {
            try file.linkThroughProc(directory: photos, name: "photo.jpg")
        }

        // The way through /proc alone (a process without CAP_DAC_READ_SEARCH takes it).
        try file.linkThroughProc(directory: photos, name: "through-proc.jpg")
        #expect(try photos.status(of: "through-proc.jpg").inode == (try file.status()).inode)

        // A file whose last name is gone cannot be given one.
        writeFile(dir + "/gone.jpg", [5])
        let gone = try FileDescriptor.open(dir + "/gone.jpg", flags: .readOnly)
        defer { gone.close() }
        #expect(unlink(dir + "/gone.jpg") == 0)
        #expect(throws: SystemError(call: "link", object: "back.jpg", errno: ENOENT)) {
            try gone.linkInto(directory: photos, name: "back.jpg")
        }
    }

    @Test("as a user without CAP_DAC_READ_SEARCH, the link is made through /proc")
    func linkIntoUnprivileged() throws {
        let dir = makeTemporaryDirectory("ptk-link")
        defer { removeTree(dir) }
        #expect(mkdir(dir + "/photos", 0o755) == 0)
        writeFile(dir + "/source.jpg", [1, 2, 3])
        let photos = try FileDescriptor.open(dir + "/photos", flags: [.readOnly, .directory])
        defer { photos.close() }
        let file = try FileDescriptor.open(dir + "/source.jpg", flags: .readOnly)
        defer { file.close() }
        let (direct, made) = try withFileAccess(giving: dir) { () -> (Int32, Result<Void, SystemError>) in
            // AT_EMPTY_PATH alone, as such a user: refused (ENOENT), so linkInto goes through /proc.
            let direct = linkat(file.rawValue, "", photos.rawValue, "direct.jpg", 0x1000) == 0 ? 0 : errno
            return (
                direct, Result { () throws(SystemError) in try file.linkInto(directory: photos, name: "photo.jpg") }
            )
        }
        if geteuid() == 0 { #expect(direct == ENOENT, "AT_EMPTY_PATH without CAP_DAC_READ_SEARCH") }
        #expect(throws: Never.self) { try made.get() }
        #expect(try photos.status(of: "photo.jpg").inode == (try file.status()).inode)
    }

    @Test("a mount point of its own is told from a folder: /proc is one, a temporary folder is not")
    func mountRoot() throws {
        let dir = makeTemporaryDirectory("ptk-mount")
        defer { removeTree(dir) }
        // Not "/": in a chroot (a package build's) it is a folder like any other.
        let procMounted = access("/proc/self", F_OK) == 0
        for (path, expected) in [("/proc", true), (dir, false)] where path != "/proc" || procMounted {
            let folder = try FileDescriptor.open(path, flags: [.readOnly, .directory])
            defer { folder.close() }
            #expect(try folder.isMountRoot() == expected, "\(path)")
            // The way before Linux 5.8, by device numbers: the same for these (neither is a bind mount).
            #expect(try folder.isMountRootByDevice() == expected, "\(path) by device")
        }
        // An O_PATH descriptor works too (a walk may hold those).
        let path = try FileDescriptor.open(dir, flags: [.pathOnly, .directory])
        defer { path.close() }
        #expect(try !path.isMountRoot())
        #expect(procMounted, "/proc is mounted where the tests run")
    }
}
