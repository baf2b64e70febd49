import Foundation
import Glibc
import PTKDigest
import PTKStore
import PTKSystem
import PTKTestSupport
import PTKTestTags
import Testing

@testable import PTKLibrary

/// Issue 42: root's `ptk` works on a directory owned by the service user, so whatever is under
/// it (the photos, `.ptk/`, a package handed to `ptk import`) may have been planted: links to
/// files only root may touch, FIFOs, hard links, a rollback journal naming a file for SQLite to
/// delete. The library must neither follow nor trust any of them, even run as root.
@Suite("Files planted in a library or a package", .tags(.unit))
struct HostileLibraryFilesTests {
    /// The LibraryError `body` throws; records an issue when it throws none or another error.
    static func refusal<T>(_ what: String, _ body: () throws -> T) -> LibraryError? {
        do {
            _ = try body()
            Issue.record("\(what): expected a refusal")
            return nil
        } catch let error as LibraryError {
            return error
        } catch {
            Issue.record("\(what): \(error)")
            return nil
        }
    }

    /// A received-photos directory with a library made and closed again (no connection open).
    static func closedLibrary() throws -> String {
        let directory = makeTemporaryDirectory("ptk-hostile")
        _ = try PhotoLibrary(directory: directory, create: true)
        return directory
    }

    /// A rollback journal SQLite takes as hot, naming `superJournal` as its super-journal: when
    /// SQLite replays it, it deletes that file (a super-journal none of whose children is hot).
    /// The layout is SQLite's (pager.c): a first byte that is not zero, a header SQLite reads as
    /// "no more records", then the super-journal record at the end of the file.
    static func hotJournal(naming superJournal: String) -> [UInt8] {
        func be32(_ v: UInt32) -> [UInt8] {
            [UInt8(v >> 24), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)]
        }
        let name = Array(superJournal.utf8)
        var bytes: [UInt8] = [1] + [UInt8](repeating: 0, count: 511)
        bytes += be32(0x4000_0000 / 4096 + 1)  // the lock-byte page, as SQLite marks the record
        bytes += name
        bytes += be32(UInt32(name.count))
        bytes += be32(name.reduce(UInt32(0)) { $0 &+ UInt32($1) })
        bytes += [0xD9, 0xD5, 0x05, 0xF9, 0x20, 0xA1, 0x63, 0xD7]
        return bytes
    }

    static func mode(_ path: String) -> (owner: uid_t, group: gid_t, mode: mode_t)? {
        var st = stat()
        guard lstat(path, &st) == 0 else { return nil }
        return (st.st_uid, st.st_gid, st.st_mode & 0o7777)
    }

    @Test("a hot rollback journal in .ptk is refused before SQLite sees it, and the file it names is kept")
    func aHotRollbackJournalIsRefused() throws {
        let directory = try Self.closedLibrary()
        defer { removeTree(directory) }
        let elsewhere = makeTemporaryDirectory("ptk-victim")
        defer { removeTree(elsewhere) }
        let sentinel = elsewhere + "/sentinel"
        writeFile(sentinel, Array("keep me\n".utf8))
        let journal = directory + "/.ptk/index.sqlite-journal"
        writeFile(journal, Self.hotJournal(naming: sentinel))
        // Planted by another user (the service user, for root's ptk): one of our own is our
        // crash's, which SQLite replays (FaultInjectionTests).
        try #require(geteuid() == 0, "needs root to plant as another user")
        #expect(chown(journal, 4242, 4242) == 0)
        for create in [false, true] {
            let error = Self.refusal("create: \(create)") { try PhotoLibrary(directory: directory, create: create) }
            #expect(error?.kind == .io)
            #expect(
                error?.description
                    == "\(journal): a rollback journal another user made, which the index never makes (it runs in WAL mode); refusing to open the index: move it away after checking it",
                "\(error?.description ?? "")")
            #expect(readFile(sentinel) == Array("keep me\n".utf8), "the file the journal names is still there")
            #expect(readFile(journal) == Self.hotJournal(naming: sentinel), "the journal is left for the administrator")
        }
        // An empty journal is nothing to replay: the library opens.
        writeFile(journal, [])
        _ = try PhotoLibrary(directory: directory, create: false)
    }

    @Test(
        "the index, its -wal, -shm or -journal as a symlink is refused and what it points to is untouched",
        arguments: ["index.sqlite", "index.sqlite-wal", "index.sqlite-shm", "index.sqlite-journal"])
    func aSymlinkedIndexFileIsRefused(name: String) throws {
        let directory = try Self.closedLibrary()
        defer { removeTree(directory) }
        let elsewhere = makeTemporaryDirectory("ptk-victim")
        defer { removeTree(elsewhere) }
        let victim = elsewhere + "/victim"
        let planted = directory + "/.ptk/" + name
        if name == "index.sqlite" {
            #expect(rename(planted, victim) == 0)
        } else {
            writeFile(victim, Array("precious, root's only\n".utf8))
            chmod(victim, 0o600)
        }
        let before = readFile(victim)
        #expect(symlink(victim, planted) == 0)
        for create in [false, true] {
            let error = Self.refusal("\(name), create: \(create)") {
                try PhotoLibrary(directory: directory, create: create)
            }
            #expect(error?.kind == .io)
            #expect(
                error?.description.contains("\(planted): is a symbolic link; not followed") == true,
                "\(error?.description ?? "")")
            #expect(readFile(victim) == before)
            #expect(Self.mode(victim)?.mode == (name == "index.sqlite" ? 0o644 : 0o600))
        }
        #expect(listDirectory(elsewhere) == ["victim"], "nothing made beside the victim")
    }

    @Test(".ptk, .ptk/thumbnails or .ptk/previews as a symlink is refused")
    func aSymlinkedLibraryFolderIsRefused() throws {
        for folder in [".ptk", ".ptk/thumbnails", ".ptk/previews"] {
            let directory = try Self.closedLibrary()
            defer { removeTree(directory) }
            let elsewhere = makeTemporaryDirectory("ptk-victim")
            defer { removeTree(elsewhere) }
            let real = elsewhere + "/real"
            #expect(rename(directory + "/" + folder, real) == 0)
            #expect(symlink(real, directory + "/" + folder) == 0)
            let entries = listDirectory(real)
            for create in [false, true] {
                let error = Self.refusal("\(folder), create: \(create)") {
                    try PhotoLibrary(directory: directory, create: create)
                }
                #expect(error?.kind == .io)
                #expect(
                    error?.description.contains("\(directory)/\(folder): is a symbolic link; not followed") == true,
                    "\(error?.description ?? "")")
                #expect(listDirectory(real) == entries)
            }
        }
    }

    @Test("a thumbnail that is a symlink is not read, and thumbnails are read and removed below a real folder only")
    func aSymlinkedThumbnailIsRefused() throws {
        let f = Fixture()
        let photo = try f.receive("a.png", photoBytes(1))
        let other = try f.receive("b.png", photoBytes(2))
        #expect(photo.hasThumbnail && other.hasThumbnail)
        let elsewhere = makeTemporaryDirectory("ptk-victim")
        defer { removeTree(elsewhere) }
        // The thumbnail itself a link to a file only root may read.
        let secret = elsewhere + "/secret.png"
        writeFile(secret, photoBytes(9))
        chmod(secret, 0o600)
        let thumbnail = f.directory + "/.ptk/thumbnails/" + photo.thumbnailFileName(side: 360)!
        #expect(unlink(thumbnail) == 0)
        #expect(symlink(secret, thumbnail) == 0)
        let error = Self.refusal("thumbnail link") { try f.library.thumbnail(of: photo) }
        #expect(error?.kind == .io)
        #expect(
            error?.description.contains("\(thumbnail): is a symbolic link; not followed") == true,
            "\(error?.description ?? "")")

        // The thumbnails folder swapped for a link after the library was opened: nothing is
        // read or removed through it.
        let real = elsewhere + "/thumbnails"
        #expect(mkdir(real, 0o755) == 0)
        let planted = real + "/" + other.thumbnailFileName(side: 360)!
        writeFile(planted, photoBytes(8))
        #expect(rename(f.directory + "/.ptk/thumbnails", elsewhere + "/old-thumbnails") == 0)
        #expect(symlink(real, f.directory + "/.ptk/thumbnails") == 0)
        let folderError = Self.refusal("thumbnails folder link") { try f.library.thumbnail(of: other) }
        #expect(
            folderError?.description.contains("\(f.directory)/.ptk/thumbnails: is a symbolic link; not followed")
                == true,
            "\(folderError?.description ?? "")")
        _ = try f.library.remove("b.png")
        #expect(readFile(planted) == photoBytes(8), "not removed through the link")
    }

    /// A package folder `name` in `folder` holding `data` and minimal metadata.
    static func package(_ name: String, in folder: String, data: [UInt8]) -> String {
        let path = folder + "/" + name
        mkdir(path, 0o755)
        writeFile(path + "/photo.data", data)
        writeFile(path + "/photo.metadata", Array("{\"Version\": 1}".utf8))
        return path
    }

    /// Nothing imported into `f`'s library: no entry, no photo, nothing left in `.incoming`.
    static func expectNothingImported(_ f: Fixture, _ what: String) throws {
        #expect(try f.library.all().isEmpty, "\(what)")
        #expect(listDirectory(f.directory).filter { !$0.hasPrefix(".") } == [], "\(what): nothing published")
        #expect(listDirectory(f.directory + "/.incoming") == [], "\(what): no temporary file left")
    }

    @Test(
        "a package whose photo.data is a symlink or a hard link, or whose metadata is a FIFO or too large, is refused")
    func hostilePackagesAreRefused() throws {
        let f = Fixture()
        let out = makeTemporaryDirectory("ptk-packages")
        defer { removeTree(out) }
        // A photo only root may read, which the planter wants in the library.
        let secret = out + "/secret.png"
        writeFile(secret, photoBytes(7))
        chmod(secret, 0o600)

        let linked = Self.package("linked.ptk", in: out, data: [])
        #expect(unlink(linked + "/photo.data") == 0)
        #expect(symlink(secret, linked + "/photo.data") == 0)

        let hardLinked = Self.package("hardlinked.ptk", in: out, data: [])
        #expect(unlink(hardLinked + "/photo.data") == 0)
        #expect(link(secret, hardLinked + "/photo.data") == 0)

        let fifo = Self.package("fifo.ptk", in: out, data: photoBytes(3))
        #expect(unlink(fifo + "/photo.metadata") == 0)
        #expect(mkfifo(fifo + "/photo.metadata", 0o644) == 0)
        // A writer that hands the metadata to whoever opens the FIFO to read: ptk as it was
        // read it and went on. It must not even open it.
        let fifoPath = fifo + "/photo.metadata"
        // ptk opening the FIFO to look at it (without waiting) lets the writer in; its write
        // then finds no reader: EPIPE, not a signal that ends the tests.
        ignoreBrokenPipeSignal()
        let writer = Thread {
            let fd = open(fifoPath, O_WRONLY)
            guard fd >= 0 else { return }
            _ = Array("{\"Version\": 1}".utf8).withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            close(fd)
        }
        writer.start()
        defer {
            // The writer waits for a reader: this one (read and write, so opening it never
            // waits) lets it write and finish before it goes.
            let reader = open(fifoPath, O_RDWR | O_NONBLOCK)
            var waited = 0
            while !writer.isFinished && waited < 5000 {
                usleep(1000)
                waited += 1
            }
            if reader >= 0 { close(reader) }
        }

        let large = Self.package("large.ptk", in: out, data: photoBytes(4))
        let largeMetadata = Array("{\"Version\": 1, \"Note\": \"\(String(repeating: " ", count: 32 << 20))\"}".utf8)
        writeFile(large + "/photo.metadata", largeMetadata)

        let cases: [(String, String)] = [
            (linked, "\(linked)/photo.data: is a symbolic link; ptk import does not follow links"),
            (
                hardLinked,
                "\(hardLinked)/photo.data: has 2 hard links; ptk import takes only a file no other name shares"
            ),
            (fifo, "\(fifo)/photo.metadata: is not a regular file (a FIFO); ptk import reads only regular files"),
            (large, "\(large)/photo.metadata: is \(largeMetadata.count) bytes; a package's metadata is at most 32 MiB"),
        ]
        for (path, message) in cases {
            let start = WallTime.now
            let error = Self.refusal(path) { try f.library.importPackage(path) }
            #expect(error?.kind == .badInput, "\(path)")
            #expect(error?.description == message, "\(error?.description ?? "")")
            #expect(WallTime.now.milliseconds - start.milliseconds < 900, "\(path): refused at once, without waiting")
            try Self.expectNothingImported(f, path)
        }
        #expect(readFile(secret) == photoBytes(7))
        #expect(Self.mode(secret)?.mode == 0o600)
    }

    @Test("a package that is itself a symlink is refused, with or without a trailing slash")
    func aSymlinkedPackageIsRefused() throws {
        let f = Fixture()
        let out = makeTemporaryDirectory("ptk-packages")
        defer { removeTree(out) }
        let hidden = makeTemporaryDirectory("ptk-root-only")
        defer { removeTree(hidden) }
        chmod(hidden, 0o700)
        let real = Self.package("real.ptk", in: hidden, data: photoBytes(5))
        let link = out + "/link.ptk"
        #expect(symlink(real, link) == 0)
        for path in [link, link + "/", link + "//"] {
            let error = Self.refusal(path) { try f.library.importPackage(path) }
            #expect(error?.kind == .badInput)
            #expect(
                error?.description == "\(link): is a symbolic link; ptk import does not follow links",
                "\(error?.description ?? "")")
            try Self.expectNothingImported(f, path)
        }
        // The real package, by its own name, imports.
        #expect(try f.library.importPackage(real + "/").name == "real.png")
    }

    @Test(
        "makeDirectories with ownerLike never follows a symlink planted for a component, and gives every folder it makes the owner",
        .enabled(if: geteuid() == 0, "needs root: only root gives owners away (CI runs the tests as root)"),
        .tags(.root))
    func makeDirectoriesFollowsNoPlantedSymlink() throws {
        let serviceUser: uid_t = 4242
        // The service user's directory, and a folder only root may enter that the planter aims at.
        let base = makeTemporaryDirectory("ptk-service")
        defer { removeTree(base) }
        #expect(chown(base, serviceUser, serviceUser) == 0)
        let target = makeTemporaryDirectory("ptk-root-only")
        defer { removeTree(target) }
        #expect(chmod(target, 0o700) == 0)
        let targetFile = target + "/file"
        writeFile(targetFile, Array("root's\n".utf8))
        chmod(targetFile, 0o600)
        let before = (Self.mode(target)!, Self.mode(targetFile)!)

        // A link in the middle of the path: nothing is made in the target.
        #expect(symlink(target, base + "/a") == 0)
        // A link as the last component, to a file and to the folder.
        #expect(symlink(targetFile, base + "/f") == 0)
        #expect(symlink(target, base + "/d") == 0)
        for path in [base + "/a/b", base + "/a/b/c", base + "/f", base + "/d", base + "/f/x"] {
            do { try makeDirectories(path, mode: 0o755, ownerLike: base) } catch {}
            #expect(listDirectory(target) == ["file"], "\(path): nothing made in the target")
            let after = (Self.mode(target)!, Self.mode(targetFile)!)
            #expect(after.0 == before.0 && after.1 == before.1, "\(path): the target's owner and mode unchanged")
        }
        do {
            try makeDirectories(base + "/a/b", mode: 0o755, ownerLike: base)
            Issue.record("followed a planted link")
        } catch {
            #expect(error.errno == ELOOP || error.errno == ENOTDIR, "\(error)")
        }

        // Every folder it makes gets the owner, not only the last.
        try makeDirectories(base + "/x/y/z", mode: 0o755, ownerLike: base)
        for path in [base + "/x", base + "/x/y", base + "/x/y/z"] {
            #expect(Self.mode(path).map { [$0.owner, $0.group] } == [serviceUser, serviceUser], "\(path)")
        }
        // Folders that are there are left as they are; a relative path works too.
        try makeDirectories(base + "/x/y/z", mode: 0o755, ownerLike: base)
        // A symlink root's own folders hold (a path through /var/run, say) is followed.
        let trusted = makeTemporaryDirectory("ptk-trusted")
        defer { removeTree(trusted) }
        #expect(mkdir(trusted + "/real", 0o755) == 0)
        #expect(symlink(trusted + "/real", trusted + "/link") == 0)
        try makeDirectories(trusted + "/link/new", mode: 0o755, ownerLike: nil)
        #expect(listDirectory(trusted + "/real") == ["new"])
    }
}
