import PTKTestSupport
import PTKTestTags
import Testing

@testable import PTKStore

func validate(_ bytes: [UInt8], step: Int? = nil, totalSize: Int64? = nil) -> FormatError? {
    check(PNGValidator(totalSize: totalSize ?? Int64(bytes.count)), bytes, step: step)
}

/// Feeds `bytes` to `check` in pieces of `step` (whole when nil), then finishes: the first error.
func check(_ check: some FormatCheck, _ bytes: [UInt8], step: Int?) -> FormatError? {
    var v = check
    do throws(FormatError) {
        let s = step ?? max(bytes.count, 1)
        var i = 0
        while i < bytes.count {
            try v.feed(Array(bytes[i..<min(i + s, bytes.count)]))
            i += s
        }
        try v.finish()
        return nil
    } catch {
        return error
    }
}

let suite = pngSuiteDirectory()
let suiteFiles = pngSuiteImages()

/// Offsets of each chunk (its length field) in a PNG.
func chunkOffsets(_ png: [UInt8]) -> [(offset: Int, type: String, length: Int)] {
    var out: [(Int, String, Int)] = []
    var i = 8
    while i + 8 <= png.count {
        let length = Int(png[i]) << 24 | Int(png[i + 1]) << 16 | Int(png[i + 2]) << 8 | Int(png[i + 3])
        out.append((i, String(decoding: png[(i + 4)..<(i + 8)], as: UTF8.self), length))
        i += 12 + length
    }
    return out
}

@Suite("PNG structure check", .tags(.unit))
struct PNGValidatorTests {
    @Test("the PngSuite is there to test against")
    func suitePresent() {
        #expect(suiteFiles.count == pngSuiteImageCount, "expected the PngSuite at \(suite)")
    }

    @Test("every PngSuite image is valid, fed whole and one byte at a time", arguments: suiteFiles)
    func validSuite(name: String) throws {
        let bytes = try #require(readFile(suite + "/" + name))
        #expect(validate(bytes) == nil)
        #expect(validate(bytes, step: 1) == nil)
        #expect(validate(bytes, step: 13) == nil)
    }

    @Test("a generated multi-megabyte PNG is valid")
    func generated() {
        #expect(validate(makePNG(size: 3_000_000), step: 102_400) == nil)
    }

    @Test("a bad CRC is found in every chunk", arguments: suiteFiles.prefix(8))
    func badCRC(name: String) throws {
        let bytes = try #require(readFile(suite + "/" + name))
        for chunk in chunkOffsets(bytes) {
            var bad = bytes
            bad[chunk.offset + 8 + chunk.length] ^= 0x01  // first CRC byte
            #expect(validate(bad)?.message.contains("CRC mismatch") == true, "\(chunk.type)")
            if chunk.length > 0 {
                var data = bytes
                data[chunk.offset + 8] ^= 0x80  // first data byte
                #expect(validate(data) != nil)
            }
        }
    }

    @Test("truncated files fail", arguments: [1, 4, 12, 13, 100])
    func truncated(cut: Int) throws {
        let bytes = try #require(readFile(suite + "/basn2c08.png"))
        let short = Array(bytes.dropLast(cut))
        // The receiver knows the offered size; check both when it matches and when it does not.
        #expect(validate(short) != nil)
        #expect(validate(short, totalSize: Int64(bytes.count)) != nil)
    }

    @Test("bytes after IEND fail")
    func trailing() throws {
        let bytes = try #require(readFile(suite + "/basn2c08.png"))
        #expect(validate(bytes + [0])?.message.contains("after the IEND") == true)
        #expect(validate(bytes + bytes) != nil)
    }

    @Test("a missing IHDR fails")
    func missingIHDR() throws {
        let bytes = try #require(readFile(suite + "/basn2c08.png"))
        let chunks = chunkOffsets(bytes)
        let withoutIHDR = Array(bytes[..<8]) + Array(bytes[chunks[1].offset...])
        #expect(validate(withoutIHDR)?.message.contains("not IHDR") == true)
    }

    @Test("a missing IEND fails")
    func missingIEND() throws {
        let bytes = try #require(readFile(suite + "/basn2c08.png"))
        #expect(validate(Array(bytes.dropLast(12)))?.message.contains("no IEND") == true)
    }

    @Test("a chunk length past the end of the file fails at once")
    func lengthPastEnd() throws {
        let bytes = try #require(readFile(suite + "/basn2c08.png"))
        let idat = try #require(chunkOffsets(bytes).first { $0.type == "IDAT" })
        var bad = bytes
        bad[idat.offset] = 0x10  // a length of ~268 MB in a 1 kB file
        var v = PNGValidator(totalSize: Int64(bad.count))
        #expect(throws: FormatError.self) { try v.feed(Array(bad[..<(idat.offset + 4)])) }
        #expect(validate(bad)?.message.contains("past the end") == true)
    }

    @Test(
        "a wrong signature fails on the first bytes",
        arguments: [
            [UInt8](repeating: 0, count: 8), Array("GIF89a..".utf8), [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0B],
        ])
    func badSignature(head: [UInt8]) {
        var v = PNGValidator(totalSize: 100)
        #expect(throws: FormatError.self) { try v.feed(head) }
    }

    @Test("an empty or signature-only file fails")
    func tooShort() {
        #expect(validate([]) != nil)
        #expect(validate([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) != nil)
    }
}
