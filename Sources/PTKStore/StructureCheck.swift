import PTKVocabulary

/// The structural check for a photo's type, fed as its bytes arrive.
public enum StructureCheck: FormatCheck {
    case png(PNGValidator)
    case jpeg(JPEGValidator)
    case heif(HEIFValidator)
    case video(MP4Validator)

    /// The check for a photo of `type`, of `totalSize` bytes when announced (nil: unknown).
    public init(type: PhotoType, totalSize: Int64?) {
        switch type {
        case .png: self = .png(PNGValidator(totalSize: totalSize))
        case .jpeg: self = .jpeg(JPEGValidator(totalSize: totalSize))
        case .heic, .heif: self = .heif(HEIFValidator(totalSize: totalSize))
        case .mp4, .mov: self = .video(MP4Validator(totalSize: totalSize))
        }
    }

    /// Passes the bytes to the format's check.
    public mutating func feed(_ bytes: UnsafeRawBufferPointer) throws(FormatError) {
        switch self {
        case .png(var v):
            defer { self = .png(v) }
            try v.feed(bytes)
        case .jpeg(var v):
            defer { self = .jpeg(v) }
            try v.feed(bytes)
        case .heif(var v):
            defer { self = .heif(v) }
            try v.feed(bytes)
        case .video(var v):
            defer { self = .video(v) }
            try v.feed(bytes)
        }
    }

    /// Ends the format's check.
    public func finish() throws(FormatError) {
        switch self {
        case .png(let v): try v.finish()
        case .jpeg(let v): try v.finish()
        case .heif(let v): try v.finish()
        case .video(let v): try v.finish()
        }
    }
}
