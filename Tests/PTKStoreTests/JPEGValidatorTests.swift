import PTKDigest
import PTKProtocol
import PTKTestSupport
import PTKTestTags
import PTKVocabulary
import Testing

@testable import PTKStore

func validateJPEG(_ bytes: [UInt8], step: Int? = nil, totalSize: Int64? = nil) -> FormatError? {
    check(JPEGValidator(totalSize: totalSize ?? Int64(bytes.count)), bytes, step: step)
}

/// The marker segments of a JPEG up to its first scan: (offset of the 0xFF, marker code, segment bytes including the marker).
func jpegSegments(_ jpeg: [UInt8]) -> [(offset: Int, code: UInt8, length: Int)] {
    var out: [(Int, UInt8, Int)] = []
    var i = 2
    while i + 4 <= jpeg.count, jpeg[i] == 0xFF {
        let code = jpeg[i + 1]
        let length = Int(jpeg[i + 2]) << 8 | Int(jpeg[i + 3])
        out.append((i, code, 2 + length))
        if code == 0xDA { break }
        i += 2 + length
    }
    return out
}

func segment(_ code: UInt8, _ payload: [UInt8]) -> [UInt8] {
    let length = payload.count + 2
    return [0xFF, code, UInt8(length >> 8), UInt8(length & 0xFF)] + payload
}

/// `jpeg` with `bytes` inserted before its first segment of `code` (after SOI when nil).
func inserting(_ bytes: [UInt8], before code: UInt8?, in jpeg: [UInt8]) -> [UInt8] {
    let at = code.flatMap { c in jpegSegments(jpeg).first { $0.code == c }?.offset } ?? 2
    return Array(jpeg[..<at]) + bytes + Array(jpeg[at...])
}

let baseline = makeJPEG(width: 64, height: 48, seed: 1)

@Suite("JPEG structural check", .tags(.unit))
struct JPEGValidatorTests {
    @Test(
        "libjpeg-turbo's JPEGs of every kind pass, fed whole, in pieces and one byte at a time",
        arguments: [
            makeJPEG(width: 1, height: 1),
            makeJPEG(width: 64, height: 48, seed: 1),
            makeJPEG(width: 301, height: 77, greyscale: true, seed: 2),
            makeJPEG(width: 200, height: 150, progressive: true, seed: 3),
            makeJPEG(width: 120, height: 90, restartRows: 1, seed: 4),
            makeJPEG(width: 640, height: 480, quality: 100, progressive: true, restartRows: 2, seed: 5),
        ])
    func wellFormed(jpeg: [UInt8]) {
        #expect(validateJPEG(jpeg) == nil)
        #expect(validateJPEG(jpeg, step: 1) == nil)
        #expect(validateJPEG(jpeg, step: 7) == nil)
        #expect(validateJPEG(jpeg, step: 4096) == nil)
        #expect(validateJPEG(jpeg, totalSize: nil) == nil)
        #expect(PhotoType.sniff(jpeg) == .jpeg)
    }

    @Test("the test photos hold what the check must get through: 0xFF00 stuffing and restart markers")
    func theTestPhotosAreHard() {
        let withRestarts = makeJPEG(width: 120, height: 90, restartRows: 1, seed: 4)
        let pairs = zip(withRestarts, withRestarts.dropFirst())
        #expect(pairs.contains { $0 == 0xFF && $1 == 0x00 })
        #expect(pairs.contains { $0 == 0xFF && (0xD0...0xD7).contains($1) })
        let progressive = makeJPEG(width: 200, height: 150, progressive: true, seed: 3)
        #expect(zip(progressive, progressive.dropFirst()).filter { $0 == 0xFF && $1 == 0xDA }.count > 1)
    }

    @Test(
        "segments an encoder may add pass: an APP1 with a JPEG thumbnail inside, a comment full of 0xFF, fill bytes, TEM"
    )
    func tolerated() {
        let thumbnail = makeJPEG(width: 8, height: 8, seed: 9)
        #expect(
            validateJPEG(inserting(segment(0xE1, Array("Exif\0\0".utf8) + thumbnail), before: 0xDB, in: baseline))
                == nil)
        #expect(
            validateJPEG(inserting(segment(0xFE, [UInt8](repeating: 0xFF, count: 40)), before: 0xC0, in: baseline))
                == nil)
        #expect(validateJPEG(inserting([0xFF, 0xFF, 0xFF], before: 0xC4, in: baseline), step: 1) == nil)
        #expect(validateJPEG(inserting([0xFF, 0x01], before: 0xDB, in: baseline)) == nil)
        #expect(validateJPEG(inserting(segment(0xE2, []), before: 0xDB, in: baseline)) == nil)
    }

    @Test(
        "what is not a JPEG fails with a reason",
        arguments: [
            ([], "too short"),
            ([0xFF], "too short"),
            ([0x89, 0x50, 0x4E, 0x47], "does not start with the JPEG SOI marker"),
            ([0xFF, 0xD9], "does not start with the JPEG SOI marker"),
            ([0xFF, 0xD8], "truncated before the frame header"),
            ([0xFF, 0xD8, 0x00], "expected a marker at offset 2"),
            ([0xFF, 0xD8, 0xFF, 0xD9], "EOI marker at offset 2 before any scan"),
            ([0xFF, 0xD8, 0xFF, 0xD8], "a second SOI marker"),
            ([0xFF, 0xD8, 0xFF, 0x02], "invalid marker 0xFF02"),
            ([0xFF, 0xD8, 0xFF, 0x00], "invalid marker 0xFF00"),
            ([0xFF, 0xD8, 0xFF, 0xD3], "restart marker RST3 at offset 2 outside image data"),
            ([0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x01], "APP0 segment at offset 2 has length 1, under 2"),
            (
                [0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x40, 0x00],
                "APP0 segment of 64 bytes at offset 2 runs past the end of the file"
            ),
            ([0xFF, 0xD8, 0xFF, 0xDA, 0x00, 0x08, 1, 1, 0, 0, 63, 0], "scan at offset 2 before the frame header"),
        ] as [([UInt8], String)])
    func hostile(bytes: [UInt8], reason: String) {
        let whole = validateJPEG(bytes)
        #expect(whole?.message.contains(reason) == true, "got \(String(describing: whole))")
        #expect(validateJPEG(bytes, step: 1)?.message.contains(reason) == true)
    }

    @Test("a broken frame header fails: zero width, five components, a length that disagrees, a second frame")
    func frameHeaders() throws {
        let sof = try #require(jpegSegments(baseline).first { $0.code == 0xC0 })
        func patched(_ change: (inout [UInt8]) -> Void) -> [UInt8] {
            var j = baseline
            change(&j)
            return j
        }
        let zeroWidth = patched {
            $0[sof.offset + 7] = 0
            $0[sof.offset + 8] = 0
        }
        #expect(validateJPEG(zeroWidth)?.message.contains("width is 0") == true)
        let five = patched { $0[sof.offset + 9] = 5 }
        #expect(validateJPEG(five)?.message.contains("5 components") == true)
        let one = patched { $0[sof.offset + 9] = 1 }
        #expect(validateJPEG(one)?.message.contains("1 components need 11") == true)
        let sofBytes = Array(baseline[sof.offset..<(sof.offset + sof.length)])
        #expect(
            validateJPEG(inserting(sofBytes, before: 0xDA, in: baseline))?.message.contains(
                "a second frame header (SOF0)") == true)
        let sos = try #require(jpegSegments(baseline).first { $0.code == 0xDA })
        let badScan = patched { $0[sos.offset + 4] = 4 }  // says 4 components, has room for 3
        #expect(validateJPEG(badScan)?.message.contains("SOS scan header") == true)
    }

    @Test("a JPEG cut anywhere fails at the end; one with bytes after EOI fails at once")
    func truncatedAndTrailing() {
        let jpeg = makeJPEG(width: 200, height: 150, progressive: true, seed: 3)
        for cut in stride(from: 1, to: jpeg.count, by: 97) + [jpeg.count - 1, jpeg.count - 2] {
            let e = validateJPEG(Array(jpeg[..<cut]))
            #expect(e != nil, "cut at \(cut) of \(jpeg.count) passed")
        }
        #expect(
            validateJPEG(Array(jpeg.dropLast(2)))?.message == "truncated in the image data: no EOI marker at the end")
        var v = JPEGValidator()
        #expect(throws: FormatError.self) { try v.feed(jpeg + [0]) }
        #expect(validateJPEG(jpeg + [0xFF, 0xD9], step: 1)?.message.contains("bytes after the EOI marker") == true)
        #expect(
            validateJPEG(jpeg + Array(repeating: 0, count: 1000))?.message.contains(
                "after the EOI marker at offset \(jpeg.count)") == true)
    }

    @Test("an invalid marker inside the image data is found where it is")
    func markerInScan() throws {
        var jpeg = makeJPEG(width: 320, height: 240, seed: 6)
        let sos = try #require(jpegSegments(jpeg).first { $0.code == 0xDA })
        let at = sos.offset + sos.length + 100
        jpeg[at] = 0xFF
        jpeg[at + 1] = 0x05
        #expect(validateJPEG(jpeg)?.message == "invalid marker 0xFF05 at offset \(at)")
        #expect(validateJPEG(jpeg, step: 1)?.message == "invalid marker 0xFF05 at offset \(at)")
    }

    @Test("every single-byte change of a JPEG's headers is either caught or still a well-formed structure")
    func headerMutations() {
        // The check is structural: a changed quantisation value is still a JPEG. What it must
        // never do is crash, or pass a file whose segments no longer line up.
        let headerEnd = jpegSegments(baseline).last.map { $0.offset + $0.length } ?? 2
        for i in 0..<headerEnd {
            for value: UInt8 in [0x00, 0xFF, baseline[i] ^ 0x80] where value != baseline[i] {
                var j = baseline
                j[i] = value
                _ = validateJPEG(j)
                _ = validateJPEG(j, step: 3)
            }
        }
        var lengthBroken = baseline
        let dqt = jpegSegments(baseline).first { $0.code == 0xDB }!
        lengthBroken[dqt.offset + 3] &+= 1  // the DQT now swallows the next marker's 0xFF
        #expect(validateJPEG(lengthBroken) != nil)
    }
}
