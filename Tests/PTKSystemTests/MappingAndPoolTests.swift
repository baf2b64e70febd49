import Glibc
import PTKSystem
import PTKTestTags
import Testing

@Suite("Mapped files", .tags(.unit))
struct MappedFileTests {
    private func temporaryFile(_ bytes: [UInt8]) throws -> (String, FileDescriptor) {
        var template = Array("/tmp/ptk-map-XXXXXX".utf8CString)
        let fd = mkstemp(&template)
        try #require(fd >= 0)
        let path = String(cString: template)
        _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
        return (path, try FileDescriptor.open(path, flags: .readOnly))
    }

    @Test("the map holds the file's bytes; prepare of a range the file no longer has is an error, not a SIGBUS")
    func bytesAndTruncation() throws {
        let bytes = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        let (path, fd) = try temporaryFile(bytes)
        defer { unlink(path) }
        let map = try MappedFile(fd, length: bytes.count)
        fd.close()
        try map.prepare(0..<bytes.count)
        #expect(map.withBytes(in: 0..<map.count) { Array($0) } == bytes)
        #expect(truncate(path, 10_000) == 0)
        try map.prepare(0..<8192)
        #expect(map.withBytes(in: 8191..<8192) { $0[0] } == bytes[8191])
        #expect(throws: SystemError.self) { try map.prepare(200_000..<300_000) }
    }

    @Test("an empty file maps to no bytes")
    func empty() throws {
        let (path, fd) = try temporaryFile([])
        defer {
            unlink(path)
            fd.close()
        }
        let map = try MappedFile(fd, length: 0)
        #expect(map.count == 0)
        try map.prepare(0..<0)
    }
}

@Suite("Byte array pool", .tags(.unit))
struct ByteArrayPoolTests {
    @Test("take gives the size asked for, reusing what was given back, up to the limit")
    func takeAndGive() {
        let pool = ByteArrayPool(limit: 2, maxCapacity: 1 << 20)
        var a = pool.take(count: 1000)
        #expect(a.count == 1000)
        a[0] = 42
        pool.give(a)
        pool.give([UInt8](repeating: 1, count: 10))
        pool.give([UInt8](repeating: 2, count: 10))
        #expect(pool.count == 2)
        #expect(pool.take(count: 500).count == 500)
        #expect(pool.take(count: 5000).count == 5000)
        #expect(pool.count == 0)
        pool.give([UInt8](repeating: 0, count: 2 << 20))
        #expect(pool.count == 0)  // over maxCapacity: not kept
    }

    @Test("an array still used elsewhere when given back is not changed by the next taker")
    func sharedArrayStaysIntact() {
        let pool = ByteArrayPool(limit: 4, maxCapacity: 1 << 20)
        let kept = [UInt8](repeating: 9, count: 100)
        pool.give(kept)
        var reused = pool.take(count: 100)
        reused.withUnsafeMutableBytes { $0.initializeMemory(as: UInt8.self, repeating: 0) }
        #expect(kept.allSatisfy { $0 == 9 })
        #expect(reused.allSatisfy { $0 == 0 })
    }
}
