import Glibc
import PTKSystem
import PTKTestSupport
import PTKTestTags
import Testing

@Suite("Files written together", .tags(.unit))
struct WriteFilesTogetherTests {
    @Test(
        "each file is written whole under its name, replacing what was there; one that cannot be written leaves the others be"
    )
    func writesAndReplaces() throws {
        let dir = makeTemporaryDirectory("ptk-files")
        defer { removeTree(dir) }
        writeFile(dir + "/b", Array("old".utf8))
        let files: [(name: String, bytes: [UInt8])] = [
            ("a", Array(repeating: 7, count: 100_000)),
            ("b", Array("new".utf8)),
            ("missing/c", Array("c".utf8)),
            ("d", []),
        ]
        let errors = writeFilesAtomically(in: dir, files, mode: 0o640)
        #expect(errors.count == 4)
        #expect(errors[0] == nil && errors[1] == nil && errors[3] == nil)
        #expect(errors[2]?.code == .noSuchFile)
        #expect(readFile(dir + "/a") == files[0].bytes)
        #expect(readFile(dir + "/b") == Array("new".utf8))
        #expect(readFile(dir + "/d") == [])
        #expect(try fileStatus(dir + "/a").permissions == 0o640)
        // Nothing is left under a temporary name.
        #expect(
            try FileDescriptor.open(dir, flags: [.readOnly, .directory]).entriesAndClose().sorted() == ["a", "b", "d"])
    }

    @Test(
        "one file written atomically: a hard link or a symbolic link put at its temporary name is removed, never written through"
    )
    func oneFileOverPlantedTemporaries() throws {
        let dir = makeTemporaryDirectory("ptk-files")
        defer { removeTree(dir) }
        let sentinel = dir + "/sentinel"
        writeFile(sentinel, Array("root's".utf8))
        let temporary = dir + "/out.tmp.\(getpid())"
        // A hard link: opened to write (O_TRUNC), it would be the sentinel's bytes that change.
        #expect(link(sentinel, temporary) == 0)
        try writeFileAtomically(dir + "/out", Array("first".utf8), mode: 0o644)
        #expect(readFile(dir + "/out") == Array("first".utf8) && readFile(sentinel) == Array("root's".utf8))
        // A symbolic link: O_NOFOLLOW alone refused it (ELOOP) and the write failed.
        #expect(symlink(sentinel, temporary) == 0)
        try writeFileAtomically(dir + "/out", Array("second".utf8), mode: 0o644)
        #expect(readFile(dir + "/out") == Array("second".utf8) && readFile(sentinel) == Array("root's".utf8))
        #expect(
            try FileDescriptor.open(dir, flags: [.readOnly, .directory]).entriesAndClose().sorted() == [
                "out", "sentinel",
            ])
    }

    @Test("a directory that cannot be opened fails every file, and writes nothing")
    func noDirectory() {
        let errors = writeFilesAtomically(in: "/nonexistent/ptk", [("a", [1]), ("b", [2])], mode: 0o644)
        #expect(errors.count == 2 && errors.allSatisfy { $0?.code == .noSuchFile })
    }
}

@Suite("Wall time", .tags(.unit))
struct WallTimeTests {
    @Test("one point in time, shown for people, as a column and as ISO 8601")
    func formats() {
        let t = WallTime(milliseconds: 1_700_000_000_123)
        #expect(t.description == "2023-11-14 22:13:20 UTC")
        #expect(t.minutes == "2023-11-14 22:13")
        #expect(t.iso8601 == "2023-11-14T22:13:20.123Z")
        #expect(t.seconds == 1_700_000_000 && WallTime(seconds: 1_700_000_000) < t)
        #expect(WallTime(milliseconds: -1).seconds == -1, "seconds round down, also before 1970")
        #expect(WallTime(iso8601: t.iso8601) == t)
    }

    @Test(
        "shown for people by arithmetic alone, as glibc's gmtime_r and strftime show it: every era, the extremes, and times around them"
    )
    func descriptionIsStrftimes() {
        var values: [Int64] = [
            0, -1, 1, 999, -999, -1000, -1001, 951_782_400_000, 1_709_208_000_000, 253_402_300_799_000,
            253_402_300_800_000,
            -62_135_596_800_000, -62_167_219_200_000, -62_198_841_600_000, -99_999_999_999_000, .max, .min, .max - 999,
            .min + 1,
        ]
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<20_000 { values.append(Int64.random(in: .min ... .max, using: &generator)) }
        for _ in 0..<20_000 {
            values.append(Int64.random(in: -100_000_000_000_000...300_000_000_000_000, using: &generator))
        }
        for ms in values {
            let t = WallTime(milliseconds: ms)
            var seconds = time_t(t.seconds)
            var parts = tm()
            guard gmtime_r(&seconds, &parts) != nil else {
                #expect(t.description.hasPrefix("(a time out of range"))
                continue
            }
            var buffer = [CChar](repeating: 0, count: 64)
            let n = strftime(&buffer, buffer.count, "%Y-%m-%d %H:%M:%S UTC", &parts)
            let expected = String(decoding: buffer[..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            if t.description != expected {
                Issue.record("\(ms) ms: \(t.description), strftime says \(expected)")
                return
            }
        }
    }

    @Test("a file's modification time is a wall time, to the millisecond")
    func modified() throws {
        let dir = makeTemporaryDirectory("ptk-walltime")
        defer { removeTree(dir) }
        let before = WallTime.now
        writeFile(dir + "/f", [1])
        let modified = try fileStatus(dir + "/f").modifiedTime
        #expect(modified.milliseconds >= before.milliseconds - 1000 && modified <= WallTime.now)
    }
}

/// A service that records when it is stopped, and stops in time or not.
private final class FakeService: Service {
    let serviceName: String
    let inTime: Bool
    let order: CallCounter
    var stoppedAt: Int?
    var givenUntil: Instant?
    init(_ name: String, inTime: Bool = true, order: CallCounter) {
        serviceName = name
        self.inTime = inTime
        self.order = order
    }
    func stop(until deadline: Instant) -> Bool {
        stoppedAt = order.next()
        givenUntil = deadline
        return inTime
    }
}

@Suite("Services", .tags(.unit))
struct ServicesTests {
    @Test("stopped in one place, the last started first, each with its own time; those late are named; once only")
    func reverseOrder() {
        let order = CallCounter()
        let checks = FakeService("checks", order: order)
        let library = FakeService("library", inTime: false, order: order)
        let sessions = FakeService("sessions", inTime: false, order: order)
        let advertiser = FakeService("advertiser", order: order)
        let services = Services()
        services.add(checks, stopWithin: .seconds(2))
        services.add(library, stopWithin: .seconds(2))
        services.add(sessions, stopWithin: .seconds(30))
        services.add(advertiser, stopWithin: .seconds(1))
        #expect(services.names == ["checks", "library", "sessions", "advertiser"])
        let before = Instant.now
        #expect(services.stopAll() == ["sessions", "library"])
        #expect([advertiser, sessions, library, checks].map(\.stoppedAt) == [0, 1, 2, 3])
        #expect(sessions.givenUntil! - before >= .seconds(29) && advertiser.givenUntil! - before <= .seconds(2))
        #expect(services.stopAll().isEmpty && order.count == 4, "a second stop stops nothing")
    }
}

@Suite("Directories made with their parents", .tags(.unit))
struct MakeDirectoriesTests {
    @Test(
        "makeDirectories makes what is missing and leaves an existing folder be; a file on the way or at the end fails with ENOTDIR naming it, as mkdir -p does"
    )
    func fileInTheWay() throws {
        let dir = makeTemporaryDirectory("ptk-mkdirs")
        defer { removeTree(dir) }
        try makeDirectories(dir + "/a/b/c", mode: 0o700)
        try makeDirectories(dir + "/a/b", mode: 0o700)
        #expect(try fileStatus(dir + "/a/b/c").isDirectory)
        writeFile(dir + "/a/file", Array("x".utf8))
        for path in [dir + "/a/file", dir + "/a/file/d"] {
            do {
                try makeDirectories(path)
                Issue.record("made \(path) through a file")
            } catch {
                #expect(error.errno == ENOTDIR, "\(error)")
                #expect(error.description.contains(dir + "/a/file"), "\(error)")
            }
        }
        #expect(try fileStatus(dir + "/a/file").isRegularFile)
    }
}

@Suite("Reading a file at an offset until a buffer is full", .tags(.unit))
struct ReadFullyTests {
    @Test("readFully fills the buffer from the offset; at the end of the file it answers how many bytes there were")
    func fillsOrStopsAtTheEnd() throws {
        let dir = makeTemporaryDirectory("ptk-read-fully")
        defer { removeTree(dir) }
        let bytes = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        writeFile(dir + "/f", bytes)
        let fd = try FileDescriptor.open(dir + "/f", flags: [.readOnly])
        defer { fd.close() }
        var buffer = [UInt8](repeating: 0, count: 200_000)
        let whole = try buffer.withUnsafeMutableBytes { b throws(SystemError) in
            try fd.readFully(fromAbsoluteOffset: 50_000, into: b)
        }
        #expect(whole == 200_000)
        #expect(buffer == Array(bytes[50_000..<250_000]))
        let tail = try buffer.withUnsafeMutableBytes { b throws(SystemError) in
            try fd.readFully(fromAbsoluteOffset: 250_000, into: b)
        }
        #expect(tail == 50_000)
        #expect(Array(buffer[..<tail]) == Array(bytes[250_000...]))
        let past = try buffer.withUnsafeMutableBytes { b throws(SystemError) in
            try fd.readFully(fromAbsoluteOffset: 400_000, into: b)
        }
        #expect(past == 0)
    }
}
