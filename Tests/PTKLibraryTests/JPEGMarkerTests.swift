import PTKSystem
import PTKTestSupport
import PTKTestTags
import PTKVocabulary
import Testing

@testable import PTKLibrary

/// A JPEG's APP1 and APP2 segments (issue 54): only the first Exif APP1 and at most 1 MB of ICC
/// profile are kept while the header is read.
@Suite("JPEG header segments: what is kept", .tags(.unit))
struct JPEGMarkerTests {
    /// `jpeg` with `segments` (marker, payload) after its SOI.
    static func inserting(_ segments: [(UInt8, [UInt8])], into jpeg: [UInt8]) -> [UInt8] {
        var out = Array(jpeg[..<2])
        for (marker, payload) in segments {
            out += [0xFF, marker, UInt8((payload.count + 2) >> 8), UInt8((payload.count + 2) & 0xFF)] + payload
        }
        return out + jpeg[2...]
    }

    @Test("the first Exif APP1 is read after an XMP one; a later Exif APP1 is not; many large APP1s change nothing")
    func firstExif() throws {
        let jpeg = makeJPEG(width: 64, height: 48, seed: 5)
        let exif6 = Array("Exif\0\0".utf8) + exifTIFF(EXIFFields(orientation: 6))
        let exif3 = Array("Exif\0\0".utf8) + exifTIFF(EXIFFields(orientation: 3))
        let xmp = Array("http://ns.adobe.com/xap/1.0/\0<x:xmpmeta/>".utf8)
        let filler = Array("Exif\0\0".utf8) + [UInt8](repeating: 0x41, count: 65_000)
        let file = Self.inserting(
            [(0xE1, xmp), (0xE1, exif6), (0xE1, exif3)] + Array(repeating: (0xE1, filler), count: 50), into: jpeg)
        let t = thumbnail(of: file, type: .jpeg)
        #expect(t.outcome == .made && t.facts.orientation == 6, "\(t.outcome) \(t.facts)")
        #expect(t.thumbnailHeight > t.thumbnailWidth)
    }

    @Test(
        "an ICC profile in chunks is read whatever segments come between; chunks that disagree are set aside; over 1 MB is named with its size"
    )
    func iccChunks() throws {
        let jpeg = makeJPEG(width: 64, height: 48, seed: 6)
        let p3 = try #require(readFile(fixturePath("heif/display-p3.icc")))
        let plain = try #require(decodeRGBA(thumbnail(of: jpeg, type: .jpeg).png))
        func chunk(_ sequence: UInt8, _ count: UInt8, _ bytes: ArraySlice<UInt8>) -> (UInt8, [UInt8]) {
            (0xE2, Array("ICC_PROFILE".utf8) + [0, sequence, count] + bytes)
        }
        let half = p3.count / 2
        // In two chunks, the second first, an APP1 between: read as Display P3 (the colours change).
        let split = thumbnail(
            of: Self.inserting([chunk(2, 2, p3[half...]), (0xE1, [1, 2, 3]), chunk(1, 2, p3[..<half])], into: jpeg),
            type: .jpeg)
        #expect(split.outcome == .made && split.colourNote == nil)
        #expect(meanDifference(plain, try #require(decodeRGBA(split.png))).max()! > 1)
        // The same chunk twice: set aside, taken as sRGB.
        let twice = thumbnail(
            of: Self.inserting(
                [chunk(1, 2, p3[..<half]), chunk(1, 2, p3[..<half]), chunk(2, 2, p3[half...])], into: jpeg), type: .jpeg
        )
        #expect(twice.outcome == .made)
        #expect(try #require(decodeRGBA(twice.png)) == plain)
        // 40 chunks of 60,000 bytes: 2.4 MB, named, not kept.
        let big = thumbnail(
            of: Self.inserting(
                (1...40).map { chunk(UInt8($0), 40, ArraySlice(repeating: 7, count: 60_000)) }, into: jpeg), type: .jpeg
        )
        #expect(
            big.colourNote == "colour profile of 2400000 bytes is over the 1 MB limit; shown as sRGB",
            "\(String(describing: big.colourNote))")
    }
}
