import Testing
import PTKDigest
import PTKProtocol
import PTKTestSupport
@testable import PTKStore

@Suite("Hashing on a thread of its own")
struct HashingThreadTests {
    @Test("pieces of any size, empty ones included, hash as the whole does", arguments: [1, 4])
    func piecesMatchWhole(depth: Int) {
        let bytes = makePNG(size: 700_001, seed: 9)
        let h = HashingThread(continuing: SHA256(), depth: depth)
        var i = 0
        for size in [0, 1, 102_400, 7, 0, 300_000, 65_536] + Array(repeating: 102_400, count: 3) {
            let end = min(i + size, bytes.count)
            bytes[i..<end].withUnsafeBytes { h.update($0) }
            i = end
        }
        bytes[i...].withUnsafeBytes { h.update($0) }
        #expect(h.finish() == SHA256.hex(of: bytes))
        #expect(h.finish() == SHA256.hex(of: bytes))
    }

    @Test("it continues a hash that already holds earlier bytes")
    func continues() {
        let bytes = makePNG(size: 250_000, seed: 3)
        var start = SHA256()
        bytes[..<100_000].withUnsafeBytes { start.update($0) }
        let h = HashingThread(continuing: start)
        bytes[100_000...].withUnsafeBytes { h.update($0) }
        #expect(h.finish() == SHA256.hex(of: bytes))
    }
}

@Suite("Received-photos store, big photos")
struct PhotoStoreBigTests {
    @Test("a photo over the threaded-hash size is saved byte-identical; a wrong hash still fails")
    func bigPhoto() throws {
        let f = try StoreFixture()
        let png = makePNG(size: 3_000_123, seed: 5)
        #expect(Int64(png.count) > IncomingFile.threadedHashMinimum)
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
        guard case .failure(let fail) = file.finish() else { Issue.record("saved with a wrong hash"); return }
        #expect(fail.problem.code == "hash-mismatch")
        #expect(f.visible == ["big.png"])
        #expect(f.incoming.isEmpty)
    }

    @Test("a big upload abandoned mid-way resumes and hashes the kept bytes with the new ones")
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
