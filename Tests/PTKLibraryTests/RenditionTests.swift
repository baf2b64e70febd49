import CTestImages
import Glibc
import PTKSystem
import PTKTestSupport
import PTKTestTags
import PTKVocabulary
import Testing

@testable import PTKLibrary

/// The renditions of `bytes` as a photo of `type` (issue 45): the gallery's, or a preview.
func renditions(
    of bytes: [UInt8], type: PhotoType, sides: [Int] = Thumbnailer.gallerySides, pngOnly: Bool = false,
    embedded: Bool = true, embeddedAtLeast: Int? = nil, cancel: Bool = false
) -> Thumbnail {
    let fd = temporaryFile(bytes)
    defer { fd.close() }
    var flag: Int32 = cancel ? 1 : 0
    return withUnsafePointer(to: &flag) {
        Thumbnailer.make(
            from: fd, type: type, sides: sides, pngOnly: pngOnly, embedded: embedded, embeddedAtLeast: embeddedAtLeast,
            cancel: $0)
    }
}

func preview(of bytes: [UInt8], type: PhotoType, maxSide: Int = Thumbnailer.previewSide) -> Thumbnail {
    let fd = temporaryFile(bytes)
    defer { fd.close() }
    return Thumbnailer.preview(from: fd, type: type, maxSide: maxSide)
}

/// A rendition decoded (a JPEG by libjpeg-turbo, a PNG by libpng's own de-interlacing), with
/// what a JPEG's header says: progressive, and its first component's sampling (22 is 4:2:0).
struct DecodedRendition {
    var image: RGBA
    var progressive = false
    var sampling = 0
}

func decode(_ r: Rendition) -> DecodedRendition? {
    if r.type == .png { return decodeRGBA(r.bytes).map { DecodedRendition(image: $0) } }
    var w: UInt32 = 0
    var h: UInt32 = 0
    var pixels: UnsafeMutablePointer<UInt8>?
    var progressive: Int32 = 0
    var sampling: Int32 = 0
    var message = [CChar](repeating: 0, count: 200)
    let status = r.bytes.withUnsafeBufferPointer {
        ptk_test_jpeg_decode_rgba($0.baseAddress, $0.count, &w, &h, &pixels, &progressive, &sampling, &message)
    }
    guard status == 0, let pixels else { return nil }
    defer { free(pixels) }
    return DecodedRendition(
        image: RGBA(
            width: Int(w), height: Int(h), pixels: Array(UnsafeBufferPointer(start: pixels, count: Int(w) * Int(h) * 4))
        ),
        progressive: progressive != 0, sampling: Int(sampling))
}

/// The mean of each of red, green and blue over the image.
func meanColour(_ image: RGBA) -> [Double] {
    var sums = [0.0, 0.0, 0.0]
    for i in stride(from: 0, to: image.pixels.count, by: 4) {
        for c in 0..<3 { sums[c] += Double(image.pixels[i + c]) }
    }
    return sums.map { $0 / Double(max(1, image.pixels.count / 4)) }
}

/// The fixtures' magenta: what an item that must not stand in for its primary image is made of.
func isMagenta(_ image: RGBA) -> Bool {
    let m = meanColour(image)
    return m[0] > 200 && m[1] < 60 && m[2] > 200
}

/// A JPEG of one flat colour (fast to make at any size).
func flatJPEG(width: Int, height: Int) -> [UInt8] {
    encodeJPEG(
        [UInt8](repeating: 128, count: width * height * 3), width: width, height: height, components: 3, quality: 50)
}

func heicFixture(_ name: String) throws -> [UInt8] { try #require(readFile(fixturePath("heif/" + name))) }

@Suite("Renditions: thumbnails and previews from one decode (issue 45)", .tags(.unit))
struct RenditionTests {
    @Test(
        "every side gets its rendition, in the order asked: aspect kept, never enlarged, at least 1x1",
        arguments: [
            (1200, 800, [180, 360], [[180, 120], [360, 240]]),
            (800, 1200, [360, 180], [[240, 360], [120, 180]]),
            (100, 60, [180, 360], [[100, 60], [100, 60]]),
            (3000, 2, [180, 360, 40], [[180, 1], [360, 1], [40, 1]]),
        ])
    func sizes(width: Int, height: Int, sides: [Int], expected: [[Int]]) throws {
        let png = makeImagePNG(width: width, height: height) { x, y in [UInt8(x & 255), UInt8(y & 255), 90] }
        let jpeg = makeJPEG(width: width, height: height, seed: 2)
        for (bytes, type) in [(png, PhotoType.png), (jpeg, .jpeg)] {
            let t = renditions(of: bytes, type: type, sides: sides)
            #expect(t.outcome == .made, "\(type)")
            #expect(t.renditions.map { [$0.width, $0.height] } == expected, "\(type)")
            for r in t.renditions {
                let d = try #require(decode(r))
                #expect(
                    [d.image.width, d.image.height] == [r.width, r.height], "\(type): the bytes are of the size said")
            }
            #expect([t.width, t.height] == [width, height])
            #expect(t.png.isEmpty, "the renditions are in renditions")
        }
    }

    @Test("an opaque photo's renditions are baseline 4:2:0 JPEGs of its colours, an opaque RGBA PNG's too")
    func opaqueGivesJPEG() throws {
        let rgb = makeImagePNG(width: 640, height: 480) { _, _ in [200, 40, 60] }
        let rgba = makeImagePNG(width: 640, height: 480, alpha: true) { _, _ in [200, 40, 60, 255] }
        for (name, bytes, type) in [
            ("RGB PNG", rgb, PhotoType.png), ("opaque RGBA PNG", rgba, .png),
            ("JPEG", twoColourJPEG(width: 640, height: 480, left: [200, 40, 60], right: [200, 40, 60]), .jpeg),
        ] {
            let t = renditions(of: bytes, type: type)
            #expect(t.renditions.map(\.type) == [.jpeg, .jpeg], "\(name)")
            #expect(!t.transparent, "\(name)")
            for r in t.renditions {
                let d = try #require(decode(r), "\(name)")
                #expect(!d.progressive && d.sampling == 22, "\(name): baseline 4:2:0")
                let m = meanColour(d.image)
                #expect(abs(m[0] - 200) < 4 && abs(m[1] - 40) < 4 && abs(m[2] - 60) < 4, "\(name): \(m)")
            }
        }
    }

    @Test("a photo with a transparent pixel (an alpha channel, or tRNS) gets PNG renditions, its alpha kept")
    func transparencyGivesPNG() throws {
        let alpha = makeImagePNG(width: 400, height: 300, alpha: true) { x, _ in [10, 200, 30, x < 200 ? 0 : 255] }
        // 8-bit RGB with tRNS: the colour (10, 200, 30) is transparent.
        var raw: [UInt8] = []
        for _ in 0..<300 {
            raw.append(0)
            for x in 0..<400 { raw += x < 200 ? [10, 200, 30] : [240, 240, 240] }
        }
        let trns = assemblePNG(
            ihdr: ihdr(width: 400, height: 300, bitDepth: 8, colorType: 2), idat: zlibCompress(raw),
            before: [("tRNS", [0, 10, 0, 200, 0, 30])])
        for (name, bytes) in [("alpha", alpha), ("tRNS", trns)] {
            let t = renditions(of: bytes, type: .png)
            #expect(t.renditions.map(\.type) == [.png, .png], "\(name)")
            #expect(t.transparent, "\(name): said, for the gallery's checkerboard")
            for r in t.renditions {
                let d = try #require(decode(r))
                #expect(d.image.pixels[3] == 0, "\(name): the left is transparent")
                #expect(d.image.pixels[d.image.pixels.count - 1] == 255, "\(name): the right is opaque")
            }
        }
    }

    /// The mean absolute difference per channel (red, green, blue) between `image` and `rgb`, in levels.
    static func levelDifference(_ image: RGBA, _ rgb: [UInt8]) -> Double {
        var sum = 0
        for i in 0..<(image.width * image.height) {
            for c in 0..<3 { sum += abs(Int(image.pixels[i * 4 + c]) - Int(rgb[i * 3 + c])) }
        }
        return Double(sum) / Double(max(1, image.width * image.height * 3))
    }

    @Test(
        "a PNG no larger than a thumbnail (a 32x32 palette icon) gets PNG renditions identical in pixels, where JPEG 4:2:0 smeared it by over 10 levels; a larger or JPEG one stays JPEG"
    )
    func smallPNGStaysLossless() throws {
        let icon = paletteIconPNG()
        let t = renditions(of: icon.png, type: .png)
        #expect(t.renditions.map(\.type) == [.png, .png])
        #expect(!t.transparent)
        for r in t.renditions {
            let d = try #require(decode(r))
            #expect([d.image.width, d.image.height] == [32, 32], "never enlarged")
            #expect(Self.levelDifference(d.image, icon.rgb) == 0, "identical in pixels")
        }
        // Before issue 58: the same pixels as a baseline 4:2:0 JPEG of quality 75, as the
        // thumbnailer made them (libjpeg-turbo's defaults are 4:2:0).
        let before = Rendition(
            bytes: encodeJPEG(icon.rgb, width: 32, height: 32, components: 3, quality: 75), width: 32, height: 32,
            type: .jpeg)
        let smeared = try #require(decode(before))
        #expect(smeared.sampling == 22)
        let difference = Self.levelDifference(smeared.image, icon.rgb)
        print("figure: a 32x32 palette PNG's thumbnail differs from it by \(difference) levels as JPEG 4:2:0, 0 as PNG")
        #expect(difference > 10)
        // At most 360 on both sides: PNG; one pixel more, JPEG. A small JPEG stays JPEG.
        let edge = renditions(
            of: makeImagePNG(width: 360, height: 200) { x, y in [UInt8(x & 255), UInt8(y), 9] }, type: .png)
        #expect(edge.renditions.map(\.type) == [.png, .png])
        #expect(edge.renditions.map { [$0.width, $0.height] } == [[180, 100], [360, 200]])
        let over = renditions(
            of: makeImagePNG(width: 361, height: 200) { x, y in [UInt8(x & 255), UInt8(y), 9] }, type: .png)
        #expect(over.renditions.map(\.type) == [.jpeg, .jpeg])
        #expect(
            renditions(of: makeJPEG(width: 32, height: 32, seed: 4), type: .jpeg).renditions.map(\.type) == [
                .jpeg, .jpeg,
            ])
    }

    @Test("pngOnly gives PNG renditions of an opaque photo (the .ptk package's thumbnail)")
    func pngOnly() throws {
        let t = renditions(of: makeJPEG(width: 900, height: 600, seed: 3), type: .jpeg, sides: [256], pngOnly: true)
        #expect(t.renditions.map(\.type) == [.png])
        #expect(t.renditions.map { [$0.width, $0.height] } == [[256, 171]])
        #expect(t.renditions.first.flatMap { decode($0) } != nil)
    }

    @Test("a JPEG is decoded at the smallest scale M/8 that still has the largest side asked for")
    func jpegScale() {
        let big = flatJPEG(width: 4032, height: 3024)
        #expect(renditions(of: big, type: .jpeg).decodePath == "JPEG scaled 1/8", "504x378 has 360")
        #expect(
            renditions(of: big, type: .jpeg, sides: [180, 600]).decodePath == "JPEG scaled 2/8", "1008x756 has 600")
        #expect(preview(of: big, type: .jpeg).decodePath == "JPEG scaled 3/8", "1512x1134 has 1440")
        let small = flatJPEG(width: 400, height: 300)
        #expect(renditions(of: small, type: .jpeg).decodePath == "whole image", "360 needs 8/8 of 400")
        #expect(renditions(of: makePNG(size: 100), type: .png).decodePath == "whole image")
        let t = renditions(of: big, type: .jpeg)
        #expect(t.renditions.map { [$0.width, $0.height] } == [[180, 135], [360, 270]])
    }

    @Test(
        "a HEIC's thumbnail item of the same aspect and turn, at least the largest side, stands in for the whole image")
    func heifItemUsed() throws {
        let item = try heicFixture("thumb-item.heic")
        let fast = renditions(of: item, type: .heic)
        #expect(fast.outcome == .made)
        #expect(fast.decodePath == "HEIF thumbnail item 400x300")
        #expect([fast.width, fast.height] == [800, 600], "the header is the primary image's")
        #expect(fast.renditions.map { [$0.width, $0.height] } == [[180, 135], [360, 270]])
        let whole = renditions(of: item, type: .heic, embedded: false)
        #expect(whole.decodePath == "whole image")
        for (a, b) in zip(fast.renditions, whole.renditions) {
            let da = try #require(decode(a))
            let db = try #require(decode(b))
            #expect(meanDifference(da.image, db.image).allSatisfy { $0 <= 3 }, "the item shows the same picture")
        }
        #expect(
            renditions(of: item, type: .heic, sides: [180, 500]).decodePath == "whole image", "400 is less than 500")
        #expect(preview(of: item, type: .heic).decodePath == "whole image", "a preview always decodes the whole image")
        // Both turned 180 degrees by irot: the item stands in, and is turned too.
        let turned = renditions(of: try heicFixture("thumb-both-turned.heic"), type: .heic)
        #expect(turned.decodePath == "HEIF thumbnail item 400x300")
        let d = try #require(turned.renditions.last.flatMap { decode($0)?.image })
        #expect(
            near(d.pixels[0..<3], [229, 219, 60], within: 8),
            "the top left shows the stored bottom right: \(d.pixels[0..<3])")
    }

    @Test(
        "with the bar lowered, an item of at least that side makes every rendition, those larger than it at its own size; the preview's decode makes thumbnails too"
    )
    func heifItemBelowTheLargestSide() throws {
        let item = try heicFixture("thumb-item.heic")  // 800x600, a 400x300 item
        let lowered = renditions(of: item, type: .heic, sides: [180, 600], embeddedAtLeast: 180)
        #expect(lowered.decodePath == "HEIF thumbnail item 400x300")
        let sizes = lowered.renditions.compactMap { decode($0).map { [$0.image.width, $0.image.height] } }
        #expect(sizes == [[180, 135], [400, 300]], "never enlarged past the item: \(sizes)")
        #expect(
            renditions(of: item, type: .heic, sides: [180, 600]).decodePath == "whole image",
            "without it, 400 is less than 600")
        // An item under the lowered bar is not used, and a wrong one never is.
        for name in ["thumb-small.heic", "thumb-square.heic", "thumb-turned.heic"] {
            let t = renditions(of: try heicFixture(name), type: .heic, embeddedAtLeast: 180)
            #expect(t.decodePath == "whole image", "\(name)")
        }
        // The preview with a gallery side from the same decode: the preview progressive at
        // 80, the thumbnail baseline, both of the whole image.
        let fd = temporaryFile(item)
        defer { fd.close() }
        let both = Thumbnailer.preview(from: fd, type: .heic, alsoSides: [360])
        #expect(both.decodePath == "whole image")
        #expect(both.renditions.map { [$0.width, $0.height] } == [[800, 600], [360, 270]])
        let preview = try #require(both.renditions.first.flatMap(decode))
        let thumbnail = try #require(both.renditions.last.flatMap(decode))
        #expect(preview.progressive && !thumbnail.progressive)
    }

    @Test(
        "an item that cannot be decoded, claims to be larger than the photo, or whose properties take too long to compare: the whole image instead"
    )
    func heifItemFailingFallsBack() throws {
        for name in ["thumb-data-garbage.heic", "thumb-ispe-60000x45000.heic", "ipco-walk16.heic"] {
            let bytes = try heicFixture("hostile/" + name)
            var usage = rusage()
            getrusage(RUSAGE_SELF.rawValue, &usage)
            let before = Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
            let t = renditions(of: bytes, type: .heic, embeddedAtLeast: 180)
            getrusage(RUSAGE_SELF.rawValue, &usage)
            let cpu = Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6 - before
            #expect(t.outcome == .made, "\(name): \(t.problem ?? "")")
            #expect(t.decodePath == "whole image", "\(name)")
            #expect(t.renditions.map { [$0.width, $0.height] } == [[180, 135], [360, 270]], "\(name)")
            // 8 million property reads took 7 to 13 s before the budget; the whole image's
            // decode is a few hundred ms in a debug build.
            #expect(cpu < 3, "\(name): \(cpu) s of CPU")
        }
    }

    @Test("a HEIC without an item, with one too small, of another aspect or turned otherwise decodes the whole image")
    func heifItemNotUsed() throws {
        for name in ["picture.heic", "thumb-small.heic", "thumb-square.heic", "thumb-turned.heic"] {
            let t = renditions(of: try heicFixture(name), type: .heic)
            #expect(t.outcome == .made, "\(name)")
            #expect(t.decodePath == "whole image", "\(name)")
            for r in t.renditions {
                let image = try #require(decode(r)?.image)
                #expect(!isMagenta(image), "\(name): not made from the item")
            }
        }
        // thumb-turned's primary is turned 180 degrees: its renditions are.
        let turned = renditions(of: try heicFixture("thumb-turned.heic"), type: .heic)
        let d = try #require(turned.renditions.last.flatMap { decode($0)?.image })
        #expect([d.width, d.height] == [360, 270])
        #expect(near(d.pixels[0..<3], [229, 219, 60], within: 8), "\(d.pixels[0..<3])")
        // The small item stands in for a side it has (the fixture's magenta shows it was used).
        let small = renditions(of: try heicFixture("thumb-small.heic"), type: .heic, sides: [120])
        #expect(small.decodePath == "HEIF thumbnail item 160x120")
        let smallImage = try #require(small.renditions.first.flatMap { decode($0)?.image })
        #expect(isMagenta(smallImage))
    }

    @Test(
        "a preview is at most 1440 on its long side, never enlarged, a progressive 4:2:0 JPEG; PNG for a transparent photo"
    )
    func previews() throws {
        let jpeg = makeJPEG(width: 2000, height: 1500, seed: 8)
        let p = preview(of: jpeg, type: .jpeg)
        #expect(p.outcome == .made)
        #expect(p.renditions.map { [$0.width, $0.height] } == [[1440, 1080]])
        let d = try #require(p.renditions.first.flatMap { decode($0) })
        #expect(d.progressive && d.sampling == 22)
        #expect([d.image.width, d.image.height] == [1440, 1080])
        let small = preview(of: makeJPEG(width: 800, height: 600, seed: 9), type: .jpeg)
        #expect(small.renditions.map { [$0.width, $0.height] } == [[800, 600]])
        #expect(small.decodePath == "whole image")
        let heic = preview(of: try heicFixture("picture.heic"), type: .heic)
        #expect(heic.renditions.map { [$0.width, $0.height, $0.type == .jpeg ? 1 : 0] } == [[300, 200, 1]])
        let alpha = makeImagePNG(width: 1600, height: 100, alpha: true) { x, _ in [10, 200, 30, UInt8(x & 255)] }
        let pa = preview(of: alpha, type: .png)
        #expect(pa.renditions.map { [$0.width, $0.height] } == [[1440, 90]])
        #expect(pa.renditions.map(\.type) == [.png])
        // Turned as shown: a landscape JPEG with EXIF orientation 6 gives a portrait preview.
        let turned = preview(
            of: jpegWithEXIF(makeJPEG(width: 2000, height: 1000, seed: 10), exifTIFF(EXIFFields(orientation: 6))),
            type: .jpeg)
        #expect(turned.renditions.map { [$0.width, $0.height] } == [[720, 1440]])
    }

    @Test("an interlaced PNG's renditions (its passes revisit rows) equal its plain twin's")
    func interlaced() throws {
        for (plain, interlaced) in [("basn2c08.png", "ibasn2c08.png"), ("basn6a08.png", "ibasn6a08.png")] {
            // The interlaced copies here carry no gAMA chunk; their plain twins' is left out too.
            let plainBytes = removingChunks(try #require(readFile(pngSuiteDirectory() + "/" + plain)), "gAMA")
            let a = renditions(of: plainBytes, type: .png, sides: [20, 7, 32], pngOnly: true)
            let b = renditions(
                of: try #require(readFile(pngSuiteDirectory() + "/" + interlaced)), type: .png, sides: [20, 7, 32],
                pngOnly: true)
            let plainImages = a.renditions.compactMap { decode($0)?.image }
            let interlacedImages = b.renditions.compactMap { decode($0)?.image }
            #expect(
                plainImages.count == 3 && plainImages.map { [$0.width, $0.height] } == [[20, 20], [7, 7], [32, 32]])
            #expect(plainImages == interlacedImages, "\(plain)")
        }
    }

    @Test("cancel stops every kind; asking for no side or too many fails with the reason; junk fails, bounded")
    func cancelAndRefusals() throws {
        let kinds: [([UInt8], PhotoType)] = [
            (makeImagePNG(width: 64, height: 64) { _, _ in [1, 2, 3] }, .png),
            (makeJPEG(width: 64, height: 64), .jpeg), (try heicFixture("thumb-item.heic"), .heic),
        ]
        for (bytes, type) in kinds {
            #expect(renditions(of: bytes, type: type, cancel: true).outcome == .cancelled, "\(type)")
            #expect(
                renditions(of: bytes, type: type, sides: []).outcome
                    == .failed("0 sizes asked for; 1 to 3 can be made at once"))
            #expect(
                renditions(of: bytes, type: type, sides: [1, 2, 3, 4]).outcome
                    == .failed("4 sizes asked for; 1 to 3 can be made at once"))
            let junk = renditions(
                of: Array(bytes.prefix(bytes.count / 3)) + [UInt8](repeating: 0xAB, count: 500), type: type)
            #expect(junk.problem != nil && junk.renditions.isEmpty, "\(type): \(junk.outcome)")
            #expect(preview(of: [UInt8](repeating: 7, count: 300), type: type).renditions.isEmpty)
        }
    }
}
