import Glibc
import PTKDigest
import PTKSystem
import PTKTestSupport
import PTKTestTags
import Testing

@testable import PTKClient

@Suite("Local files and hashing ahead", .tags(.unit))
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

@Suite("Hashing ahead of the session", .tags(.unit))
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

    @Test("files passed over (a type the receiver does not keep) are not hashed: their result says so")
    func passedOver() throws {
        let dir = makeTemporaryDirectory()
        defer { removeTree(dir) }
        // A first file big enough to keep the hasher busy while the pass-over is set.
        let big = makePNG(size: 40_000_000, seed: 1)
        let small = makePNG(size: 5_000, seed: 2)
        writeFile(dir + "/big.png", big)
        writeFile(dir + "/small.png", small)
        let files = [
            try LocalFile.check(dir + "/big.png"), try LocalFile.check(dir + "/small.png"),
            try LocalFile.check(dir + "/small.png"),
        ]
        let ahead = HashAhead(files)
        ahead.passOver { $0 == 1 }
        #expect(try ahead.sha256(of: 0) == SHA256.hex(of: big))
        do {
            _ = try ahead.sha256(of: 1)
            Issue.record("hashed a file passed over")
        } catch { #expect(error.reason == "not offered") }
        #expect(try ahead.sha256(of: 2) == SHA256.hex(of: small))
        ahead.cancel()
    }

    @Test("only the files in its order are hashed, in that order; a file asked for twice is not hashed again")
    func order() throws {
        let photos = try PhotoFiles([("a.png", 300_000), ("b.png", 100_000), ("c.png", 50_000)])
        let (files, pngs, dir) = (photos.files, photos.bytes, photos.dir)
        let ahead = HashAhead(files, order: [2, 0])
        #expect(try ahead.sha256(of: 2) == SHA256.hex(of: pngs[2]))
        #expect(try ahead.sha256(of: 0) == SHA256.hex(of: pngs[0]))
        #expect(!ahead.isReady(1))
        // Gone now: only the result kept can give its hash.
        unlink(dir + "/a.png")
        #expect(try ahead.sha256(of: 0) == SHA256.hex(of: pngs[0]))
        ahead.cancel()
    }

    @Test(
        "cancelled mid-hash: every file not hashed yet answers with the cancellation instead of leaving a session waiting"
    )
    func cancelledDoesNotHang() throws {
        let photos = try PhotoFiles([("big.png", 48_000_000), ("small.png", 1000), ("last.png", 1000)])
        let ahead = HashAhead(photos.files)
        ahead.cancel()
        for i in 0..<3 {
            #expect(ahead.isReady(i))
            // Either it was hashed before the cancel, or its cancellation is the answer.
            switch Result(catching: { () throws(LocalFileError) in try ahead.sha256(of: i) }) {
            case .success(let hex): #expect(hex == SHA256.hex(of: photos.bytes[i]))
            case .failure(let error): #expect("\(error)".contains("cancelled"))
            }
        }
        // A second cancel returns at once.
        ahead.cancel()
    }

    @Test(
        "a .ptk package is read as ptk import reads it: its photo under the package's name; a Version it does not know, or no Version, refused"
    )
    func packages() throws {
        let dir = makeTemporaryDirectory()
        defer { removeTree(dir) }
        let png = makePNG(size: 20_000, seed: 5)
        for (name, metadata) in [
            ("beach.ptk", "{\"Version\": 1}"), ("v2.ptk", "{\"Version\": 2}"), ("none.ptk", "{}"), ("bad.ptk", "[1"),
        ] {
            try makeDirectories(dir + "/" + name)
            writeFile(dir + "/" + name + "/photo.data", png)
            writeFile(dir + "/" + name + "/photo.metadata", Array(metadata.utf8))
        }
        let f = try LocalFile.check(dir + "/beach.ptk/")
        #expect(f.name == "beach.png" && f.size == Int64(png.count) && f.path == dir + "/beach.ptk/photo.data")
        for (name, words) in [
            ("v2.ptk", "is a Version 2 package; this ptk reads packages up to Version 1"),
            ("none.ptk", "has no Version"),
            ("bad.ptk", "is not a JSON object with a numeric Version"),
        ] {
            do {
                _ = try LocalFile.check(dir + "/" + name)
                Issue.record("\(name) was taken")
            } catch {
                #expect(
                    error.reason.hasPrefix("a package that cannot be sent: ") && error.reason.contains(words),
                    "\(error)")
            }
        }
    }
}
