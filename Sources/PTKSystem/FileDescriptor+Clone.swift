import CLinux
import Glibc

// A file's bytes given to another file without passing through the process (issue 56's
// inboxes keep their sources as they are): a reflink where the file system has them, else a
// copy inside the kernel, else (the caller's) read and write.

extension FileDescriptor {
    /// Makes this file (open for writing; a new, empty one) share all of `source`'s bytes
    /// (open for reading): a reflink, copy-on-write, so no byte is copied and a later change
    /// to either file leaves the other as it was. Btrfs, XFS made with reflink=1, bcachefs and
    /// some network file systems can; ext4 and tmpfs cannot. A failure for which
    /// `code.meansCannotClone` is true says this pair of files cannot be cloned (copy them:
    /// `copyRange`); any other is a real error (EBADF: a descriptor not open for that, ENOSPC).
    /// The corresponding C function is `ioctl` with FICLONE.
    public func cloneContents(of source: FileDescriptor) throws(SystemError) {
        _ = try syscall("ioctl FICLONE") { ioctl(rawValue, 0x4004_9409 /* FICLONE */, source.rawValue) }
    }

    /// Copies up to `count` bytes of `source` from `offset` into this file at the same
    /// offset, inside the kernel (which may share the blocks or have a server copy them);
    /// returns how many, fewer than `count` when it stops early and 0 at the end of `source`:
    /// call again from `offset` plus what was copied. Neither descriptor's file offset moves.
    /// `source` must be open for reading and this file for writing (not O_APPEND). A failure
    /// for which `code.meansCannotCopyInKernel` is true says the kernel cannot copy between
    /// these two (read and write instead). The corresponding C function is `copy_file_range`.
    public func copyRange(from source: FileDescriptor, offset: Int64, count: Int) throws(SystemError) -> Int {
        try syscall("copy_file_range") {
            var from = Int(offset)
            var to = Int(offset)
            return copy_file_range(source.rawValue, &from, rawValue, &to, UInt(count), 0)
        }
    }
}

extension Errno {
    /// True for the answers of FICLONE (`cloneContents`) that mean "this file system cannot
    /// clone", so copy the bytes instead: EOPNOTSUPP (no reflinks: ext4, tmpfs, XFS without
    /// them), EXDEV (the two files are on different file systems), EINVAL (the file system or
    /// these two files do not allow it) and ENOTTY (the file system knows no FICLONE).
    public var meansCannotClone: Bool {
        self == .notSupported || self == .crossDevice || self == .invalidArgument || self == .noSuchIoctl
    }

    /// True for the answers of copy_file_range (`copyRange`) that mean "the kernel cannot copy
    /// between these two files", so read and write instead: EXDEV (different file systems of
    /// different kinds, or a kernel before 5.3), EINVAL and EOPNOTSUPP (the file system does
    /// not take part, a special file), ENOSYS (a kernel before 4.5, or a filter refusing it).
    public var meansCannotCopyInKernel: Bool {
        self == .crossDevice || self == .invalidArgument || self == .notSupported || self == .noSystemCall
    }
}
