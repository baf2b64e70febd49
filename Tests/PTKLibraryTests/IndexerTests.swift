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
