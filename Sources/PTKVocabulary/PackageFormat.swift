import FoundationEssentials

/// `.ptk` packages, as PhotoKeeper kept its documents: a folder `NAME.ptk/` holding
/// `photo.data` (the photo's bytes, PNG or JPEG, unchanged) and `photo.metadata` (JSON:
/// `"Version": 1`, the thumbnail as base64 PNG under `"Thumbnail"`, and the photo's metadata).
/// The format is read here, below the store, the library and the sender, so that ptk-send reads
/// packages as ptk does without linking SQLite, libpng or libheif. No I/O: the caller reads the
/// files (`readMetadata(_:reading:)` takes its reader).
public enum Package {
    /// The Version this ptk writes and the highest it reads.
    public static let version = 1
    /// The name of the file in a package that holds the photo's bytes, unchanged.
    public static let dataName = "photo.data"
    /// The name of the file in a package that holds its metadata as JSON (`PhotoMetadata`).
    public static let metadataName = "photo.metadata"
    /// The largest photo.metadata read: 32 MiB. A thumbnail is a few tens of kB, but the
    /// metadata holds it in base64, and ptk reads a thumbnail of up to 16 MiB.
    public static let metadataLimit = 32 << 20

    /// The package folder name for a photo name: "beach.png" (or "beach.jpg") gives "beach.ptk".
    public static func folderName(for photoName: String) -> String {
        // A photo in a folder ("alice/beach.png") gives its package the last component's name.
        let last = lastComponent(photoName) ?? photoName
        let stem = PhotoType(fileName: last).map { $0.split(last).stem } ?? last
        return stem + ".ptk"
    }

    /// The photo name a package gives: "beach.ptk" gives "beach.png", or "beach.jpg" when its
    /// photo.data is a JPEG.
    public static func photoName(forPackage path: String, type: PhotoType) -> String {
        var last = lastComponent(path) ?? path
        if last.lowercased().utf8.reversed().starts(with: ".ptk".utf8.reversed()) { last.unicodeScalars.removeLast(4) }
        return last + type.endings[0]
    }

    /// The last non-empty "/"-separated component of `path` (split by scalars), nil when none.
    static func lastComponent(_ path: String) -> String? {
        path.unicodeScalars.split(separator: "/", omittingEmptySubsequences: true).last.map {
            String(String.UnicodeScalarView($0))
        }
    }

    /// Reads a package's photo.metadata with `read` (the caller's file reader: a path and the
    /// most bytes to read) and checks its Version (at least 1, at most `version`); returns its
    /// bytes, JSON, for the caller to decode what it needs.
    public static func readMetadata<Failure: Error>(
        _ packagePath: String, reading read: (String, Int) throws(Failure) -> [UInt8]
    ) throws(PackageError) -> [UInt8] {
        let path = packagePath + "/" + metadataName
        let bytes: [UInt8]
        do { bytes = try read(path, metadataLimit) } catch {
            throw PackageError("cannot read \(path): \(error)")
        }
        try checkMetadata(bytes, package: packagePath)
        return bytes
    }

    /// Checks the Version of a package's photo.metadata, read as `bytes` (at least 1, at most
    /// `version`); `packagePath` names the package in the error.
    public static func checkMetadata(_ bytes: [UInt8], package packagePath: String) throws(PackageError) {
        let path = packagePath + "/" + metadataName
        // swift-format-ignore: AlwaysUseLowerCamelCase
        struct VersionOnly: Decodable { var Version: Int? }
        let probe: VersionOnly
        do { probe = try JSONDecoder().decode(VersionOnly.self, from: Data(bytes)) } catch {
            throw PackageError("\(path) is not a JSON object with a numeric Version")
        }
        guard let v = probe.Version else { throw PackageError("\(path) has no Version") }
        guard v <= version else {
            throw PackageError(
                "\(packagePath) is a Version \(v) package; this ptk reads packages up to Version \(version) (a newer ptk wrote it)"
            )
        }
        guard v >= 1 else { throw PackageError("\(path) has Version \(v); packages start at Version 1") }
    }

    /// The photo's modification time a package's photo.metadata records (`Modified`, ISO 8601,
    /// as written), if it has one; the caller parses it.
    public static func modifiedText(inMetadata bytes: [UInt8]) -> String? {
        // swift-format-ignore: AlwaysUseLowerCamelCase
        struct ModifiedOnly: Decodable { var Modified: String? }
        // A metadata without a readable Modified has none: the photo's own time is used.
        return (try? JSONDecoder().decode(ModifiedOnly.self, from: Data(bytes)))?.Modified
    }
}

/// A package that cannot be read.
public struct PackageError: Error, Sendable, CustomStringConvertible {
    /// What is wrong with the package, naming the file at fault.
    public var description: String
    /// A failure saying `description`.
    public init(_ description: String) { self.description = description }
}
