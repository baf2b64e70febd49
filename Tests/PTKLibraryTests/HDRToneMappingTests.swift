import CTestImages
import Foundation
import PTKSystem
import PTKTestSupport
import PTKTestTags
import PTKVocabulary
import Testing

@testable import PTKLibrary

/// Grey patches side by side, 32x32 each, of these HDR signal values: 16-bit RGB samples.
private func patches(_ signals: [Double]) -> [UInt16] {
    var samples: [UInt16] = []
    for _ in 0..<32 {
        for signal in signals {
            samples += Array(repeating: UInt16((signal * 65535).rounded()), count: 32 * 3)
        }
    }
    return samples
}

/// `samples` (from `patches`) as a 16-bit RGB PNG.
private func patchesPNG(_ samples: [UInt16], width: Int) -> [UInt8] {
    var raw: [UInt8] = []
    for row in stride(from: 0, to: samples.count, by: width * 3) {
        raw.append(0)
        for v in samples[row..<row + width * 3] { raw += [UInt8(v >> 8), UInt8(v & 0xFF)] }
    }
    return assemblePNG(
        ihdr: ihdr(width: UInt32(width), height: UInt32(samples.count / width / 3), bitDepth: 16, colorType: 2),
        idat: zlibCompress(raw))
}

/// The tone mapping's knee as the thumbnails apply it (ptk_colour.c): up to the knee as it is,
/// above it compressed toward 1.
private func toneMapped(_ x: Double) -> Double {
    let k = Thumbnailer.hdrKnee
    return x <= k ? x : k + (1 - k) * (1 - exp(-(x - k) / (1 - k)))
}

/// One HDR transfer: FFmpeg's and libheif's names and code for it, and the patches' signals.
struct Transfer: CustomStringConvertible {
    var ffmpeg: String
    var code: Int
    var signals: [Double]
    var description: String { ffmpeg }
}

/// HLG's 0.75 and PQ's 0.58 are BT.2408's HDR reference white (203 cd/m²); the last of each is
/// far above it (HLG's 0.95 some 720 cd/m², PQ's 0.75 some 980).
let transfers = [
    Transfer(ffmpeg: "arib-std-b67", code: 18, signals: [0.25, 0.5, 0.75, 0.95]),
    Transfer(ffmpeg: "smpte2084", code: 16, signals: [0.3, 0.5, 0.58, 0.75]),
]

@Suite(
    "HDR photos and videos (PQ, HLG) are tone mapped to SDR (issue 58)",
    .enabled(if: findProgram("ffmpeg") != nil, "needs ffmpeg (scripts/deps.sh --test)"),
    .tags(.unit))
struct HDRToneMappingTests {
    /// Runs `arguments`, expecting exit status 0.
    func tool(_ arguments: [String]) throws {
        let r = runTool(arguments)
        try #require(r.status == 0, "\(arguments.joined(separator: " ")): \(r.output)")
    }

    /// The linear light (relative to `Thumbnailer.hdrWhite`) of each patch's centre in `video`,
    /// as zimg (FFmpeg's zscale) decodes its transfer, OOTF included.
    func zimgLight(_ video: String, patches: Int, in work: String) throws -> [Double] {
        let raw = work + "/linear.raw"
        try tool([
            "ffmpeg", "-v", "error", "-y", "-i", video, "-frames:v", "1", "-vf",
            "zscale=t=linear:npl=\(Int(Thumbnailer.hdrWhite)),format=gbrpf32le", "-f", "rawvideo", raw,
        ])
        let bytes = try #require(readFile(raw))
        let width = 32 * patches
        try #require(bytes.count == width * 32 * 3 * 4, "\(bytes.count) bytes")
        // The first plane is green; the patches are grey.
        return (0..<patches).map { i in
            let offset = (16 * width + 16 + 32 * i) * 4
            return Double(Float(bitPattern: bytes[offset..<offset + 4].reversed().reduce(0) { $0 << 8 | UInt32($1) }))
        }
    }

    /// The centre of each patch in the thumbnail of `file` (the PNG one, never enlarged).
    func thumbnailGreys(_ file: String, type: PhotoType, patches: Int) throws -> (greys: [[Double]], note: String?) {
        let fd = try FileDescriptor.open(file, flags: .readOnly)
        defer { fd.close() }
        let t = Thumbnailer.make(from: fd, type: type, maxSide: 32 * patches)
        let image = try #require(decodeRGBA(t.png), "\(t.outcome)")
        try #require(image.width == 32 * patches && image.height == 32, "\(image.width)x\(image.height)")
        return (
            (0..<patches).map { i in
                let at = (16 * image.width + 16 + 32 * i) * 4
                return image.pixels[at..<at + 3].map(Double.init)
            }, t.colourNote
        )
    }

    @Test(
        "an HEVC MOV and a HEIC in BT.2020 with HLG or PQ: each grey patch within 4 levels of zimg's light through the knee, reference white near white; no note",
        arguments: transfers)
    func greys(_ transfer: Transfer) throws {
        let work = makeTemporaryDirectory("ptk-hdr")
        defer { removeTree(work) }
        let n = transfer.signals.count
        let samples = patches(transfer.signals)
        writeFile(work + "/patches.png", patchesPNG(samples, width: 32 * n))
        try tool([
            "ffmpeg", "-v", "error", "-y", "-loop", "1", "-i", work + "/patches.png", "-t", "0.2", "-r", "10", "-vf",
            "scale=out_color_matrix=bt2020:out_range=tv,format=yuv420p10le", "-c:v", "libx265", "-x265-params",
            "log-level=error:qp=2", "-tag:v", "hvc1", "-color_primaries", "bt2020", "-color_trc", transfer.ffmpeg,
            "-colorspace", "bt2020nc", work + "/clip.mov",
        ])
        // BT.2020 primaries and matrix (9), the transfer's code, as a camera's HDR HEIF says.
        var message = [CChar](repeating: 0, count: 200)
        let encoded = ptk_test_heif_encode_nclx(
            samples, Int32(32 * n), 32, 9, Int32(transfer.code), 9, work + "/photo.heic", &message)
        try #require(encoded == 0, "\(String(cString: message))")
        let light = try zimgLight(work + "/clip.mov", patches: n, in: work)
        // zimg's reading of the signals is BT.2100's (a check on the reference itself).
        #expect(abs(light[n - 2] - 1) < 0.1, "reference white: \(light)")
        let expected = light.map { 255 * linearToSRGB(toneMapped($0)) }
        for (file, type) in [("clip.mov", PhotoType.mov), ("photo.heic", .heic)] {
            let (greys, note) = try thumbnailGreys(work + "/" + file, type: type, patches: n)
            #expect(note == nil, "\(file): \(note ?? "")")
            for i in 0..<n {
                for channel in greys[i] {
                    #expect(
                        abs(channel - expected[i]) <= 4,
                        "\(file) \(transfer) patch \(i) (signal \(transfer.signals[i])): \(greys[i]), expected \(expected[i])"
                    )
                }
            }
            // Reference white is near white, as an SDR photo's (with sRGB's curve, HLG's was 191).
            #expect(greys[n - 2][1] >= 235, "\(file): \(greys)")
        }
    }
}
