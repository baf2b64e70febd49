import CLinux
import Glibc

extension FileDescriptor {
    /// Gives this open file a second name, `name` (one component) in the open `directory`: a
    /// hard link, no byte copied, made from the descriptor and never from a path, so the file
    /// linked is the one opened whatever its name has become. Never replaces anything: a name
    /// taken fails with EEXIST. Both must be on the same file system and mount (EXDEV
    /// otherwise). With `fs.protected_hardlinks` (Debian's default) only a file the process
    /// owns, or may read and write, can be linked (EPERM otherwise); a file whose last name is
    /// gone cannot (ENOENT).
    ///
    /// Tried first with AT_EMPTY_PATH on the descriptor, which needs CAP_DAC_READ_SEARCH; where
    /// the process lacks it (ENOENT) through `/proc/self/fd/N`, a link the kernel resolves to
    /// the open file itself (which needs /proc). The corresponding C function is `linkat`.
    public func linkInto(directory: FileDescriptor, name: String) throws(SystemError) {
        do {
            _ = try syscall("link", name) { linkat(rawValue, "", directory.rawValue, name, emptyPath) }
        } catch  where error.code == .noSuchFile {
            try linkThroughProc(directory: directory, name: name)
        }
    }

    /// `linkInto`'s way without CAP_DAC_READ_SEARCH: linkat of `/proc/self/fd/N`, following
    /// that link (AT_SYMLINK_FOLLOW) to the open file itself.
    func linkThroughProc(directory: FileDescriptor, name: String) throws(SystemError) {
        let path = "/proc/self/fd/\(rawValue)"
        _ = try syscall("link", name) { linkat(AT_FDCWD, path, directory.rawValue, name, AT_SYMLINK_FOLLOW) }
    }

    /// Whether this open directory is the root of a mount of its own (a file system, or a bind
    /// mount, mounted there): an inbox's walk does not enter one unless told to (issue 56).
    /// Asked of statx's STATX_ATTR_MOUNT_ROOT, which sees bind mounts too; before Linux 5.8,
    /// which does not say, of the device numbers of this directory and its parent, which
    /// differ at a mount point (and are the same for a bind mount of the same file system,
    /// which that cannot see), or of the directory being its own parent (the root). The
    /// corresponding C functions are `statx` and `fstatat`.
    public func isMountRoot() throws(SystemError) -> Bool {
        let answer: CInt
        do { answer = try syscall("statx") { ptk_is_mount_root(rawValue) } } catch  where error.code == .noSystemCall {
            answer = 2  // before Linux 4.11: ask the device numbers
        }
        switch answer {
        case 1: return true
        case 0: return false
        default: return try isMountRootByDevice()
        }
    }

    /// `isMountRoot`'s way before Linux 5.8: this directory's device differs from its
    /// parent's, or it is its own parent.
    func isMountRootByDevice() throws(SystemError) -> Bool {
        let own = try status()
        let parent = try status(of: "..")
        return own.device != parent.device || own.inode == parent.inode
    }
}

/// AT_EMPTY_PATH, which the Glibc overlay does not export (a GNU extension).
private let emptyPath: Int32 = 0x1000
