import PTKVocabulary

/// What a video (MP4, MOV) must be before it is kept, checked on the whole file once its bytes
/// are there (after `MP4Validator` walked its top-level boxes as they came): exactly one
/// `moov` box, read whole (at most `MP4Limits.moovBytes`) and walked to at most
/// `MP4Limits.moovBoxes` boxes `MP4Limits.depth` deep, every box inside its parent; exactly one
/// `mvhd` with a time scale; 1 to `MP4Limits.tracks` tracks, each with its `tkhd`; every
/// sample table's entry count within its box (`stco`, `co64`, `stsz`, `stsc`, `stts`, `ctts`,
/// `stss`), and every chunk offset (`stco`, `co64`) inside the file. A fragmented MP4 (an
/// `mvex`) may have empty sample tables. The `Report` says what the file is: its facts.
public enum MP4Check {
    /// Reads exactly `count` bytes at `offset`, or throws.
    public typealias Read = HEIFCheck.Read

    /// What the check found: the movie's facts, from its `mvhd` and its first video track.
    public struct Report: Sendable, Equatable {
        /// Tracks (`trak` boxes) of any kind.
        public var tracks = 0
        /// The movie's duration in seconds (`mvhd`), nil when it declares none.
        public var duration: Double?
        /// The first video track's size as shown: its `tkhd` size turned by its matrix.
        public var width: Int?
        /// See `width`.
        public var height: Int?
        /// The first video track's rotation in degrees, clockwise as shown (0, 90, 180, 270).
        public var rotation = 0
        /// The first video track's coding (`stsd`'s first entry: `avc1`, `hvc1`, `hev1`...).
        public var codec: String?
        /// The first video track's frames a second (its samples over its media time).
        public var frameRate: Double?
        /// When the movie was made (`mvhd`), seconds since 1970 UTC; nil when it says 0.
        public var created: Int64?
    }

    /// Throws why the video of `size` bytes that `read` reads must not be kept; else its facts.
    @discardableResult
    public static func check(size: Int64, read: Read) throws(FormatError) -> Report {
        let moov = try moovBox(size: size, read: read)
        var walk = MP4MovieWalk(fileSize: size)
        try walk.container(moov, 0..<moov.count, path: ["moov"])
        return try walk.report()
    }

    /// The content of the file's moov box, found among at most `MP4Limits.topLevelBoxes`.
    private static func moovBox(size: Int64, read: Read) throws(FormatError) -> [UInt8] {
        let moov = try ISOFile.onlyBox("moov", size: size, read: read, limit: MP4Limits.topLevelBoxes)
        guard let (start, length) = moov else { throw FormatError("no moov box (the movie's description)") }
        guard length <= MP4Limits.moovBytes else {
            throw FormatError("moov box of \(length) bytes is over the \(MP4Limits.moovBytes >> 20) MiB limit")
        }
        return try read(start, Int(length))
    }
}
