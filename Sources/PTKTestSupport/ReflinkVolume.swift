import Glibc
import PTKSystem

/// A small XFS file system made with reflinks (`mkfs.xfs -m reflink=1`, Debian's xfsprogs) in
/// a file in a temporary directory of its own, mounted through a loop device at `path` (issue
/// 56's inboxes take photos by reflink only where the file system has them; this machine's
/// may not). Needs root. `remove()` (or deinit) unmounts it, which frees the loop device
/// (`mount -o loop` sets it to clear itself), and removes the directory.
public final class ReflinkVolume: @unchecked Sendable {
    // Used by one test at a time.
    /// The temporary directory holding the image and the mount point.
    public let root: String
    /// Where the file system is mounted.
    public let path: String
    private var mounted = false

    /// Why a volume could not be made: the tool's words.
    public struct Failure: Error, CustomStringConvertible {
        /// What failed and what the tool said.
        public var description: String
    }

    /// Makes and mounts a file system of `megabytes` (XFS needs 300 at least), sparse.
    public init(megabytes: Int = 320) throws {
        root = makeTemporaryDirectory("ptk-reflink")
        path = root + "/mnt"
        let image = root + "/xfs.img"
        let fd = open(image, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        let sized = fd >= 0 && ftruncate(fd, off_t(megabytes) << 20) == 0
        let why = String(cString: strerror(errno))
        if fd >= 0 { close(fd) }
        guard sized else {
            removeTree(root)
            throw Failure(description: "cannot make \(image): \(why)")
        }
        mkdir(path, 0o755)
        let made = runTool(["mkfs.xfs", "-q", "-m", "reflink=1", image])
        guard made.status == 0 else {
            removeTree(root)
            throw Failure(description: "mkfs.xfs -m reflink=1 failed (Debian package xfsprogs): \(made.output)")
        }
        let mount = runTool(["mount", "-o", "loop", image, path])
        guard mount.status == 0 else {
            removeTree(root)
            throw Failure(description: "mount -o loop failed (needs root and a free loop device): \(mount.output)")
        }
        mounted = true
    }

    deinit { remove() }

    /// Unmounts the file system (lazily if it is busy) and removes everything.
    public func remove() {
        guard mounted else { return }
        mounted = false
        if runTool(["umount", path]).status != 0 { _ = runTool(["umount", "-l", path]) }
        removeTree(root)
    }
}
