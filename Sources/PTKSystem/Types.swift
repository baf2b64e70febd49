import Glibc

/// Flags for `FileDescriptor.open`; O_CLOEXEC is always added.
public struct OpenFlags: OptionSet, Sendable {
    public let rawValue: CInt
    public init(rawValue: CInt) { self.rawValue = rawValue }

    public static let readOnly = OpenFlags([])
    public static let writeOnly = OpenFlags(rawValue: O_WRONLY)
    public static let readWrite = OpenFlags(rawValue: O_RDWR)
    public static let create = OpenFlags(rawValue: O_CREAT)
    /// With `create`: fail if the name exists.
    public static let exclusive = OpenFlags(rawValue: O_EXCL)
    public static let truncate = OpenFlags(rawValue: O_TRUNC)
    /// Every write goes to the end of the file.
    public static let append = OpenFlags(rawValue: O_APPEND)
    public static let directory = OpenFlags(rawValue: O_DIRECTORY)
    /// Fail (ELOOP) rather than follow a symlink in the last component.
    public static let noFollow = OpenFlags(rawValue: O_NOFOLLOW)
    public static let nonBlocking = OpenFlags(rawValue: O_NONBLOCK)
    /// A descriptor that names the file without opening it for reading or writing.
    public static let pathOnly = OpenFlags(rawValue: 0o10000000)  // O_PATH, which the Glibc overlay does not export
}

/// Permission bits (0o644).
public typealias FileMode = UInt32

/// An errno value, by name.
public struct Errno: RawRepresentable, Hashable, Sendable {
    public let rawValue: CInt
    public init(rawValue: CInt) { self.rawValue = rawValue }

    public static let exists = Errno(rawValue: EEXIST)
    public static let tooManySymlinks = Errno(rawValue: ELOOP)
    public static let isDirectory = Errno(rawValue: EISDIR)
    public static let notDirectory = Errno(rawValue: ENOTDIR)
    public static let notEmpty = Errno(rawValue: ENOTEMPTY)
    public static let noSuchDeviceOrAddress = Errno(rawValue: ENXIO)
    public static let noSuchFile = Errno(rawValue: ENOENT)
    public static let permissionDenied = Errno(rawValue: EACCES)
    public static let notPermitted = Errno(rawValue: EPERM)
    public static let badDescriptor = Errno(rawValue: EBADF)
    public static let fileTooLarge = Errno(rawValue: EFBIG)
    public static let noSpace = Errno(rawValue: ENOSPC)
    public static let quotaExceeded = Errno(rawValue: EDQUOT)
    public static let connectionReset = Errno(rawValue: ECONNRESET)
    public static let connectionRefused = Errno(rawValue: ECONNREFUSED)
    public static let brokenPipe = Errno(rawValue: EPIPE)
    public static let timedOut = Errno(rawValue: ETIMEDOUT)
    public static let addressNotAvailable = Errno(rawValue: EADDRNOTAVAIL)
    public static let addressInUse = Errno(rawValue: EADDRINUSE)
    public static let familyNotSupported = Errno(rawValue: EAFNOSUPPORT)
    public static let networkUnreachable = Errno(rawValue: ENETUNREACH)
    public static let hostUnreachable = Errno(rawValue: EHOSTUNREACH)
    /// The process is out of file descriptors (EMFILE).
    public static let processOutOfDescriptors = Errno(rawValue: EMFILE)
    /// The system is out of file descriptors (ENFILE).
    public static let systemOutOfDescriptors = Errno(rawValue: ENFILE)
    public static let noBufferSpace = Errno(rawValue: ENOBUFS)
    public static let outOfMemory = Errno(rawValue: ENOMEM)
    public static let interrupted = Errno(rawValue: EINTR)
    public static let wouldBlock = Errno(rawValue: EAGAIN)
    public static let ioError = Errno(rawValue: EIO)
    public static let invalidArgument = Errno(rawValue: EINVAL)
    public static let readOnlyFileSystem = Errno(rawValue: EROFS)
    public static let notSupported = Errno(rawValue: EOPNOTSUPP)
    public static let noSystemCall = Errno(rawValue: ENOSYS)
}

extension SystemError {
    /// The error number, by name.
    public var code: Errno { Errno(rawValue: errno) }
}

/// What `poll` waits for, and what it found.
public struct PollEvents: OptionSet, Sendable {
    public let rawValue: Int16
    public init(rawValue: Int16) { self.rawValue = rawValue }
    public static let readable = PollEvents(rawValue: Int16(POLLIN))
    public static let writable = PollEvents(rawValue: Int16(POLLOUT))
    public static let error = PollEvents(rawValue: Int16(POLLERR))
    public static let hangUp = PollEvents(rawValue: Int16(POLLHUP))
}

/// What `stat` says about a file, in the words the program needs.
public struct FileStatus: Sendable, Equatable {
    public var isRegularFile: Bool
    public var isDirectory: Bool
    public var isSymlink: Bool
    public var size: Int64
    /// The permission bits (0o777 and set-id bits).
    public var permissions: FileMode
    public var inode: UInt64
    /// The device the file is on (with `inode`, what tells two files apart).
    public var device: UInt64
    public var owner: UInt32
    public var group: UInt32
    /// Last modification, in seconds since the epoch.
    public var modified: Int64
    /// The nanoseconds part of the last modification.
    public var modifiedNanoseconds: Int64
    /// The last change of the file or its inode (ctime: a write, a rename, a chmod, a link),
    /// in seconds since the epoch. Set by the kernel to its clock, never to a value a caller
    /// chooses, so with `inode` it tells a file from a later one that reused its inode number.
    /// Not part of `==` (a hard link made elsewhere changes it, not the file).
    public var changed: Int64
    /// The nanoseconds part of `changed`.
    public var changedNanoseconds: Int64
    /// `changed` in nanoseconds since the epoch (in range until 2262), to compare with
    /// `changeClockNanoseconds()`.
    public var changedAt: Int64 { changed &* 1_000_000_000 &+ changedNanoseconds }

    /// The same kind, size, permissions, inode, device, owner, group and modification time
    /// (not `changed`).
    public static func == (a: FileStatus, b: FileStatus) -> Bool {
        a.isRegularFile == b.isRegularFile && a.isDirectory == b.isDirectory && a.isSymlink == b.isSymlink && a.size == b.size
            && a.permissions == b.permissions && a.inode == b.inode && a.device == b.device && a.owner == b.owner && a.group == b.group
            && a.modified == b.modified && a.modifiedNanoseconds == b.modifiedNanoseconds
    }

    init(_ st: stat) {
        isRegularFile = (st.st_mode & S_IFMT) == S_IFREG
        isDirectory = (st.st_mode & S_IFMT) == S_IFDIR
        isSymlink = (st.st_mode & S_IFMT) == S_IFLNK
        size = Int64(st.st_size)
        permissions = FileMode(st.st_mode & 0o7777)
        inode = UInt64(st.st_ino)
        device = UInt64(st.st_dev)
        owner = st.st_uid
        group = st.st_gid
        modified = Int64(st.st_mtim.tv_sec)
        modifiedNanoseconds = Int64(st.st_mtim.tv_nsec)
        changed = Int64(st.st_ctim.tv_sec)
        changedNanoseconds = Int64(st.st_ctim.tv_nsec)
    }
}

extension FileStatus {
    /// When the file was last modified.
    /// (A time set beyond what milliseconds hold, some 292 million years, is the farthest they can.)
    public var modifiedTime: WallTime {
        let (ms, overflow) = WallTime(seconds: modified).milliseconds.addingReportingOverflow(modifiedNanoseconds / 1_000_000)
        return WallTime(milliseconds: overflow ? .max : ms)
    }
}

/// The status of `path`, following symlinks. The corresponding C function is `stat`.
public func fileStatus(_ path: String) throws(SystemError) -> FileStatus {
    var st = stat()
    _ = try syscall("stat", path) { stat(path, &st) }
    return FileStatus(st)
}

/// This process's id. The corresponding C function is `getpid`.
public func processID() -> Int32 { getpid() }

/// The calling thread's errno, for callers that learn of a failure through a library that
/// leaves it set (OpenSSL's SSL_ERROR_SYSCALL).
public func currentErrno() -> CInt { errno }
