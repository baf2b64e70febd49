import PTKSystem
import PTKVocabulary

/// The file-reading half of the `.ptk` package format (`Package`, in PTKVocabulary, is the
/// format itself).
extension Package {
    /// Reads a package's photo.metadata from disk and checks its Version
    /// (`readMetadata(_:reading:)`); returns its bytes, JSON.
    public static func readMetadata(_ packagePath: String) throws(PackageError) -> [UInt8] {
        try readMetadata(
            packagePath, reading: { (path, limit) throws(SystemError) in try readFileBytes(path, limit: limit) })
    }
}
