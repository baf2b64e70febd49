import CPNGThumb
import PTKStore
import PTKSystem
import PTKVocabulary

/// The header (a PNG's IHDR, or a JPEG's frame header) and the thumbnail made from one photo.
public struct Thumbnail: Sendable {
    /// Whether a thumbnail was made, and why not.
    public enum Outcome: Sendable, Equatable {
        /// `png` holds the thumbnail.
        case made
        /// No thumbnail: the photo has more pixels than the limit (the header was read).
        case tooLarge(String)
        /// No thumbnail: the file cannot be decoded (the header may have been read).
        case failed(String)
        /// Stopped by the cancel flag.
        case cancelled
    }
    /// What became of the attempt; `problem` puts it in words.
    public var outcome: Outcome
    /// Header fields; 0 when the header could not be read.
    public var width = 0, height = 0, bitDepth = 0, colorType = 0, interlace = 0
    /// The thumbnail PNG (8-bit RGB or RGBA) of `make(from:type:maxSide:...)`, and its size (the
    /// size is also the first rendition's for the other calls).
    public var png: [UInt8] = []
    /// The encoded images made, one per side asked for, in the order asked (issue 45): each at
    /// most that side on its long side, never enlarged; JPEG unless the photo has transparency
    /// (then PNG) or PNG was asked for.
    public var renditions: [Rendition] = []
    /// How the pixels were obtained, for figures and `ptk show`: "HEIF thumbnail item 320x240",
    /// "JPEG scaled 1/8", "whole image". Nil when nothing was decoded.
    public var decodePath: String?
    /// The thumbnail's size, as shown (turned by the EXIF orientation).
    public var thumbnailWidth = 0, thumbnailHeight = 0
    /// What the photo says of itself: orientation, when it was taken, the camera.
    public var facts = PhotoFacts()
    /// Why the photo's own colour description (ICC profile, gAMA/cHRM, nclx) was set aside and
    /// the thumbnail made as if it were sRGB, or nil.
    public var colourNote: String?
    /// Some pixel is not fully opaque (an alpha below 255, or a tRNS colour): the gallery shows
    /// a checkerboard behind it, and behind no other (issue 58). Known once renditions are made.
    public var transparent = false
    /// A video's facts from its `moov` box (issue 58): duration, frame rate, codec, size as
    /// shown, time made; nil for a photo. Read even when no poster can be made.
    public var video: MP4Check.Report?

    /// What the library's entry says of a photo whose thumbnail was made: why its EXIF or its
    /// colours were set aside, or nil.
    public var notes: String? {
        let all = [facts.problem, colourNote].compactMap { $0 }
        return all.isEmpty ? nil : all.joined(separator: "; ")
    }

    /// Why there is no thumbnail, or nil when there is one.
    public var problem: String? {
        switch outcome {
        case .made: return nil
        case .tooLarge(let m): return m
        case .failed(let m): return "not decodable: \(m)"
        case .cancelled: return "cancelled"
        }
    }
}

/// One encoded image made from a photo: a gallery thumbnail or a preview.
public struct Rendition: Sendable, Equatable {
    /// The encoded image, JPEG or PNG as `type` says, ready to be written to its file.
    public var bytes: [UInt8]
    /// Its width in pixels, as encoded.
    public var width: Int
    /// Its height in pixels, as encoded.
    public var height: Int
    /// .png or .jpeg.
    public var type: PhotoType
    /// A rendition as made.
    public init(bytes: [UInt8], width: Int, height: Int, type: PhotoType) {
        self.bytes = bytes
        self.width = width
        self.height = height
        self.type = type
    }
}

/// What a photo says of itself beyond its pixels (EXIF, read with libexif; a PNG's tIME or
/// "Creation Time" text).
public struct PhotoFacts: Sendable, Equatable {
    /// EXIF Orientation, 1 to 8; nil when it has none.
    public var orientation: Int?
    /// When it was taken, as ISO 8601: with its offset and fraction when the EXIF has them
    /// ("2024-07-03T14:22:05.12+02:00"), else the camera's own clock ("2024-07-03T14:22:05").
    public var taken: String?
    /// The EXIF Make, as the camera wrote it; nil when absent.
    public var make: String?
    /// The EXIF Model, as the camera wrote it; nil when absent.
    public var model: String?
    /// The EXIF has GPS entries (never shown; `show --json` says only this).
    public var hasLocation = false
    /// A Live Photo's content identifier (issue 58), when it carries a valid one.
    public var contentID: String?
    /// Why the EXIF was left aside, if it was.
    public var problem: String?

    /// No facts: a photo without EXIF, or one not yet read.
    public init() {}

    init(_ f: ptk_photo_facts) {
        func text<T>(_ tuple: T) -> String? { cText(tuple) }
        orientation = (1...8).contains(Int(f.orientation)) ? Int(f.orientation) : nil
        make = text(f.make)
        model = text(f.model)
        hasLocation = f.has_location != 0
        contentID = LivePhotos.contentID(text(f.content_id))
        problem = text(f.problem)
        switch f.taken_source {
        case 1:
            taken = text(f.taken).flatMap {
                Self.exifDate($0, offset: text(f.taken_offset), subsec: text(f.taken_subsec))
            }
        case 2: taken = text(f.taken).flatMap { WallTime(iso8601: $0) != nil ? $0 : nil }
        // The PNG spec recommends RFC 1123 for "Creation Time"; ISO 8601 is what programs write.
        case 3: taken = text(f.taken).flatMap { WallTime(iso8601: $0) != nil ? $0 : Self.rfc1123Date($0) }
        default: taken = nil
        }
    }

    /// EXIF's "YYYY:MM:DD HH:MM:SS" (with OffsetTimeOriginal "+02:00" and SubSecTimeOriginal
    /// digits) as ISO 8601; nil for a date that is not one (the "0000:00:00 00:00:00" of an
    /// unset camera clock, say).
    static func exifDate(_ text: String, offset: String?, subsec: String?) -> String? {
        let b = Array(text.utf8)
        guard b.count >= 19 else { return nil }
        func number(_ from: Int, _ count: Int) -> Int? {
            let digits = b[from..<(from + count)]
            guard digits.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
            return Int(String(decoding: digits, as: UTF8.self))
        }
        guard let y = number(0, 4), let mo = number(5, 2), let d = number(8, 2), let h = number(11, 2),
            let mi = number(14, 2), let s = number(17, 2),
            b[4] == UInt8(ascii: ":"), b[7] == UInt8(ascii: ":"), b[13] == UInt8(ascii: ":"),
            b[16] == UInt8(ascii: ":"),
            y >= 1800, (1...12).contains(mo), (1...Self.daysIn(month: mo, year: y)).contains(d), h <= 23, mi <= 59,
            s <= 60
        else { return nil }
        var iso = String(decoding: b[0..<19], as: UTF8.self)
        iso = iso.replacingFirst(":", with: "-").replacingFirst(":", with: "-").replacingFirst(" ", with: "T")
        if let subsec, !subsec.isEmpty, subsec.utf8.allSatisfy({ (0x30...0x39).contains($0) }) { iso += "." + subsec }
        if let offset, offset.utf8.count == 6, let sign = offset.first, sign == "+" || sign == "-",
            WallTime(iso8601: "2000-01-01T00:00:00" + offset) != nil
        {
            iso += offset
        }
        return iso
    }

    /// How many days `month` (1-12) of `year` has.
    static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// An RFC 1123 date ("Wed, 3 Jul 2024 14:22:05 GMT", the day name optional, seconds
    /// optional, the zone GMT, UT, Z or +hhmm) as ISO 8601 ("2024-07-03T14:22:05Z",
    /// "...+02:00"); nil for anything else.
    static func rfc1123Date(_ text: String) -> String? {
        var words = text.split(separator: " ").map(String.init)
        if let first = words.first, first.hasSuffix(",") { words.removeFirst() }
        guard words.count == 5, let day = Int(words[0]), (1...31).contains(day), words[0].count <= 2,
            let year = Int(words[2]), words[2].count == 4, year >= 1800
        else { return nil }
        let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
        guard let m = months.firstIndex(of: words[1].lowercased()), day <= Self.daysIn(month: m + 1, year: year) else {
            return nil
        }
        let clock = words[3].split(separator: ":", omittingEmptySubsequences: false).map { Int($0) }
        guard clock.count == 2 || clock.count == 3, clock.allSatisfy({ $0 != nil }),
            words[3].count == clock.count * 3 - 1
        else { return nil }
        let (h, mi, s) = (clock[0]!, clock[1]!, clock.count == 3 ? clock[2]! : 0)
        guard h <= 23, mi <= 59, s <= 60 else { return nil }
        let zone: String
        switch words[4].uppercased() {
        case "GMT", "UT", "UTC", "Z": zone = "Z"
        default:
            let z = Array(words[4].utf8)
            guard z.count == 5, z[0] == UInt8(ascii: "+") || z[0] == UInt8(ascii: "-"),
                z[1...].allSatisfy({ (0x30...0x39).contains($0) })
            else { return nil }
            zone = String(decoding: z[0..<3], as: UTF8.self) + ":" + String(decoding: z[3..<5], as: UTF8.self)
        }
        func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
        let iso = "\(year)-\(two(m + 1))-\(two(day))T\(two(h)):\(two(mi)):\(two(s))\(zone)"
        return WallTime(iso8601: iso) != nil ? iso : nil
    }

    /// `taken` as a time, for sorting: a time without an offset is read as UTC (its day, as
    /// the camera's clock showed it, is kept by the text).
    public var takenTime: WallTime? {
        guard let taken else { return nil }
        return WallTime(iso8601: taken) ?? WallTime(iso8601: taken + "Z")
    }
}

extension String {
    /// The string with the first `target` replaced by `replacement`.
    fileprivate func replacingFirst(_ target: Character, with replacement: Character) -> String {
        guard let i = firstIndex(of: target) else { return self }
        var s = self
        s.replaceSubrange(i...i, with: String(replacement))
        return s
    }
}

/// Thumbnails and previews through libpng, libjpeg-turbo and libheif (the C target CPNGThumb):
/// PNG and JPEG row by row, so memory stays a row of the photo plus a row of sums and the
/// renditions' pixels whatever the photo's size (a progressive JPEG is the exception: libjpeg
/// holds its coefficients, up to 256 MB; so is an interlaced PNG, whose passes revisit rows:
/// all its renditions' sums are held); a HEIF is decoded whole by libheif (at most 256 MB), or
/// its thumbnail item when that will do. A JPEG is decoded at the smallest scale M/8 that
/// still has the largest rendition, which makes it several times faster. Pixels are averaged in
/// linear light and written as sRGB: an ICC profile, a PNG's gAMA and cHRM or a HEIF's nclx are
/// converted with Little CMS 2.
public enum Thumbnailer {
    /// The longest side of a thumbnail.
    public static let maxSide = 256
    /// The gallery's thumbnails' long sides (issue 45): its rows at 1x, and at 2x and 3x (the
    /// page keeps each row within the pixels they have, issue 58).
    public static let gallerySides = [180, 360]
    /// The longest side of a preview.
    public static let previewSide = 1440
    /// The most bytes a gallery thumbnail the library makes can take: 1 MiB. Its largest is
    /// 360 pixels on its long side; the worst case is a 360 x 360 PNG with alpha (8-bit RGBA,
    /// the only PNG made) of pixels that do not compress: 360 rows of 1 + 1,440 bytes is
    /// 518,760 bytes, which deflate's stored blocks grow by 5 bytes a block and zlib by 6
    /// (zlib's deflateBound: under 519,000), plus libpng's 12 bytes for each 8 KiB IDAT chunk
    /// and the signature, IHDR, sRGB, gAMA, cHRM and IEND (under 1,000): some 520 KB. A JPEG
    /// (quality 75, 4:2:0) stays within TurboJPEG's worst case of 368 x 368 x 3 + 2,048 =
    /// 408,320 bytes. 1 MiB is twice the worst case: anything larger was not made here.
    public static let largestThumbnailBytes = 1 << 20
    /// Photos with more pixels than this get no thumbnail.
    public static let defaultPixelLimit: UInt64 = 200_000_000
    /// HDR photos and videos (PQ, HLG) are tone mapped to SDR: this light (cd/m², BT.2408's HDR
    /// reference white) becomes SDR's white.
    public static let hdrWhite: Double = PTK_HDR_WHITE
    /// Light above this fraction of `hdrWhite` is compressed smoothly toward white.
    public static let hdrKnee: Double = PTK_HDR_KNEE
    /// A PNG no larger than the largest gallery thumbnail (an icon, pixel art, a small palette
    /// image: both sides at most this) gets PNG thumbnails, its pixels kept as they are: JPEG's
    /// 4:2:0 smears a 32x32 palette image by 16-21 levels on average (issue 58). At most 360 x
    /// 360, so within `largestThumbnailBytes` as any PNG made here. (A JPEG or HEIF was lossy
    /// already: its thumbnails stay JPEG.)
    public static let losslessWithin = gallerySides.max()!

    /// The most sides one call makes (from one decode).
    public static let maxRenditions = Int(PTK_MAX_RENDITIONS)

    /// The gallery's thumbnails of the photo of `type` in `fd` (from its current offset): one
    /// rendition per entry of `sides` (1 to `maxRenditions` of them), in that order, from one
    /// decode; each at most that side on its long side, never enlarged, sRGB, turned as shown.
    /// JPEG (quality 75, baseline, 4:2:0) unless the photo has a transparent pixel, is a PNG
    /// within `losslessWithin` or `pngOnly` (the .ptk package's thumbnail), then PNG. `embedded` lets a HEIF's thumbnail item stand
    /// in for the whole image when it matches it (aspect ratio, transformations) and is at least
    /// the largest side; a JPEG is decoded at the smallest scale M/8 that still has the largest
    /// side. `decodePath` says which. `png` stays empty (see `make(from:type:maxSide:...)`).
    /// `embeddedAtLeast` lowers the item's bar to that long side: renditions larger than the
    /// item then come out at the item's size, never enlarged (an iPhone's 320-pixel item makes
    /// the 180 thumbnail and a 320 one for the 360; the preview's pass makes the 360 again from
    /// the whole image, `preview(...alsoSides:)`).
    public static func make(
        from fd: FileDescriptor, type: PhotoType, sides: [Int], pngOnly: Bool = false, embedded: Bool = true,
        embeddedAtLeast: Int? = nil, pixelLimit: UInt64 = defaultPixelLimit, cancel: UnsafePointer<Int32>? = nil
    ) -> Thumbnail {
        render(
            from: fd, type: type, sides: sides, pngOnly: pngOnly, embedded: embedded, embeddedAtLeast: embeddedAtLeast,
            preview: false,
            pixelLimit: pixelLimit, cancel: cancel)
    }

    /// The preview of the photo of `type` in `fd`: one rendition, at most `maxSide` on its long
    /// side (never enlarged), sRGB, turned as shown, a progressive JPEG of quality 80 (PNG when
    /// the photo has transparency or is a PNG within `losslessWithin`). Always decodes the whole image (a JPEG at the smallest
    /// sufficient scale); memory is a few rows of sums plus the preview's pixels.
    /// `alsoSides` makes gallery thumbnails from the same decode, after the preview in
    /// `renditions` (baseline JPEG at quality 75, as `make` makes them).
    public static func preview(
        from fd: FileDescriptor, type: PhotoType, maxSide: Int = previewSide, alsoSides: [Int] = [],
        pixelLimit: UInt64 = defaultPixelLimit, cancel: UnsafePointer<Int32>? = nil
    ) -> Thumbnail {
        render(
            from: fd, type: type, sides: [maxSide] + alsoSides, pngOnly: false, embedded: false, preview: true,
            pixelLimit: pixelLimit, cancel: cancel)
    }

    /// Reads the photo of `type` from `fd` (from its current offset) and makes its thumbnail, a
    /// PNG at most `maxSide` on its long side, from the whole image (a JPEG at a scale with
    /// twice `maxSide`), in `png` (and as the one rendition). `cancel`, when given, is read before every row: nonzero stops.
    public static func make(
        from fd: FileDescriptor, type: PhotoType, maxSide: Int = maxSide,
        pixelLimit: UInt64 = defaultPixelLimit, cancel: UnsafePointer<Int32>? = nil
    ) -> Thumbnail {
        var t = render(
            from: fd, type: type, sides: [maxSide], pngOnly: true, embedded: false, preview: false, fine: true,
            pixelLimit: pixelLimit, cancel: cancel)
        if let r = t.renditions.first {
            t.png = r.bytes
            t.thumbnailWidth = r.width
            t.thumbnailHeight = r.height
        }
        return t
    }

    /// One call of the C layer: the header, facts and colour note, and the renditions asked for.
    /// `fine` decodes a JPEG at a scale with twice the largest side (the .ptk package's PNG,
    /// where time matters less than every pixel).
    private static func render(
        from fd: FileDescriptor, type: PhotoType, sides: [Int], pngOnly: Bool, embedded: Bool,
        embeddedAtLeast: Int? = nil, preview: Bool,
        fine: Bool = false, pixelLimit: UInt64, cancel: UnsafePointer<Int32>?
    ) -> Thumbnail {
        guard (1...maxRenditions).contains(sides.count) else {
            return Thumbnail(
                outcome: .failed("\(sides.count) sizes asked for; 1 to \(maxRenditions) can be made at once"))
        }
        var request = ptk_render_request()
        withUnsafeMutableBytes(of: &request.sides) { raw in
            for (i, side) in sides.enumerated() {
                raw.storeBytes(of: UInt32(clamping: max(1, side)), toByteOffset: i * 4, as: UInt32.self)
            }
        }
        request.count = Int32(sides.count)
        request.png_only = pngOnly ? 1 : 0
        request.embedded = embedded ? 1 : 0
        request.embedded_min = UInt32(clamping: max(0, embeddedAtLeast ?? 0))
        request.preview = preview ? 1 : 0
        request.fine = fine ? 1 : 0
        // A PNG's pixels are exact: a small one keeps them. A JPEG or HEIF was lossy already
        // (its thumbnails stay JPEG). The .ptk package's single PNG has its own rule (`fine`).
        request.lossless_within = fine || type != .png ? 0 : UInt32(losslessWithin)
        // Nothing libheif is not to see reaches it: a HEIF whose counts or declared sizes are
        // out of bounds gets no decode (HEIFCheck), nor one whose decode costs too much; the
        // decoding budget is checked against the most its parts declare.
        var declared: UInt64 = 0
        if type.isHEIF {
            switch HEIFCheck.examine(fd) {
            case .failure(let error): return Thumbnail(outcome: .failed(error.message))
            case .success(let report):
                if let problem = report.decodeProblem { return Thumbnail(outcome: .failed(problem)) }
                declared = report.pixels
            }
        }
        // A video's box structure is checked (as at the door: a file put in the directory by
        // hand was not) and its facts read from its moov box before FFmpeg sees it.
        var video: MP4Check.Report?
        if type.isVideo {
            switch MP4Check.examine(fd) {
            case .failure(let error): return Thumbnail(outcome: .failed(error.message))
            case .success(let report): video = report
            }
        }
        var result = ptk_thumbnail_result()
        let status: Int32
        switch type {
        case .png: status = ptk_png_render(fd.rawValue, &request, pixelLimit, cancel, &result)
        case .jpeg: status = ptk_jpeg_render(fd.rawValue, &request, pixelLimit, cancel, &result)
        case .heic, .heif: status = ptk_heif_render(fd.rawValue, &request, pixelLimit, declared, cancel, &result)
        case .mp4, .mov: status = ptk_video_render(fd.rawValue, &request, pixelLimit, cancel, &result)
        }
        defer { ptk_result_free(&result) }
        let message = cText(result.message) ?? ""
        var t: Thumbnail
        switch Int(status) {
        case PTK_PNG_OK:
            t = Thumbnail(outcome: .made)
            let count = Int(result.rendition_count)
            t.renditions = withUnsafeBytes(of: result.renditions) { raw in
                (0..<count).map { i in
                    let r = raw.load(fromByteOffset: i * MemoryLayout<ptk_rendition>.stride, as: ptk_rendition.self)
                    return Rendition(
                        bytes: Array(UnsafeRawBufferPointer(start: r.bytes, count: r.size)), width: Int(r.width),
                        height: Int(r.height), type: r.png != 0 ? .png : .jpeg)
                }
            }
            if let first = t.renditions.first {
                t.thumbnailWidth = first.width
                t.thumbnailHeight = first.height
            }
            t.decodePath = cText(result.decode_path)
            t.transparent = result.transparent != 0
        case PTK_PNG_TOO_LARGE: t = Thumbnail(outcome: .tooLarge(message))
        case PTK_PNG_CANCELLED: t = Thumbnail(outcome: .cancelled)
        default:
            let library =
                [PhotoType.png: "libpng", .jpeg: "libjpeg", .mp4: "FFmpeg", .mov: "FFmpeg"][type] ?? "libheif"
            t = Thumbnail(outcome: .failed(message.isEmpty ? "\(library) failed" : message))
        }
        t.width = Int(result.width)
        t.height = Int(result.height)
        t.bitDepth = Int(result.bit_depth)
        t.colorType = Int(result.color_type)
        t.interlace = Int(result.interlace)
        t.facts = PhotoFacts(result.facts)
        t.colourNote = cText(result.colour_note)
        if var video {
            // A fragmented MP4's moov says neither its length nor its frame rate: libavformat's
            // reading of its fragments does (taken within the columns' ranges).
            if (video.duration ?? 0) <= 0, result.video_duration > 0, result.video_duration < 315_360_000 {
                video.duration = result.video_duration
            }
            if video.frameRate == nil, result.video_frame_rate > 0, result.video_frame_rate <= 10_000 {
                video.frameRate = result.video_frame_rate
            }
            t.video = video
            // Without a poster, the size as the track shows it, and the time mvhd says it was made.
            if t.width == 0, let width = video.width, let height = video.height {
                t.width = width
                t.height = height
                t.facts.orientation = nil
            }
            // Up to the year 9999 (a hostile mvhd may say any 64-bit number).
            if t.facts.taken == nil, let created = video.created, created <= 253_402_300_799 {
                t.facts.taken = WallTime(milliseconds: created * 1000).iso8601
            }
        }
        return t
    }
}

/// A NUL-terminated C char array (imported as a tuple) as a string; nil when empty.
private func cText<T>(_ tuple: T) -> String? {
    let s = withUnsafeBytes(of: tuple) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
    return s.isEmpty ? nil : s
}
