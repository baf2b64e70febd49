import CLinux
import Glibc

/// What kind of file system holds a file, as far as watching it goes: inotify sees only the
/// changes made through this machine's kernel, so on a network file system (or a FUSE one,
/// whose daemon may change files behind the kernel) another machine's writes give no event.
public enum FileSystemKind: Equatable, Sendable {
    /// A local file system: inotify sees every change.
    case local
    /// A network file system, by name ("NFS", "SMB", "9p", ...): another machine's writes give no event.
    case network(String)
    /// A FUSE file system (sshfs, rclone mount, ...): its daemon's own changes may give no event.
    case fuse

    /// The kind of the file system whose `statfs` magic number is `magic` (linux/magic.h).
    public init(magic: Int64) {
        switch UInt32(truncatingIfNeeded: magic) {
        case 0x6969: self = .network("NFS")
        case 0x517B, 0xFF53_4D42, 0xFE53_4D42: self = .network("SMB")
        case 0x0102_1997: self = .network("9p")
        case 0x00C3_6400: self = .network("Ceph")
        case 0x5346_414F: self = .network("AFS")
        case 0x7375_7245: self = .network("Coda")
        case 0x6A65_6A63: self = .network("virtiofs")
        case 0x6573_5546: self = .fuse
        default: self = .local
        }
    }

    /// For the log: "NFS", "FUSE", or "" for a local one.
    public var name: String {
        switch self {
        case .local: ""
        case .network(let name): name
        case .fuse: "FUSE"
        }
    }
}

extension FileDescriptor {
    /// The kind of file system this open file or folder is on. The corresponding C function is `fstatfs`.
    public func fileSystemKind() throws(SystemError) -> FileSystemKind {
        // A struct statfs (120 bytes) in room for more; its first field is f_type (a long).
        var info = [Int64](repeating: 0, count: 32)
        _ = try syscall("fstatfs") { info.withUnsafeMutableBytes { fstatfs(rawValue, $0.baseAddress) } }
        return FileSystemKind(magic: info[0])
    }
}
