import FoundationEssentials
import PTKDigest
import PTKProtocol
import PTKStore
import PTKSystem

/// A photo on the sending host, checked before any connection is made; its SHA-256 is
/// computed later, while the session sends the files before it (see `HashAhead`).
public struct LocalFile: Sendable {
    /// The path as given (or found in a folder given).
    public var path: String
    /// The name offered to the receiver: the path's last component, its ending made to fit its
    /// type ("IMG_1.png" holding a JPEG is offered as "IMG_1.jpg"); with `--keep-folders`, the
    /// path below the folder given ("2024/summer/IMG_1.jpg").
    public var name: String
    public var size: Int64
    /// Its modification time (a package's: the one its photo.metadata records), sent as
    /// OFFER.modified so that the receiver's copy keeps it.
    public var modified: WallTime?
    /// What its first bytes say it is (never its name).
    public var type: PhotoType

    public init(path: String, name: String, size: Int64, modified: WallTime? = nil, type: PhotoType = .png) {
        self.path = path
        self.name = name
        self.size = size
        self.modified = modified
        self.type = type
    }

    /// Checks that `path` is a readable regular file whose first bytes are a PNG's, a JPEG's
    /// or a HEIF's, or a `.ptk` package. The error names the file and what is wrong with it.
    public static func check(_ path: String) throws(LocalFileError) -> LocalFile {
        // A path that cannot be stat'ed is not a package; the checks below name the error.
        if let st = try? fileStatus(path), st.isDirectory { return try checkPackage(path) }
        guard let file = try checkFile(path, name: path.split(separator: "/").last.map(String.init) ?? path) else {
            throw LocalFileError(path: path, reason: "not a photo (its first bytes are not a PNG's, a JPEG's or a HEIC's)")
        }
        return file
    }

    /// The file at `path` as a photo offered as `name` (its ending fitted to its type), or nil
    /// when its first bytes are no photo's.
    static func checkFile(_ path: String, name: String) throws(LocalFileError) -> LocalFile? {
        let fd = try open(path)
        defer { fd.close() }
        do {
            let st = try fd.status()
            guard st.isRegularFile else { throw LocalFileError(path: path, reason: "not a regular file") }
            var head = [UInt8](repeating: 0, count: 12)
            var got = 0
            while got < head.count {
                let n = try head.withUnsafeMutableBytes { b in
                    Result { () throws(SystemError) in try fd.read(fromAbsoluteOffset: Int64(got), into: UnsafeMutableRawBufferPointer(rebasing: b[got...])) }
                }.get()
                if n == 0 { break }
                got += n
            }
            guard let type = PhotoType.sniff(head[..<got]) else { return nil }
            return LocalFile(path: path, name: type.fittedName(name), size: st.size, modified: st.modifiedTime, type: type)
        } catch let e as LocalFileError {
            throw e
        } catch let e as SystemError {
            throw LocalFileError(path: path, reason: e.reason.lowercasedFirst)
        } catch {
            throw LocalFileError(path: path, reason: "\(error)")
        }
    }

    /// Whether the folder `path` is a `.ptk` package (it holds photo.data).
    static func isPackage(_ path: String) -> Bool {
        // A photo.data that cannot be stat'ed makes the folder an ordinary one.
        (try? fileStatus(path + "/" + Package.dataName))?.isRegularFile == true
    }

    /// A `.ptk` package (a folder with photo.data and photo.metadata, as `ptk export` writes):
    /// its photo, offered under the package's name ("beach.ptk" sends "beach.png", or
    /// "beach.jpg" when it holds a JPEG). The package is read as `ptk import` reads it
    /// (`Package`): a Version it does not know is refused.
    static func checkPackage(_ path: String) throws(LocalFileError) -> LocalFile {
        var folder = path
        while folder.count > 1 && folder.hasSuffix("/") { folder.removeLast() }
        guard isPackage(folder) else {
            throw LocalFileError(path: path, reason: "not a regular file, nor a .ptk package (it holds no \(Package.dataName))")
        }
        let modified: WallTime?
        do { modified = Package.modified(inMetadata: try Package.readMetadata(folder)) } catch {
            throw LocalFileError(path: path, reason: "a package that cannot be sent: \(error)")
        }
        var file = try check(folder + "/" + Package.dataName)
        file.name = Package.photoName(forPackage: folder, type: file.type)
        file.modified = modified ?? file.modified
        return file
    }

    /// The SHA-256 of the file's bytes, which must still be `size` bytes long. Gives up, with
    /// an error, as soon as `cancelled` returns true (it is asked before every 1 MiB). The file
    /// is hashed where the page cache holds it (mapped), not copied into a buffer first; a
    /// file that cannot be mapped is read (`SHA256.hex(ofFile:)`).
    public func sha256(cancelled: () -> Bool = { false }) throws(LocalFileError) -> String {
        let fd = try Self.open(path)
        defer { fd.close() }
        switch SHA256.hex(ofFile: fd, size: size, cancelled: cancelled) {
        case .success(let digest): return digest
        case .failure(.system(let error)) where error.call == "madvise":
            throw LocalFileError(path: path, reason: "the file changed after it was checked (\(error.reason.lowercasedFirst))")
        case .failure(.system(let error)): throw LocalFileError(path: path, reason: error.reason.lowercasedFirst)
        case .failure(let failure): throw LocalFileError(path: path, reason: failure.description)
        }
    }

    private static func open(_ path: String) throws(LocalFileError) -> FileDescriptor {
        do { return try .open(path, flags: .readOnly) } catch {
            throw LocalFileError(path: path, reason: error.reason.lowercasedFirst)
        }
    }
}

/// A local file that cannot be sent.
public struct LocalFileError: Error, Sendable, CustomStringConvertible {
    public var path: String
    public var reason: String
    public var description: String { "\(path): \(reason)" }
}
