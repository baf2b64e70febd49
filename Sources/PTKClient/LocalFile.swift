import FoundationEssentials
import PTKDigest
import PTKProtocol
import PTKSystem
import PTKVocabulary

/// A photo on the sending host, checked before any connection is made; its SHA-256 is
/// computed later, while the session sends the files before it (see `HashAhead`).
public struct LocalFile: Sendable {
    /// The path as given (or found in a folder given), for messages: a byte that is not part of
    /// valid UTF-8 is written `\xE9` (`BytePath.description`).
    public var path: String
    /// The path as the file system has it: what is opened, whatever its bytes.
    public var location: BytePath
    /// The name offered to the receiver: the path's last component, its ending made to fit its
    /// type ("IMG_1.png" holding a JPEG is offered as "IMG_1.jpg"); with `--keep-folders`, the
    /// path below the folder given ("2024/summer/IMG_1.jpg").
    public var name: String
    /// True when the name offered is not the file's own: bytes of it (or of a folder in it)
    /// that are not UTF-8 are offered as U+FFFD, which the protocol's names can carry.
    public var nameReplaced: Bool
    /// Bytes, as found when the file was checked; the file must not change while it is sent.
    public var size: Int64
    /// Its modification time (a package's: the one its photo.metadata records), sent as
    /// OFFER.modified so that the receiver's copy keeps it.
    public var modified: WallTime?
    /// What its first bytes say it is (never its name).
    public var type: PhotoType

    /// `location` is what is opened (`path` as UTF-8 when not given).
    public init(
        path: String, location: BytePath? = nil, name: String, nameReplaced: Bool = false, size: Int64,
        modified: WallTime? = nil, type: PhotoType = .png
    ) {
        self.path = path
        self.location = location ?? BytePath(path)
        self.name = name
        self.nameReplaced = nameReplaced
        self.size = size
        self.modified = modified
        self.type = type
    }

    /// Checks that `path` is a readable regular file whose first bytes are a PNG's, a JPEG's
    /// or a HEIF's, or a `.ptk` package. The error names the file and what is wrong with it.
    public static func check(_ path: String) throws(LocalFileError) -> LocalFile {
        try check(BytePath(path))
    }

    /// `check(_:)` for a path given as its bytes, which need not be UTF-8 (the command line's,
    /// a folder's names): the name offered has U+FFFD for the bytes that are not.
    public static func check(_ location: BytePath) throws(LocalFileError) -> LocalFile {
        // A path that cannot be stat'ed is not a package; the checks below name the error.
        if let st = try? fileStatus(location), st.isDirectory { return try checkPackage(location) }
        let last = location.bytes.split(separator: UInt8(ascii: "/")).last.map { BytePath(bytes: $0) } ?? location
        guard let file = try checkFile(location, name: last.text, nameReplaced: !last.isUTF8) else {
            throw LocalFileError(
                path: location.description,
                reason: "not a photo (its first bytes are not a PNG's, a JPEG's or a HEIC's)")
        }
        return file
    }

    /// Opens the file for reading.
    public func open() throws(SystemError) -> FileDescriptor {
        try .open(location, flags: .readOnly)
    }

    /// The file at `location` as a photo offered as `name` (its ending fitted to its type), or nil
    /// when its first bytes are no photo's.
    static func checkFile(_ location: BytePath, name: String, nameReplaced: Bool = false) throws(LocalFileError)
        -> LocalFile?
    {
        let path = location.description
        let fd = try open(location)
        defer { fd.close() }
        do {
            let st = try fd.status()
            guard st.isRegularFile else { throw LocalFileError(path: path, reason: "not a regular file") }
            var head = [UInt8](repeating: 0, count: 12)
            var got = 0
            while got < head.count {
                let n = try head.withUnsafeMutableBytes { b in
                    Result { () throws(SystemError) in
                        try fd.read(
                            fromAbsoluteOffset: Int64(got), into: UnsafeMutableRawBufferPointer(rebasing: b[got...]))
                    }
                }.get()
                if n == 0 { break }
                got += n
            }
            guard let type = PhotoType.sniff(head[..<got]) else { return nil }
            return LocalFile(
                path: path, location: location, name: type.fittedName(name), nameReplaced: nameReplaced, size: st.size,
                modified: st.modifiedTime, type: type)
        } catch let e as LocalFileError {
            throw e
        } catch let e as SystemError {
            throw LocalFileError(path: path, reason: e.reason.lowercasedFirst)
        } catch {
            throw LocalFileError(path: path, reason: "\(error)")
        }
    }

    /// Whether the folder `path` is a `.ptk` package (it holds photo.data).
    static func isPackage(_ path: BytePath) -> Bool {
        // A photo.data that cannot be stat'ed makes the folder an ordinary one.
        (try? fileStatus(path.appending(Package.dataName)))?.isRegularFile == true
    }

    /// A `.ptk` package (a folder with photo.data and photo.metadata, as `ptk export` writes):
    /// its photo, offered under the package's name ("beach.ptk" sends "beach.png", or
    /// "beach.jpg" when it holds a JPEG). The package is read as `ptk import` reads it
    /// (`Package`): a Version it does not know is refused.
    static func checkPackage(_ path: BytePath) throws(LocalFileError) -> LocalFile {
        let folder = path.droppingTrailingSlashes
        guard isPackage(folder) else {
            throw LocalFileError(
                path: path.description,
                reason: "not a regular file, nor a .ptk package (it holds no \(Package.dataName))")
        }
        let modified: WallTime?
        do {
            modified = Package.modifiedText(inMetadata: try readMetadata(folder)).flatMap { WallTime(iso8601: $0) }
        } catch {
            throw LocalFileError(path: path.description, reason: "a package that cannot be sent: \(error)")
        }
        var file = try check(folder.appending(Package.dataName))
        let last = folder.lastComponent
        file.name = Package.photoName(forPackage: last.text, type: file.type)
        file.nameReplaced = !last.isUTF8
        file.modified = modified ?? file.modified
        return file
    }

    /// The package's photo.metadata (`Package.readMetadata`, which takes a path as text). A
    /// folder whose path is not UTF-8 is opened by its bytes and read through /proc/self/fd;
    /// messages name it as `BytePath.description` does.
    private static func readMetadata(_ folder: BytePath) throws(PackageError) -> [UInt8] {
        let read = { (path: String, limit: Int) throws(SystemError) -> [UInt8] in try readFileBytes(path, limit: limit)
        }
        if folder.isUTF8 { return try Package.readMetadata(folder.text, reading: read) }
        let fd: FileDescriptor
        do { fd = try .open(folder, flags: [.readOnly, .directory]) } catch {
            throw PackageError("cannot open \(folder): \(error.reason.lowercasedFirst)")
        }
        defer { fd.close() }
        let proc = "/proc/self/fd/\(fd.rawValue)"
        do { return try Package.readMetadata(proc, reading: read) } catch {
            throw PackageError(error.description.replacing(proc, with: folder.description))
        }
    }

    /// The SHA-256 of the file's bytes, which must still be `size` bytes long. Gives up, with
    /// an error, as soon as `cancelled` returns true (it is asked before every 1 MiB). The file
    /// is hashed where the page cache holds it (mapped), not copied into a buffer first; a
    /// file that cannot be mapped is read (`SHA256.hex(ofFile:)`).
    public func sha256(cancelled: () -> Bool = { false }) throws(LocalFileError) -> String {
        let fd = try Self.open(location)
        defer { fd.close() }
        switch SHA256.hex(ofFile: fd, size: size, cancelled: cancelled) {
        case .success(let digest): return digest
        case .failure(.system(let error)) where error.call == "madvise":
            throw LocalFileError(
                path: path, reason: "the file changed after it was checked (\(error.reason.lowercasedFirst))")
        case .failure(.system(let error)): throw LocalFileError(path: path, reason: error.reason.lowercasedFirst)
        case .failure(let failure): throw LocalFileError(path: path, reason: failure.description)
        }
    }

    private static func open(_ location: BytePath) throws(LocalFileError) -> FileDescriptor {
        do { return try .open(location, flags: .readOnly) } catch {
            throw LocalFileError(path: location.description, reason: error.reason.lowercasedFirst)
        }
    }
}

/// A local file that cannot be sent.
public struct LocalFileError: Error, Sendable, CustomStringConvertible {
    /// The path as given, for the message.
    public var path: String
    /// Why it cannot be sent, starting in lower case.
    public var reason: String
    /// "path: reason", as ptk-send prints it.
    public var description: String { "\(path): \(reason)" }
}
