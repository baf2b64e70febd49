import PTKStore
import PTKSystem
import PTKTestSupport
import PTKTestTags
import PTKVocabulary
import Testing

@testable import PTKLibrary

@Suite("HEIF thumbnails: hostile declared sizes, and the primary's own turn (issue 54)", .tags(.unit))
struct HEIFFindingsTests {
    @Test(
        "a grid or overlay whose output is not its ispe, a coded image larger than its ispe: no decode, the check's verdict, at once"
    )
    func refusedBeforeLibheif() throws {
        for (name, words) in [
            ("grid-20000.heic", "grid item 1 makes a 20000x20000 image, its ispe says 128x128"),
            ("overlay-20000.heic", "overlay item 1 makes a 20000x20000 image, its ispe says 128x128"),
            ("coded-2048.heic", "HEVC item 1 is coded 2048x2048, its ispe says 64x64"),
            ("coded-in-band.heic", "HEVC item 1 is coded 2048x2048, its ispe says 64x64"),
        ] {
            let bytes = try #require(readFile(fixturePath("heif/hostile/" + name)))
            let started = Instant.now
            let fd = temporaryFile(bytes)
            defer { fd.close() }
            // The gallery's renditions and the preview: both refuse before libheif decodes.
            let made = Thumbnailer.make(from: fd, type: .heic, sides: Thumbnailer.gallerySides)
            let preview = Thumbnailer.preview(from: fd, type: .heic)
            for t in [made, preview] {
                #expect(t.outcome == .failed(words), "\(name): \(t.outcome)")
                #expect(t.decodePath == nil && t.renditions.isEmpty)
            }
            #expect(Instant.now - started < .seconds(1), "\(name)")
        }
    }

    @Test(
        "a clap does not hide what is decoded: a 7500x7500 grid cropped to 64x64 is over the decoding budget, at once (issue 54, second image audit)"
    )
    func clapBudget() throws {
        let fd = temporaryFile(try #require(readFile(fixturePath("heif/hostile/clap-grid-7500.heic"))))
        defer { fd.close() }
        let started = Instant.now
        for t in [
            Thumbnailer.make(from: fd, type: .heic, sides: Thumbnailer.gallerySides),
            Thumbnailer.preview(from: fd, type: .heic),
        ] {
            #expect(t.outcome == .tooLarge("56.2 megapixels needs more than 256 MB to decode"), "\(t.outcome)")
            #expect(t.decodePath == nil && t.renditions.isEmpty)
            // The shown size is libheif's (after the clap).
            #expect(t.width == 64 && t.height == 64)
        }
        #expect(Instant.now - started < .seconds(1))
    }

    @Test(
        "what the second image audit declared twice, and a picture in 17 slice segments: no decode, the reason, at once (issue 54)"
    )
    func refusedBeforeDecoding() throws {
        for (name, words) in [
            ("ispe2-grid-7500.heic", "item 1 (the primary image) has 2 ispe properties (one is allowed)"),
            ("nal-zero.heic", "HEVC item 1 holds a NAL unit of 0 bytes, too short for its header"),
            ("iloc-twice.heic", "iloc places item 1 twice"),
            ("pictures-2.heic", "HEVC item 1 holds 2 pictures (an image is one)"),
            (
                "slices-17.heic",
                "HEVC item 1 is coded in 17 slice segments, over the 16 a thumbnail is decoded from (each may cost a decode of the whole picture)"
            ),
        ] {
            let fd = temporaryFile(try #require(readFile(fixturePath("heif/hostile/" + name))))
            defer { fd.close() }
            let started = Instant.now
            for t in [
                Thumbnailer.make(from: fd, type: .heic, sides: Thumbnailer.gallerySides),
                Thumbnailer.preview(from: fd, type: .heic),
            ] {
                #expect(t.outcome == .failed(words), "\(name): \(t.outcome)")
                #expect(t.decodePath == nil && t.renditions.isEmpty)
            }
            #expect(Instant.now - started < .seconds(1), "\(name)")
        }
    }

    @Test(
        "an irot of the thumbnail item alone does not cancel the primary's EXIF orientation 6: the thumbnail is upright (portrait)"
    )
    func primaryTurnOnly() throws {
        let bytes = try #require(readFile(fixturePath("heif/thumb-irot-exif6.heic")))
        let fd = temporaryFile(bytes)
        defer { fd.close() }
        for t in [
            Thumbnailer.make(from: fd, type: .heic, maxSide: 256),
            Thumbnailer.make(from: fd, type: .heic, sides: Thumbnailer.gallerySides),
            Thumbnailer.preview(from: fd, type: .heic),
        ] {
            #expect(t.outcome == .made)
            #expect(t.facts.orientation == 6, "\(t.facts)")
            // 800x600 pixels shown turned: taller than wide.
            #expect(t.thumbnailHeight > t.thumbnailWidth, "\(t.thumbnailWidth)x\(t.thumbnailHeight)")
            // The magenta item (turned otherwise) does not stand in for the primary.
            #expect(t.decodePath == "whole image")
        }
    }
}
