import Foundation
import Glibc
import PTKDigest
import PTKStore
import PTKSystem
import PTKTestSupport
import PTKTestTags
import PTKVocabulary
import Testing

@testable import PTKLibrary

/// Where a stored corner (top or bottom row, left or right column) is shown under an EXIF
/// orientation, as the EXIF specification words it: which side the stored row 0 is shown on,
/// and which the stored column 0.
private func shownCorner(orientation: Int, bottomRow: Bool, rightColumn: Bool) -> (bottom: Bool, right: Bool) {
    // (row 0 shown at, column 0 shown at): 1 top/left, 2 top/right, 3 bottom/right, 4 bottom/left,
    // 5 left/top, 6 right/top, 7 right/bottom, 8 left/bottom.
    let table: [Int: (String, String)] = [
        1: ("top", "left"), 2: ("top", "right"), 3: ("bottom", "right"), 4: ("bottom", "left"),
        5: ("left", "top"), 6: ("right", "top"), 7: ("right", "bottom"), 8: ("left", "bottom"),
    ]
    let (row0, column0) = table[orientation]!
    // The stored row's side is row 0's side or its opposite; the same for the column.
    func opposite(_ side: String) -> String {
        ["top": "bottom", "bottom": "top", "left": "right", "right": "left"][side]!
    }
    let rowSide = bottomRow ? opposite(row0) : row0
    let columnSide = rightColumn ? opposite(column0) : column0
    let sides = [rowSide, columnSide]
    return (sides.contains("bottom"), sides.contains("right"))
}

/// An image of four quadrants, each its own colour: stored top-left red, top-right green,
/// bottom-left blue, bottom-right white.
private let quadrantColours: [[UInt8]] = [[230, 20, 20], [20, 200, 30], [20, 40, 230], [250, 250, 250]]
private func quadrant(_ x: Int, _ y: Int, _ w: Int, _ h: Int) -> [UInt8] {
    quadrantColours[(y < h / 2 ? 0 : 2) + (x < w / 2 ? 0 : 1)]
}

private func pngThumbnail(_ bytes: [UInt8]) -> Thumbnail {
    let fd = temporaryFile(bytes)
    defer { fd.close() }
    return Thumbnailer.make(from: fd, type: .png)
}

@Suite("EXIF: orientation, the day taken, the camera (issue 27)", .tags(.unit))
struct PhotoFactsTests {
    @Test(
        "every EXIF orientation turns the thumbnail as the specification says, for a JPEG (APP1) and a PNG (eXIf, before or after the image data)",
        arguments: 1...8)
    func orientations(orientation: Int) throws {
        let (w, h) = (64, 32)
        var pixels: [UInt8] = []
        for y in 0..<h { for x in 0..<w { pixels += quadrant(x, y, w, h) } }
        let tiff = exifTIFF(EXIFFields(orientation: UInt16(orientation)))
        let jpeg = jpegWithEXIF(encodeJPEG(pixels, width: w, height: h, components: 3, quality: 95), tiff)
        let png = assemblePNG(
            ihdr: ihdr(width: UInt32(w), height: UInt32(h), bitDepth: 8, colorType: 2),
            idat: zlibCompress((0..<h).flatMap { y in [0] + (0..<w).flatMap { quadrant($0, y, w, h) } }),
            before: [("eXIf", tiff)])
        // The same PNG with its eXIf after IDAT, and a tIME before it that the EXIF's date replaces.
        let late = assemblePNG(
            ihdr: ihdr(width: UInt32(w), height: UInt32(h), bitDepth: 8, colorType: 2),
            idat: zlibCompress((0..<h).flatMap { y in [0] + (0..<w).flatMap { quadrant($0, y, w, h) } }),
            before: [("tIME", [0x07, 0xD0, 1, 1, 0, 0, 0])])
        var after = Array(late.dropLast(12))
        appendChunk(
            "eXIf", exifTIFF(EXIFFields(orientation: UInt16(orientation), taken: "2024:07:03 14:22:05")), to: &after)
        appendChunk("IEND", [], to: &after)
        #expect(pngThumbnail(after).facts.taken == "2024-07-03T14:22:05")
        for t in [jpegThumbnail(jpeg), pngThumbnail(png), pngThumbnail(after)] {
            #expect(t.outcome == .made)
            #expect(t.facts.orientation == orientation)
            #expect(t.width == w && t.height == h, "the stored size")
            let turned = orientation >= 5
            #expect(t.thumbnailWidth == (turned ? h : w) && t.thumbnailHeight == (turned ? w : h))
            let image = try #require(decodeRGBA(t.png))
            for (i, colour) in quadrantColours.enumerated() {
                let at = shownCorner(orientation: orientation, bottomRow: i >= 2, rightColumn: i % 2 == 1)
                let x = at.right ? image.width - 3 : 2
                let y = at.bottom ? image.height - 3 : 2
                let p = image.pixels[(y * image.width + x) * 4..<(y * image.width + x) * 4 + 3]
                #expect(
                    near(p, colour, within: 12),
                    "orientation \(orientation): stored corner \(i) shown at \(at) is \(Array(p))")
            }
        }
    }

    @Test("DateTimeOriginal with OffsetTimeOriginal and SubSecTimeOriginal, the camera and whether there is a location")
    func takenAndCamera() {
        let tiff = exifTIFF(
            EXIFFields(
                orientation: 1, taken: "2024:07:03 14:22:05", offset: "+02:00", subsec: "12",
                make: "Apple  ", model: "iPhone 15 Pro", gps: true))
        let t = jpegThumbnail(jpegWithEXIF(makeJPEG(width: 40, height: 30), tiff))
        #expect(t.facts.taken == "2024-07-03T14:22:05.12+02:00")
        #expect(t.facts.takenTime == WallTime(iso8601: "2024-07-03T12:22:05.120Z"))
        #expect(t.facts.make == "Apple" && t.facts.model == "iPhone 15 Pro")
        #expect(t.facts.hasLocation)
        let bare = jpegThumbnail(
            jpegWithEXIF(makeJPEG(width: 40, height: 30), exifTIFF(EXIFFields(taken: "2023:12:31 23:59:59"))))
        #expect(bare.facts.taken == "2023-12-31T23:59:59" && !bare.facts.hasLocation && bare.facts.orientation == nil)
        for unset in [
            "0000:00:00 00:00:00", "    :  :     :  :  ", "2024:13:01 00:00:00", "2023:02:29 10:00:00",
            "2024:04:31 10:00:00", "yesterday",
        ] {
            #expect(
                jpegThumbnail(jpegWithEXIF(makeJPEG(width: 8, height: 8), exifTIFF(EXIFFields(taken: unset)))).facts
                    .taken == nil, "\(unset)")
        }
        #expect(jpegThumbnail(makeJPEG(width: 8, height: 8)).facts == PhotoFacts())
    }

    @Test("a PNG without EXIF: its tIME chunk, else a Creation Time text in ISO 8601 or RFC 1123")
    func pngTimes() {
        let idat = zlibCompress([0, 1, 2, 3])
        let header = ihdr(width: 1, height: 1, bitDepth: 8, colorType: 2)
        let time: [UInt8] = [0x07, 0xE8, 7, 3, 14, 22, 5]  // 2024-07-03 14:22:05 UTC
        #expect(
            pngThumbnail(assemblePNG(ihdr: header, idat: idat, before: [("tIME", time)])).facts.taken
                == "2024-07-03T14:22:05Z")
        let text = Array("Creation Time".utf8) + [0] + Array("2024-07-03T14:22:05+02:00".utf8)
        #expect(
            pngThumbnail(assemblePNG(ihdr: header, idat: idat, before: [("tEXt", text)])).facts.taken
                == "2024-07-03T14:22:05+02:00")
        let rfc = Array("Creation Time".utf8) + [0] + Array("Wed, 3 Jul 2024 14:22:05 GMT".utf8)
        #expect(
            pngThumbnail(assemblePNG(ihdr: header, idat: idat, before: [("tEXt", rfc)])).facts.taken
                == "2024-07-03T14:22:05Z")
        let cases: [(String, String?)] = [
            ("3 Jul 2024 14:22 +0200", "2024-07-03T14:22:00+02:00"),
            ("Wed, 03 JUL 2024 14:22:05 UT", "2024-07-03T14:22:05Z"),
            ("Wed, 31 Feb 2024 14:22:05 GMT", nil), ("Wed, 3 Jul 2024 24:22:05 GMT", nil),
            ("Wed, 3 Jly 2024 14:22:05 GMT", nil),
            ("3 Jul 24 14:22:05 GMT", nil), ("3 Jul 2024 14:22:05 EST", nil), ("3 Jul 2024 14:2:05 GMT", nil),
            ("", nil),
        ]
        for (text, iso) in cases { #expect(PhotoFacts.rfc1123Date(text) == iso, "\(text)") }
        let junk = Array("Creation Time".utf8) + [0] + Array("last summer".utf8)
        #expect(
            pngThumbnail(assemblePNG(ihdr: header, idat: idat, before: [("tEXt", junk)])).facts.taken == nil,
            "neither: left out")
    }

    @Test(
        "hostile EXIF never crashes and never fails the photo: an IFD that points at itself, counts past the end, a 64 KB maker note, over the size limit, junk"
    )
    func hostile() {
        let jpeg = makeJPEG(width: 16, height: 16)
        var loop = exifTIFF(EXIFFields(orientation: 6))
        // IFD0's "next IFD" pointer (after its one entry) points back at IFD0.
        loop.replaceSubrange(22..<26, with: [8, 0, 0, 0])
        var pastEnd = exifTIFF(EXIFFields(make: "a very long make that needs data"))
        pastEnd.replaceSubrange(14..<18, with: [0xFF, 0xFF, 0xFF, 0x7F])  // count of the Make entry
        var makerNote: [UInt8] = [
            0x49, 0x49, 0x2A, 0, 8, 0, 0, 0, 1, 0, 0x7C, 0x92, 7, 0, 0x00, 0xFF, 0, 0, 26, 0, 0, 0, 0, 0, 0, 0,
        ]
        makerNote += [UInt8](repeating: 0xAB, count: 65_280)
        for tiff in [loop, pastEnd, makerNote, [UInt8](repeating: 0xFF, count: 300), Array("II*\0".utf8)] {
            let t = jpegThumbnail(jpegWithEXIF(jpeg, Array(tiff.prefix(65_500))))
            #expect(t.outcome == .made, "\(t.outcome)")
        }
        #expect(jpegThumbnail(jpegWithEXIF(jpeg, loop)).facts.orientation == 6, "the entry before the loop is read")
        let junk = jpegThumbnail(jpegWithEXIF(jpeg, [UInt8](repeating: 0xFF, count: 300)))
        #expect(junk.facts.problem?.contains("does not parse") == true, "\(junk.facts)")
        let big = assemblePNG(
            ihdr: ihdr(width: 1, height: 1, bitDepth: 8, colorType: 2), idat: zlibCompress([0, 1, 2, 3]),
            before: [("eXIf", exifTIFF(EXIFFields(orientation: 6)) + [UInt8](repeating: 0, count: 70_000))])
        let t = pngThumbnail(big)
        #expect(t.outcome == .made && t.facts.orientation == nil)
        #expect(t.facts.problem?.contains("over the 65536-byte limit") == true, "\(t.facts)")
    }

    @Test(
        "the library records the size as shown beside the stored one, the day taken and the camera; list sorts by taken"
    )
    func library() throws {
        let f = Fixture()
        let portrait = jpegWithEXIF(
            makeJPEG(width: 400, height: 200),
            exifTIFF(EXIFFields(orientation: 6, taken: "2024:07:03 14:22:05", make: "Canon", model: "EOS", gps: true)))
        let older = jpegWithEXIF(
            makeJPEG(width: 40, height: 30, seed: 2), exifTIFF(EXIFFields(taken: "2019:01:02 03:04:05")))
        try f.receive("portrait.jpg", portrait)
        try f.receive("older.jpg", older)
        try f.receive("plain.png", photoBytes(1))
        let p = try f.library.find("portrait")
        #expect(p.dimensions == "200x400" && p.storedDimensions == "400x200" && p.orientation == 6)
        #expect(p.taken == "2024-07-03T14:22:05" && p.takenMinutes == "2024-07-03 14:22" && p.day == "2024-07-03")
        #expect(p.cameraMake == "Canon" && p.cameraModel == "EOS" && p.hasLocation == true)
        let m = PhotoMetadata(p)
        #expect(
            m.displayWidth == 200 && m.displayHeight == 400 && m.width == 400 && m.hasLocation == true
                && m.taken == p.taken)
        #expect(try f.library.find("plain").taken == nil && f.library.find("plain").hasLocation == false)
        // By taken: 2019, then the one that does not say (received 2023-11-14, as Fixture records it), then 2024.
        #expect(try f.library.all(sort: .taken).map(\.name) == ["older.jpg", "plain.png", "portrait.jpg"])
        let bytes = try #require(try f.library.thumbnail(of: p))
        #expect(renditionSize(bytes) == [180, 360], "shown upright")
    }
}
