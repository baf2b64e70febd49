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
}
