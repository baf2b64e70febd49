import Testing
import PTKDigest
import PTKProtocol
import PTKTestSupport
@testable import PTKStore

@Suite("Checking on a thread of its own")
struct CheckingThreadTests {
    @Test("pieces of any size, empty ones included, hash and check as the whole does", arguments: [1, 4])
    func piecesMatchWhole(depth: Int) {
        let bytes = makePNG(size: 700_001, seed: 9)
        let c = CheckingThread(continuing: SHA256(), png: PNGValidator(totalSize: Int64(bytes.count)), depth: depth)
        var i = 0
        for size in [0, 1, 102_400, 7, 0, 300_000, 65_536] + Array(repeating: 102_400, count: 3) {
            let end = min(i + size, bytes.count)
            bytes[i..<end].withUnsafeBytes { c.update($0) }
            i = end
        }
        bytes[i...].withUnsafeBytes { c.update($0) }
        let result = c.finish()
        #expect(result.sha256 == SHA256.hex(of: bytes))
        #expect(result.png == nil)
        #expect(c.finish().sha256 == result.sha256)
    }

    @Test("it continues a hash and a PNG check that already hold the first bytes")
    func continues() throws {
        let bytes = makePNG(size: 250_000, seed: 3)
        var start = SHA256()
        var png = PNGValidator(totalSize: Int64(bytes.count))
        try bytes[..<100_000].withUnsafeBytes { b in
            start.update(b)
            try png.feed(b)
        }
        let c = CheckingThread(continuing: start, png: png)
        bytes[100_000...].withUnsafeBytes { c.update($0) }
        let result = c.finish()
        #expect(result.sha256 == SHA256.hex(of: bytes))
        #expect(result.png == nil)
    }

    @Test("a broken CRC in the middle is found and reported, and a truncated file fails at the end")
    func findsErrors() {
        var bytes = makePNG(size: 400_000, seed: 4)
        bytes[200_000] ^= 0xFF  // inside the big data chunk: its CRC no longer matches
        let c = CheckingThread(continuing: SHA256(), png: PNGValidator(totalSize: Int64(bytes.count)))
        bytes.withUnsafeBytes { c.update($0) }
        #expect(c.finish().png?.message.contains("CRC mismatch") == true)
        #expect(c.pngError != nil)

        let whole = makePNG(size: 300_000, seed: 5)
        let t = CheckingThread(continuing: SHA256(), png: PNGValidator())
        whole[..<250_000].withUnsafeBytes { t.update($0) }
        #expect(t.finish().png?.message.contains("truncated") == true)
    }
}

@Suite("Received-photos store, big photos")
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
        guard case .failure(let fail) = file.finish() else { Issue.record("saved with a wrong hash"); return }
        #expect(fail.problem.code == "hash-mismatch")

        var broken = png
        broken[1_500_000] ^= 0xFF
        guard case .failure(let fail2) = store(broken, in: f.store, name: "broken.png") else { Issue.record("saved a broken PNG"); return }
        #expect(fail2.problem.code == "not-png")
        #expect(f.visible == ["big.png"])
        #expect(f.incoming.isEmpty)
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
