import PTKSystem
import PTKVocabulary

/// The file-reading half of the `.ptk` package format (`Package`, in PTKVocabulary, is the
/// format itself).
extension Package {
    /// Reads a package's photo.metadata from disk and checks its Version
    /// (`readMetadata(_:reading:)`); returns its bytes, JSON.
    public static func readMetadata(_ packagePath: String) throws(PackageError) -> [UInt8] {
        try readMetadata(packagePath, reading: { (path, limit) throws(SystemError) in try readFileBytes(path, limit: limit) })
    }

    /// The photo's modification time a package's photo.metadata records (`Modified`), if it
    /// has one that reads as a time.
    public static func modified(inMetadata bytes: [UInt8]) -> WallTime? {
        modifiedText(inMetadata: bytes).flatMap { WallTime(iso8601: $0) }
    }
}
