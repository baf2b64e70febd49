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

/// The thumbnail of `bytes` as a photo of `type`.
func thumbnail(of bytes: [UInt8], type: PhotoType, maxSide: Int = 256) -> Thumbnail {
    let fd = temporaryFile(bytes)
    defer { fd.close() }
    return Thumbnailer.make(from: fd, type: type, maxSide: maxSide)
}

/// The mean absolute difference per channel (red, green, blue) of two images of one size.
func meanDifference(_ a: RGBA, _ b: RGBA) -> [Double] {
    var sums = [0.0, 0.0, 0.0]
    for i in stride(from: 0, to: min(a.pixels.count, b.pixels.count), by: 4) {
        for c in 0..<3 { sums[c] += abs(Double(a.pixels[i + c]) - Double(b.pixels[i + c])) }
    }
    let n = Double(max(1, a.pixels.count / 4))
    return sums.map { $0 / n }
}

/// An 8-bit RGB PNG of `width` x `height` gradients with `chunks` before its image data.
func gradientPNG(width: Int = 64, height: Int = 48, chunks: [(String, [UInt8])]) -> [UInt8] {
    var raw: [UInt8] = []
    for y in 0..<height {
        raw.append(0)
        for x in 0..<width { raw += [UInt8(x * 255 / (width - 1)), UInt8(y * 255 / (height - 1)), 200] }
    }
    return assemblePNG(
        ihdr: ihdr(width: UInt32(width), height: UInt32(height), bitDepth: 8, colorType: 2),
        idat: zlibCompress(raw), before: chunks)
}

/// An iCCP chunk's content: a name, compression method 0, the zlib-compressed profile.
func iccpChunk(_ profile: [UInt8]) -> (String, [UInt8]) {
    ("iCCP", Array("test".utf8) + [0, 0] + zlibCompress(profile))
}

/// A JPEG with `profile` in APP2 "ICC_PROFILE" segments (ICC.1 annex B.4), 65,519 bytes each.
func jpegWithICC(_ jpeg: [UInt8], _ profile: [UInt8]) -> [UInt8] {
    let pieces = stride(from: 0, to: profile.count, by: 65_519).map {
        Array(profile[$0..<min(profile.count, $0 + 65_519)])
    }
    var segments: [UInt8] = []
    for (i, piece) in pieces.enumerated() {
        let payload = Array("ICC_PROFILE".utf8) + [0, UInt8(i + 1), UInt8(pieces.count)] + piece
        segments += [0xFF, 0xE2, UInt8((payload.count + 2) >> 8), UInt8((payload.count + 2) & 0xFF)] + payload
    }
    return Array(jpeg[..<2]) + segments + Array(jpeg[2...])
}

@Suite("Thumbnails in true colour, and of HEIF photos", .tags(.unit))
struct ColourTests {
    let p3Profile = readFile(fixturePath("heif/display-p3.icc")) ?? []

    @Test("a Display P3 profile is converted to sRGB: the thumbnail differs from the same pixels taken as sRGB")
    func displayP3IsConverted() throws {
        #expect(p3Profile.count > 500)
        let plain = thumbnail(of: gradientPNG(chunks: []), type: .png)
        let p3 = thumbnail(of: gradientPNG(chunks: [iccpChunk(p3Profile)]), type: .png)
        #expect(p3.outcome == .made && p3.colourNote == nil, "\(String(describing: p3.colourNote))")
        let a = try #require(decodeRGBA(plain.png))
        let b = try #require(decodeRGBA(p3.png))
        let difference = meanDifference(a, b)
        #expect(difference.max()! > 5, "\(difference)")
        // P3's red (255, 0, 200 at the right edge, top row) is beyond sRGB: more red, less blue survives.
        #expect(b.pixels[(63) * 4] >= a.pixels[(63) * 4])
        // The same profile in a JPEG's APP2 segments is converted too.
        let jpeg = makeJPEG(width: 64, height: 48, seed: 3)
        let jp = thumbnail(of: jpegWithICC(jpeg, p3Profile), type: .jpeg)
        #expect(jp.outcome == .made && jp.colourNote == nil)
        #expect(
            meanDifference(
                try #require(decodeRGBA(thumbnail(of: jpeg, type: .jpeg).png)), try #require(decodeRGBA(jp.png))
            ).max()! > 3)
    }

    @Test("gAMA without a profile is honoured; gAMA 1/2.2 and sRGB's cHRM are sRGB; an sRGB chunk wins over gAMA")
    func gammaAndChromaticities() throws {
        func gama(_ v: UInt32) -> (String, [UInt8]) {
            ("gAMA", [UInt8(v >> 24), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)])
        }
        let plain = try #require(decodeRGBA(thumbnail(of: gradientPNG(chunks: []), type: .png).png))
        let sRGBish = try #require(decodeRGBA(thumbnail(of: gradientPNG(chunks: [gama(45455)]), type: .png).png))
        #expect(sRGBish == plain)
        let linear = try #require(decodeRGBA(thumbnail(of: gradientPNG(chunks: [gama(100_000)]), type: .png).png))
        // Linear samples shown as sRGB are brighter: every channel's mean goes up.
        #expect(meanDifference(plain, linear).min()! > 10)
        let full = try #require(decodeRGBA(gradientPNG(chunks: [])))
        #expect(maxDifference(linear, referenceDownscale(full, 64, 48, gamma: 1.0)) <= 1)
        // An sRGB chunk (rendering intent 0) makes gAMA 1.0 beside it irrelevant.
        let both = try #require(
            decodeRGBA(thumbnail(of: gradientPNG(chunks: [("sRGB", [0]), gama(100_000)]), type: .png).png))
        #expect(maxDifference(both, plain) <= 1)
        // cHRM with wider primaries (BT.2020's) than sRGB's changes the colours; sRGB's own do not.
        func chrm(_ v: [Double]) -> (String, [UInt8]) {
            (
                "cHRM",
                v.flatMap { d -> [UInt8] in
                    let n = UInt32(d * 100_000)
                    return [UInt8(n >> 24), UInt8(n >> 16 & 0xFF), UInt8(n >> 8 & 0xFF), UInt8(n & 0xFF)]
                }
            )
        }
        let srgbChrm = chrm([0.3127, 0.329, 0.64, 0.33, 0.30, 0.60, 0.15, 0.06])
        let wide = chrm([0.3127, 0.329, 0.708, 0.292, 0.170, 0.797, 0.131, 0.046])
        #expect(
            try #require(decodeRGBA(thumbnail(of: gradientPNG(chunks: [gama(45455), srgbChrm]), type: .png).png))
                == plain)
        let wider = try #require(decodeRGBA(thumbnail(of: gradientPNG(chunks: [gama(45455), wide]), type: .png).png))
        #expect(meanDifference(plain, wider).max()! > 5)
    }

    @Test("hostile profiles are set aside with the reason and the thumbnail is made as sRGB")
    func hostileProfiles() throws {
        let plain = try #require(decodeRGBA(thumbnail(of: gradientPNG(chunks: []), type: .png).png))
        var garbage = [UInt8](repeating: 0, count: 600)
        for i in garbage.indices { garbage[i] = UInt8(truncatingIfNeeded: i &* 131 &+ 7) }
        // A profile header claiming 2 MB, which inflates past the 1 MB limit (zeros compress well).
        var huge = [UInt8](repeating: 0, count: 2_000_000)
        huge[0..<4] = [0x00, 0x1E, 0x84, 0x80][...]
        // A profile whose header is right but whose tag table points past its end.
        var lying = Array(p3Profile)
        lying[128..<132] = [0, 0, 0x10, 0][...]
        let cases: [([UInt8], String)] = [
            (gradientPNG(chunks: [iccpChunk(garbage)]), "colour profile set aside (libpng"),
            (gradientPNG(chunks: [iccpChunk(huge)]), "colour profile set aside (libpng"),
            (
                gradientPNG(chunks: [("iCCP", Array("x".utf8) + [0, 0] + [0x78, 0x9C, 1, 2, 3])]),
                "colour profile set aside (libpng"
            ),
            (gradientPNG(chunks: [iccpChunk(lying)]), "colour profile"),
        ]
        for (png, words) in cases {
            let t = thumbnail(of: png, type: .png)
            #expect(t.outcome == .made, "\(words)")
            #expect(t.colourNote?.contains(words) == true, "\(String(describing: t.colourNote))")
            #expect(t.notes == t.colourNote)
            #expect(try #require(decodeRGBA(t.png)) == plain, "shown as sRGB")
        }
        let jpeg = makeJPEG(width: 64, height: 48, seed: 3)
        let plainJPEG = try #require(decodeRGBA(thumbnail(of: jpeg, type: .jpeg).png))
        for (profile, words) in [
            (garbage, "does not parse"), ([UInt8](repeating: 7, count: 1_100_000), "over the 1 MB limit"),
        ] {
            let t = thumbnail(of: jpegWithICC(jpeg, profile), type: .jpeg)
            #expect(t.outcome == .made)
            #expect(t.colourNote?.contains(words) == true, "\(String(describing: t.colourNote))")
            #expect(try #require(decodeRGBA(t.png)) == plainJPEG)
        }
    }

    @Test("a HEIC's thumbnail and size come from libheif, its rotation (irot) applied")
    func heicThumbnails() throws {
        let picture = try #require(readFile(fixturePath("heif/picture.heic")))
        let t = thumbnail(of: picture, type: .heic)
        #expect(t.outcome == .made)
        #expect([t.width, t.height, t.thumbnailWidth, t.thumbnailHeight] as [Int] == [300, 200, 256, 171])
        #expect(t.bitDepth == 8 && t.colorType == 2 && t.facts.orientation == nil)
        #expect(chunkTypes(t.png).contains("sRGB"))
        let image = try #require(decodeRGBA(t.png))
        // The red square drawn at (10...60, 10...60) of the 300x200 picture.
        func pixel(_ i: RGBA, _ x: Int, _ y: Int) -> [UInt8] {
            Array(i.pixels[(y * i.width + x) * 4..<(y * i.width + x) * 4 + 3])
        }
        let red = pixel(image, 30, 30)
        #expect(red[0] > 200 && red[1] < 80 && red[2] < 80, "\(red)")
        // Turned 90 degrees anticlockwise by an irot property: 200x300, the square at the bottom left.
        let rotated = thumbnail(of: try #require(readFile(fixturePath("heif/rotated.heic"))), type: .heic)
        #expect(rotated.outcome == .made)
        #expect(
            [rotated.width, rotated.height, rotated.thumbnailWidth, rotated.thumbnailHeight] as [Int] == [
                200, 300, 171, 256,
            ])
        let turned = try #require(decodeRGBA(rotated.png))
        let moved = pixel(turned, 30, 256 - 31)
        #expect(moved[0] > 200 && moved[1] < 80 && moved[2] < 80, "\(moved)")
        // Its ICC profile (Display P3) is converted.
        let p3 = thumbnail(of: try #require(readFile(fixturePath("heif/display-p3-icc.heic"))), type: .heic)
        #expect(p3.outcome == .made && p3.colourNote == nil)
        #expect(meanDifference(image, try #require(decodeRGBA(p3.png))).max()! > 3)
    }

    @Test(
        "hostile HEIF files fail with the reason (HEIFCheck's before libheif sees them, else libheif's), quickly, and nothing crashes"
    )
    func hostileHEIF() throws {
        let picture = try #require(readFile(fixturePath("heif/picture.heic")))
        // The iloc box inside meta claiming more bytes than meta holds.
        var iloc = picture
        let at = try #require((0..<iloc.count - 4).first { iloc[$0..<$0 + 4].elementsEqual("iloc".utf8) }) - 4
        iloc[at..<at + 4] = [0, 0, 0x10, 0][...]
        // A handler other than 'pict'.
        var vide = picture
        let pict = try #require((0..<vide.count - 4).first { vide[$0..<$0 + 4].elementsEqual("pict".utf8) })
        vide[pict..<pict + 4] = ArraySlice("vide".utf8)
        let cases: [([UInt8], String)] = [
            (heifGrid(rows: 256, columns: 256, width: 4096), "over 4096 item references"),
            (heifGrid(rows: 256, columns: 256, width: 60000), "over 4096 item references"),
            (heifHugeItemLocations(), "iloc places 65535 items, over the 2048-item limit"),
            (iloc, "iloc box of 4096 bytes inside meta does not fit in it"),
            (Array(picture[..<2000]), "does not fit in the file"),
            (heifFileType(), "no meta box"),
            ([UInt8](repeating: 0, count: 100), "no meta box"),
            (heifGrid(rows: 2, columns: 2, width: 128), "a tile of grid item 1 is not an HEVC image"),
            // Past the check (counts and sizes within bounds): libheif's own reason.
            (vide, "libheif cannot read it: Invalid input: Not a 'pict' handler"),
        ]
        for (bytes, words) in cases {
            let started = Instant.now
            let t = thumbnail(of: bytes, type: .heic)
            guard case .failed(let why) = t.outcome else {
                Issue.record("\(words): \(t.outcome)")
                continue
            }
            #expect(why.contains(words), "\(why)")
            #expect(Instant.now - started < .seconds(10))
        }
    }
}

@Suite(.tags(.unit)) struct ColourUpgradeTests {
    @Test(
        "a library of schema 3 indexes every photo again when opened: thumbnails are remade in true colour, a colour note is kept on the entry"
    )
    func olderLibrariesAreIndexedAgain() throws {
        let f = Fixture()
        let plain = try f.receive("plain.png", gradientPNG(chunks: []))
        var garbage = [UInt8](repeating: 0, count: 600)
        for i in garbage.indices { garbage[i] = UInt8(truncatingIfNeeded: i &* 131 &+ 7) }
        let noted = try f.receive("noted.png", gradientPNG(chunks: [iccpChunk(garbage)]))
        #expect(plain.hasThumbnail && plain.problem == nil)
        // A thumbnail kept with a reason: the profile set aside.
        #expect(
            noted.hasThumbnail && noted.problem?.contains("colour profile set aside") == true,
            "\(String(describing: noted.problem))")
        try downgradeToSchema4(f.library, version: 3)
        let reopened = try PhotoLibrary(directory: f.directory, create: false)
        #expect(try reopened.pendingCount() == 2)
        while let id = try reopened.pending(limit: 1).first { try reopened.index(id: id) }
        #expect(try reopened.pendingCount() == 0)
        #expect(try reopened.database.firstInt("PRAGMA user_version") == PhotoLibrary.schemaVersion)
        let thumbnail = try #require(try reopened.thumbnail(of: try reopened.find("plain")))
        if renditionType(thumbnail) == .png {
            #expect(chunkTypes(thumbnail).contains("sRGB"))
        } else {
            #expect(renditionType(thumbnail) == .jpeg)
        }
    }
}

@Suite(.tags(.unit)) struct HEIFPackageTests {
    @Test(
        "a HEIC is indexed from the directory, exported as a .ptk package and imported again byte-identical, as a HEIC")
    func heicRoundTrip() throws {
        let f = Fixture()
        let heic = try #require(readFile(fixturePath("heif/portrait-exif.heic")))
        let photo = try f.receive("IMG_0001.HEIC", heic)
        #expect(photo.indexed && photo.hasThumbnail && photo.type == .heic)
        #expect(photo.dimensions == "200x300" && photo.orientation == 6 && photo.taken == "2024-07-03T14:22:05")
        let out = f.directory + "-out"
        try makeDirectories(out)
        defer { removeTree(out) }
        let package = try f.library.export("IMG_0001", to: out)
        _ = try f.library.remove("IMG_0001")
        let imported = try f.library.importPackage(package)
        #expect(imported.name.lowercased() == "img_0001.heic", "\(imported.name)")
        #expect(readFile(f.directory + "/" + imported.name) == heic)
    }
}

@Suite(.tags(.unit)) struct PackageTypeTests {
    @Test(
        "a package says its photo's type (MediaType); an import whose bytes are of another type is refused, naming both"
    )
    func mediaType() throws {
        let f = Fixture()
        let jpeg = makeJPEG(width: 32, height: 24, seed: 4)
        _ = try f.receive("cam.jpg", jpeg)
        let out = f.directory + "-out"
        try makeDirectories(out)
        defer { removeTree(out) }
        let package = try f.library.export("cam", to: out)
        let text = String(decoding: readFile(package + "/photo.metadata") ?? [], as: UTF8.self)
        #expect(text.contains("\"MediaType\" : \"image/jpeg\""), "\(text)")
        // The same metadata over a PNG's bytes: refused.
        let png = makePNG(size: 3000, seed: 1)
        writeFile(package + "/photo.data", png)
        var edited = text.replacingOccurrences(of: SHA256.hex(of: jpeg), with: SHA256.hex(of: png))
        edited = edited.replacingOccurrences(of: "\"Size\" : \(jpeg.count)", with: "\"Size\" : \(png.count)")
        writeFile(package + "/photo.metadata", Array(edited.utf8))
        do {
            _ = try f.library.importPackage(package)
            Issue.record("imported a PNG said to be a JPEG")
        } catch {
            #expect("\(error)".contains("photo.data is a PNG; photo.metadata says image/jpeg"), "\(error)")
        }
    }
}
