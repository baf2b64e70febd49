import Foundation
import PTKDigest
import PTKSystem
import PTKTestSupport
import PTKTestTags
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
    let deadline = Instant.now + .seconds(seconds)
    while Instant.now < deadline {
        if condition() { return true }
        sleep(for: .milliseconds(20))
    }
    return condition()
}

@Suite(.tags(.unit)) struct IndexerTests {
    @Test func arrivalsAreIndexedInTheBackgroundAndFilesFoundAtStart() throws {
        let dir = makeTemporaryDirectory("ptk-indexer")
        defer { removeTree(dir) }
        writeFile(dir + "/before.png", photoBytes(1))
        let log = LogLines()
        let indexer = LibraryIndexer(directory: dir) { log.add($0) }
        try indexer.start()
        #expect(waitUntil { indexer.isIdle })
        #expect(log.all.contains { $0.contains("1 new file(s) to index") }, "\(log.all)")
        // And says when that backlog is done, once.
        #expect(
            waitUntil {
                log.all.contains { $0.hasPrefix("library: indexed the 1 photo(s) found in the directory, in ") }
            }, "\(log.all)")
        var sent: [String: [UInt8]] = [:]
        for i in 0..<20 {
            let bytes = photoBytes(10 + i)
            writeFile(dir + "/p\(i).png", bytes)
            sent["p\(i).png"] = bytes
            indexer.add(
                Arrival(
                    name: "p\(i).png", size: Int64(bytes.count), sha256: SHA256.hex(of: bytes),
                    received: WallTime(milliseconds: 5_000 + Int64(i)),
                    senderName: "cam", senderAddress: "192.0.2.3:1", senderID: nil))
        }
        let library = try PhotoLibrary(directory: dir, create: false)
        #expect(waitUntil { indexer.isIdle && (try? library.all().count) == 21 && (try? library.pendingCount()) == 0 })
        #expect(indexer.stop(waitingUntil: .now + .seconds(5)))
        for p in try library.all() {
            #expect(p.hasThumbnail, "\(p.name)")
            #expect(p.sha256 == SHA256.hex(of: readFile(dir + "/" + p.name)!), "\(p.name)")
            #expect(p.senderName == (p.name == "before.png" ? nil : "cam"))
        }
    }

    @Test(
        "a photo whose indexing meets a passing error (EMFILE, EIO) is tried again, less and less often, and indexed once it passes"
    )
    func passingErrorsAreRetried() throws {
        let dir = makeTemporaryDirectory("ptk-indexer")
        defer { removeTree(dir) }
        writeFile(dir + "/flaky.png", photoBytes(1))
        writeFile(dir + "/fine.png", photoBytes(2))
        let log = LogLines()
        let attempts = CallCounter()
        let indexer = LibraryIndexer(directory: dir, retryFirst: .milliseconds(100), retryLongest: .milliseconds(400)) {
            log.add($0)
        }
        // flaky.png cannot be opened four times (out of descriptors, then EIO), then it can.
        indexer.prepare = { library in
            library.openForIndexing = { name, dir throws(SystemError) in
                if name == "flaky.png" {
                    let n = attempts.next()
                    if n < 4 {
                        throw SystemError(
                            call: "openat", object: name,
                            errno: n < 2 ? Errno.processOutOfDescriptors.rawValue : Errno.ioError.rawValue)
                    }
                }
                return try .open(name, relativeTo: dir, flags: [.readOnly, .noFollow, .nonBlocking])
            }
        }
        let started = Instant.now
        try indexer.start()
        let library = try PhotoLibrary(directory: dir, create: false)
        #expect(waitUntil(10) { (try? library.pendingCount()) == 0 })
        let took = Instant.now - started
        #expect(indexer.stop(waitingUntil: .now + .seconds(5)))
        #expect(attempts.count == 5)
        // Pauses of 0.1, 0.2, 0.4 and 0.4 s (each doubling, at most 0.4) before the fifth try.
        #expect(took >= .seconds(1), "\(took)")
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
        library.openForIndexing = { name, _ throws(SystemError) in
            throw SystemError(call: "openat", object: name, errno: Errno.permissionDenied.rawValue)
        }
        let id = try #require(try library.pending(limit: 1).first)
        guard case .indexed(_, let problem?) = try library.index(id: id) else {
            Issue.record("expected a recorded problem")
            return
        }
        #expect(problem.hasPrefix("cannot open: "))
        #expect(try library.pendingCount() == 0)
        // A passing one leaves it pending.
        writeFile(dir + "/busy.png", photoBytes(2))
        _ = try library.reconcile()
        library.openForIndexing = { name, _ throws(SystemError) in
            throw SystemError(call: "openat", object: name, errno: Errno.processOutOfDescriptors.rawValue)
        }
        let busy = try #require(try library.pending(limit: 1).first)
        guard case .retryLater(let name, _) = try library.index(id: busy) else {
            Issue.record("expected retryLater")
            return
        }
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
            indexer.add(
                Arrival(
                    name: "q\(i).png", size: Int64(bytes.count), sha256: SHA256.hex(of: bytes),
                    received: WallTime(milliseconds: 1), senderName: "s", senderAddress: "a", senderID: nil))
        }
        try indexer.start()
        let library = try PhotoLibrary(directory: dir, create: true)
        #expect(waitUntil { indexer.isIdle && (try? library.all().count) == 6 && (try? library.pendingCount()) == 0 })
        indexer.stop(waitingUntil: .now + .seconds(5))
        #expect(try library.all(sort: .name).map(\.name) == (0..<6).map { "q\($0).png" })
    }

    /// An indexer started on a directory holding one 4000x4000 photo, once the photo is entered
    /// (its thumbnail takes a while), and a handle on the library.
    func indexingALargePhoto(in dir: String) throws -> (LibraryIndexer, PhotoLibrary) {
        writeLargePNG(dir + "/large.png", width: 4000, height: 4000)
        let indexer = LibraryIndexer(directory: dir) { _ in }
        try indexer.start()
        let library = try PhotoLibrary(directory: dir, create: true)
        #expect(waitUntil { (try? library.all().count) == 1 })
        return (indexer, library)
    }

    @Test("a photo handed over just before the stop is recorded with its sender, not left to be found without one")
    func arrivalQueuedAtStopIsRecorded() throws {
        let dir = makeTemporaryDirectory("ptk-indexer")
        defer { removeTree(dir) }
        // A long thumbnail keeps the thread busy while the arrival is queued and the stop comes.
        let (indexer, library) = try indexingALargePhoto(in: dir)
        let bytes = photoBytes(77)
        writeFile(dir + "/late.png", bytes)
        indexer.add(
            Arrival(
                name: "late.png", size: Int64(bytes.count), sha256: SHA256.hex(of: bytes),
                received: WallTime(milliseconds: 9_000),
                senderName: "phone", senderAddress: "192.0.2.9:1", senderID: "LocalSend AB"))
        #expect(indexer.stop(waitingUntil: .now + .seconds(10)))
        let late = try library.find("late")
        #expect(late.senderName == "phone" && late.senderAddress == "192.0.2.9:1" && late.senderID == "LocalSend AB")
        #expect(late.received == WallTime(milliseconds: 9_000))
    }

    @Test func stopInterruptsALongThumbnailAndTheNextStartFinishesIt() throws {
        let dir = makeTemporaryDirectory("ptk-indexer")
        defer { removeTree(dir) }
        let (indexer, library) = try indexingALargePhoto(in: dir)
        let started = Instant.now
        #expect(indexer.stop(waitingUntil: .now + .seconds(10)))
        #expect(Instant.now - started < .seconds(2), "stops at the next row or hash block")
        #expect(try library.pendingCount() == 1, "left pending")
        let again = LibraryIndexer(directory: dir) { _ in }
        try again.start()
        #expect(waitUntil(120) { (try? library.pendingCount()) == 0 })
        again.stop(waitingUntil: .now + .seconds(5))
        let photo = try library.find("large")
        #expect(photo.hasThumbnail)
        #expect([photo.width, photo.height] == [4000, 4000])
    }
}

@Suite("Indexing in batches", .tags(.unit))
struct BatchIndexingTests {
    @Test(
        "a batch records every photo: good ones with thumbnails, an undecodable one with its problem, a vanished one dropped",
        arguments: [1, 3])
    func mixedBatch(readers: Int) throws {
        let dir = makeTemporaryDirectory("ptk-batch")
        defer { removeTree(dir) }
        for i in 0..<20 { writeFile(dir + "/p\(i).png", photoBytes(40 + i)) }
        writeFile(dir + "/broken.png", Array(photoBytes(50).prefix(60)))
        writeFile(dir + "/gone.png", photoBytes(51))
        let library = try PhotoLibrary(directory: dir, create: true)
        _ = try library.reconcile()
        removeTree(dir + "/gone.png")
        let byName = Dictionary(uniqueKeysWithValues: try library.all().map { ($0.name, $0.id) })
        let ids = try library.pending(limit: 100)
        #expect(ids.count == 22)
        let outcomes = try library.index(ids: ids, readers: readers)
        #expect(outcomes.map(\.id) == ids, "outcomes come in the order asked")
        let outcome = Dictionary(uniqueKeysWithValues: outcomes.map { ($0.id, $0.outcome) })
        for i in 0..<20 { #expect(outcome[byName["p\(i).png"]!] == .indexed(name: "p\(i).png", problem: nil)) }
        #expect(outcome[byName["gone.png"]!] == .gone)
        guard case .indexed("broken.png", let problem?) = outcome[byName["broken.png"]!] else {
            Issue.record("broken.png: \(String(describing: outcome[byName["broken.png"]!]))")
            return
        }
        #expect(problem.hasPrefix("not decodable"), "\(problem)")
        #expect(try library.pendingCount() == 0)
        for p in try library.all() {
            #expect(p.hasThumbnail == p.name.hasPrefix("p"), "\(p.name)")
            if p.hasThumbnail { #expect(try library.thumbnail(of: p).flatMap(renditionSize) == [40, 30], "\(p.name)") }
            #expect(p.sha256 == SHA256.hex(of: readFile(dir + "/" + p.name)!))
        }
        #expect(!listDirectory(dir + "/.ptk/thumbnails").contains { $0.hasPrefix("\(byName["broken.png"]!)-") })
        // Nothing is left under a temporary name.
        #expect(
            try FileDescriptor.open(dir + "/.ptk/thumbnails", flags: [.readOnly, .directory]).entriesAndClose()
                .allSatisfy { $0.hasSuffix(".png") || $0.hasSuffix(".jpg") })
        #expect(listDirectory(dir + "/.ptk/thumbnails").count == 2 * 20)
    }

    @Test("a photo whose entry went while its batch was read (ptk rm) leaves no thumbnail behind")
    func removedDuringBatch() throws {
        let dir = makeTemporaryDirectory("ptk-batch")
        defer { removeTree(dir) }
        writeFile(dir + "/a.png", photoBytes(60))
        writeFile(dir + "/b.png", photoBytes(61))
        let library = try PhotoLibrary(directory: dir, create: true)
        _ = try library.reconcile()
        let ids = try library.pending(limit: 10)
        let other = try PhotoLibrary(directory: dir, create: false)
        // ptk rm of a.png between the reading of the photos and the writing of their entries.
        library.openForIndexing = { name, photos throws(SystemError) in
            let fd = try FileDescriptor.open(name, relativeTo: photos, flags: [.readOnly, .noFollow])
            if name == "b.png" { _ = try? other.remove("a.png") }
            return fd
        }
        let outcomes = try library.index(ids: ids)
        #expect(outcomes.map(\.outcome) == [.gone, .indexed(name: "b.png", problem: nil)])
        #expect(try library.all().map(\.name) == ["b.png"])
        #expect(
            Set(listDirectory(dir + "/.ptk/thumbnails"))
                == Set(Thumbnailer.gallerySides.map { try! library.find("b.png").thumbnailFileName(side: $0)! }))
        #expect(listDirectory(dir + "/.ptk/thumbnails").allSatisfy { $0.hasPrefix("\(ids[1])-") })
    }
}
