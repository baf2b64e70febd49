import FoundationEssentials
import PTKDigest
import PTKProtocol
import PTKStore
import PTKSystem

/// A photo on the sending host, checked before any connection is made; its SHA-256 is
/// computed later, while the session sends the files before it (see `HashAhead`).
public struct LocalFile: Sendable {
    /// The path as given.
    public var path: String
    /// The name offered to the receiver: the path's last component.
    public var name: String
    public var size: Int64
    /// Its modification time (a package's: the one its photo.metadata records), sent as
    /// OFFER.modified so that the receiver's copy keeps it.
    public var modified: WallTime?

    public init(path: String, name: String, size: Int64, modified: WallTime? = nil) {
        self.path = path
        self.name = name
        self.size = size
        self.modified = modified
    }

    /// Checks that `path` is a readable regular file starting with the PNG signature. The
    /// error names the file and what is wrong with it.
    public static func check(_ path: String) throws(LocalFileError) -> LocalFile {
        // A path that cannot be stat'ed is not a package; the checks below name the error.
        if let st = try? fileStatus(path), st.isDirectory { return try checkPackage(path) }
        let fd = try open(path)
        defer { fd.close() }
        do {
            let st = try fd.status()
            guard st.isRegularFile else { throw LocalFileError(path: path, reason: "not a regular file") }
            var head = [UInt8](repeating: 0, count: 8)
            var got = 0
            while got < 8 {
                let n = try head.withUnsafeMutableBytes { b in
                    Result { () throws(SystemError) in try fd.read(fromAbsoluteOffset: Int64(got), into: UnsafeMutableRawBufferPointer(rebasing: b[got...])) }
                }.get()
                if n == 0 { break }
                got += n
            }
            guard got == 8, head == ProtocolLimits.pngSignature else {
                throw LocalFileError(path: path, reason: "not a PNG file (it does not start with the PNG signature)")
            }
            let name = path.split(separator: "/").last.map(String.init) ?? path
            return LocalFile(path: path, name: name, size: st.size, modified: st.modifiedTime)
        } catch let e as LocalFileError {
            throw e
        } catch let e as SystemError {
            throw LocalFileError(path: path, reason: e.reason.lowercasedFirst)
        } catch {
            throw LocalFileError(path: path, reason: "\(error)")
        }
    }

    /// A `.ptk` package (a folder with photo.data and photo.metadata, as `ptk export` writes):
    /// its photo, offered under the package's name ("beach.ptk" sends "beach.png"). The package
    /// is read as `ptk import` reads it (`Package`): a Version it does not know is refused.
    static func checkPackage(_ path: String) throws(LocalFileError) -> LocalFile {
        var folder = path
        while folder.count > 1 && folder.hasSuffix("/") { folder.removeLast() }
        // A missing or unreadable photo.data is reported by the message below.
        guard let data = try? fileStatus(folder + "/" + Package.dataName), data.isRegularFile else {
            throw LocalFileError(path: path, reason: "not a regular file, nor a .ptk package (it holds no \(Package.dataName))")
        }
        let modified: WallTime?
        do { modified = Package.modified(inMetadata: try Package.readMetadata(folder)) } catch {
            throw LocalFileError(path: path, reason: "a package that cannot be sent: \(error)")
        }
        var file = try check(folder + "/" + Package.dataName)
        file.name = Package.photoName(forPackage: folder, type: .png)
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
