import CTestImages
import Foundation
import Glibc
import PTKSystem
import PTKTestSupport
import PTKTestTags
import Testing

@testable import PTKLibrary

/// An image as 8-bit RGBA.
struct RGBA: Equatable {
    var width: Int
    var height: Int
    var pixels: [UInt8]
}

/// Writes `bytes` to a temporary file and opens it.
func temporaryFile(_ bytes: [UInt8]) -> FileDescriptor {
    let dir = makeTemporaryDirectory("ptk-thumb")
    let path = dir + "/image.png"
    writeFile(path, bytes)
    let fd = try! FileDescriptor.open(path, flags: .readOnly)
    removeTree(dir)
    return fd
}

/// The whole image, decoded by libpng's own de-interlacing (png_read_png): independent of the
/// row-by-row code under test.
func decodeRGBA(_ bytes: [UInt8]) -> RGBA? {
    let fd = temporaryFile(bytes)
    defer { fd.close() }
    var w: UInt32 = 0
    var h: UInt32 = 0
    var pixels: UnsafeMutablePointer<UInt8>? = nil
    var message = [CChar](repeating: 0, count: 200)
    guard ptk_test_png_decode_rgba(fd.rawValue, 50_000_000, &w, &h, &pixels, &message) == 0, let pixels else {
        return nil
    }
    defer { free(pixels) }
    return RGBA(
        width: Int(w), height: Int(h), pixels: Array(UnsafeBufferPointer(start: pixels, count: Int(w) * Int(h) * 4)))
}

func thumbnail(_ bytes: [UInt8], maxSide: Int = 256, pixelLimit: UInt64 = Thumbnailer.defaultPixelLimit) -> Thumbnail {
    let fd = temporaryFile(bytes)
    defer { fd.close() }
    return Thumbnailer.make(from: fd, type: .png, maxSide: maxSide, pixelLimit: pixelLimit)
}

/// The size a thumbnail must have: the long side `maxSide` (never enlarged), the other in proportion, rounded.
func expectedSize(_ w: Int, _ h: Int, _ maxSide: Int) -> (Int, Int) {
    if w <= maxSide && h <= maxSide { return (w, h) }
    if w >= h { return (maxSide, max(1, Int((Double(h) * Double(maxSide) / Double(w)).rounded()))) }
    return (max(1, Int((Double(w) * Double(maxSide) / Double(h)).rounded())), maxSide)
}

/// sRGB's curve (IEC 61966-2-1), both ways, in doubles.
func srgbToLinear(_ v: Double) -> Double { v <= 0.04045 ? v / 12.92 : pow((v + 0.055) / 1.055, 2.4) }
func linearToSRGB(_ l: Double) -> Double { l <= 0.0031308 ? l * 12.92 : 1.055 * pow(l, 1 / 2.4) - 0.055 }

/// A PNG's chunks: each one's type and the range of its data in `png`.
func pngChunks(_ png: [UInt8]) -> [(type: String, data: Range<Int>)] {
    var chunks: [(String, Range<Int>)] = []
    var i = 8
    while i + 12 <= png.count {
        let length = Int(png[i]) << 24 | Int(png[i + 1]) << 16 | Int(png[i + 2]) << 8 | Int(png[i + 3])
        chunks.append((String(decoding: png[i + 4..<i + 8], as: UTF8.self), i + 8..<min(png.count, i + 8 + length)))
        i += 12 + length
    }
    return chunks
}

/// A PNG's gAMA value (100000 = 1.0), or nil.
func pngGamma(_ png: [UInt8]) -> Double? {
    guard let gama = pngChunks(png).first(where: { $0.type == "gAMA" }), gama.data.count == 4 else { return nil }
    return Double(png[gama.data].reduce(0) { $0 << 8 | Int($1) }) / 100_000
}

/// A box-filter downscale of `image` to tw x th in linear light, colour weighted by alpha,
/// written as sRGB: the reference the thumbnails are compared with. Each pixel counts for the
/// thumbnail pixel its centre falls in. `gamma` is the PNG's gAMA (sample = light^gamma; PNG's
/// rule); nil, or near 1/2.2, means sRGB's curve.
func referenceDownscale(_ image: RGBA, _ tw: Int, _ th: Int, gamma: Double? = nil) -> RGBA {
    let toLinear: [Double] = (0..<256).map { v in
        if let gamma, abs(gamma * 2.2 - 1) >= 0.05 { return pow(Double(v) / 255, 1 / gamma) }
        return srgbToLinear(Double(v) / 255)
    }
    var sums = [Double](repeating: 0, count: tw * th * 5)
    for y in 0..<image.height {
        let ty = (2 * y + 1) * th / (2 * image.height)
        for x in 0..<image.width {
            let tx = (2 * x + 1) * tw / (2 * image.width)
            let p = (y * image.width + x) * 4
            let a = Double(image.pixels[p + 3])
            let b = (ty * tw + tx) * 5
            sums[b] += a
            for c in 0..<3 { sums[b + 1 + c] += toLinear[Int(image.pixels[p + c])] * a }
            sums[b + 4] += 1
        }
    }
    var out = [UInt8](repeating: 0, count: tw * th * 4)
    for k in 0..<(tw * th) {
        let b = k * 5
        for c in 0..<3 {
            out[k * 4 + c] = sums[b] > 0 ? UInt8((linearToSRGB(sums[b + 1 + c] / sums[b]) * 255).rounded()) : 0
        }
        out[k * 4 + 3] = UInt8((sums[b] / max(1, sums[b + 4])).rounded())
    }
    return RGBA(width: tw, height: th, pixels: out)
}

/// The types of a PNG's chunks, in order.
func chunkTypes(_ png: [UInt8]) -> [String] { pngChunks(png).map(\.type) }

/// `png` without its chunks of type `type`.
func removingChunks(_ png: [UInt8], _ type: String) -> [UInt8] {
    Array(png[0..<8])
        + pngChunks(png).filter { $0.type != type }.flatMap {
            png[($0.data.lowerBound - 8)..<min(png.count, $0.data.upperBound + 4)]
        }
}

/// The largest difference of any channel of any pixel.
func maxDifference(_ a: RGBA, _ b: RGBA) -> Int {
    zip(a.pixels, b.pixels).map { abs(Int($0) - Int($1)) }.max() ?? 0
}

/// Whether a PNG's bytes have an alpha channel or a tRNS chunk.
func hasAlpha(_ png: [UInt8]) -> Bool {
    png[25] == 4 || png[25] == 6 || chunkTypes(png).contains("tRNS")
}

@Suite(.tags(.unit)) struct ThumbnailTests {
    @Test func everyPngSuiteImageMatchesAReferenceDownscale() throws {
        let images = pngSuiteImages()
        #expect(images.count == pngSuiteImageCount)
        for name in images {
            let bytes = try #require(readFile(pngSuiteDirectory() + "/" + name))
            let full = try #require(decodeRGBA(bytes), "\(name)")
            for maxSide in [256, 13, 5] {
                let t = thumbnail(bytes, maxSide: maxSide)
                #expect(t.outcome == .made, "\(name) at \(maxSide)")
                // The header, as IHDR has it.
                #expect(
                    t.width == Int(bytes[16]) << 24 | Int(bytes[17]) << 16 | Int(bytes[18]) << 8 | Int(bytes[19]),
                    "\(name)")
                #expect(t.bitDepth == Int(bytes[24]), "\(name)")
                #expect(t.colorType == Int(bytes[25]), "\(name)")
                #expect(t.interlace == Int(bytes[28]), "\(name)")
                let (tw, th) = expectedSize(full.width, full.height, maxSide)
                #expect([t.thumbnailWidth, t.thumbnailHeight] as [Int] == [tw, th], "\(name) at \(maxSide)")
                // An 8-bit PNG, RGBA when the photo has alpha (tRNS included), else RGB.
                #expect(t.png[24] == 8, "\(name)")
                #expect(t.png[25] == (hasAlpha(bytes) ? 6 : 2), "\(name)")
                let decoded = try #require(decodeRGBA(t.png), "\(name)")
                let reference = referenceDownscale(full, tw, th, gamma: pngGamma(bytes))
                #expect(maxDifference(decoded, reference) <= 1, "\(name) at \(maxSide)")
                // Written as sRGB, and saying so: an sRGB chunk.
                #expect(chunkTypes(t.png).contains("sRGB"), "\(name)")
            }
        }
    }

    @Test func interlacedImagesGiveTheSameThumbnailAsTheirPlainTwins() throws {
        var pairs = 0
        for name in pngSuiteImages() where name.hasPrefix("i") {
            // "ibasn2c08.png" is "basn2c08.png" with Adam7 (some other names start with i too).
            // The interlaced copies here carry no gAMA chunk; their plain twins' is left out too.
            guard
                let plain = readFile(pngSuiteDirectory() + "/" + name.dropFirst()).map({ removingChunks($0, "gAMA") }),
                let interlaced = readFile(pngSuiteDirectory() + "/" + name), interlaced[28] == 1
            else { continue }
            #expect(plain[28] == 0, "\(name)")
            for maxSide in [256, 7] {
                #expect(
                    decodeRGBA(thumbnail(interlaced, maxSide: maxSide).png)
                        == decodeRGBA(thumbnail(plain, maxSide: maxSide).png), "\(name)")
            }
            pairs += 1
        }
        #expect(pairs >= 9)
    }

    @Test func largerPhotosShrinkToTheLongSideWithTheirAspectAndAlpha() throws {
        for (w, h) in [(1000, 300), (300, 1000), (257, 256), (3, 2000), (2000, 1), (600, 600)] {
            let png = makeImagePNG(width: w, height: h, alpha: true) { x, y in
                [UInt8(x & 0xFF), UInt8(y & 0xFF), UInt8((x ^ y) & 0xFF), UInt8((x + y) % 256)]
            }
            let t = thumbnail(png)
            #expect(t.outcome == .made)
            let (tw, th) = expectedSize(w, h, 256)
            #expect([t.thumbnailWidth, t.thumbnailHeight] as [Int] == [tw, th], "\(w)x\(h)")
            #expect(max(tw, th) <= 256)
            #expect(t.png[25] == 6, "alpha kept")
            let decoded = try #require(decodeRGBA(t.png))
            #expect(maxDifference(decoded, referenceDownscale(try #require(decodeRGBA(png)), tw, th)) <= 1, "\(w)x\(h)")
        }
    }

    @Test func aPhotoOverThePixelLimitGetsNoThumbnailAndSaysWhy() {
        // A tiny file claiming 65535 x 65535: the header is read, nothing is decoded.
        let claim = assemblePNG(
            ihdr: ihdr(width: 65535, height: 65535, bitDepth: 8, colorType: 2), idat: zlibCompress([0, 0, 0, 0]))
        let started = Instant.now
        let t = thumbnail(claim)
        guard case .tooLarge(let why) = t.outcome else {
            Issue.record("\(t.outcome)")
            return
        }
        #expect(why.contains("4294.8 megapixels") && why.contains("200.0-megapixel limit"), "\(why)")
        #expect([t.width, t.height] as [Int] == [65535, 65535])
        #expect(t.png.isEmpty)
        #expect(Instant.now - started < .seconds(5))
        // The limit is a setting.
        let small = makeImagePNG(width: 100, height: 100) { _, _ in [1, 2, 3] }
        #expect(thumbnail(small, pixelLimit: 10_000).outcome == .made)
        guard case .tooLarge = thumbnail(small, pixelLimit: 9_999).outcome else {
            Issue.record("limit not applied")
            return
        }
    }

    /// Files whose chunks are well formed (CRCs right) but whose content is hostile: each gets
    /// an answer, fails with a reason where it cannot be decoded, and nothing crashes or hangs.
    @Test func hostileContentFailsWithAReasonOrDecodesBounded() {
        let header = ihdr(width: 64, height: 64, bitDepth: 8, colorType: 2)
        let row = [UInt8](repeating: 0, count: 64 * 3 + 1)
        let rows = Array([[UInt8]](repeating: row, count: 64).joined())
        var badFilter = rows
        badFilter[(64 * 3 + 1) * 10] = 7
        var random: UInt64 = 99
        let noise = (0..<4096).map { _ -> UInt8 in
            random ^= random << 13
            random ^= random >> 7
            random ^= random << 17
            return UInt8(truncatingIfNeeded: random)
        }
        var badCRC = assemblePNG(ihdr: header, idat: zlibCompress(rows))
        badCRC[badCRC.count - 12 - 1] ^= 0xFF  // the IDAT's CRC
        var badAdler = assemblePNG(ihdr: header, idat: zlibCompress(rows).dropLast(4) + [1, 2, 3, 4])
        let failing: [(String, [UInt8], String)] = [
            ("invalid zlib data", assemblePNG(ihdr: header, idat: [0x78, 0x9C] + noise), ""),
            ("a wrong filter byte", assemblePNG(ihdr: header, idat: zlibCompress(badFilter)), "filter"),
            (
                "too little image data",
                assemblePNG(ihdr: header, idat: zlibCompress(Array(rows.prefix(rows.count / 2)))), ""
            ),
            ("a bad CRC", badCRC, "CRC"),
            ("a bad zlib checksum", badAdler, "check"),
            ("a truncated file", Array(assemblePNG(ihdr: header, idat: zlibCompress(rows)).prefix(60)), ""),
            ("not a PNG", Array("GIF89a and then some bytes of no interest".utf8), "PNG"),
            ("an empty file", [], ""),
            (
                "bit depth 3",
                assemblePNG(
                    ihdr: ihdr(width: 4, height: 4, bitDepth: 3, colorType: 0), idat: zlibCompress([0, 0, 0, 0, 0])), ""
            ),
            (
                "a palette image without PLTE",
                assemblePNG(
                    ihdr: ihdr(width: 4, height: 4, bitDepth: 8, colorType: 3),
                    idat: zlibCompress([UInt8](repeating: 0, count: 20))), ""
            ),
            (
                "a zero width",
                assemblePNG(ihdr: ihdr(width: 0, height: 4, bitDepth: 8, colorType: 0), idat: zlibCompress([0])), ""
            ),
        ]
        for (what, png, hint) in failing {
            let t = thumbnail(png)
            guard case .failed(let why) = t.outcome else {
                Issue.record("\(what): \(t.outcome)")
                continue
            }
            #expect(!(why.isEmpty), "\(what)")
            if !hint.isEmpty { #expect(why.localizedCaseInsensitiveContains(hint), "\(what): \(why)") }
            #expect(t.png.isEmpty, "\(what)")
        }
        // Too much image data: the image is complete before it, and what follows is not read.
        let tooMuch = thumbnail(assemblePNG(ihdr: header, idat: zlibCompress(rows + rows)))
        #expect(tooMuch.outcome == .made)
        // A zlib bomb: 64 megapixels of zeros in a file of a few tens of kB. The work is bounded
        // by the pixel count (which the limit bounds), and the memory by a row.
        let bombRows = [UInt8](repeating: 0, count: (8000 + 1) * 8000)
        let bomb = assemblePNG(
            ihdr: ihdr(width: 8000, height: 8000, bitDepth: 8, colorType: 0), idat: zlibCompress(bombRows, level: 9))
        #expect(bomb.count < 200_000)
        let t = thumbnail(bomb)
        #expect(t.outcome == .made)
        #expect([t.thumbnailWidth, t.thumbnailHeight] as [Int] == [256, 256])
        // A compressed text chunk and an ICC profile that inflate to 64 MB are skipped unread.
        let zeros = zlibCompress([UInt8](repeating: 0, count: 64 << 20), level: 9)
        let chunkBombs = assemblePNG(
            ihdr: header, idat: zlibCompress(rows),
            before: [("zTXt", Array("Comment".utf8) + [0, 0] + zeros), ("iCCP", Array("icc".utf8) + [0, 0] + zeros)])
        #expect(thumbnail(chunkBombs).outcome == .made)
    }

    @Test func cancelStopsBeforeTheNextRow() {
        let png = makeImagePNG(width: 50, height: 50) { _, _ in [9, 9, 9] }
        let fd = temporaryFile(png)
        defer { fd.close() }
        var flag: Int32 = 1
        let t = withUnsafePointer(to: &flag) { Thumbnailer.make(from: fd, type: .png, cancel: $0) }
        #expect(t.outcome == .cancelled)
        #expect(t.width == 50)
    }
}
