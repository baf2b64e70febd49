import PTKStore
import PTKSystem
import PTKTestSupport
import PTKVocabulary
import Testing
@testable import PTKLibrary

@Suite("HEIF thumbnails: hostile declared sizes, and the primary's own turn (issue 54)")
struct HEIFFindingsTests {
    @Test("an irot of the thumbnail item alone does not cancel the primary's EXIF orientation 6: the thumbnail is upright (portrait)")
    func primaryTurnOnly() throws {
        let bytes = try #require(readFile(fixturePath("heif/thumb-irot-exif6.heic")))
        let fd = temporaryFile(bytes)
        defer { fd.close() }
        for t in [Thumbnailer.make(from: fd, type: .heic, maxSide: 256), Thumbnailer.make(from: fd, type: .heic, sides: Thumbnailer.gallerySides),
                  Thumbnailer.preview(from: fd, type: .heic)] {
            #expect(t.outcome == .made)
            #expect(t.facts.orientation == 6, "\(t.facts)")
            // 800x600 pixels shown turned: taller than wide.
            #expect(t.thumbnailHeight > t.thumbnailWidth, "\(t.thumbnailWidth)x\(t.thumbnailHeight)")
            // The magenta item (turned otherwise) does not stand in for the primary.
            #expect(t.decodePath == "whole image")
        }
    }
}
