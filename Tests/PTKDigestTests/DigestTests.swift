import CZlib
import PTKDigest
import PTKTestTags
import Testing

@Suite(.tags(.unit)) struct CRC32Tests {
    @Test func knownValues() {
        var c = CRC32()
        #expect(c.value == 0)
        c.update(Array("123456789".utf8))
        #expect(c.value == 0xCBF4_3926)
        var iend = CRC32()
        iend.update(Array("IEND".utf8))
        #expect(iend.value == 0xAE42_6082)  // every PNG's last four bytes
    }

    /// libdeflate's folded CRC must equal zlib's table CRC for every length around its 16-,
    /// 64- and 256-byte strides, fed whole and fed in uneven pieces.
    @Test func matchesZlibAtEveryLengthAndSplit() {
        var g = SystemRandomNumberGenerator()
        let data = (0..<70_000).map { _ in UInt8.random(in: 0...255, using: &g) }
        var lengths = Array(0...300)
        lengths += [1023, 1024, 1025, 4095, 4096, 65_536, 69_999, 70_000]
        for n in lengths {
            let reference = data.withUnsafeBytes { b in
                UInt32(CZlib.crc32(0, b.baseAddress?.assumingMemoryBound(to: UInt8.self), uInt(n)))
            }
            var whole = CRC32()
            data.withUnsafeBytes { whole.update(UnsafeRawBufferPointer(rebasing: $0[..<n])) }
            #expect(whole.value == reference, "length \(n)")
            var pieces = CRC32()
            var at = 0
            var step = 1
            while at < n {
                let end = min(n, at + step)
                data.withUnsafeBytes { pieces.update(UnsafeRawBufferPointer(rebasing: $0[at..<end])) }
                at = end
                step = step * 3 % 997 + 1
            }
            #expect(pieces.value == reference, "length \(n) in pieces")
        }
    }
}

@Suite(.tags(.unit)) struct SHA256Tests {
    @Test func knownValues() {
        #expect(SHA256.hex(of: [UInt8]()) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(SHA256.hex(of: Array("abc".utf8)) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }

    @Test func incrementalEqualsOneShotAndStartsOver() {
        let data = (0..<10_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
        var h = SHA256()
        for start in stride(from: 0, to: data.count, by: 777) {
            h.update(data[start..<min(data.count, start + 777)])
        }
        #expect(h.finalizeHex() == SHA256.hex(of: data))
        h.update(Array("abc".utf8))
        #expect(h.finalizeHex() == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }
}
