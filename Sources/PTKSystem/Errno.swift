import Glibc

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

/// The calling thread's errno, for callers that learn of a failure through a library that
/// leaves it set (OpenSSL's SSL_ERROR_SYSCALL).
public func currentErrno() -> CInt { errno }
