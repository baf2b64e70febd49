import Glibc
import PTKDigest
import PTKPhotoPages
import PTKSystem
import PTKTestSupport
import PTKTestTags
import Testing

@testable import PTKLibrary

/// What the service user may plant in a library that root's `ptk` reads (issue 54): values in
/// the index out of their range, a lock on the index it never lets go, a file that is not the
/// photo indexed.
@Suite(.tags(.unit)) struct HostileIndexValuesTests {
    @Test("takenMinutes is the taken time's first minutes only when they are a date and time; anything else is nil")
    func takenMinutesShapes() {
        var p = Photo(id: 1, name: "a.png", size: 1, received: WallTime(seconds: 0))
        for (taken, shown) in [
            ("2024-07-03T14:22:05", "2024-07-03 14:22"), ("2024-07-03 14:22", "2024-07-03 14:22"),
            ("2024-07-03T14:22:05+02:00", "2024-07-03 14:22"),
        ] {
            p.taken = taken
            #expect(p.takenMinutes == shown, "\(taken)")
        }
        for taken in [
            "\u{1B}[2J\u{1B}]0;pwned\u{07}2024-05-06T07:08", "\u{9B}2024-05-06T07:08:09", "\u{202E}2024-05-06T07:08:09",
            "2024-07-03T14:2", "2024-07-03X14:22", "２０２４-07-03T14:22", "abcd-ef-ghTij:kl",
        ] {
            p.taken = taken
            #expect(p.takenMinutes == nil, "\(taken.debugDescription)")
        }
    }

    @Test(
        "numbers planted in a row (sides, rating, orientation, times at the extremes) are read within their range, and listing, details and the gallery trap nothing"
    )
    func plantedNumbers() throws {
        let f = Fixture()
        try f.receive("a.png", photoBytes(3))
        try f.library.database.execute(
            """
            PRAGMA ignore_check_constraints = ON;
            UPDATE photos SET width = 9223372036854775807, height = -5, rating = 99, orientation = 1000,
                received = -9223372036854775808, mtime = 9223372036854775807
            """)
        let p = try f.library.find("a")
        #expect(p.width == nil && p.height == nil && p.rating == nil && p.orientation == nil)
        #expect(p.dimensions == "?")
        _ = p.details(thumbnailFolder: f.library.thumbnailFolder).map { "\($0.0) \($0.1)" }
        _ = p.received.localMinutes + p.received.iso8601 + (p.modified?.local ?? "")
        #expect(try f.library.all(sort: .taken).count == 1)
        let (page, count) = try f.library.gallery(to: nil)
        #expect(count == 1 && fileExists(page))
        try f.library.database.execute("UPDATE photos SET width = 2147483647, height = 2147483647, rating = 5")
        let q = try f.library.find("a")
        #expect(q.width == Int(Int32.max) && q.rating == 5)
        #expect(Photo.fitted(q.displayedSize, within: 360).map { [$0.width, $0.height] } == [360, 360])
    }

    @Test(
        "a lock another connection holds on the index: a library opened with patience gives up after its limit, saying so, and tells once what it waits for"
    )
    func indexLockIsBounded() throws {
        let directory = makeTemporaryDirectory("ptk-library")
        defer { removeTree(directory) }
        // Made, then closed: the holder must be the only connection to take the file for itself.
        do { _ = try PhotoLibrary(directory: directory, create: true) }
        let index = directory + "/.ptk/index.sqlite"
        let holder = try Database(file: index, path: index, create: false)
        try holder.execute(
            "PRAGMA locking_mode = EXCLUSIVE; BEGIN EXCLUSIVE; UPDATE photos SET note = note; SELECT count(*) FROM photos"
        )
        final class Told: @unchecked Sendable {
            // `lines` is only appended to on the opening thread, and read after it.
            var lines: [String] = []
        }
        let told = Told()
        let started = Instant.now
        do {
            _ = try PhotoLibrary(
                directory: directory, create: false,
                lockPatience: LockPatience(
                    limit: .milliseconds(800), announceAfter: .milliseconds(200), waiting: { told.lines.append($0) }))
            Issue.record("the library opened while another connection held an exclusive lock")
        } catch {
            #expect(
                error.kind == .io && error.description.contains("another process held a lock")
                    && error.description.contains("fuser"), "\(error)")
        }
        let took = Instant.now - started
        #expect(took >= .milliseconds(700) && took < .seconds(5), "waited \(took)")
        #expect(
            told.lines.count == 1 && told.lines.first?.contains("waiting for the library index") == true,
            "\(told.lines)")
        try holder.execute("COMMIT; PRAGMA locking_mode = NORMAL; SELECT count(*) FROM photos")
    }

    @Test(
        "the index's patience counts waits that follow one another: after a quiet spell a long-lived reader (ptk watch) starts afresh"
    )
    func indexPatienceStartsAfreshAfterAQuietSpell() throws {
        let directory = makeTemporaryDirectory("ptk-library")
        defer { removeTree(directory) }
        do { _ = try PhotoLibrary(directory: directory, create: true) }
        let index = directory + "/.ptk/index.sqlite"
        let library = try PhotoLibrary(
            directory: directory, create: false,
            lockPatience: LockPatience(limit: .milliseconds(500), announceAfter: .seconds(10)))
        final class Holder: @unchecked Sendable {
            // Used on the holding thread only.
            var error: Error?
        }
        for round in 0..<3 {
            // Another process writes to the index for 350 ms (a thread of this one, on its own connection).
            let holder = Holder()
            let taken = Semaphore()
            let done = Semaphore()
            try startThread(name: "holder") {
                do {
                    let other = try Database(file: index, path: index, create: false)
                    try other.execute("BEGIN IMMEDIATE")
                    taken.signal()
                    sleep(for: .milliseconds(350))
                    try other.execute("COMMIT")
                } catch {
                    holder.error = error
                    taken.signal()
                }
                done.signal()
            }
            taken.wait()
            // A writer waits for the other's write lock; each wait is 350 ms: two in a row
            // would be over the 500 ms limit.
            do { try library.database.writeTransaction { () throws(LibraryError) in } } catch {
                Issue.record("round \(round): \(error)")
            }
            done.wait()
            #expect(holder.error == nil, "\(String(describing: holder.error))")
            sleep(for: .milliseconds(700))
        }
    }

    @Test(
        "a thumbnail with a second hard link (one file planted at many photos' names) is not read: a gallery copies it for none"
    )
    func hardLinkedThumbnailIsNotRead() throws {
        let f = Fixture()
        let a = try f.receive("a.png", photoBytes(6))
        let b = try f.receive("b.png", photoBytes(7))
        let folder = f.library.thumbnailFolder
        let big = try #require(a.thumbnailFileName(side: 360))
        let other = try #require(b.thumbnailFileName(side: 360))
        #expect(unlink(folder + "/" + other) == 0 && link(folder + "/" + big, folder + "/" + other) == 0)
        do {
            _ = try f.library.thumbnail(of: b)
            Issue.record("a hard-linked thumbnail was read")
        } catch {
            #expect(error.description.contains("hard links"), "\(error)")
        }
        let out = makeTemporaryDirectory("ptk-gallery")
        defer { removeTree(out) }
        let (_, count) = try f.library.gallery(to: out)
        #expect(count == 2 && listDirectory(out + "/thumbnails").isEmpty, "\(listDirectory(out + "/thumbnails"))")
    }

    @Test(
        "export copies only the photo the index holds: a larger (sparse) file, other bytes of its size or a FIFO at its name fail at once and leave nothing"
    )
    func exportIsBoundedByTheIndex() throws {
        let f = Fixture()
        let bytes = photoBytes(5)
        try f.receive("a.png", bytes)
        let out = makeTemporaryDirectory("ptk-export")
        defer { removeTree(out) }
        let path = f.directory + "/a.png"
        let plants: [(String, () -> Void)] = [
            (
                "a sparse file of 8 GiB",
                {
                    _ = unlink(path)
                    let fd = open(path, O_WRONLY | O_CREAT, 0o644)
                    _ = ftruncate(fd, 8 << 30)
                    close(fd)
                }
            ),
            ("other bytes of the same size", { writeFile(path, bytes.map { $0 ^ 0x5A }) }),
            ("one byte more", { writeFile(path, bytes + [0]) }),
            (
                "a FIFO",
                {
                    _ = unlink(path)
                    _ = mkfifo(path, 0o644)
                }
            ),
        ]
        for (label, plant) in plants {
            plant()
            let started = Instant.now
            do {
                _ = try f.library.export("a", to: out)
                Issue.record("\(label): exported")
            } catch {
                #expect(error.kind == .badInput, "\(label): \(error)")
                #expect(
                    error.description.contains("not the photo the index holds")
                        || error.description.contains("not a regular file"), "\(label): \(error)")
            }
            #expect(Instant.now - started < .seconds(5), "\(label)")
            #expect(listDirectory(out).isEmpty, "\(label): left \(listDirectory(out))")
        }
        _ = unlink(path)
        writeFile(path, bytes)
        let package = try f.library.export("a", to: out)
        #expect(readFile(package + "/photo.data") == bytes)
    }
}
