import CPNGThumb
import PTKStore
import PTKSystem

/// The header (a PNG's IHDR, or a JPEG's frame header) and the thumbnail made from one photo.
public struct Thumbnail: Sendable {
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
    public var outcome: Outcome
    /// Header fields; 0 when the header could not be read.
    public var width = 0, height = 0, bitDepth = 0, colorType = 0, interlace = 0
    /// The thumbnail PNG (8-bit RGB or RGBA) and its size.
    public var png: [UInt8] = []
    public var thumbnailWidth = 0, thumbnailHeight = 0

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

/// Thumbnails through libpng and libjpeg-turbo (the C target CPNGThumb): row by row, so memory
/// stays a row of the photo plus the thumbnail whatever the photo's size (a progressive JPEG
/// is the exception: libjpeg holds its coefficients, up to 256 MB). A JPEG is decoded at 1/2,
/// 1/4 or 1/8 scale when the thumbnail allows, which makes it several times faster.
public enum Thumbnailer {
    /// The longest side of a thumbnail.
    public static let maxSide = 256
    /// Photos with more pixels than this get no thumbnail.
    public static let defaultPixelLimit: UInt64 = 200_000_000

    /// Reads the photo of `type` from `fd` (from its current offset) and makes its thumbnail, at
    /// most `maxSide` on its long side. `cancel`, when given, is read before every row: nonzero stops.
    public static func make(from fd: FileDescriptor, type: PhotoType, maxSide: Int = maxSide,
                            pixelLimit: UInt64 = defaultPixelLimit, cancel: UnsafePointer<Int32>? = nil) -> Thumbnail {
        var result = ptk_thumbnail_result()
        let side = UInt32(clamping: maxSide)
        let status = type == .png ? ptk_png_thumbnail(fd.rawValue, side, pixelLimit, cancel, &result)
                                  : ptk_jpeg_thumbnail(fd.rawValue, side, pixelLimit, cancel, &result)
        defer { ptk_png_free(result.thumbnail) }
        let message = withUnsafeBytes(of: result.message) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
        var t: Thumbnail
        switch Int(status) {
        case PTK_PNG_OK:
            t = Thumbnail(outcome: .made)
            t.png = Array(UnsafeRawBufferPointer(start: result.thumbnail, count: result.thumbnail_size))
            t.thumbnailWidth = Int(result.thumbnail_width)
            t.thumbnailHeight = Int(result.thumbnail_height)
        case PTK_PNG_TOO_LARGE: t = Thumbnail(outcome: .tooLarge(message))
        case PTK_PNG_CANCELLED: t = Thumbnail(outcome: .cancelled)
        default: t = Thumbnail(outcome: .failed(message.isEmpty ? "\(type == .png ? "libpng" : "libjpeg") failed" : message))
        }
        t.width = Int(result.width)
        t.height = Int(result.height)
        t.bitDepth = Int(result.bit_depth)
        t.colorType = Int(result.color_type)
        t.interlace = Int(result.interlace)
        return t
    }
}
