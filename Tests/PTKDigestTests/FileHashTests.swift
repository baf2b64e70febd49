import PTKDigest
import PTKSystem
import PTKTestSupport
import PTKTestTags
import Testing

@Suite("The SHA-256 of a file", .tags(.unit))
struct FileHashTests {
    let dir = makeTemporaryDirectory("ptk-filehash")
    let bytes: [UInt8] = (0..<(3 << 20) + 12_345).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 7) }

    func file(_ name: String = "f", _ content: [UInt8]? = nil) throws -> FileDescriptor {
        writeFile(dir + "/" + name, content ?? bytes)
        return try FileDescriptor.open(dir + "/" + name, flags: .readOnly)
    }

    @Test("mapped (size known), read to the end, or read through a small buffer: the same digest as the bytes'")
    func sameDigest() throws {
        defer { removeTree(dir) }
        let fd = try file()
        defer { fd.close() }
        let expected = SHA256.hex(of: bytes)
        #expect(SHA256.hex(ofFile: fd, size: Int64(bytes.count)) == .success(expected))
        #expect(SHA256.hex(ofFile: fd) == .success(expected))
        let small = UnsafeMutableRawBufferPointer.allocate(byteCount: 4096, alignment: 8)
        defer { small.deallocate() }
        #expect(SHA256.hex(ofFile: fd, buffer: small) == .success(expected))
        let empty = try file("empty", [])
        defer { empty.close() }
        #expect(SHA256.hex(ofFile: empty, size: 0) == .success(SHA256.hex(of: [UInt8]())))
    }

    @Test("a file that is not the size it was checked at, or shrinks while hashed, is .sizeChanged")
    func sizeChanged() throws {
        defer { removeTree(dir) }
        let fd = try file()
        defer { fd.close() }
        #expect(
            SHA256.hex(ofFile: fd, size: Int64(bytes.count) + 1)
                == .failure(.sizeChanged(expected: Int64(bytes.count) + 1, now: Int64(bytes.count))))
        var asked = 0
        // Truncated after the first MiB: the map's next range is no longer in the file.
        let result = SHA256.hex(ofFile: fd, size: Int64(bytes.count)) {
            asked += 1
            if asked == 2 { _ = truncateFile(self.dir + "/f", to: 100) }
            return false
        }
        guard case .failure(let failure) = result, failure != .cancelled else {
            Issue.record("\(result)")
            return
        }
    }

    @Test("cancelled is asked before every MiB, and stops the hash")
    func cancels() throws {
        defer { removeTree(dir) }
        let fd = try file()
        defer { fd.close() }
        var asked = 0
        #expect(
            SHA256.hex(ofFile: fd) {
                asked += 1
                return asked == 3
            } == .failure(.cancelled))
        #expect(asked == 3)
    }
}

/// Truncates `path` to `size` bytes; true when it worked.
private func truncateFile(_ path: String, to size: Int64) -> Bool {
    guard let fd = try? FileDescriptor.open(path, flags: .writeOnly) else { return false }
    defer { fd.close() }
    return (try? fd.truncate(to: size)) != nil
}
