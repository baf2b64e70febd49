import PTKDigest
import PTKSystem
import PTKTestSupport
import PTKTestTags
import PTKVocabulary
import Testing

@testable import PTKLibrary

/// One sender's slow photos and another's (issue 54, finding 11).
@Suite(.serialized, .tags(.unit)) struct IndexerFairnessTests {
    @Test(
        "pending photos (thumbnails, then previews) come in turns by sending address (not port), oldest first within each; photos without a sender are one sender"
    )
    func turns() throws {
        let dir = makeTemporaryDirectory("ptk-turns")
        defer { removeTree(dir) }
        let library = try PhotoLibrary(directory: dir, create: true)
        func arrival(_ name: String, _ address: String) -> Arrival {
            writeFile(dir + "/" + name + ".png", makePNG(size: 100, seed: UInt64(name.hashValue & 0xFFFF)))
            return Arrival(
                name: name + ".png", size: 100, sha256: String(repeating: "a", count: 64), received: .now,
                senderName: "x", senderAddress: address, senderID: nil)
        }
        try library.record([
            arrival("a1", "192.0.2.1:1000"), arrival("a2", "192.0.2.1:1001"), arrival("a3", "192.0.2.1:1002"),
            arrival("b1", "[2001:db8::1]:4000"), arrival("b2", "[2001:db8::1]:4001"), arrival("c1", "192.0.2.11:7"),
        ])
        // Found in the directory: no sender.
        for name in ["n1", "n2"] { writeFile(dir + "/" + name + ".png", makePNG(size: 100, seed: 3)) }
        _ = try library.reconcile()
        let names = try library.pending(limit: 100).map { try #require(try library.photo(id: $0)).name }
        #expect(names == ["a1", "b1", "c1", "n1", "a2", "b2", "n2", "a3"].map { $0 + ".png" }, "\(names)")
        #expect(try library.pending(limit: 3).count == 3)
        // Previews, made once photos are indexed, in the same turns.
        try library.database.execute("UPDATE photos SET indexed = 1")
        let previews = try library.pendingPreviews(limit: 100).map { try #require(try library.photo(id: $0)).name }
        #expect(previews == names, "\(previews)")
    }

    @Test(
        "20 PNG bombs (200 MP each) from one sender, then one photo from another: the other's thumbnail comes before most bombs are read",
        .tags(.slow))
    func bombsDoNotStarve() throws {
        let dir = makeTemporaryDirectory("ptk-bombs")
        defer { removeTree(dir) }
        let indexer = LibraryIndexer(directory: dir, readers: 2) { _ in }
        try indexer.start()
        defer { indexer.stop(waitingUntil: .now + .seconds(10)) }
        func arrive(_ name: String, _ bytes: [UInt8], from address: String) {
            writeFile(dir + "/" + name, bytes)
            indexer.add(
                Arrival(
                    name: name, size: Int64(bytes.count), sha256: SHA256.hex(of: bytes), received: .now,
                    senderName: "s", senderAddress: address, senderID: nil))
        }
        let bombs = (0..<20).map { pngBomb(side: 14142, note: "bomb \($0)") }
        #expect(bombs[0].count < 60_000)
        let started = Instant.now
        for (i, bomb) in bombs.enumerated() { arrive("bomb\(i).png", bomb, from: "192.0.2.1:5000") }
        arrive("good.png", makePNG(size: 3000, seed: 9), from: "192.0.2.2:5000")
        let library = try PhotoLibrary(directory: dir, create: false)
        var bombsDone = -1
        #expect(
            waitUntil(300) {
                guard let good = try? library.find("good.png"), good.indexed else { return false }
                bombsDone = (try? library.all().filter { $0.name.hasPrefix("bomb") && $0.indexed }.count) ?? -1
                return true
            })
        let seconds = (Instant.now - started).seconds
        print("good.png's thumbnail after \(formatDecimal(seconds)) s, \(bombsDone) of 20 bombs indexed by then")
        // Each of the two readers has at most one bomb in hand past the batch's second, and
        // the good photo is taken in the first turn.
        #expect(bombsDone >= 0 && bombsDone <= 6, "\(bombsDone) bombs before the good photo")
        #expect(try library.find("good.png").hasThumbnail)
    }
}
