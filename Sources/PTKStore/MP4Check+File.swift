import PTKSystem

/// The check run on a video file by its descriptor.
extension MP4Check {
    /// The file's facts, or why it must not be kept. Reads with pread: the descriptor's offset
    /// is left as it is.
    public static func examine(_ fd: FileDescriptor) -> Result<Report, FormatError> {
        ISOFile.examine(fd) { (size, read) throws(FormatError) in try check(size: size, read: read) }
    }
}
