import CTestImages
import Glibc

/// JPEG test photos, encoded by libjpeg-turbo: `width` x `height` of a pattern from `seed`
/// (smooth gradients with noise, so the entropy-coded data holds every byte value, 0xFF
/// included), greyscale or colour, baseline or progressive, with restart markers every
/// `restartRows` MCU rows when nonzero.
public func makeJPEG(
    width: Int, height: Int, greyscale: Bool = false, quality: Int = 90, progressive: Bool = false,
    restartRows: Int = 0, seed: UInt64 = 1
) -> [UInt8] {
    let components = greyscale ? 1 : 3
    var pixels = [UInt8](repeating: 0, count: width * height * components)
    var state = seed &* 0x9E37_79B9_7F4A_7C15 | 1
    for y in 0..<height {
        for x in 0..<width {
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            let noise = Int(state & 31)
            for c in 0..<components {
                let base = c == 0 ? x * 255 / max(1, width - 1) : c == 1 ? y * 255 / max(1, height - 1) : (x + y) & 255
                pixels[(y * width + x) * components + c] = UInt8(clamping: base + noise - 16)
            }
        }
    }
    return encodeJPEG(
        pixels, width: width, height: height, components: components, quality: quality,
        progressive: progressive, restartRows: restartRows)
}

/// `pixels` (greyscale or RGB rows) encoded as a JPEG by libjpeg-turbo.
public func encodeJPEG(
    _ pixels: [UInt8], width: Int, height: Int, components: Int, quality: Int = 90,
    progressive: Bool = false, restartRows: Int = 0
) -> [UInt8] {
    var out: UnsafeMutablePointer<UInt8>?
    var size = 0
    var message = [CChar](repeating: 0, count: 200)
    let status = pixels.withUnsafeBufferPointer { p in
        ptk_test_jpeg_encode(
            p.baseAddress, UInt32(width), UInt32(height), Int32(components), Int32(quality),
            progressive ? 1 : 0, Int32(restartRows), &out, &size, &message)
    }
    defer { free(out) }
    precondition(
        status == 0,
        "libjpeg could not encode: \(String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))"
    )
    return Array(UnsafeBufferPointer(start: out, count: size))
}
