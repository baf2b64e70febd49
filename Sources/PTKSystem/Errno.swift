import Glibc

/// An errno value, by name.
public struct Errno: RawRepresentable, Hashable, Sendable {
    /// The C value, as the system calls set it.
    public let rawValue: CInt
    /// Any value, named here or not.
    public init(rawValue: CInt) { self.rawValue = rawValue }

    /// EEXIST: the name is taken.
    public static let exists = Errno(rawValue: EEXIST)
    /// ELOOP: a symlink that O_NOFOLLOW or RESOLVE_NO_SYMLINKS refused, or too many links on a path.
    public static let tooManySymlinks = Errno(rawValue: ELOOP)
    /// EISDIR: a directory where a file was wanted.
    public static let isDirectory = Errno(rawValue: EISDIR)
    /// ENOTDIR: a path component, or a name opened as a directory, is not one.
    public static let notDirectory = Errno(rawValue: ENOTDIR)
    /// ENOTEMPTY: the directory still has entries.
    public static let notEmpty = Errno(rawValue: ENOTEMPTY)
    /// ENXIO: no reader on a FIFO opened for writing without waiting, or no such device.
    public static let noSuchDeviceOrAddress = Errno(rawValue: ENXIO)
    /// ENOENT: no such file or directory.
    public static let noSuchFile = Errno(rawValue: ENOENT)
    /// EACCES: the permission bits refuse it.
    public static let permissionDenied = Errno(rawValue: EACCES)
    /// EPERM: not permitted, whatever the bits (a privilege or a file attribute is missing).
    public static let notPermitted = Errno(rawValue: EPERM)
    /// EBADF: the descriptor is not open, or not open for this.
    public static let badDescriptor = Errno(rawValue: EBADF)
    /// EFBIG: past the largest file size the process or file system allows.
    public static let fileTooLarge = Errno(rawValue: EFBIG)
    /// ENOSPC: the file system is full.
    public static let noSpace = Errno(rawValue: ENOSPC)
    /// EDQUOT: the user's disk quota is used up.
    public static let quotaExceeded = Errno(rawValue: EDQUOT)
    /// ECONNRESET: the peer reset the connection.
    public static let connectionReset = Errno(rawValue: ECONNRESET)
    /// ECONNREFUSED: nothing listens at that address.
    public static let connectionRefused = Errno(rawValue: ECONNREFUSED)
    /// EPIPE: the peer closed its end; writing on is pointless.
    public static let brokenPipe = Errno(rawValue: EPIPE)
    /// ETIMEDOUT: the connection attempt or the peer timed out.
    public static let timedOut = Errno(rawValue: ETIMEDOUT)
    /// EADDRNOTAVAIL: the address is not one of this host's.
    public static let addressNotAvailable = Errno(rawValue: EADDRNOTAVAIL)
    /// EADDRINUSE: something else is bound to that address and port.
    public static let addressInUse = Errno(rawValue: EADDRINUSE)
    /// EAFNOSUPPORT: the address family is not available (IPv6 turned off, say).
    public static let familyNotSupported = Errno(rawValue: EAFNOSUPPORT)
    /// ENETUNREACH: no route to that network.
    public static let networkUnreachable = Errno(rawValue: ENETUNREACH)
    /// EHOSTUNREACH: no route to that host.
    public static let hostUnreachable = Errno(rawValue: EHOSTUNREACH)
    /// The process is out of file descriptors (EMFILE).
    public static let processOutOfDescriptors = Errno(rawValue: EMFILE)
    /// The system is out of file descriptors (ENFILE).
    public static let systemOutOfDescriptors = Errno(rawValue: ENFILE)
    /// ENOBUFS: the kernel is out of buffer space for the socket.
    public static let noBufferSpace = Errno(rawValue: ENOBUFS)
    /// ENOMEM: the kernel is out of memory.
    public static let outOfMemory = Errno(rawValue: ENOMEM)
    /// EINTR: a signal arrived before the call finished; the call may be retried.
    public static let interrupted = Errno(rawValue: EINTR)
    /// EAGAIN: a non-blocking call would have had to wait.
    public static let wouldBlock = Errno(rawValue: EAGAIN)
    /// EIO: a low-level input/output error (a failing disk).
    public static let ioError = Errno(rawValue: EIO)
    /// EINVAL: an argument the call does not accept.
    public static let invalidArgument = Errno(rawValue: EINVAL)
    /// EROFS: the file system is mounted read-only.
    public static let readOnlyFileSystem = Errno(rawValue: EROFS)
    /// EOPNOTSUPP: the file system or socket does not support the operation.
    public static let notSupported = Errno(rawValue: EOPNOTSUPP)
    /// ENOSYS: the kernel lacks this system call (too old, or a seccomp filter).
    public static let noSystemCall = Errno(rawValue: ENOSYS)
    /// EXDEV: the two names or files are on different file systems (or mounts).
    public static let crossDevice = Errno(rawValue: EXDEV)
    /// ENOTTY: the file (or its file system) knows no such ioctl.
    public static let noSuchIoctl = Errno(rawValue: ENOTTY)
    /// EMLINK: the file has as many hard links as its file system allows.
    public static let tooManyLinks = Errno(rawValue: EMLINK)
}

extension SystemError {
    /// The error number, by name.
    public var code: Errno { Errno(rawValue: errno) }
}

/// The calling thread's errno, for callers that learn of a failure through a library that
/// leaves it set (OpenSSL's SSL_ERROR_SYSCALL).
public func currentErrno() -> CInt { errno }
