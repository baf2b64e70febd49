import Glibc
@testable import PTKClient
import PTKDigest
import PTKTestSupport
import Testing

@Suite("Local files and hashing ahead")
struct LocalFileTests {
    @Test("check reads only the signature; sha256 hashes the whole file; a file that changed is an error")
    func checkAndHash() throws {
        let dir = makeTemporaryDirectory()
        defer { removeTree(dir) }
        let png = makePNG(size: 1_500_000, seed: 2)
        writeFile(dir + "/a.png", png)
        let f = try LocalFile.check(dir + "/a.png")
        #expect(f.name == "a.png")
        #expect(f.size == Int64(png.count))
        #expect(try f.sha256() == SHA256.hex(of: png))
        writeFile(dir + "/a.png", Array(png[..<1000]))
        #expect(throws: LocalFileError.self) { try f.sha256() }

        writeFile(dir + "/short.png", Array(png[..<5]))
        #expect(throws: LocalFileError.self) { try LocalFile.check(dir + "/short.png") }
        writeFile(dir + "/text.png", Array("not a png at all".utf8))
        #expect(throws: LocalFileError.self) { try LocalFile.check(dir + "/text.png") }
        #expect(throws: LocalFileError.self) { try LocalFile.check(dir) }
        #expect(throws: LocalFileError.self) { try LocalFile.check(dir + "/missing.png") }
    }
}

@Suite("Hashing ahead of the session")
struct HashAheadTests {
    @Test("each file's hash comes in order; a file gone since the check fails alone")
    func hashesInOrder() throws {
        let dir = makeTemporaryDirectory()
        defer { removeTree(dir) }
        var files: [LocalFile] = []
        var bytes: [[UInt8]] = []
        for i in 0..<4 {
            let png = makePNG(size: 200_000 + i, seed: UInt64(i + 1))
            writeFile(dir + "/\(i).png", png)
            files.append(try LocalFile.check(dir + "/\(i).png"))
            bytes.append(png)
        }
        unlink(dir + "/2.png")
        let ahead = HashAhead(files)
        #expect(try ahead.sha256(of: 0) == SHA256.hex(of: bytes[0]))
        #expect(try ahead.sha256(of: 1) == SHA256.hex(of: bytes[1]))
        #expect(throws: LocalFileError.self) { try ahead.sha256(of: 2) }
        #expect(try ahead.sha256(of: 3) == SHA256.hex(of: bytes[3]))
        #expect(ahead.isReady(3))
        #expect(try ahead.sha256(of: 3) == SHA256.hex(of: bytes[3]))
        ahead.cancel()
    }

    @Test("a head start gives the first file's hash: the file is not read again")
    func headStartIsUsed() throws {
        let photos = try PhotoFiles([("a.png", 300_000), ("b.png", 100_000)])
        let (files, pngs, dir) = (photos.files, photos.bytes, photos.dir)
        let head = HashAhead([files[0]])
        #expect(try head.sha256(of: 0) == SHA256.hex(of: pngs[0]))
        // Gone now: only the head's result can give its hash.
        unlink(dir + "/a.png")
        let ahead = HashAhead(files, head: head)
        #expect(try ahead.sha256(of: 0) == SHA256.hex(of: pngs[0]))
        #expect(try ahead.sha256(of: 1) == SHA256.hex(of: pngs[1]))
        ahead.cancel()
        // The session's cancel stopped the head too, and a second cancel returns at once.
        head.cancel()
        // Without the head the missing file fails.
        let alone = HashAhead(files)
        #expect(throws: LocalFileError.self) { try alone.sha256(of: 0) }
        alone.cancel()
    }

    @Test("a head cancelled mid-hash fails the first file instead of leaving the session waiting")
    func cancelledHeadDoesNotHang() throws {
        let photos = try PhotoFiles([("big.png", 48_000_000), ("small.png", 1000)])
        let (files, big) = (photos.files, photos.bytes[0])
        let head = HashAhead([files[0]])
        head.cancel()
        let ahead = HashAhead(files, head: head)
        // Either the head finished before the cancel, or its cancellation is the answer.
        switch Result(catching: { () throws(LocalFileError) in try ahead.sha256(of: 0) }) {
        case .success(let hex): #expect(hex == SHA256.hex(of: big))
        case .failure(let error): #expect("\(error)".contains("cancelled"))
        }
        ahead.cancel()
        // A session cancelled while it waits on a head still hashing returns too.
        let head2 = HashAhead([files[0]])
        let waiting = HashAhead(files, head: head2)
        waiting.cancel()
        // ... with the first file answered (its hash, or the cancellation), so nothing waits on it.
        #expect(waiting.isReady(0))
    }
}
