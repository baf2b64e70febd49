import Glibc

/// Flags for `FileDescriptor.open`; O_CLOEXEC is always added.
public struct OpenFlags: OptionSet, Sendable {
    /// The flags as `openat` takes them, without O_CLOEXEC (added by `open`).
    public let rawValue: CInt
    /// Any combination of open flags.
    public init(rawValue: CInt) { self.rawValue = rawValue }

    /// O_RDONLY (zero): reading only; the default when neither write flag is given.
    public static let readOnly = OpenFlags([])
    /// O_WRONLY: writing only.
    public static let writeOnly = OpenFlags(rawValue: O_WRONLY)
    /// O_RDWR: reading and writing.
    public static let readWrite = OpenFlags(rawValue: O_RDWR)
    /// O_CREAT: make the file when the name is free, with `open`'s `mode` less the umask.
    public static let create = OpenFlags(rawValue: O_CREAT)
    /// With `create`: fail if the name exists.
    public static let exclusive = OpenFlags(rawValue: O_EXCL)
    /// O_TRUNC: cut an existing file to length 0 when it is opened for writing.
    public static let truncate = OpenFlags(rawValue: O_TRUNC)
    /// Every write goes to the end of the file.
    public static let append = OpenFlags(rawValue: O_APPEND)
    /// O_DIRECTORY: fail (ENOTDIR) unless the name is a directory.
    public static let directory = OpenFlags(rawValue: O_DIRECTORY)
    /// Fail (ELOOP) rather than follow a symlink in the last component.
    public static let noFollow = OpenFlags(rawValue: O_NOFOLLOW)
    /// O_NONBLOCK: do not wait: on a FIFO with no reader, or for a lease or a read that would block.
    public static let nonBlocking = OpenFlags(rawValue: O_NONBLOCK)
    /// A descriptor that names the file without opening it for reading or writing.
    public static let pathOnly = OpenFlags(rawValue: 0o10000000)  // O_PATH, which the Glibc overlay does not export
    /// O_TMPFILE (with `readWrite` or `writeOnly`, the path a directory): a file with no name
    /// in that directory, gone when its last descriptor closes. (O_TMPFILE: the Glibc overlay
    /// does not export it.)
    public static let temporaryFile = OpenFlags(rawValue: 0o20000000 | O_DIRECTORY)
}

/// An open file descriptor. A value, like swift-system's: whoever opened it closes it.
public struct FileDescriptor: RawRepresentable, Hashable, Sendable {
    /// The kernel's descriptor number; valid while the opener has not closed it.
    public let rawValue: CInt
    /// Wraps `rawValue` without opening or duplicating anything: whoever owned the number owns this.
    public init(rawValue: CInt) { self.rawValue = rawValue }

    /// The standard error stream.
    public static let standardError = FileDescriptor(rawValue: 2)
    /// The standard output stream.
    public static let standardOutput = FileDescriptor(rawValue: 1)
    /// The standard input stream.
    public static let standardInput = FileDescriptor(rawValue: 0)

    /// Opens `path` relative to the directory `dir` (or the working directory when nil).
    /// The corresponding C function is `openat`.
    public static func open(
        _ path: String, relativeTo dir: FileDescriptor? = nil, flags: OpenFlags,
        mode: FileMode = 0o644
    ) throws(SystemError) -> FileDescriptor {
        let fd = try syscall("open", path) {
            openat(dir?.rawValue ?? AT_FDCWD, path, flags.rawValue | O_CLOEXEC, mode_t(mode))
        }
        return FileDescriptor(rawValue: fd)
    }

    /// Closes the descriptor; errors are ignored, as the descriptor is gone either way.
    /// A second descriptor of the same open file, close-on-exec. The C function is `fcntl`
    /// with `F_DUPFD_CLOEXEC`.
    public func duplicate() throws(SystemError) -> FileDescriptor {
        FileDescriptor(rawValue: try syscall("fcntl") { fcntl(rawValue, F_DUPFD_CLOEXEC, 0) })
    }

    /// The corresponding C function is `close`.
    public func close() {
        _ = Glibc.close(rawValue)
    }

    /// Reads up to `buffer.count` bytes; 0 means end of file. The corresponding C function is `read`.
    public func read(into buffer: UnsafeMutableRawBufferPointer) throws(SystemError) -> Int {
        try syscall("read") { Glibc.read(rawValue, buffer.baseAddress, buffer.count) }
    }

    /// Reads up to `buffer.count` bytes at `offset`. The corresponding C function is `pread`.
    public func read(fromAbsoluteOffset offset: Int64, into buffer: UnsafeMutableRawBufferPointer) throws(SystemError)
        -> Int
    {
        try syscall("pread") { Glibc.pread(rawValue, buffer.baseAddress, buffer.count, off_t(offset)) }
    }

    /// Reads at `offset` until `buffer` is full or the file ends, however many calls it takes;
    /// returns how many bytes were read (fewer than `buffer.count` only at the end of the file).
    public func readFully(fromAbsoluteOffset offset: Int64, into buffer: UnsafeMutableRawBufferPointer)
        throws(SystemError) -> Int
    {
        var done = 0
        while done < buffer.count {
            let n = try read(
                fromAbsoluteOffset: offset + Int64(done), into: UnsafeMutableRawBufferPointer(rebasing: buffer[done...])
            )
            if n == 0 { break }
            done += n
        }
        return done
    }

    /// Writes some of `buffer`; returns how much. The corresponding C function is `write`.
    public func write(_ buffer: UnsafeRawBufferPointer) throws(SystemError) -> Int {
        try syscall("write") { Glibc.write(rawValue, buffer.baseAddress, buffer.count) }
    }

    /// Writes all of `buffer`, however many calls it takes.
    public func writeAll(_ buffer: UnsafeRawBufferPointer) throws(SystemError) {
        var done = 0
        while done < buffer.count {
            done += try write(UnsafeRawBufferPointer(rebasing: buffer[done...]))
        }
    }

    /// Writes all of `bytes`.
    public func writeAll(_ bytes: [UInt8]) throws(SystemError) {
        try bytes.withUnsafeBytes { b in Result { () throws(SystemError) in try writeAll(b) } }.get()
    }

    /// Flushes the file's data and metadata to disk. The corresponding C function is `fsync`.
    public func sync() throws(SystemError) {
        _ = try syscall("fsync") { fsync(rawValue) }
    }

    /// Flushes the file's data (and the metadata needed to read it) to disk. The corresponding
    /// C function is `fdatasync`.
    public func syncData() throws(SystemError) {
        _ = try syscall("fdatasync") { fdatasync(rawValue) }
    }

    /// Sets the file's modification time (its access time is left as it is). The corresponding
    /// C function is `futimens`.
    public func setModifiedTime(_ time: WallTime) throws(SystemError) {
        let omit = (1 << 30) - 2  // UTIME_OMIT, which the Glibc overlay does not export: the access time stays
        var times = [
            timespec(tv_sec: 0, tv_nsec: omit),
            timespec(tv_sec: time_t(time.seconds), tv_nsec: Int((time.milliseconds - time.seconds * 1000) * 1_000_000)),
        ]
        _ = try syscall("futimens") { futimens(rawValue, &times) }
    }

    /// Sets the file's permission bits. The corresponding C function is `fchmod`.
    public func setPermissions(_ mode: FileMode) throws(SystemError) {
        _ = try syscall("fchmod") { fchmod(rawValue, mode_t(mode)) }
    }

    /// True when this open file of `size` bytes has a hole (a range never written, which
    /// reads as zeros and takes no room on disk): the first hole the file system reports is
    /// before its end. False when it has none, or the file system cannot tell (it then reports
    /// the whole file as data). The file offset is left where it was. The corresponding C
    /// function is `lseek` with SEEK_HOLE.
    public func hasHoles(size: Int64) -> Bool {
        guard size > 0 else { return false }
        let offset = lseek(rawValue, 0, SEEK_CUR)
        let hole = lseek(rawValue, 0, 4 /* SEEK_HOLE, which the Glibc overlay does not export */)
        if offset >= 0 { _ = lseek(rawValue, offset, SEEK_SET) }
        return hole >= 0 && Int64(hole) < size
    }

    /// Sets the file's length. The corresponding C function is `ftruncate`.
    public func truncate(to length: Int64) throws(SystemError) {
        _ = try syscall("ftruncate") { ftruncate(rawValue, off_t(length)) }
    }

    /// Moves the file offset. The corresponding C function is `lseek`.
    @discardableResult
    public func seek(to offset: Int64) throws(SystemError) -> Int64 {
        Int64(try syscall("lseek") { lseek(rawValue, off_t(offset), SEEK_SET) })
    }

    /// The file's status. The corresponding C function is `fstat`.
    public func status() throws(SystemError) -> FileStatus {
        var st = stat()
        _ = try syscall("fstat") { fstat(rawValue, &st) }
        return FileStatus(st)
    }

    /// Starts writing the file's dirty pages in `offset..<offset+length` to disk without waiting,
    /// and lets the kernel drop them from the cache once written. Advice only: errors are
    /// ignored. The corresponding C function is `posix_fadvise` (POSIX_FADV_DONTNEED).
    public func startWriteback(offset: Int64, length: Int64) {
        _ = posix_fadvise(rawValue, off_t(offset), off_t(length), POSIX_FADV_DONTNEED)
    }

    /// Takes an exclusive advisory lock without waiting; false when another holder has it.
    /// The corresponding C function is `flock`.
    public func tryLock() throws(SystemError) -> Bool {
        while true {
            if flock(rawValue, LOCK_EX | LOCK_NB) == 0 { return true }
            let err = errno
            if err == EINTR { continue }
            if err == EWOULDBLOCK { return false }
            throw SystemError(call: "flock", errno: err)
        }
    }

    /// Bytes available to an unprivileged user on this descriptor's file system.
    /// The corresponding C function is `fstatvfs`.
    public func availableSpace() throws(SystemError) -> Int64 {
        var st = statvfs()
        _ = try syscall("fstatvfs") { fstatvfs(rawValue, &st) }
        return Int64(st.f_bavail) * Int64(st.f_frsize)
    }

    /// Bytes in use on this descriptor's file system (its size less what is free).
    /// The corresponding C function is `fstatvfs`.
    public func usedSpace() throws(SystemError) -> Int64 {
        var st = statvfs()
        _ = try syscall("fstatvfs") { fstatvfs(rawValue, &st) }
        return (Int64(st.f_blocks) - Int64(st.f_bfree)) * Int64(st.f_frsize)
    }

    /// Sets O_NONBLOCK and FD_CLOEXEC. The corresponding C function is `fcntl`.
    public func setNonBlockingAndCloseOnExec() {
        _ = fcntl(rawValue, F_SETFL, fcntl(rawValue, F_GETFL) | O_NONBLOCK)
        _ = fcntl(rawValue, F_SETFD, FD_CLOEXEC)
    }

    /// True when the descriptor refers to a terminal. The corresponding C function is `isatty`.
    public var isTerminal: Bool { isatty(rawValue) == 1 }
}
