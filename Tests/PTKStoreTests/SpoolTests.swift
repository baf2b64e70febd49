import PTKDigest
import PTKSystem
import PTKTestSupport
import PTKTestTags
import PTKVocabulary
import Testing
@testable import PTKStore

/// The spool for a photo of no announced length (a chunked HTTP body without Content-Length).
@Suite("The store's spool for photos of unknown length", .tags(.unit))
struct SpoolTests {
    func spool(_ f: StoreFixture, _ type: PhotoType = .png, limit: Int64 = 1 << 20) throws -> Spool {
        switch f.store.spool(type: type, limit: limit) {
        case .success(let s): return s
        case .failure(let failure): throw failure
        }
    }

    /// Appends `bytes` to the spool in one piece.
    func feed(_ s: Spool, _ bytes: [UInt8]) throws(StoreFailure) {
        try bytes.withUnsafeBytes { p in Result { () throws(StoreFailure) in try s.append(p) } }.get()
    }

    @Test("fed a byte at a time, it holds the photo in a file with no name (nothing in .incoming), then the store takes it whole with its SHA-256 checked")
    func byteAtATime() throws {
        let f = try StoreFixture()
        let png = makePNG(size: 4_000, seed: 11)
        let s = try spool(f)
        for b in png { try feed(s, [b]) }
        #expect(s.written == Int64(png.count))
        #expect(f.incoming.isEmpty)
        let saved = try s.take(StoreRequest(name: "IMG_9.png", size: 0, sha256: SHA256.hex(of: png), type: .png)).get()
        #expect(saved.name == "IMG_9.png" && saved.size == Int64(png.count))
        #expect(readFile(f.dir + "/IMG_9.png") == png)
        #expect(f.incoming.isEmpty)
        // Taken once: a second take is refused.
        #expect(throws: StoreFailure.self) { try s.take(StoreRequest(name: "again.png", size: 0, sha256: "", type: .png)).get() }
    }

    @Test("refused past its limit (sizeMismatch), at bytes that cannot be the type's (notAPhoto), and a truncated photo at take (notAPhoto): nothing is kept")
    func refusals() throws {
        let f = try StoreFixture()
        let png = makePNG(size: 4_000, seed: 12)
        let small = try spool(f, limit: 1_000)
        do {
            try feed(small, png)
            Issue.record("took more than its limit")
        } catch {
            #expect(error.kind == .sizeMismatch, "\(error)")
        }
        let jpeg = try spool(f, .jpeg)
        do {
            try feed(jpeg, png)
            Issue.record("took a PNG as a JPEG")
        } catch {
            #expect(error.kind == .notAPhoto && error.message.contains("JPEG"), "\(error)")
        }
        let cut = try spool(f)
        try feed(cut, Array(png.prefix(2_000)))
        #expect(throws: StoreFailure.self) { try cut.take(StoreRequest(name: "cut.png", size: 0, sha256: "", type: .png)).get() }
        #expect(f.visible.isEmpty && f.incoming.isEmpty)
    }

    @Test("a reserve the file system cannot keep refuses the first bytes (noSpace)")
    func reserve() throws {
        let f = try StoreFixture(minFree: .max / 2)
        let s = try spool(f)
        let png = makePNG(size: 1_000, seed: 13)
        do {
            try feed(s, png)
            Issue.record("took bytes past the reserve")
        } catch {
            #expect(error.kind == .noSpace && error.message.contains("reserve"), "\(error)")
        }
    }
}
