import Foundation
import PTKTestSupport
import Testing

/// An iPhone's EXIF as a JPEG's APP1 segment (issue 58): Make "Apple", Model, DateTimeOriginal
/// with its offset, and (with an `identifier`) Apple's MakerNote ("Apple iOS\0", version 1,
/// big-endian, entries whose offsets count from the MakerNote's start, as ExifTool reads it)
/// whose tag 0x11 is the Live Photo's content identifier. Written byte by byte here because no
/// Debian tool writes Apple's MakerNote.
func appleExifSegment(identifier: String?, taken: String = "2026:11:30 09:15:08", offset: String = "+01:00")
    -> [UInt8]
{
    func be16(_ v: Int) -> [UInt8] { [UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
    func be32(_ v: Int) -> [UInt8] { be16(v >> 16) + be16(v & 0xFFFF) }
    func ascii(_ s: String) -> [UInt8] { Array(s.utf8) + [0] }
    typealias Entry = (tag: Int, format: Int, count: Int, value: [UInt8])
    /// Entries (12 bytes each: tag, format, count, value or offset), then the values longer
    /// than four bytes; `base` is where the IFD starts, counted as its offsets count.
    func ifd(_ entries: [Entry], at base: Int, header: Int = 0, next: Bool = true) -> [UInt8] {
        var out = be16(entries.count)
        var area: [UInt8] = []
        let areaStart = base + header + 2 + 12 * entries.count + (next ? 4 : 0)
        for e in entries {
            out += be16(e.tag) + be16(e.format) + be32(e.count)
            if e.value.count <= 4 {
                out += e.value + [UInt8](repeating: 0, count: 4 - e.value.count)
            } else {
                out += be32(areaStart + area.count)
                area += e.value
                if area.count % 2 == 1 { area.append(0) }
            }
        }
        return out + (next ? [0, 0, 0, 0] : []) + area
    }
    let id = ascii(identifier ?? "")
    // The MakerNote: offsets from its own first byte; its header is 14 bytes before the count.
    let makerNote =
        Array("Apple iOS".utf8) + [0, 0, 1] + Array("MM".utf8)
        + ifd([(0x0001, 9, 1, be32(14)), (0x0011, 2, id.count, id)], at: 0, header: 14)
    let make = ascii("Apple")
    let model = ascii("iPhone 15 Pro")
    let ifd0Size = ifd(
        [(0x010F, 2, make.count, make), (0x0110, 2, model.count, model), (0x8769, 4, 1, be32(0))], at: 8
    )
    .count
    let exifAt = 8 + ifd0Size
    let ifd0 = ifd(
        [(0x010F, 2, make.count, make), (0x0110, 2, model.count, model), (0x8769, 4, 1, be32(exifAt))], at: 8)
    let date = ascii(taken)
    let zone = ascii(offset)
    let exif = ifd(
        [(0x9003, 2, date.count, date), (0x9011, 2, zone.count, zone)]
            + (identifier == nil ? [] : [(0x927C, 7, makerNote.count, makerNote)]), at: exifAt)
    let tiff = Array("MM".utf8) + [0, 42] + be32(8) + ifd0 + exif
    let payload = Array("Exif".utf8) + [0, 0] + tiff
    return [0xFF, 0xE1] + be16(payload.count + 2) + payload
}

/// A Live Photo as an iPhone makes one, from Debian's tools: `NAME.JPG` (ImageMagick) with
/// `appleExifSegment`, `NAME.HEIC` made of it by heif-enc (which carries its EXIF over), and
/// `NAME.MOV` (ffmpeg, 2 s at 30 frames a second, HEVC as an iPhone's, or H.264 for a browser
/// that plays no HEVC) with Apple's creation date and the same content identifier.
/// `identifier` nil: neither carries one (they pair by name and the times they were taken).
func livePhoto(in work: String, name: String, identifier: String?, hevc: Bool = true) throws {
    let convert = try #require(findProgram("convert"), "needs ImageMagick (scripts/deps.sh --test)")
    let heifEnc = try #require(findProgram("heif-enc"), "needs libheif-examples (scripts/deps.sh --test)")
    let ffmpeg = try #require(findProgram("ffmpeg"), "needs ffmpeg (scripts/deps.sh --test)")
    let plain = work + "/\(name)-plain.jpg"
    let made = try run(convert, ["-size", "320x240", "gradient:orange-navy", "-quality", "90", plain], absolute: true)
    #expect(made.status == 0, "\(made.stderr)")
    let jpeg = try #require(readFile(plain))
    try #require(jpeg.starts(with: [0xFF, 0xD8]))
    writeFile(
        work + "/\(name).JPG", Array(jpeg.prefix(2)) + appleExifSegment(identifier: identifier) + jpeg.dropFirst(2))
    let heic = try run(heifEnc, ["-q", "80", work + "/\(name).JPG", "-o", work + "/\(name).HEIC"], absolute: true)
    #expect(heic.status == 0, "\(heic.stdout)\(heic.stderr)")
    let codec = hevc ? ["libx265", "-x265-params", "log-level=error", "-tag:v", "hvc1"] : ["libx264"]
    let movie = try run(
        ffmpeg,
        ["-v", "error", "-y", "-f", "lavfi", "-i", "testsrc=size=320x240:rate=30", "-t", "2", "-c:v"] + codec + [
            "-pix_fmt", "yuv420p", "-movflags", "use_metadata_tags",
            "-metadata", "com.apple.quicktime.creationdate=2026-11-30T09:15:07+0100",
        ] + (identifier.map { ["-metadata", "com.apple.quicktime.content.identifier=\($0)"] } ?? []) + [
            "-f", "mov", work + "/\(name).MOV",
        ], absolute: true)
    #expect(movie.status == 0, "\(movie.stderr)")
}
