import Glibc
import PTKDigest
import PTKProtocol
import PTKSystem

/// A photo on the sending host, checked and hashed before any connection is made.
public struct LocalFile: Sendable {
    /// The path as given.
    public var path: String
    /// The name offered to the receiver: the path's last component.
    public var name: String
    public var size: Int64
    public var sha256: String

    public init(path: String, name: String, size: Int64, sha256: String) {
        self.path = path
        self.name = name
        self.size = size
        self.sha256 = sha256
    }

    /// Checks that `path` is a readable regular file starting with the PNG signature, and
    /// hashes it. The error names the file and what is wrong with it.
    public static func check(_ path: String) throws(LocalFileError) -> LocalFile {
        let fd: FileDescriptor
        do { fd = try .open(path, flags: O_RDONLY) } catch {
            throw LocalFileError(path: path, reason: error.reason.lowercasedFirst)
        }
        defer { fd.close() }
        do {
            let st = try fd.status()
            guard (st.st_mode & S_IFMT) == S_IFREG else { throw LocalFileError(path: path, reason: "not a regular file") }
            var hasher = SHA256()
            var buffer = [UInt8](repeating: 0, count: Int(max(1, min(Int64(st.st_size) + 1, 1 << 20))))
            var total: Int64 = 0
            var head: [UInt8] = []
            while true {
                let n = try buffer.withUnsafeMutableBytes { b in Result { () throws(SystemError) in try fd.read(into: b) } }.get()
                if n == 0 { break }
                if head.count < 8 { head.append(contentsOf: buffer[..<min(n, 8 - head.count)]) }
                buffer.withUnsafeBytes { hasher.update(UnsafeRawBufferPointer(rebasing: $0[..<n])) }
                total += Int64(n)
            }
            guard head == ProtocolLimits.pngSignature else {
                throw LocalFileError(path: path, reason: "not a PNG file (it does not start with the PNG signature)")
            }
            let name = path.split(separator: "/").last.map(String.init) ?? path
            return LocalFile(path: path, name: name, size: total, sha256: hasher.finalizeHex())
        } catch let e as LocalFileError {
            throw e
        } catch let e as SystemError {
            throw LocalFileError(path: path, reason: e.reason.lowercasedFirst)
        } catch {
            throw LocalFileError(path: path, reason: "\(error)")
        }
    }
}

/// A local file that cannot be sent.
public struct LocalFileError: Error, Sendable, CustomStringConvertible {
    public var path: String
    public var reason: String
    public var description: String { "\(path): \(reason)" }
}

extension String {
    var lowercasedFirst: String { prefix(1).lowercased() + dropFirst() }
}
