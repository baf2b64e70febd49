import PTKSystem

/// The check run on a file by its descriptor, and what it reports.
extension HEIFCheck {
    /// What decoding a file that passed costs at most, for the thumbnailer.
    public struct Report: Sendable, Equatable {
        /// The most pixels one part of the primary image's decode declares: its `ispe`, a
        /// grid's or overlay's output, a tile's or layer's `ispe`, a sequence parameter set's
        /// coded size, the same of its auxiliary images; or an overlay's layers together, as
        /// libheif decodes each. libheif allocates no larger image for it, whatever a `clap`
        /// crops the result to. (A grid's tiles together are its output, give or take a row
        /// and a column: they must cover it, none wholly outside.)
        public var pixels: UInt64 = 0
        /// Why the file, though kept, is not decoded for thumbnails, or nil: a coded image in
        /// more than `HEIFLimits.slicesPerImage` slice segments (a valid picture may be cut in
        /// many; libde265 does not refuse segments that decode the picture again, each of
        /// which costs a whole picture's decode).
        public var decodeProblem: String?
    }

    /// Why libheif must not be given the HEIF file in `fd`, or nil when it may. Reads with
    /// pread: the descriptor's offset is left as it is.
    public static func problem(in fd: FileDescriptor) -> String? {
        switch examine(fd) {
        case .success: return nil
        case .failure(let error): return error.message
        }
    }

    /// The file's report, or why libheif must not be given it. Reads with pread.
    public static func examine(_ fd: FileDescriptor) -> Result<Report, FormatError> {
        ISOFile.examine(fd) { (size, read) throws(FormatError) in try check(size: size, read: read) }
    }
}
