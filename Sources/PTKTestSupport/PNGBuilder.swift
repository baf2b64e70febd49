import CZlib
import Glibc
import PTKDigest
import PTKSystem

/// zlib-compresses `bytes` at `level` (0 stores them, 9 compresses most).
public func zlibCompress(_ bytes: [UInt8], level: Int32 = 6) -> [UInt8] {
    var length = compressBound(uLong(bytes.count))
    var out = [UInt8](repeating: 0, count: Int(length))
    let rc = bytes.withUnsafeBufferPointer { src in
        out.withUnsafeMutableBufferPointer { dst in
            compress2(dst.baseAddress, &length, src.baseAddress, uLong(bytes.count), level)
        }
    }
    precondition(rc == Z_OK, "compress2 failed")
    return Array(out[..<Int(length)])
}

/// The IHDR chunk's data.
public func ihdr(width: UInt32, height: UInt32, bitDepth: UInt8, colorType: UInt8, interlace: UInt8 = 0) -> [UInt8] {
    func be(_ v: UInt32) -> [UInt8] {
        [UInt8(v >> 24), UInt8((v >> 16) & 0xFF), UInt8((v >> 8) & 0xFF), UInt8(v & 0xFF)]
    }
    return be(width) + be(height) + [bitDepth, colorType, 0, 0, interlace]
}

/// A PNG from its IHDR and the zlib stream of its image data (any bytes: hostile ones too),
/// with optional chunks before the image data, every chunk's CRC correct.
public func assemblePNG(
    ihdr header: [UInt8], idat: [UInt8], before: [(String, [UInt8])] = [], idatChunkSize: Int = 1 << 16
) -> [UInt8] {
    var out: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
    appendChunk("IHDR", header, to: &out)
    for (type, data) in before { appendChunk(type, data, to: &out) }
    var start = 0
    repeat {
        let end = min(idat.count, start + idatChunkSize)
        appendChunk("IDAT", Array(idat[start..<end]), to: &out)
        start = end
    } while start < idat.count
    appendChunk("IEND", [], to: &out)
    return out
}

/// An 8-bit RGB or RGBA (when `alpha`) PNG whose pixel (x, y) is `pixel(x, y)` (3 or 4 bytes),
/// not interlaced, filter 0 on every row.
public func makeImagePNG(
    width: Int, height: Int, alpha: Bool = false, level: Int32 = 6,
    pixel: (Int, Int) -> [UInt8]
) -> [UInt8] {
    let channels = alpha ? 4 : 3
    var raw: [UInt8] = []
    raw.reserveCapacity((width * channels + 1) * height)
    for y in 0..<height {
        raw.append(0)
        for x in 0..<width { raw += pixel(x, y).prefix(channels) }
    }
    return assemblePNG(
        ihdr: ihdr(width: UInt32(width), height: UInt32(height), bitDepth: 8, colorType: alpha ? 6 : 2),
        idat: zlibCompress(raw, level: level))
}

/// A 32x32 pixel-art PNG of 16 palette colours (colour type 3, no gAMA: sRGB), each pixel
/// one of them by a fixed scatter: what JPEG's 4:2:0 smears (issue 58). Also its pixels, as RGB rows.
public func paletteIconPNG() -> (png: [UInt8], rgb: [UInt8]) {
    let palette: [[UInt8]] = (0..<16).map { (i: Int) -> [UInt8] in
        let r = UInt8((i * 97 + 30) & 255)
        let g = UInt8((i * 53 + 200) & 255)
        let b = UInt8((i * 211 + 7) & 255)
        return [r, g, b]
    }
    var raw: [UInt8] = []
    var rgb: [UInt8] = []
    for y in 0..<32 {
        raw.append(0)
        for x in 0..<32 {
            let index: Int = ((x / 2) * 7 + (y / 3) * 5 + (x * y) % 3) % 16
            raw.append(UInt8(index))
            rgb += palette[index]
        }
    }
    let png = assemblePNG(
        ihdr: ihdr(width: 32, height: 32, bitDepth: 8, colorType: 3), idat: zlibCompress(raw),
        before: [("PLTE", palette.flatMap { $0 })])
    return (png, rgb)
}

/// Writes a large 8-bit RGB PNG of pseudo-random (incompressible) pixels to `path`, streaming:
/// the rows go through zlib at level 0 (stored) into 1 MiB IDAT chunks, so the test never holds
/// the image. Returns the file's size.
@discardableResult
public func writeLargePNG(_ path: String, width: Int, height: Int, seed: UInt64 = 7) -> Int64 {
    let fd = try! FileDescriptor.open(path, flags: [.writeOnly, .create, .truncate], mode: 0o644)
    defer { fd.close() }
    var head: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
    appendChunk("IHDR", ihdr(width: UInt32(width), height: UInt32(height), bitDepth: 8, colorType: 2), to: &head)
    try! fd.writeAll(head)
    var total = Int64(head.count)
    var stream = z_stream()
    precondition(deflateInit_(&stream, 0, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK)
    defer { deflateEnd(&stream) }
    var row = [UInt8](repeating: 0, count: width * 3 + 1)
    var out = [UInt8](repeating: 0, count: 1 << 20)
    var rng = seed | 1
    func flushChunk(_ count: Int) {
        var chunk: [UInt8] = []
        appendChunk("IDAT", Array(out[..<count]), to: &chunk)
        try! fd.writeAll(chunk)
        total += Int64(chunk.count)
    }
    func deflateStep(_ flush: Int32) -> Int32 {
        var rc: Int32 = Z_OK
        let n: Int = out.withUnsafeMutableBufferPointer { o in
            stream.next_out = o.baseAddress
            stream.avail_out = UInt32(o.count)
            rc = deflate(&stream, flush)
            return o.count - Int(stream.avail_out)
        }
        if n > 0 { flushChunk(n) }
        return rc
    }
    for _ in 0..<height {
        for i in 1..<row.count {
            rng ^= rng << 13
            rng ^= rng >> 7
            rng ^= rng << 17
            row[i] = UInt8(truncatingIfNeeded: rng)
        }
        row.withUnsafeMutableBufferPointer { input in
            stream.next_in = input.baseAddress
            stream.avail_in = UInt32(input.count)
            while stream.avail_in > 0 { _ = deflateStep(Z_NO_FLUSH) }
        }
    }
    while deflateStep(Z_FINISH) != Z_STREAM_END {}
    var tail: [UInt8] = []
    appendChunk("IEND", [], to: &tail)
    try! fd.writeAll(tail)
    return total + Int64(tail.count)
}

/// The peak resident set size of process `pid` (VmHWM), in bytes; nil when it cannot be read.
public func peakResidentBytes(of pid: Int32) -> Int64? {
    guard let bytes = readFile("/proc/\(pid)/status") else { return nil }
    for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") where line.hasPrefix("VmHWM:") {
        let digits = line.split(separator: " ").dropFirst().first.flatMap { Int64($0) }
        return digits.map { $0 * 1024 }
    }
    return nil
}

/// A decompression bomb: a `side` x `side` black 1-bit grey PNG (14142 makes 200 MP in some
/// 40 kB), told apart from its siblings by a tEXt chunk holding `note` (distinct bytes, the
/// same cost to decode).
public func pngBomb(side: Int, note: String) -> [UInt8] {
    let rows = [UInt8](repeating: 0, count: (1 + (side + 7) / 8) * side)
    var out: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
    appendChunk("IHDR", ihdr(width: UInt32(side), height: UInt32(side), bitDepth: 1, colorType: 0), to: &out)
    appendChunk("tEXt", Array("Comment".utf8) + [0] + Array(note.utf8), to: &out)
    appendChunk("IDAT", zlibCompress(rows, level: 9), to: &out)
    appendChunk("IEND", [], to: &out)
    return out
}
