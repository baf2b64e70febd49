import PTKDigest
import PTKSystem
import PTKTestSupport
import Foundation
import Testing

@testable import PTKLibrary

/// Lines the indexer logs, collected across its thread.
final class LogLines: @unchecked Sendable {
    private let lock = Lock()
    private var lines: [String] = []
    func add(_ line: String) { lock.withLock { lines.append(line) } }
    var all: [String] { lock.withLock { lines } }
}

func waitUntil(_ seconds: Double = 30, _ condition: () -> Bool) -> Bool {
    let deadline = Instant.now + seconds
    while Instant.now < deadline {
        if condition() { return true }
        sleep(for: .milliseconds(20))
    }
    return condition()
}

@Suite struct IndexerTests {
    @Test func arrivalsAreIndexedInTheBackgroundAndFilesFoundAtStart() throws {
        let dir = makeTemporaryDirectory("ptk-indexer")
        defer { removeTree(dir) }
        writeFile(dir + "/before.png", photoBytes(1))
        let log = LogLines()
        let indexer = LibraryIndexer(directory: dir) { log.add($0) }
        try indexer.start()
        #expect(waitUntil { indexer.isIdle })
        #expect(log.all.contains { $0.contains("1 new file(s) to index") }, "\(log.all)")
        var sent: [String: [UInt8]] = [:]
        for i in 0..<20 {
            let bytes = photoBytes(10 + i)
            writeFile(dir + "/p\(i).png", bytes)
            sent["p\(i).png"] = bytes
            indexer.add(Arrival(name: "p\(i).png", size: Int64(bytes.count), sha256: SHA256.hex(of: bytes), received: 5_000 + Int64(i),
                                senderName: "cam", senderAddress: "192.0.2.3:1", senderID: nil))
        }
        let library = try PhotoLibrary(directory: dir, create: false)
        #expect(waitUntil { indexer.isIdle && (try? library.all().count) == 21 && (try? library.pendingCount()) == 0 })
        #expect(indexer.stop(waitingUntil: .now + 5))
        for p in try library.all() {
            #expect(p.hasThumbnail, "\(p.name)")
            #expect(p.sha256 == SHA256.hex(of: readFile(dir + "/" + p.name)!), "\(p.name)")
            #expect(p.senderName == (p.name == "before.png" ? nil : "cam"))
        }
    }

    @Test("a photo whose indexing meets a passing error (EMFILE, EIO) is tried again, less and less often, and indexed once it passes")
    func passingErrorsAreRetried() throws {
        let dir = makeTemporaryDirectory("ptk-indexer")
        defer { removeTree(dir) }
        writeFile(dir + "/flaky.png", photoBytes(1))
        writeFile(dir + "/fine.png", photoBytes(2))
        let log = LogLines()
        let attempts = CallCounter()
        let indexer = LibraryIndexer(directory: dir, retryFirst: 0.1, retryLongest: 0.4) { log.add($0) }
        // flaky.png cannot be opened four times (out of descriptors, then EIO), then it can.
        indexer.prepare = { library in
            library.openForIndexing = { name, dir throws(SystemError) in
                if name == "flaky.png" {
                    let n = attempts.next()
                    if n < 4 { throw SystemError(call: "openat", object: name, errno: n < 2 ? Errno.processOutOfDescriptors.rawValue : Errno.ioError.rawValue) }
                }
                return try .open(name, relativeTo: dir, flags: [.readOnly, .noFollow, .nonBlocking])
            }
        }
        let started = Instant.now
        try indexer.start()
        let library = try PhotoLibrary(directory: dir, create: false)
        #expect(waitUntil(10) { (try? library.pendingCount()) == 0 })
        let took = Instant.now - started
        #expect(indexer.stop(waitingUntil: .now + 5))
        #expect(attempts.count == 5)
        // Pauses of 0.1, 0.2, 0.4 and 0.4 s (each doubling, at most 0.4) before the fifth try.
        #expect(took >= 1.0, "\(took) s")
        let flaky = try library.find("flaky")
        #expect(flaky.hasThumbnail)
        #expect(flaky.problem == nil)
        #expect(flaky.sha256 == SHA256.hex(of: photoBytes(1)))
        #expect(try library.find("fine").hasThumbnail)
        let lines = log.all.filter { $0.contains("flaky.png") }
        #expect(lines.count == 2, "\(lines)")
        #expect(lines.first?.contains("cannot index \"flaky.png\" now (cannot open: ") == true, "\(lines)")
        #expect(lines.last == "library: indexed \"flaky.png\" at try 5")
    }

    @Test("an error that says something about the photo (EACCES) is recorded as its problem at once, as before")
    func lastingErrorsAreRecorded() throws {
        let dir = makeTemporaryDirectory("ptk-indexer")
        defer { removeTree(dir) }
        writeFile(dir + "/locked.png", photoBytes(1))
        let library = try PhotoLibrary(directory: dir, create: true)
        _ = try library.reconcile()
        library.openForIndexing = { name, _ throws(SystemError) in throw SystemError(call: "openat", object: name, errno: Errno.permissionDenied.rawValue) }
        let id = try #require(try library.pending(limit: 1).first)
        guard case .indexed(_, let problem?) = try library.index(id: id) else { Issue.record("expected a recorded problem"); return }
        #expect(problem.hasPrefix("cannot open: "))
        #expect(try library.pendingCount() == 0)
        // A passing one leaves it pending.
        writeFile(dir + "/busy.png", photoBytes(2))
        _ = try library.reconcile()
        library.openForIndexing = { name, _ throws(SystemError) in throw SystemError(call: "openat", object: name, errno: Errno.processOutOfDescriptors.rawValue) }
        let busy = try #require(try library.pending(limit: 1).first)
        guard case .retryLater(let name, _) = try library.index(id: busy) else { Issue.record("expected retryLater"); return }
        #expect(name == "busy.png")
        #expect(try library.pendingCount() == 1)
        #expect(try library.find("busy").problem == nil)
    }

    @Test func anOverflowingQueueLosesNoPhoto() throws {
        let dir = makeTemporaryDirectory("ptk-indexer")
        defer { removeTree(dir) }
        let indexer = LibraryIndexer(directory: dir, capacity: 2) { _ in }
        // Queued before the thread starts: 2 fit, the rest overflow and are found by a reconcile.
        for i in 0..<6 {
            let bytes = photoBytes(i)
            writeFile(dir + "/q\(i).png", bytes)
            indexer.add(Arrival(name: "q\(i).png", size: Int64(bytes.count), sha256: SHA256.hex(of: bytes), received: 1, senderName: "s", senderAddress: "a", senderID: nil))
        }
        try indexer.start()
        let library = try PhotoLibrary(directory: dir, create: true)
        #expect(waitUntil { indexer.isIdle && (try? library.all().count) == 6 && (try? library.pendingCount()) == 0 })
        indexer.stop(waitingUntil: .now + 5)
        #expect(try library.all(sort: .name).map(\.name) == (0..<6).map { "q\($0).png" })
    }

    @Test func stopInterruptsALongThumbnailAndTheNextStartFinishesIt() throws {
        let dir = makeTemporaryDirectory("ptk-indexer")
        defer { removeTree(dir) }
        writeLargePNG(dir + "/large.png", width: 4000, height: 4000)
        let indexer = LibraryIndexer(directory: dir) { _ in }
        try indexer.start()
        let library = try PhotoLibrary(directory: dir, create: true)
        #expect(waitUntil { (try? library.all().count) == 1 })
        let started = Instant.now
        #expect(indexer.stop(waitingUntil: .now + 10))
        #expect(Instant.now - started < 2, "stops at the next row or hash block")
        #expect(try library.pendingCount() == 1, "left pending")
        let again = LibraryIndexer(directory: dir) { _ in }
        try again.start()
        #expect(waitUntil(120) { (try? library.pendingCount()) == 0 })
        again.stop(waitingUntil: .now + 5)
        let photo = try library.find("large")
        #expect(photo.hasThumbnail)
        #expect([photo.width, photo.height] == [4000, 4000])
    }
}
