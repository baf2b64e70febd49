import PTKDigest
import PTKProtocol
import PTKSystem
import PTKTestSupport
import PTKTestTags
import PTKVocabulary
import Testing

@testable import PTKStore

@Suite("Checking on a thread of its own", .tags(.unit))
struct CheckingThreadTests {
    @Test("pieces of any size, empty ones included, hash and check as the whole does", arguments: [1, 4])
    func piecesMatchWhole(depth: Int) {
        let bytes = makePNG(size: 700_001, seed: 9)
        let c = CheckingThread(
            continuing: SHA256(), structure: StructureCheck(type: .png, totalSize: Int64(bytes.count)),
            gate: ExitGate(), depth: depth)
        var i = 0
        for size in [0, 1, 102_400, 7, 0, 300_000, 65_536] + Array(repeating: 102_400, count: 3) {
            let end = min(i + size, bytes.count)
            bytes[i..<end].withUnsafeBytes { c.update($0) }
            i = end
        }
        bytes[i...].withUnsafeBytes { c.update($0) }
        let result = c.finish()
        #expect(result.sha256 == SHA256.hex(of: bytes))
        #expect(result.structure == nil)
        #expect(c.finish().sha256 == result.sha256)
    }

    @Test(
        "received arrays handed over whole, for every depth and batch, hash and check as the whole does",
        arguments: [(1, 1), (2, 2), (8, 4), (8, 8), (3, 5)])
    func arraysInBatches(depth: Int, batch: Int) {
        let bytes = makePNG(size: 1_000_003, seed: 11)
        let c = CheckingThread(
            continuing: SHA256(), structure: StructureCheck(type: .png, totalSize: Int64(bytes.count)),
            gate: ExitGate(), depth: depth, batch: batch)
        var i = 0
        var n = 1
        while i < bytes.count {
            let end = min(bytes.count, i + n)
            c.update(Array(bytes[i..<end]))
            i = end
            n = n * 7 % 150_001 + 1
        }
        let result = c.finish()
        #expect(result.sha256 == SHA256.hex(of: bytes))
        #expect(result.structure == nil)
    }

    @Test("a corrupt chunk is reported while later chunks still arrive, within twice the queue's depth")
    func errorSeenBeforeTheEnd() throws {
        var bytes = makePNG(size: 3_000_000, seed: 12)
        bytes[12] = 0x30  // IHDR's type: not a letter, wrong from the first chunk on
        let c = CheckingThread(
            continuing: SHA256(), structure: StructureCheck(type: .png, totalSize: Int64(bytes.count)),
            gate: ExitGate(), depth: 8, batch: 4)
        var seenAt: Int? = nil
        for (k, start) in stride(from: 0, to: bytes.count, by: 102_400).enumerated() {
            c.update(Array(bytes[start..<min(bytes.count, start + 102_400)]))
            if seenAt == nil, c.formatError != nil { seenAt = k }
        }
        // The error is in chunk 0; by the time update returns, every chunk but the last
        // 2 x depth has been checked (one batch queued, one being checked).
        let at = try #require(seenAt)
        #expect(at <= 2 * 8 + 1)
        #expect(c.finish().structure?.message.contains("invalid type") == true)
    }

    @Test("it continues a hash and a PNG check that already hold the first bytes")
    func continues() throws {
        let bytes = makePNG(size: 250_000, seed: 3)
        var start = SHA256()
        var png = StructureCheck(type: .png, totalSize: Int64(bytes.count))
        try bytes[..<100_000].withUnsafeBytes { b in
            start.update(b)
            try png.feed(b)
        }
        let c = CheckingThread(continuing: start, structure: png, gate: ExitGate())
        bytes[100_000...].withUnsafeBytes { c.update($0) }
        let result = c.finish()
        #expect(result.sha256 == SHA256.hex(of: bytes))
        #expect(result.structure == nil)
    }

    @Test("a broken CRC in the middle is found and reported, and a truncated file fails at the end")
    func findsErrors() {
        var bytes = makePNG(size: 400_000, seed: 4)
        bytes[200_000] ^= 0xFF  // inside the big data chunk: its CRC no longer matches
        let c = CheckingThread(
            continuing: SHA256(), structure: StructureCheck(type: .png, totalSize: Int64(bytes.count)), gate: ExitGate()
        )
        bytes.withUnsafeBytes { c.update($0) }
        #expect(c.finish().structure?.message.contains("CRC mismatch") == true)
        #expect(c.formatError != nil)

        let whole = makePNG(size: 300_000, seed: 5)
        let t = CheckingThread(continuing: SHA256(), structure: .png(PNGValidator()), gate: ExitGate())
        whole[..<250_000].withUnsafeBytes { t.update($0) }
        #expect(t.finish().structure?.message.contains("truncated") == true)
    }
}

@Suite("Stopping the checks before the process exits", .tags(.unit))
struct ExitGateTests {
    /// Flags set from other threads, read after a wait.
    final class Flags: @unchecked Sendable {
        private let lock = Lock()
        private var set: Set<String> = []
        func raise(_ f: String) { lock.withLock { _ = set.insert(f) } }
        func has(_ f: String) -> Bool { lock.withLock { set.contains(f) } }
    }

    @Test("closing waits for the work inside, and work that comes later never starts")
    func closeWaitsAndHolds() throws {
        let gate = ExitGate()
        let flags = Flags()
        let inside = Semaphore()
        try startThread(name: "test") {
            gate.pass {
                inside.signal()
                sleep(for: .milliseconds(300))
                flags.raise("first finished")
            }
        }
        inside.wait()
        let start = Instant.now
        #expect(gate.close(waitingUntil: .now + .seconds(5)))
        #expect(flags.has("first finished"))
        #expect(Instant.now - start >= .seconds(0.2))
        try startThread(name: "test") {
            gate.pass { flags.raise("late work ran") }
        }
        sleep(for: .milliseconds(200))
        #expect(!flags.has("late work ran"))
        #expect(gate.busy == 0)
    }

    @Test("closing gives up at its deadline when work inside does not end, and says so")
    func closeDeadline() throws {
        let gate = ExitGate()
        let inside = Semaphore()
        let release = Semaphore()
        try startThread(name: "test") {
            gate.pass {
                inside.signal()
                release.wait()
            }
        }
        inside.wait()
        #expect(!gate.close(waitingUntil: .now + .seconds(0.1)))
        release.signal()
    }

    @Test("after stopChecks no hash runs: a photo being finished waits (the process is about to exit)")
    func storeStopsChecks() throws {
        let f = try StoreFixture()
        let png = makePNG(size: 3_000_123, seed: 6)
        let file = try f.store.begin(offer(for: png, name: "late.png")).get()
        try png[..<(2 << 20)].withUnsafeBytes { try file.append($0) }  // the thread is checking now
        #expect(f.store.stopChecks(waitingUntil: .now + .seconds(5)))
        let flags = Flags()
        let rest = Array(png[(2 << 20)...])
        nonisolated(unsafe) let held = file
        try startThread(name: "test") {
            _ = try? rest.withUnsafeBytes { try held.append($0) }
            _ = held.finish()
            flags.raise("finished")
        }
        sleep(for: .milliseconds(200))
        #expect(!flags.has("finished"))
    }
}

@Suite("Received-photos store, big photos", .tags(.unit))
struct PhotoStoreBigTests {
    @Test("a photo over the threaded-check size is saved byte-identical; a wrong hash or a broken CRC still fails")
    func bigPhoto() throws {
        let f = try StoreFixture()
        let png = makePNG(size: 3_000_123, seed: 5)
        #expect(Int64(png.count) > IncomingFile.threadedCheckMinimum)
        #expect(try store(png, in: f.store, name: "big.png").get().name == "big.png")
        #expect(readFile(f.dir + "/big.png") == png)

        var o = offer(for: png, name: "wrong.png")
        o.sha256 = SHA256.hex(of: png[1...])
        let file = try f.store.begin(o).get()
        var i = 0
        while i < png.count {
            try file.append(Array(png[i..<min(i + ProtocolLimits.chunkSize, png.count)]))
            i += ProtocolLimits.chunkSize
        }
        guard case .failure(let fail) = file.finish() else {
            Issue.record("saved with a wrong hash")
            return
        }
        #expect(fail.kind == .hashMismatch)

        var broken = png
        broken[1_500_000] ^= 0xFF
        guard case .failure(let fail2) = store(broken, in: f.store, name: "broken.png") else {
            Issue.record("saved a broken PNG")
            return
        }
        #expect(fail2.kind == .notAPhoto)
        #expect(f.visible == ["big.png"])
        #expect(f.incoming.isEmpty)
    }

    @Test(
        "with one checking thread: a second big upload is checked inline, moves to the thread once it is free, and both are saved"
    )
    func checkingThreadsAreShared() throws {
        let f = try StoreFixture(checkingThreads: 1)
        let a = makePNG(size: 3_000_000, seed: 11)
        let b = makePNG(size: 3_200_000, seed: 12)
        let chunk = ProtocolLimits.chunkSize
        func piece(_ bytes: [UInt8], _ c: Int) -> [UInt8] {
            Array(bytes[(c * chunk)..<min((c + 1) * chunk, bytes.count)])
        }
        let fileA = try f.store.begin(offer(for: a, name: "a.png")).get()
        let fileB = try f.store.begin(offer(for: b, name: "b.png")).get()
        try fileA.append(piece(a, 0))
        #expect(fileA.checksOnThread)
        #expect(f.store.checkingThreads.taken == 1)
        // No thread to spare: b's checks run in its session, chunk by chunk.
        for c in 0..<5 { try fileB.append(piece(b, c)) }
        #expect(!fileB.checksOnThread)
        for c in 1..<((a.count + chunk - 1) / chunk) { try fileA.append(piece(a, c)) }
        #expect(try fileA.finish().get().name == "a.png")
        #expect(f.store.checkingThreads.taken == 0)
        // a's thread is free again: b moves there at its next chunk, with the hash and the
        // PNG check it has so far.
        try fileB.append(piece(b, 5))
        #expect(fileB.checksOnThread)
        for c in 6..<((b.count + chunk - 1) / chunk) { try fileB.append(piece(b, c)) }
        #expect(try fileB.finish().get().name == "b.png")
        #expect(readFile(f.dir + "/a.png") == a)
        #expect(readFile(f.dir + "/b.png") == b)
        #expect(f.store.checkingThreads.taken == 0)
    }

    @Test(
        "with no checking thread a big photo is checked inline: saved byte-identical, a broken CRC or a wrong hash still fails"
    )
    func noCheckingThread() throws {
        let f = try StoreFixture(checkingThreads: 0)
        let png = makePNG(size: 2_600_000, seed: 13)
        let file = try f.store.begin(offer(for: png, name: "inline.png")).get()
        var i = 0
        while i < png.count {
            try file.append(Array(png[i..<min(i + ProtocolLimits.chunkSize, png.count)]))
            #expect(!file.checksOnThread)
            i += ProtocolLimits.chunkSize
        }
        #expect(try file.finish().get().name == "inline.png")
        #expect(readFile(f.dir + "/inline.png") == png)

        var broken = png
        broken[1_500_000] ^= 0xFF
        guard case .failure(let fail) = store(broken, in: f.store, name: "broken.png") else {
            Issue.record("saved a broken PNG")
            return
        }
        #expect(fail.kind == .notAPhoto)
        var o = offer(for: png, name: "wrong.png")
        o.sha256 = SHA256.hex(of: png[1...])
        let wrong = try f.store.begin(o).get()
        i = 0
        while i < png.count {
            try wrong.append(Array(png[i..<min(i + ProtocolLimits.chunkSize, png.count)]))
            i += ProtocolLimits.chunkSize
        }
        guard case .failure(let fail2) = wrong.finish() else {
            Issue.record("saved with a wrong hash")
            return
        }
        #expect(fail2.kind == .hashMismatch)
        #expect(f.visible == ["inline.png"])
        #expect(f.incoming.isEmpty)
    }

    @Test("by default a store has a checking thread for every two CPUs it may use")
    func defaultCheckingThreads() throws {
        let root = makeTemporaryDirectory()
        defer { removeTree(root) }
        let store = try PhotoStore(settings: StoreSettings(directory: root + "/photos"))
        #expect(store.checkingThreads.limit == availableProcessorCount() / 2)
    }

    @Test("a big upload abandoned mid-way resumes and checks the kept bytes with the new ones")
    func bigResume() throws {
        let f = try StoreFixture()
        let png = makePNG(size: 2_500_000, seed: 6)
        let first = try f.store.begin(offer(for: png)).get()
        for c in 0..<12 { try first.append(Array(png[(c * 102_400)..<((c + 1) * 102_400)])) }
        first.abandon(keepForResume: true)
        let second = try f.store.begin(offer(for: png)).get()
        #expect(second.offset == 12 * 102_400)
        var i = Int(second.offset)
        while i < png.count {
            try second.append(Array(png[i..<min(i + 102_400, png.count)]))
            i += 102_400
        }
        #expect(try second.finish().get().name == "IMG_0001.png")
        #expect(readFile(f.dir + "/IMG_0001.png") == png)
    }
}
