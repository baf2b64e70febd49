import Glibc
import PTKStore
import PTKSystem
import PTKTestSupport
import PTKTestTags
import PTKVocabulary
import Testing

@testable import PTKLibrary

/// A photo to compare, its type, and whether it carries an ICC profile ImageMagick must apply.
struct Sample {
    var name: String
    var bytes: [UInt8]
    var type: PhotoType
    var profile = false
    /// ImageMagick 6 reads no EXIF orientation from a HEIF: the one to give it (`-orient`).
    var orient: String? = nil
}

/// ImageMagick's rendering of the photo at `path` as a thumbnail: turned as its EXIF says, in
/// sRGB (its ICC profile converted when `profile`), box-downscaled in linear light to fit
/// `maxSide`, as 8-bit RGBA. A HEIF goes through libheif's heif-convert first (ImageMagick 6
/// reads no ICC profile from a HEIF).
func imageMagickThumbnail(
    _ path: String, type: PhotoType, profile: Bool, orient: String? = nil, maxSide: Int, in dir: String
) -> RGBA? {
    var input = path
    if type.isHEIF {
        input = dir + "/heif-convert.png"
        let converted = runTool(["heif-convert", path, input])
        guard converted.status == 0 else {
            Issue.record("heif-convert: \(converted.output)")
            return nil
        }
    }
    let out = dir + "/reference.rgba"
    let arguments =
        ["convert", input] + (orient.map { ["-orient", $0] } ?? []) + ["-auto-orient", "-colorspace", "sRGB"]
        + (profile ? ["-profile", fixturePath("heif/srgb.icc")] : [])
        + [
            "-colorspace", "RGB", "-filter", "box", "-resize", "\(maxSide)x\(maxSide)>", "-colorspace", "sRGB",
            "-background", "black", "-alpha", "on", "-depth", "8", "-format", "%w %h", "-write",
            "info:" + dir + "/size", "RGBA:" + out,
        ]
    let r = runTool(arguments)
    guard r.status == 0, let size = readFile(dir + "/size"), let pixels = readFile(out) else {
        Issue.record("convert: \(r.output)")
        return nil
    }
    let wh = String(decoding: size, as: UTF8.self).split(separator: " ").compactMap { Int($0) }
    guard wh.count == 2, pixels.count == wh[0] * wh[1] * 4 else { return nil }
    return RGBA(width: wh[0], height: wh[1], pixels: pixels)
}

/// The mean absolute difference per channel of colour weighted by alpha (a transparent pixel's
/// colour is no one's business), and of alpha.
func weightedDifference(_ a: RGBA, _ b: RGBA) -> [Double] {
    var sums = [0.0, 0.0, 0.0, 0.0]
    for i in stride(from: 0, to: a.pixels.count, by: 4) {
        let aa = Double(a.pixels[i + 3]) / 255
        let ba = Double(b.pixels[i + 3]) / 255
        for c in 0..<3 { sums[c] += abs(Double(a.pixels[i + c]) * aa - Double(b.pixels[i + c]) * ba) }
        sums[3] += abs(Double(a.pixels[i + 3]) - Double(b.pixels[i + 3]))
    }
    let n = Double(max(1, a.pixels.count / 4))
    return sums.map { $0 / n }
}

/// ImageMagick's convert and libheif's heif-convert are there (as root, scripts/deps.sh --test
/// installs imagemagick and libheif-examples; .ci/run does too).
let haveImageMagick = findProgram("convert") != nil && findProgram("heif-convert") != nil

@Suite(
    "Thumbnails against ImageMagick's rendering", .serialized,
    .enabled(if: haveImageMagick, "needs ImageMagick's convert and heif-convert (scripts/deps.sh --test)"), .tags(.unit)
)
struct ImageMagickTests {
    /// Every PngSuite image; JPEGs made from them by libjpeg-turbo; larger JPEGs (baseline,
    /// progressive, greyscale, and portrait ones turned by each EXIF orientation); a Display P3
    /// PNG; heif-enc's HEICs: plain, turned by irot, in Display P3, turned by EXIF.
    func samples() throws -> [Sample] {
        var samples: [Sample] = []
        for name in pngSuiteImages() {
            let bytes = try #require(readFile(pngSuiteDirectory() + "/" + name))
            samples.append(Sample(name: name, bytes: bytes, type: .png))
            let image = try #require(decodeRGBA(bytes))
            // libjpeg-turbo's JPEG of its pixels (alpha dropped, on black as ImageMagick shows it).
            var rgb: [UInt8] = []
            for i in stride(from: 0, to: image.pixels.count, by: 4) {
                let a = Int(image.pixels[i + 3])
                rgb += (0..<3).map { UInt8((Int(image.pixels[i + $0]) * a + 127) / 255) }
            }
            samples.append(
                Sample(
                    name: name + ".jpg",
                    bytes: encodeJPEG(rgb, width: image.width, height: image.height, components: 3, quality: 95),
                    type: .jpeg))
        }
        samples.append(
            Sample(name: "1200x800 baseline", bytes: makeJPEG(width: 1200, height: 800, seed: 4), type: .jpeg))
        samples.append(
            Sample(
                name: "1000x700 progressive", bytes: makeJPEG(width: 1000, height: 700, progressive: true, seed: 5),
                type: .jpeg))
        samples.append(
            Sample(
                name: "900x600 greyscale", bytes: makeJPEG(width: 900, height: 600, greyscale: true, seed: 6),
                type: .jpeg))
        let landscape = makeJPEG(width: 400, height: 200, seed: 7)
        for orientation in 1...8 {
            samples.append(
                Sample(
                    name: "400x200 orientation \(orientation)",
                    bytes: jpegWithEXIF(landscape, exifTIFF(EXIFFields(orientation: UInt16(orientation)))), type: .jpeg)
            )
        }
        samples.append(
            Sample(
                name: "display-p3.png", bytes: try #require(readFile(fixturePath("heif/display-p3.png"))), type: .png,
                profile: true))
        for name in ["picture.heic", "rotated.heic"] {
            samples.append(Sample(name: name, bytes: try #require(readFile(fixturePath("heif/" + name))), type: .heic))
        }
        samples.append(
            Sample(
                name: "display-p3-icc.heic", bytes: try #require(readFile(fixturePath("heif/display-p3-icc.heic"))),
                type: .heic, profile: true))
        samples.append(
            Sample(
                name: "portrait-exif.heic", bytes: try #require(readFile(fixturePath("heif/portrait-exif.heic"))),
                type: .heic, orient: "RightTop"))
        return samples
    }

    @Test(
        "every thumbnail is within 3 levels (mean per channel) of ImageMagick's -auto-orient -colorspace sRGB box downscale",
        .tags(.slow))
    func thumbnailsMatchImageMagick() throws {
        let dir = makeTemporaryDirectory("ptk-imagemagick")
        defer { removeTree(dir) }
        let all = try samples()
        #expect(all.count == pngSuiteImageCount * 2 + 3 + 8 + 1 + 4)
        var worst = (name: "", difference: 0.0)
        for sample in all {
            let path = dir + "/photo"
            writeFile(path, sample.bytes)
            let t = thumbnail(of: sample.bytes, type: sample.type)
            guard t.outcome == .made, let ours = decodeRGBA(t.png) else {
                Issue.record("\(sample.name): \(t.outcome)")
                continue
            }
            guard
                let reference = imageMagickThumbnail(
                    path, type: sample.type, profile: sample.profile, orient: sample.orient,
                    maxSide: Thumbnailer.maxSide, in: dir)
            else { continue }
            #expect([ours.width, ours.height] == [reference.width, reference.height], "\(sample.name)")
            guard ours.pixels.count == reference.pixels.count else { continue }
            let difference = weightedDifference(ours, reference)
            #expect(difference.allSatisfy { $0 <= 3 }, "\(sample.name): \(difference)")
            if let m = difference.max(), m > worst.difference { worst = (sample.name, m) }
        }
        print("largest mean difference from ImageMagick: \(worst.difference) (\(worst.name))")
    }

    /// Every rendition of `sample` (the gallery's 180 and 360 from one decode, then the 1440
    /// preview) against ImageMagick's box downscale of the whole photo to that side: the mean
    /// differences per channel, by label.
    func renditionDifferences(_ sample: Sample, pngOnly: Bool, in dir: String) -> [(String, [Double])] {
        let path = dir + "/photo"
        writeFile(path, sample.bytes)
        let gallery = renditions(of: sample.bytes, type: sample.type, pngOnly: pngOnly)
        let fd = temporaryFile(sample.bytes)
        defer { fd.close() }
        // A preview's decode (the whole image, a JPEG at the smallest scale that has 1440), as PNG when pngOnly.
        let big =
            pngOnly
            ? Thumbnailer.make(
                from: fd, type: sample.type, sides: [Thumbnailer.previewSide], pngOnly: true, embedded: false)
            : Thumbnailer.preview(from: fd, type: sample.type)
        guard gallery.outcome == .made, big.outcome == .made else {
            Issue.record("\(sample.name): \(gallery.outcome) \(big.outcome)")
            return []
        }
        var out: [(String, [Double])] = []
        let sides = Thumbnailer.gallerySides + [Thumbnailer.previewSide]
        #expect(gallery.renditions.count + big.renditions.count == 3, "\(sample.name)")
        for (side, rendition) in zip(sides, gallery.renditions + big.renditions) {
            let label =
                "\(sample.name) \(side) \(rendition.type) (\(side == Thumbnailer.previewSide ? big.decodePath ?? "" : gallery.decodePath ?? ""))"
            guard let ours = decode(rendition)?.image else {
                Issue.record("\(label): does not decode")
                continue
            }
            guard
                let reference = imageMagickThumbnail(
                    path, type: sample.type, profile: sample.profile, orient: sample.orient, maxSide: side, in: dir)
            else { continue }
            #expect([ours.width, ours.height] == [reference.width, reference.height], "\(label)")
            guard ours.pixels.count == reference.pixels.count else { continue }
            out.append((label, weightedDifference(ours, reference)))
        }
        return out
    }

    /// The samples, HEICs with thumbnail items (used or not), and photo-like JPEGs large enough
    /// for every decode scale (ImageMagick's plasma: smooth, as a photo, unlike makeJPEG's noise).
    func renditionSamples(in dir: String) throws -> [Sample] {
        var all = try samples()
        for name in [
            "thumb-item.heic", "thumb-both-turned.heic", "thumb-small.heic", "thumb-square.heic", "thumb-turned.heic",
        ] {
            all.append(Sample(name: name, bytes: try #require(readFile(fixturePath("heif/" + name))), type: .heic))
        }
        for (w, h) in [(4032, 3024), (2000, 1500)] {
            let out = dir + "/plasma.jpg"
            #expect(
                runTool(["convert", "-seed", "3", "-size", "\(w)x\(h)", "plasma:", "-quality", "90", out]).status == 0)
            all.append(Sample(name: "\(w)x\(h) plasma JPEG", bytes: try #require(readFile(out)), type: .jpeg))
        }
        return all
    }

    @Test(
        "every rendition's pixels (made as PNG: one decode, each side, every decode path) are within 3 levels of ImageMagick's; makeJPEG's noise within 6",
        .tags(.slow))
    func renditionScalingMatchesImageMagick() throws {
        let dir = makeTemporaryDirectory("ptk-imagemagick")
        defer { removeTree(dir) }
        var worst = (name: "", difference: 0.0)
        for sample in try renditionSamples(in: dir) {
            // makeJPEG's pixels carry ±16 of noise on every pixel: the smallest scale leaves the box
            // 1 to 1.33 photo pixels a rendition pixel, where ImageMagick's has the whole photo's.
            let noisy = sample.type == .jpeg && !sample.name.contains("plasma") && !sample.name.hasSuffix(".png.jpg")
            for (label, difference) in renditionDifferences(sample, pngOnly: true, in: dir) {
                #expect(difference.allSatisfy { $0 <= (noisy ? 6 : 3) }, "\(label): \(difference)")
                if let m = difference.max(), m > worst.difference, !noisy { worst = (label, m) }
            }
        }
        print("largest mean difference of a rendition's pixels from ImageMagick: \(worst.difference) (\(worst.name))")
    }

    @Test(
        "every JPEG rendition of a photo (HEIC with and without an item; a small PNG's are PNG) is within 3 levels of ImageMagick's; of a plasma JPEG within 6",
        .tags(.slow))
    func jpegRenditionsMatchImageMagick() throws {
        let dir = makeTemporaryDirectory("ptk-imagemagick")
        defer { removeTree(dir) }
        var worst = (name: "", difference: 0.0)
        var paths: Set<String> = []
        // Photos: not PngSuite's 32x32 test patterns (one-pixel stripes of saturated colours,
        // which JPEG at quality 75 with 4:2:0 loses 4 to 46 levels of), nor makeJPEG's noise.
        let photos = try renditionSamples(in: dir).filter {
            $0.name.contains("heic") || $0.name.contains("plasma") || $0.name == "display-p3.png"
        }
        #expect(photos.count == 12)
        for sample in photos {
            // ImageMagick's plasma has detail down to single pixels: JPEG at quality 75 (4:2:0)
            // loses 3.4 to 5.3 levels of it at these sizes (its pixels, made as PNG, are within 1.8).
            let detailed = sample.name.contains("plasma")
            for (label, difference) in renditionDifferences(sample, pngOnly: false, in: dir) {
                // display-p3.png is no larger than a thumbnail: its renditions stay PNG (issue 58).
                #expect(label.contains(sample.name == "display-p3.png" ? " png " : " jpeg "), "\(label)")
                #expect(difference.allSatisfy { $0 <= (detailed ? 6 : 3) }, "\(label): \(difference)")
                if let m = difference.max(), m > worst.difference { worst = (label, m) }
                paths.insert(String(label.split(separator: "(").last?.dropLast() ?? ""))
            }
        }
        #expect(
            paths.isSuperset(of: ["whole image", "JPEG scaled 1/8", "JPEG scaled 3/8", "HEIF thumbnail item 400x300"]),
            "\(paths)")
        print(
            "largest mean difference of a JPEG rendition from ImageMagick: \(worst.difference) (\(worst.name)); decode paths: \(paths.sorted())"
        )
    }
}
