import Foundation
import Glibc
import PTKDigest
import PTKStore
import PTKSystem
import PTKTestSupport
import PTKTestTags
import Testing

@testable import PTKLibrary

func jpegThumbnail(_ bytes: [UInt8], maxSide: Int = 256, pixelLimit: UInt64 = Thumbnailer.defaultPixelLimit)
    -> Thumbnail
{
    let fd = temporaryFile(bytes)
    defer { fd.close() }
    return Thumbnailer.make(from: fd, type: .jpeg, maxSide: maxSide, pixelLimit: pixelLimit)
}

/// A JPEG whose left half is one colour and right half another.
func twoColourJPEG(width: Int, height: Int, left: [UInt8], right: [UInt8], progressive: Bool = false) -> [UInt8] {
    var pixels = [UInt8](repeating: 0, count: width * height * 3)
    for y in 0..<height {
        for x in 0..<width {
            let c = x < width / 2 ? left : right
            for i in 0..<3 { pixels[(y * width + x) * 3 + i] = c[i] }
        }
    }
    return encodeJPEG(pixels, width: width, height: height, components: 3, quality: 95, progressive: progressive)
}

/// A grey progressive JPEG of `scans` AC scans over every block, each coded as end-of-band runs
/// of 32767 blocks (15 bits a run); every scan after the first is a refinement scan, which
/// libjpeg-turbo decodes by visiting each coefficient of each block. (The audit's
/// make_jpeg_scans.py; no DC scan, which libjpeg only warns about.)
func refinementScans(width: Int, height: Int, scans: Int) -> [UInt8] {
    func segment(_ marker: UInt8, _ body: [UInt8]) -> [UInt8] {
        [0xFF, marker, UInt8((body.count + 2) >> 8), UInt8((body.count + 2) & 0xFF)] + body
    }
    let blocks = ((width + 7) / 8) * ((height + 7) / 8)
    var out: [UInt8] = [0xFF, 0xD8]
    out += segment(0xDB, [0] + [UInt8](repeating: 1, count: 64))
    out += segment(
        0xC2, [8, UInt8(height >> 8), UInt8(height & 0xFF), UInt8(width >> 8), UInt8(width & 0xFF), 1, 1, 0x11, 0])
    // AC table 0: one code of one bit, for 0xE0 (EOB14: a run of 2^14 plus 14 more bits).
    out += segment(0xC4, [0x10, 1] + [UInt8](repeating: 0, count: 15) + [0xE0])
    var bits: [Bool] = []
    for _ in 0..<((blocks + 32766) / 32767) { bits += [false] + (0..<14).map { _ in true } }
    while bits.count % 8 != 0 { bits.append(true) }
    var data: [UInt8] = []
    for i in stride(from: 0, to: bits.count, by: 8) {
        let byte = bits[i..<(i + 8)].reduce(UInt8(0)) { $0 << 1 | ($1 ? 1 : 0) }
        data.append(byte)
        if byte == 0xFF { data.append(0) }
    }
    for k in 0..<scans { out += segment(0xDA, [1, 1, 0x00, 1, 63, k == 0 ? 0 : 0x10]) + data }
    return out + [0xFF, 0xD9]
}

func near(_ a: ArraySlice<UInt8>, _ b: [UInt8], within tolerance: Int = 6) -> Bool {
    zip(a, b).allSatisfy { abs(Int($0) - Int($1)) <= tolerance }
}

@Suite(.tags(.unit)) struct JPEGThumbnailTests {
    @Test(
        "a JPEG's thumbnail has the right size and colours, baseline or progressive, at every decode scale",
        arguments: [
            (2000, 1000, false), (2000, 1000, true), (600, 900, false), (300, 200, true), (100, 60, false),
        ])
    func sizesAndColours(width: Int, height: Int, progressive: Bool) throws {
        let red: [UInt8] = [220, 30, 40]
        let blue: [UInt8] = [20, 60, 230]
        let jpeg = twoColourJPEG(width: width, height: height, left: red, right: blue, progressive: progressive)
        let t = jpegThumbnail(jpeg)
        #expect(t.outcome == .made)
        #expect(
            t.width == width && t.height == height && t.bitDepth == 8 && t.colorType == 2
                && t.interlace == (progressive ? 1 : 0))
        let (tw, th) = expectedSize(width, height, 256)
        #expect(t.thumbnailWidth == tw && t.thumbnailHeight == th)
        let image = try #require(decodeRGBA(t.png))
        #expect(image.width == tw && image.height == th)
        let row = th / 2
        let leftPixel = image.pixels[(row * tw + 1) * 4..<(row * tw + 1) * 4 + 3]
        let rightPixel = image.pixels[(row * tw + tw - 2) * 4..<(row * tw + tw - 2) * 4 + 3]
        #expect(near(leftPixel, red), "left \(Array(leftPixel))")
        #expect(near(rightPixel, blue), "right \(Array(rightPixel))")
    }

    @Test("a greyscale JPEG gives a grey RGB thumbnail and says it is greyscale")
    func greyscale() throws {
        let jpeg = encodeJPEG([UInt8](repeating: 77, count: 120 * 80), width: 120, height: 80, components: 1)
        let t = jpegThumbnail(jpeg)
        #expect(t.outcome == .made)
        #expect(t.colorType == 0)
        let image = try #require(decodeRGBA(t.png))
        #expect(near(image.pixels[0..<3], [77, 77, 77], within: 2))
    }

    @Test("a truncated JPEG, a PNG and junk are not decodable, with the reason; nothing is printed")
    func failures() {
        let jpeg = makeJPEG(width: 200, height: 100, seed: 4)
        let cut = jpegThumbnail(Array(jpeg[..<(jpeg.count / 2)]))
        #expect(cut.outcome == .failed("the file ends before the image data does"))
        #expect(cut.width == 200, "the header was read")
        let png = jpegThumbnail(makeImagePNG(width: 4, height: 4) { _, _ in [1, 2, 3] })
        guard case .failed(let why) = png.outcome else {
            Issue.record("decoded a PNG as a JPEG")
            return
        }
        #expect(why.contains("Not a JPEG file"), "\(why)")
        guard case .failed = jpegThumbnail([0xFF, 0xD8, 0xFF]).outcome else {
            Issue.record("decoded three bytes")
            return
        }
    }

    @Test("over the pixel limit: the header is read, no thumbnail is made")
    func pixelLimit() {
        let t = jpegThumbnail(makeJPEG(width: 400, height: 300), pixelLimit: 100_000)
        guard case .tooLarge(let why) = t.outcome else {
            Issue.record("made a thumbnail over the limit")
            return
        }
        #expect(why.contains("megapixel"))
        #expect(t.width == 400 && t.height == 300)
    }

    @Test(
        "a progressive JPEG of refinement scans within the 1000-scan limit is refused once its scans pass over the image 16 times, quickly (issue 54, second image audit F3)"
    )
    func refinementScanBomb() {
        // 1000 scans of a 6144x6144 grey image took 42 s; 200 of a 1024x1024 one show the shape.
        let jpeg = refinementScans(width: 1024, height: 1024, scans: 200)
        let start = ContinuousClock.now
        let t = jpegThumbnail(jpeg)
        #expect(t.outcome == .failed("its first 17 scans pass over the image more than 16 times"))
        #expect(ContinuousClock.now - start < .seconds(2))
        #expect(t.width == 1024 && t.height == 1024, "the header was read")
        #expect(
            jpegThumbnail(refinementScans(width: 1024, height: 1024, scans: 16)).outcome == .made,
            "16 passes are within the budget")
    }

    @Test(
        "libjpeg-turbo's own progressions, greyscale (6 scans, all over the one component) and colour (10), are within the scan budget"
    )
    func standardProgressionsWithinBudget() {
        for greyscale in [true, false] {
            let t = jpegThumbnail(makeJPEG(width: 1000, height: 700, greyscale: greyscale, progressive: true, seed: 5))
            #expect(t.outcome == .made, "greyscale \(greyscale)")
            #expect(t.interlace == 1)
        }
    }

    @Test("a progressive JPEG with more than 1000 scans is refused rather than decoded for minutes")
    func tooManyScans() throws {
        // Repeat the last scan of a progressive JPEG: legal structure, absurd number of scans.
        let jpeg = makeJPEG(width: 64, height: 64, progressive: true, seed: 2)
        let sosOffsets = zip(jpeg.indices, jpeg.dropFirst()).filter { jpeg[$0.0] == 0xFF && $0.1 == 0xDA }.map(\.0)
        let last = try #require(sosOffsets.last)
        let scan = Array(jpeg[last..<(jpeg.count - 2)])
        var many = Array(jpeg[..<(jpeg.count - 2)])
        for _ in 0..<1100 { many += scan }
        many += [0xFF, 0xD9]
        let t = jpegThumbnail(many)
        // The work budget stops it first: each repeated scan covers a third of the blocks.
        guard case .failed(let why) = t.outcome else {
            Issue.record("decoded 1100 scans: \(t.outcome)")
            return
        }
        #expect(why.hasSuffix("scans pass over the image more than 16 times"), "\(why)")
    }

    @Test("cancel stops the decode")
    func cancel() {
        let fd = temporaryFile(makeJPEG(width: 64, height: 64))
        defer { fd.close() }
        var flag: Int32 = 1
        let t = withUnsafePointer(to: &flag) { Thumbnailer.make(from: fd, type: .jpeg, cancel: $0) }
        #expect(t.outcome == .cancelled)
    }
}

@Suite(.tags(.unit)) struct JPEGLibraryTests {
    @Test func aReceivedJPEGIsIndexedFoundRenamedAndPackagedAsAJPEG() throws {
        let f = Fixture()
        let jpeg = makeJPEG(width: 640, height: 480, progressive: true, seed: 3)
        let photo = try f.receive("IMG_20261130.jpg", jpeg)
        #expect(photo.indexed)
        #expect(photo.hasThumbnail)
        #expect([photo.width, photo.height, photo.bitDepth, photo.colorType, photo.interlace] == [640, 480, 8, 2, 1])
        #expect(photo.type == .jpeg)
        #expect(try f.library.find("IMG_20261130").name == "IMG_20261130.jpg")
        let thumb = try #require(try f.library.thumbnail(of: photo))
        #expect(renditionSize(thumb) == [360, 270], "the largest gallery side")

        let renamed = try f.library.rename("IMG_20261130", to: "first snow")
        #expect(renamed.name == "first snow.jpg")
        #expect(readFile(f.directory + "/first snow.jpg") == jpeg)

        let out = makeTemporaryDirectory("ptk-export")
        defer { removeTree(out) }
        let package = try f.library.export("first snow", to: out)
        #expect(package == out + "/first snow.ptk")
        #expect(readFile(package + "/photo.data") == jpeg)
        _ = try f.library.remove("first snow")
        let back = try f.library.importPackage(package)
        #expect(back.name == "first snow.jpg")
        #expect(back.hasThumbnail)
        #expect(readFile(f.directory + "/first snow.jpg") == jpeg)
    }

    @Test func reconcileFindsJPEGsCopiedInByHandAndIgnoresOtherFiles() throws {
        let f = Fixture()
        writeFile(f.directory + "/a.JPG", makeJPEG(width: 30, height: 20))
        writeFile(f.directory + "/b.jpeg", makeJPEG(width: 20, height: 30, greyscale: true))
        writeFile(f.directory + "/c.gif", [0x47, 0x49, 0x46])
        writeFile(f.directory + "/d.jpg", Array("not a JPEG".utf8))
        #expect(try f.library.reconcile().added == 3)
        while let id = try f.library.pending(limit: 1).first { try f.library.index(id: id) }
        let all = try f.library.all(sort: .name)
        #expect(all.map(\.name) == ["a.JPG", "b.jpeg", "d.jpg"])
        #expect(all.map(\.hasThumbnail) == [true, true, false])
        #expect(all[1].colorType == 0)
        #expect(all[2].problem?.contains("not decodable") == true)
        #expect(closestNames(to: "b", in: all.map(\.name)).first == "b.jpeg")
    }

    @Test func aPackageWithABrokenJPEGIsRefusedAndLeavesNothing() throws {
        let f = Fixture()
        let out = makeTemporaryDirectory("ptk-package")
        defer { removeTree(out) }
        let package = out + "/broken.ptk"
        #expect(mkdir(package, 0o755) == 0)
        writeFile(package + "/photo.data", Array(makeJPEG(width: 50, height: 50).dropLast(2)))
        writeFile(package + "/photo.metadata", Array("{\"Version\": 1}".utf8))
        #expect(throws: LibraryError.self) { _ = try f.library.importPackage(package) }
        #expect(listDirectory(f.directory).filter { !$0.hasPrefix(".") }.isEmpty)
    }
}
