import Glibc
import PTKVocabulary

// Files in a directory another user owns (issue 42): one component at a time below an open
// directory, a symlink, a second hard link or the wrong kind of file refused with a
// `RefusedFileError` that names the path. Which call to use when: docs/ARCHITECTURE.md,
// "Choosing a file call".

/// A name below a directory that a file operation will not go through: a symbolic link (which
/// the user owning the directory may have planted to send root's writes elsewhere), a lock
/// file with a second hard link (another name for someone else's file), or something that is
/// not the regular file or directory expected. `path` names it in full for the message.
public struct RefusedFileError: Error, CustomStringConvertible, Equatable, Sendable {
    /// What was found at the name instead of what was expected.
    public enum Reason: Equatable, Sendable {
        case symbolicLink
        case hardLinks(Int)
        case notRegularFile
        case notDirectory
    }

    /// The whole path of the refused name, for the message.
    public var path: String
    /// Why it was refused.
    public var reason: Reason

    /// A refusal of `path` for `reason`.
    public init(path: String, reason: Reason) {
        self.path = path
        self.reason = reason
    }

    /// The message for the user: what was found, why it is refused, and what to do.
    public var description: String {
        switch reason {
        case .symbolicLink:
            return
                "\(path) is a symbolic link, which is not followed (one planted there could send what is written, read or deleted elsewhere): remove it, and check who made it"
        case .hardLinks(let n):
            return
                "\(path) has \(n) hard links, and a lock file must have one (another name could make it someone else's file): remove it (it is made again), and check who linked it"
        case .notRegularFile:
            return "\(path) is not a regular file: remove it, and check who made it"
        case .notDirectory:
            return "\(path) is not a directory: remove it, and check who made it"
        }
    }
}

extension FileDescriptor {
    /// Run as root, the owner and group of this directory when they are not root's: what a
    /// file root creates in it must get. Nil otherwise. Asked of the open directory, never by path.
    func ownerForEntries() throws(SystemError) -> FileStatus? {
        guard geteuid() == 0 else { return nil }
        let status = try status()
        return status.owner == 0 && status.group == 0 ? nil : status
    }

    /// Why `name` (one component) cannot be opened as asked, when it is a symlink or not of
    /// the kind `directory` says; nil when it is (the error was another).
    fileprivate func refusal(of name: String, path: String, directory: Bool) -> RefusedFileError? {
        // Gone, or not stat-able: the open's own error says why.
        guard let status = try? status(of: name) else { return nil }
        if status.isSymlink { return RefusedFileError(path: path, reason: .symbolicLink) }
        if directory && !status.isDirectory { return RefusedFileError(path: path, reason: .notDirectory) }
        if !directory && !status.isRegularFile { return RefusedFileError(path: path, reason: .notRegularFile) }
        return nil
    }

    /// The error to report for `error` from opening `name`: a `RefusedFileError` when the name
    /// is a symlink or of the wrong kind, else `error` naming `path` in full.
    fileprivate func explained(_ error: SystemError, name: String, path: String, directory: Bool) -> any Error {
        if let refused = refusal(of: name, path: path, directory: directory) { return refused }
        return SystemError(call: error.call, object: path, errno: error.errno)
    }

    /// A temporary name for `name` made new in this directory (O_EXCL | O_NOFOLLOW, a random
    /// part, so nothing planted is opened), open to write.
    fileprivate func makeTemporary(for name: String, mode: FileMode) throws(SystemError) -> (String, FileDescriptor) {
        var tries = 0
        while true {
            let temporary = ".\(name).tmp.\(getpid()).\(String(UInt64.random(in: 0...UInt64.max), radix: 16))"
            let fd = openat(rawValue, temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode_t(mode))
            if fd >= 0 { return (temporary, FileDescriptor(rawValue: fd)) }
            let code = errno
            tries += 1
            // EINTR and EAGAIN (never expected from a local open, but the funnel's rule) are tried again.
            if code == EINTR || ((code == EEXIST || code == EAGAIN) && tries < 16) { continue }
            throw SystemError(call: "open", object: temporary, errno: code)
        }
    }

    /// EINVAL for anything but one plain component (no "/", not "." or "..").
    fileprivate static func checkComponent(_ name: String, path: String) throws(SystemError) {
        if name.isEmpty || name.isDotOrDotDot || pathComponents(name).count != 1 {
            throw SystemError(call: "openat", object: path, errno: EINVAL)
        }
    }

    /// Opens the directory `name` (one component) in this one without following a symlink
    /// (`openSubdirectory`); `path` is its full path for messages. With `creating`, a missing
    /// one is made with that mode and, run as root, this directory's owner (by its descriptor),
    /// and this directory is flushed. A symlink or a file there is a `RefusedFileError`.
    public func openDirectoryRefusingLinks(_ name: String, path: String, creating mode: FileMode? = nil) throws
        -> FileDescriptor
    {
        try Self.checkComponent(name, path: path)
        switch Result(catching: { () throws(SystemError) in try openSubdirectory(name) }) {
        case .success(let fd): return fd
        case .failure(let error):
            guard error.code == .noSuchFile, let mode else {
                throw explained(error, name: name, path: path, directory: true)
            }
            return try makeSubdirectory(name, path: path, mode: mode)
        }
    }

    /// Makes the directory `name` (if still missing) and opens it without following a symlink;
    /// gives it `mode` and, run as root, this directory's owner; flushes this directory.
    fileprivate func makeSubdirectory(_ name: String, path: String, mode: FileMode) throws -> FileDescriptor {
        // EINTR and EAGAIN are tried again, as the funnel (`syscall`) does; EEXIST is fine.
        var tries = 0
        while mkdirat(rawValue, name, mode_t(mode)) != 0 {
            let code = errno
            if code == EEXIST { break }
            tries += 1
            if (code == EINTR || code == EAGAIN) && tries < 64 { continue }
            throw SystemError(call: "mkdir", object: path, errno: code)
        }
        let made: FileDescriptor
        switch Result(catching: { () throws(SystemError) in try openSubdirectory(name) }) {
        case .success(let fd): made = fd
        case .failure(let error): throw explained(error, name: name, path: path, directory: true)
        }
        let owner: FileStatus?
        do {
            owner = try ownerForEntries()
        } catch {
            made.close()
            throw error
        }
        do throws(SystemError) {
            _ = try syscall("chmod", path) { fchmod(made.rawValue, mode_t(mode)) }
            if let owner { _ = try syscall("chown", path) { fchown(made.rawValue, owner.owner, owner.group) } }
            _ = try syscall("fsync", path) { fsync(rawValue) }
        } catch {
            made.close()
            throw error
        }
        return made
    }

    /// The whole of the small regular file `name` (one component) in this directory, at most
    /// `limit` bytes, opened without following a symlink and without waiting on a FIFO; `path`
    /// names it in errors. A symlink or anything but a regular file is a `RefusedFileError`; a
    /// missing file is the open's `SystemError` (ENOENT) naming `path`.
    public func readFileRefusingLinks(_ name: String, path: String, limit: Int = 1 << 20) throws -> [UInt8] {
        try Self.checkComponent(name, path: path)
        let fd: FileDescriptor
        do {
            fd = try .open(name, relativeTo: self, flags: [.readOnly, .noFollow, .nonBlocking])
        } catch {
            throw explained(error, name: name, path: path, directory: false)
        }
        defer { fd.close() }
        guard try fd.status().isRegularFile else { throw RefusedFileError(path: path, reason: .notRegularFile) }
        return try fd.readAll(limit: limit, name: path)
    }

    /// Replaces the file `name` (one component) in this directory with `bytes` all at once:
    /// a temporary name made new beside it (O_EXCL | O_NOFOLLOW, with a random part), written,
    /// given `mode` and, run as root, this directory's owner (fchmod, fchown: by descriptor),
    /// flushed, and renamed over `name` relative to this same descriptor; then this directory
    /// is flushed. A symlink or a directory at `name` is a `RefusedFileError` (renaming over a
    /// symlink would not follow it, but someone planted it: say so). The corresponding C
    /// functions are `openat`, `write`, `fchmod`, `fchown`, `fsync` and `renameat`.
    public func replaceFileRefusingLinks(_ name: String, path: String, with bytes: [UInt8], mode: FileMode) throws {
        try Self.checkComponent(name, path: path)
        if let status = try? status(of: name) {  // a missing file is simply made
            if status.isSymlink { throw RefusedFileError(path: path, reason: .symbolicLink) }
            if !status.isRegularFile { throw RefusedFileError(path: path, reason: .notRegularFile) }
        }
        let owner = try ownerForEntries()
        let (temporary, fd) = try makeTemporary(for: name, mode: mode)
        do {
            defer { fd.close() }
            try fd.writeAll(bytes)
            try fd.setPermissions(mode)
            if let owner { _ = try syscall("fchown", path) { fchown(fd.rawValue, owner.owner, owner.group) } }
            try fd.sync()
        } catch {
            _ = unlinkat(rawValue, temporary, 0)
            throw error
        }
        do { _ = try syscall("rename", path) { renameat(rawValue, temporary, rawValue, name) } } catch {
            _ = unlinkat(rawValue, temporary, 0)
            throw error
        }
        try sync()
    }

    /// Removes the file `name` (one component) from this directory; returns whether there was
    /// one. A symlink or a directory there is a `RefusedFileError`, and stays.
    @discardableResult
    public func removeFileRefusingLinks(_ name: String, path: String) throws -> Bool {
        try Self.checkComponent(name, path: path)
        let status: FileStatus
        do { status = try self.status(of: name) } catch  where error.code == .noSuchFile { return false }
        if status.isSymlink { throw RefusedFileError(path: path, reason: .symbolicLink) }
        if !status.isRegularFile { throw RefusedFileError(path: path, reason: .notRegularFile) }
        do { try unlink(name) } catch  where error.code == .noSuchFile { return false }
        try sync()
        return true
    }

    /// Runs `body` holding an exclusive lock (flock) on the file `name` (one component) in this
    /// directory, created if missing (mode 0644; run as root, given this directory's owner when
    /// root made it). It is opened without following a symlink or waiting on a FIFO, and refused
    /// (`RefusedFileError`) unless it is a regular file with one link: a hard link planted there
    /// would otherwise have someone else's file locked and chowned. A lock another process
    /// holds is waited for as `patience` says, never longer (`LockTimeoutError`); `guards` says
    /// what the lock guards, for that error. A lease another process holds on the file (the
    /// file's owner may take one) is waited out as `patience` says too, saying so
    /// (`openWaitingOutLeases`, `LeaseTimeoutError`), never the kernel's 45 s in silence.
    public func withLockFileRefusingLinks<R>(
        _ name: String, path: String, guards: String, patience: LockPatience = .lockFile,
        _ body: () throws -> R
    ) throws -> R {
        try Self.checkComponent(name, path: path)
        let fd: FileDescriptor
        do {
            fd = try openWaitingOutLeases(
                name, flags: [.readWrite, .create], mode: 0o644, path: path, patience: patience)
        } catch let error as SystemError {
            throw explained(error, name: name, path: path, directory: false)
        }
        defer { fd.close() }
        var st = stat()
        _ = try syscall("fstat", path) { fstat(fd.rawValue, &st) }
        guard (st.st_mode & S_IFMT) == S_IFREG else { throw RefusedFileError(path: path, reason: .notRegularFile) }
        guard st.st_nlink == 1 else { throw RefusedFileError(path: path, reason: .hardLinks(Int(st.st_nlink))) }
        // Only a lock file root just made is given away; one the owner made is theirs already.
        if st.st_uid == 0, let owner = try ownerForEntries() {
            _ = try syscall("fchown", path) { fchown(fd.rawValue, owner.owner, owner.group) }
        }
        try fd.lockExclusively(path: path, guards: guards, patience: patience)
        return try body()
    }
}
