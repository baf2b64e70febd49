import Foundation
import Glibc
import PTKSystem
import PTKTestSupport
import PTKTestTags
import Testing

/// The files in `dir` and its folders (ptk's own left out), as paths below it.
private func tree(_ dir: String) -> [String] {
    var out: [String] = []
    func walk(_ here: String, _ prefix: String) {
        for name in listDirectory(here).sorted() where name != ".ptk" && name != ".incoming" {
            let path = here + "/" + name
            var st = stat()
            guard lstat(path, &st) == 0 else { continue }
            if st.st_mode & S_IFMT == S_IFDIR { walk(path, prefix + name + "/") } else { out.append(prefix + name) }
        }
    }
    walk(dir, "")
    return out
}

private func makeFolder(_ path: String) {
    // Test setup: the writes below fail if it is missing.
    try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
}

@Suite("End to end: watched inboxes and drop folders (issue 56)", .tags(.endToEnd))
struct InboxTests {
    @Test(
        "a drop folder: a photo copied in is taken once, identical, filed under its folders, and removed from the folder; what is not a photo stays, said once"
    )
    func dropFolder() throws {
        let root = makeTemporaryDirectory("ptk-inbox")
        defer { removeTree(root) }
        let drop = root + "/drop"
        makeFolder(drop + "/anna-phone/DCIM")
        let d = try DaemonProcess(["--drop-folder", drop, "--inbox-settle", "1s"])
        defer { _ = d.stop() }
        let bytes = makePNG(size: 20_000, seed: 11)
        writeFile(drop + "/anna-phone/DCIM/IMG_1.png", bytes)
        writeFile(drop + "/notes.txt", Array("not a photo\n".utf8))
        #expect(eventually(20) { tree(d.dir) == ["DCIM/IMG_1.png"] }, "\(tree(d.dir)) \(d.log)")
        #expect(readFile(d.dir + "/DCIM/IMG_1.png") == bytes)
        #expect(eventually(5) { !FileManager.default.fileExists(atPath: drop + "/anna-phone/DCIM/IMG_1.png") })
        #expect(
            eventually(10) {
                d.log.contains("notes.txt is not taken: it is not a PNG, JPEG or HEIF photo; left where it is")
            }, "\(d.log)")
        #expect(readFile(drop + "/notes.txt") == Array("not a photo\n".utf8))
        #expect(
            d.log.contains(#"drop-folder \#(drop): took "anna-phone/DCIM/IMG_1.png" as "DCIM/IMG_1.png""#), "\(d.log)")
        // Said once, however many scans see it.
        #expect(d.log.components(separatedBy: "notes.txt is not taken").count == 2)
        #expect(d.stop() == 0)
    }

    @Test(
        "an inbox: the source stays; a restart, a rescan and the same bytes again store nothing twice; an edited source is a new photo"
    )
    func inboxKeepsSources() throws {
        let root = makeTemporaryDirectory("ptk-inbox")
        defer { removeTree(root) }
        let inbox = root + "/inbox"
        makeFolder(inbox + "/phone")
        let first = makePNG(size: 15_000, seed: 21)
        writeFile(inbox + "/phone/a.png", first)  // there before ptkd starts: taken at start
        var d = try DaemonProcess(["--inbox", inbox, "--inbox-settle", "1s"], root: root)
        #expect(eventually(20) { tree(d.dir) == ["a.png"] }, "\(d.log)")
        #expect(readFile(d.dir + "/a.png") == first)
        #expect(readFile(inbox + "/phone/a.png") == first)
        // The same bytes under another name: kept already (duplicates = skip), nothing new stored.
        writeFile(inbox + "/phone/copy-of-a.png", first)
        #expect(
            eventually(20) { d.log.contains(#"took "phone/copy-of-a.png" as "a.png" (its bytes were kept already)"#) },
            "\(d.log)")
        #expect(d.stop() == 0)

        d = try DaemonProcess(["--inbox", inbox, "--inbox-settle", "1s"], root: root)
        defer { _ = d.stop() }
        sleep(4)  // settle (1 s) and the scan at start, twice over
        #expect(tree(d.dir) == ["a.png"], "\(d.log)")
        #expect(!d.log.contains("took"), "taken again after a restart: \(d.log)")
        // Edited in place (new bytes): a new photo; the old one stays.
        let second = makePNG(size: 15_000, seed: 22)
        writeFile(inbox + "/phone/a.png", second)
        #expect(eventually(20) { tree(d.dir).count == 2 }, "\(d.log)")
        #expect(Set(tree(d.dir).map { readFile(d.dir + "/" + $0) ?? [] }) == Set([first, second]))
        #expect(d.stop() == 0)
    }

    @Test("a file being written is not taken until whole: a truncated PNG waits, then the completed file is taken once")
    func truncatedThenCompleted() throws {
        let root = makeTemporaryDirectory("ptk-inbox")
        defer { removeTree(root) }
        let drop = root + "/drop"
        makeFolder(drop)
        let d = try DaemonProcess(["--drop-folder", drop, "--inbox-settle", "1s"])
        defer { _ = d.stop() }
        let bytes = makePNG(size: 60_000, seed: 31)
        writeFile(drop + "/slow.png", Array(bytes[..<30_000]))
        sleep(4)
        #expect(tree(d.dir).isEmpty, "a truncated file was taken: \(d.log)")
        #expect(FileManager.default.fileExists(atPath: drop + "/slow.png"))
        // Completed the way a copy does: the rest appended, the file closed.
        let fd = try FileDescriptor.open(drop + "/slow.png", flags: [.writeOnly, .append])
        try fd.writeAll(Array(bytes[30_000...]))
        fd.close()
        #expect(eventually(20) { tree(d.dir) == ["slow.png"] }, "\(d.log)")
        #expect(readFile(d.dir + "/slow.png") == bytes)
        #expect(d.stop() == 0)
    }

    @Test(
        "never taken: writers' temporaries, litter, dot folders, symlinks (to a photo outside), FIFOs; nothing hangs, nothing outside is read or changed"
    )
    func neverTaken() throws {
        let root = makeTemporaryDirectory("ptk-inbox")
        defer { removeTree(root) }
        let drop = root + "/drop"
        makeFolder(drop + "/.stversions")
        makeFolder(drop + "/phone")
        let outside = photo(root, "outside.png", size: 9_000, seed: 41)
        let photoBytes = makePNG(size: 9_000, seed: 42)
        for name in [
            ".syncthing.a.png.tmp", "~syncthing~b.png.tmp", "c.png.part", "d.png.crdownload", "e.png.tacitpart",
            "._f.png", ".DS_Store", "Thumbs.db", ".hidden.png", ".stversions/g.png",
        ] {
            writeFile(drop + "/" + name, photoBytes)
        }
        symlink(outside, drop + "/phone/link.png")
        mkfifo(drop + "/phone/fifo.png", 0o644)
        let d = try DaemonProcess(["--drop-folder", drop, "--inbox-settle", "1s"])
        defer { _ = d.stop() }
        // A real photo after them all: once it is taken, the others have been seen too.
        writeFile(drop + "/phone/real.png", photoBytes)
        #expect(eventually(20) { tree(d.dir) == ["real.png"] }, "\(tree(d.dir)) \(d.log)")
        sleep(2)
        #expect(tree(d.dir) == ["real.png"], "\(d.log)")
        #expect(readFile(outside) == makePNG(size: 9_000, seed: 41))
        #expect(FileManager.default.fileExists(atPath: drop + "/.syncthing.a.png.tmp"))
        #expect(d.log.contains("fifo.png is not a regular file; left"), "\(d.log)")
        #expect(try stillServes(d))
        #expect(d.stop() == 0)
    }

    @Test(
        "folders as people misconfigure them: the photos directory itself, a folder inside it, one holding it, one missing: each said at start and left out, the others served"
    )
    func misconfiguredFolders() throws {
        let root = makeTemporaryDirectory("ptk-inbox")
        defer { removeTree(root) }
        makeFolder(root + "/photos/sub")
        makeFolder(root + "/good")
        let d = try DaemonProcess(
            [
                "--inbox", root + "/photos", "--inbox", root + "/photos/sub", "--drop-folder", root,
                "--drop-folder", root + "/missing", "--drop-folder", root + "/good", "--inbox-settle", "1s",
            ], root: root)
        defer { _ = d.stop() }
        #expect(
            eventually(10) { d.log.contains("inbox \(root)/photos: it is the received-photos directory; not watched") },
            "\(d.log)")
        #expect(
            eventually(10) {
                d.log.contains("inbox \(root)/photos/sub: it is inside the received-photos directory; not watched")
            }, "\(d.log)")
        #expect(
            eventually(10) {
                d.log.contains("drop-folder \(root): it holds the received-photos directory; not watched")
            }, "\(d.log)")
        #expect(eventually(10) { d.log.contains("drop-folder \(root)/missing: cannot be read") }, "\(d.log)")
        let bytes = makePNG(size: 9_000, seed: 51)
        writeFile(root + "/good/x.png", bytes)
        #expect(eventually(20) { readFile(d.dir + "/x.png") == bytes }, "\(d.log)")
        #expect(d.stop() == 0)
    }

    @Test(
        "an inotify queue overflow (a burst larger than the queue) loses nothing: the scan it causes finds every file",
        .enabled(if: geteuid() == 0, "needs root to make inotify's queue small"), .tags(.root))
    func overflow() throws {
        let root = makeTemporaryDirectory("ptk-inbox")
        defer { removeTree(root) }
        let drop = root + "/drop"
        makeFolder(drop)
        // The kernel sizes a queue when it is made: small for this ptkd's, then as it was at once.
        let limit = "/proc/sys/fs/inotify/max_queued_events"
        let saved = try #require(readFile(limit))
        writeFile(limit, Array("16\n".utf8))
        let d: DaemonProcess
        do {
            defer { writeFile(limit, saved) }
            d = try DaemonProcess(["--drop-folder", drop, "--inbox-settle", "1s"])
        }
        defer { _ = d.stop() }
        #expect(readFile(limit) == saved)
        var expected: [String: [UInt8]] = [:]
        for i in 0..<120 {
            let bytes = makePNG(size: 2_000, seed: UInt64(1000 + i))
            writeFile(drop + "/p\(i).png", bytes)
            expected["p\(i).png"] = bytes
        }
        #expect(eventually(60) { tree(d.dir).count == 120 }, "\(tree(d.dir).count) of 120: \(d.log)")
        #expect(tree(d.dir).allSatisfy { readFile(d.dir + "/" + $0) == expected[$0] })
        #expect(
            d.log.contains("more changes at once than inotify's queue holds; scanning every folder again"), "\(d.log)")
        #expect(listDirectory(drop).isEmpty)
        #expect(d.stop() == 0)
    }

    @Test("a folder missing at start is watched once it appears; one deleted and made again is watched afresh")
    func foldersComeAndGo() throws {
        let root = makeTemporaryDirectory("ptk-inbox")
        defer { removeTree(root) }
        let drop = root + "/later"
        let d = try DaemonProcess(["--drop-folder", drop, "--inbox-settle", "1s", "--inbox-scan-interval", "2s"])
        defer { _ = d.stop() }
        #expect(eventually(10) { d.log.contains("drop-folder \(drop): cannot be read") }, "\(d.log)")
        makeFolder(drop)
        #expect(eventually(10) { d.log.contains("drop-folder \(drop): watched") }, "\(d.log)")
        let first = makePNG(size: 9_000, seed: 61)
        writeFile(drop + "/one.png", first)
        #expect(eventually(20) { readFile(d.dir + "/one.png") == first }, "\(d.log)")
        // Deleted and made again: another folder at the same path.
        removeTree(drop)
        makeFolder(drop)
        #expect(
            eventually(10) { d.log.contains("drop-folder \(drop): the folder there is another one now; watching it") },
            "\(d.log)")
        let second = makePNG(size: 9_000, seed: 62)
        writeFile(drop + "/two.png", second)
        #expect(eventually(20) { readFile(d.dir + "/two.png") == second }, "\(d.log)")
        #expect(d.stop() == 0)
    }

    @Test("settings: an inbox without the library, and a folder named twice, are refused at start with what to change")
    func refusedSettings() throws {
        let noLibrary = try run(
            binDirectory + "/ptkd", ["--config", "/dev/null", "--inbox", "/tmp", "--library", "off"], absolute: true)
        #expect(noLibrary.status == 64)
        #expect(noLibrary.stderr.contains("inbox needs library = on"), "\(noLibrary.stderr)")
        let twice = try run(
            binDirectory + "/ptkd", ["--config", "/dev/null", "--inbox", "/tmp/x", "--drop-folder", "/tmp/x/"],
            absolute: true)
        #expect(twice.status == 64)
        #expect(twice.stderr.contains("/tmp/x is named twice among inbox and drop-folder"), "\(twice.stderr)")
        let relative = try run(binDirectory + "/ptkd", ["--config", "/dev/null", "--inbox", "photos"], absolute: true)
        #expect(relative.status == 64)
        #expect(
            relative.stderr.contains("invalid value 'photos' for inbox: expected an absolute path"),
            "\(relative.stderr)")
    }

    @Test(
        "NFC and NFD spellings of one name in one folder are two files: both are taken (String keys made them one, and the second was never looked at)"
    )
    func nfcAndNFDInOneFolder() throws {
        let root = makeTemporaryDirectory("ptk-inbox")
        defer { removeTree(root) }
        let inbox = root + "/inbox"
        makeFolder(inbox + "/phone")
        let nfc = makePNG(size: 5_000, seed: 71)
        let nfd = makePNG(size: 5_000, seed: 72)
        writeFile(inbox + "/phone/caf\u{E9}.png", nfc)
        writeFile(inbox + "/phone/cafe\u{301}.png", nfd)
        #expect(listDirectory(inbox + "/phone").count == 2)
        let d = try DaemonProcess(["--inbox", inbox, "--inbox-settle", "1s", "--inbox-scan-interval", "2s"])
        defer { _ = d.stop() }
        let both = Set([nfc, nfd])
        #expect(
            eventually(20) { Set(tree(d.dir).compactMap { readFile(d.dir + "/" + $0) }) == both },
            "\(tree(d.dir)) \(d.log)")
        #expect(d.stop() == 0)
    }
}

/// The attacks on the inbox door (issue 56's review), each as it was found, against a real ptkd.
@Suite("End to end: the inbox door under attack (issue 56's review)", .tags(.endToEnd))
struct InboxAttackTests {
    @Test(
        "the photos directory bind-mounted into a drop folder is never entered: the photos kept are never taken as sources nor removed",
        .enabled(if: geteuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/unshare"), "needs root"),
        .tags(.root))
    func bindMountedPhotos() throws {
        let root = makeTemporaryDirectory("ptk-inbox")
        defer { removeTree(root) }
        let drop = root + "/drop"
        makeFolder(drop + "/library")
        makeFolder(root + "/photos")
        let kept = makePNG(size: 9_000, seed: 71)
        writeFile(root + "/photos/one.png", kept)
        // ptkd in a mount namespace of its own, where the photos directory is also drop/library.
        let d = try DaemonProcess(
            ["--drop-folder", drop, "--inbox-settle", "1s", "--inbox-scan-interval", "2s"], root: root,
            wrapper: [
                "/usr/bin/unshare", "-m", "--propagation", "private", "/bin/sh", "-c",
                "mount --bind \(root)/photos \(drop)/library && exec \"$0\" \"$@\"",
            ])
        defer { _ = d.stop() }
        #expect(
            eventually(15) {
                d.log.contains("library is the photos directory or another watched folder (a mount?); not entered")
            },
            "\(d.log)")
        sleep(3)
        #expect(readFile(root + "/photos/one.png") == kept, "\(d.log)")
        #expect(!d.log.contains(": took "), "\(d.log)")
        #expect(d.stop() == 0)
    }

    @Test("duplicates = keep: a source whose metadata alone changed (chmod) is not stored again")
    func metadataChangeStoresNothing() throws {
        let root = makeTemporaryDirectory("ptk-inbox")
        defer { removeTree(root) }
        let inbox = root + "/inbox"
        makeFolder(inbox + "/phone")
        let d = try DaemonProcess(
            ["--inbox", inbox, "--inbox-settle", "1s", "--inbox-scan-interval", "2s", "--duplicates", "keep"],
            root: root)
        defer { _ = d.stop() }
        writeFile(inbox + "/phone/a.png", makePNG(size: 9_000, seed: 72))
        #expect(eventually(20) { tree(d.dir) == ["a.png"] }, "\(d.log)")
        chmod(inbox + "/phone/a.png", 0o600)
        sleep(5)  // two scans and a settle
        #expect(tree(d.dir) == ["a.png"], "stored again after a chmod: \(d.log)")
        #expect(d.log.components(separatedBy: ": took ").count == 2, "\(d.log)")
        #expect(d.stop() == 0)
    }

    @Test(
        "a folder renamed keeps its events: a photo written under the new name is taken at once, not at the next scan")
    func renamedFolderKeepsEvents() throws {
        let root = makeTemporaryDirectory("ptk-inbox")
        defer { removeTree(root) }
        let drop = root + "/drop"
        makeFolder(drop + "/phone/DCIM")
        let d = try DaemonProcess(["--drop-folder", drop, "--inbox-settle", "1s"], root: root)
        defer { _ = d.stop() }
        #expect(eventually(10) { d.log.contains("drop-folder \(drop): watched") }, "\(d.log)")
        sleep(1)
        #expect(rename(drop + "/phone/DCIM", drop + "/phone/Camera") == 0)
        usleep(300_000)
        let bytes = makePNG(size: 9_000, seed: 73)
        writeFile(drop + "/phone/Camera/x.png", bytes)
        // Made again under the old name: watched too.
        makeFolder(drop + "/phone/DCIM/sub")
        usleep(300_000)
        let other = makePNG(size: 9_000, seed: 74)
        writeFile(drop + "/phone/DCIM/sub/y.png", other)
        // The scans come every 10 minutes here: only inotify can bring them.
        #expect(
            eventually(15) {
                readFile(d.dir + "/Camera/x.png") == bytes && readFile(d.dir + "/DCIM/sub/y.png") == other
            },
            "\(tree(d.dir)) \(d.log)")
        #expect(d.stop() == 0)
    }

    @Test(
        "thousands of FIFOs make at most 100 lines in 10 seconds and one line counting the rest, and ptkd's memory stays small"
    )
    func fifoFloodIsSaidInBrief() throws {
        let root = makeTemporaryDirectory("ptk-inbox")
        defer { removeTree(root) }
        let drop = root + "/drop"
        makeFolder(drop)
        for i in 0..<3_000 { mkfifo(drop + "/f\(i).png", 0o644) }
        let d = try DaemonProcess(
            ["--drop-folder", drop, "--inbox-settle", "1s", "--inbox-scan-interval", "2s"], root: root)
        defer { _ = d.stop() }
        #expect(eventually(30) { d.log.contains("more files not taken, not said one by one") }, "\(d.log.suffix(2000))")
        let said = d.log.components(separatedBy: "is not a regular file; left").count - 1
        #expect(said <= 100, "\(said) lines")
        #expect(d.residentKB < 100_000, "\(d.residentKB) kB")
        #expect(try stillServes(d))
        #expect(d.stop() == 0)
    }
}

/// Issue 56's hostile inbox content, at once, against one real ptkd.
@Suite("End to end: hostile content in a drop folder (issue 56)", .tags(.endToEnd, .slow))
struct InboxHostileTests {
    @Test(
        "10,000 files at once, a 1 TB sparse file, names with control characters and combining marks: the photos are taken, the rest left, nothing hangs, ptkd serves on"
    )
    func hostileContent() throws {
        let root = makeTemporaryDirectory("ptk-inbox")
        defer { removeTree(root) }
        let drop = root + "/drop"
        makeFolder(drop + "/many")
        let d = try DaemonProcess(["--drop-folder", drop, "--inbox-settle", "1s"], root: root)
        defer { _ = d.stop() }
        for i in 0..<10_000 { writeFile(drop + "/many/n\(i).txt", Array("note \(i)\n".utf8)) }
        let sparse = drop + "/huge.png"
        writeFile(sparse, makePNG(size: 2_000, seed: 81))
        #expect(truncate(sparse, 1 << 40) == 0)
        let odd: [(name: String, bytes: [UInt8])] = [
            ("bell\u{07}\u{1B}[31mred.png", makePNG(size: 3_000, seed: 82)),
            ("cafe\u{301}.png", makePNG(size: 3_000, seed: 83)),
            ("café.png", makePNG(size: 3_000, seed: 84)),
        ]
        for (name, bytes) in odd { writeFile(drop + "/" + name, bytes) }
        let started = Date()
        // The three photos, each under its sanitised name; the NFC and NFD spellings two photos.
        #expect(eventually(120) { tree(d.dir).count == 3 }, "\(tree(d.dir)) \(d.log.suffix(3000))")
        #expect(Set(tree(d.dir).compactMap { readFile(d.dir + "/" + $0) }) == Set(odd.map(\.bytes)))
        #expect(!tree(d.dir).contains { $0.unicodeScalars.contains { $0.value < 0x20 } }, "\(tree(d.dir))")
        // The sparse file refused without being read (a terabyte read would take hours); its line
        // is among those counted, not said one by one, behind 10,000 notes.
        #expect(
            eventually(30) { d.log.contains("more files not taken, not said one by one") }, "\(d.log.suffix(3000))")
        #expect(Date().timeIntervalSince(started) < 120)
        #expect(fileSize(sparse) == 1 << 40)
        #expect(listDirectory(drop + "/many").count == 10_000)
        #expect(try stillServes(d))
        #expect(d.stop() == 0)
    }
}
