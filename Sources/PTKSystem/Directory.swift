import CLinux
import Glibc
import PTKVocabulary

/// Operations on names inside a directory descriptor (the `*at` family), so that a path is
/// always resolved below that directory.
extension FileDescriptor {
    /// Creates a hard link `newName` to `oldName`; fails with EEXIST rather than replace.
    /// The corresponding C function is `linkat`.
    public func link(_ oldName: String, in oldDirectory: FileDescriptor, to newName: String) throws(SystemError) {
        _ = try syscall("link", newName) { linkat(oldDirectory.rawValue, oldName, rawValue, newName, 0) }
    }

    /// Moves `oldName` in `oldDirectory` to `newName` in this directory (on the same file
    /// system) in one step; fails with EEXIST rather than replace, and with EINVAL where the
    /// file system cannot promise that. The corresponding C function is `renameat2` with
    /// `RENAME_NOREPLACE`.
    public func move(_ oldName: String, in oldDirectory: FileDescriptor, to newName: String) throws(SystemError) {
        _ = try syscall("rename", newName) { renameat2(oldDirectory.rawValue, oldName, rawValue, newName, 1) }
    }

    /// Removes the name `name`. The corresponding C function is `unlinkat`.
    public func unlink(_ name: String) throws(SystemError) {
        _ = try syscall("unlink", name) { unlinkat(rawValue, name, 0) }
    }

    /// Creates the directory `name`. The corresponding C function is `mkdirat`.
    public func makeDirectory(_ name: String, mode: FileMode) throws(SystemError) {
        _ = try syscall("mkdir", name) { mkdirat(rawValue, name, mode_t(mode)) }
    }

    /// The status of `name` without following a final symlink. The corresponding C function is `fstatat`.
    public func status(of name: String) throws(SystemError) -> FileStatus {
        var st = stat()
        _ = try syscall("stat", name) { fstatat(rawValue, name, &st, AT_SYMLINK_NOFOLLOW) }
        return FileStatus(st)
    }

    /// Opens the directory `path` (one or more components separated by "/") below this one,
    /// following no symlink on the way and never leaving this directory: `openat2` with
    /// RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS. Missing components are created with `mode` and,
    /// run as root, the owner of `ownerOf` (the service user's directory stays theirs); each new
    /// one's parent is flushed, so the folder survives a power cut with the photo in it. Where
    /// the kernel has no openat2 (before Linux 5.6, or a filter refusing it), each component is
    /// opened in turn with O_NOFOLLOW, which refuses the same symlinks, and ".." is refused
    /// outright. The corresponding C functions are `openat2`, `openat`, `mkdirat` and `fchown`.
    public func openDirectoryBeneath(_ path: String, creating mode: FileMode, ownerOf: String) throws(SystemError) -> FileDescriptor {
        try openDirectoryBeneath(path, creating: mode, ownerOf: ownerOf, sidestepping: false).directory
    }

    /// As `openDirectoryBeneath(_:creating:ownerOf:)`; with `sidestepping`, a component whose
    /// name is taken by something that is not a directory (a symlink, a file) is replaced by
    /// "name (2)", "name (3)", ... (the first that is a directory or can be made one), so that
    /// a folder named by a sender is found or made whatever the directory holds. Returns the
    /// directory and the path it has below this one.
    public func openDirectoryBeneath(_ path: String, creating mode: FileMode, ownerOf: String,
                                     sidestepping: Bool) throws(SystemError) -> (directory: FileDescriptor, path: String) {
        // Split at each "/" scalar, as the kernel does ("../\u{301}x" is "..", then "\u{301}x").
        let parts = pathComponents(path)
        if parts.contains(where: { $0.isEmpty || $0.isDotOrDotDot }) {
            throw SystemError(call: "openat2", object: path, errno: EINVAL)
        }
        var current = self
        var used: [String] = []
        defer { if current.rawValue != rawValue { current.close() } }
        for original in parts {
            var counter = 1
            var part = original
            let next: FileDescriptor
            while true {
                do {
                    next = try current.openOrMakeComponent(part, mode: mode, ownerOf: ownerOf)
                    break
                } catch where sidestepping && counter < 100 && (error.code == .tooManySymlinks || error.code == .notDirectory) {
                    counter += 1
                    part = "\(original) (\(counter))"
                }
            }
            used.append(part)
            if current.rawValue != rawValue { current.close() }
            current = next
        }
        let result = current
        current = self  // handed to the caller, not closed by the defer
        return (result, used.joined(separator: "/"))
    }

    /// Opens the directory `part` below this one, making it (mode, owner, flushed parent) when missing.
    private func openOrMakeComponent(_ part: String, mode: FileMode, ownerOf: String) throws(SystemError) -> FileDescriptor {
        do { return try openComponent(part) } catch where error.code == .noSuchFile {
            do { try makeDirectory(part, mode: mode) } catch where error.code == .exists {}
            let made = try openComponent(part)
            do {
                try made.setPermissions(mode)
                try made.takeOwner(of: ownerOf)
                try sync()
            } catch {
                made.close()
                throw error
            }
            return made
        }
    }

    /// The folder holding `path` (components separated by "/") below this directory, opened
    /// without following any symlink and without creating anything, and the last component:
    /// for working on a photo in a folder with the `*at` calls. A path without "/" gives this
    /// directory itself (not to be closed: `Beneath.close` knows).
    public func parentBeneath(_ path: String) throws(SystemError) -> Beneath {
        // Split at each "/" scalar, as the kernel does ("../\u{301}x" is "..", then "\u{301}x").
        let parts = pathComponents(path)
        if parts.contains(where: { $0.isEmpty || $0.isDotOrDotDot }) {
            throw SystemError(call: "openat2", object: path, errno: EINVAL)
        }
        if parts.count == 1 { return Beneath(folder: self, name: path, owned: false) }
        var current = self
        for part in parts.dropLast() {
            let next: FileDescriptor
            do { next = try current.openComponent(part) } catch {
                if current.rawValue != rawValue { current.close() }
                throw error
            }
            if current.rawValue != rawValue { current.close() }
            current = next
        }
        return Beneath(folder: current, name: parts[parts.count - 1], owned: true)
    }

    /// Opens the file `path` (components separated by "/") below this directory with `flags`,
    /// following no symlink on the way or at the end and never leaving this directory.
    public func openBeneath(_ path: String, flags: OpenFlags, mode: FileMode = 0o644) throws(SystemError) -> FileDescriptor {
        let place = try parentBeneath(path)
        defer { place.close() }
        return try .open(place.name, relativeTo: place.folder, flags: flags.union(.noFollow), mode: mode)
    }

    /// Moves `old` to `new` (both paths below this directory; `new`'s folder must exist), in
    /// one step, never replacing anything (EEXIST) and following no symlink, then flushes the
    /// folders it changed.
    public func moveBeneath(_ old: String, to new: String) throws(SystemError) {
        let from = try parentBeneath(old)
        defer { from.close() }
        let to = try parentBeneath(new)
        defer { to.close() }
        try to.folder.move(from.name, in: from.folder, to: to.name)
        try to.folder.sync()
        if from.folder.rawValue != to.folder.rawValue { try from.folder.sync() }
    }

    /// The status of `path` below this directory, following no symlink (`openBeneath`'s rules).
    public func statusBeneath(_ path: String) throws(SystemError) -> FileStatus {
        let place = try parentBeneath(path)
        defer { place.close() }
        return try place.folder.status(of: place.name)
    }

    /// Opens the existing directory `name` (one component) below this one without following a symlink.
    public func openSubdirectory(_ name: String) throws(SystemError) -> FileDescriptor { try openComponent(name) }

    /// Opens the directory `name` (one component) below this one without following a symlink.
    private func openComponent(_ name: String) throws(SystemError) -> FileDescriptor {
        let flags = UInt64(O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW)
        var fd: CInt = -1
        var code: CInt = 0
        // EINTR (a signal) and EAGAIN (a rename or mount raced the lookup, as openat2(2) says)
        // are tried again, a bounded number of times.
        for _ in 0..<64 {
            fd = ptk_openat2(rawValue, name, flags, 0x08 | 0x04)  // RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS
            if fd >= 0 { return FileDescriptor(rawValue: fd) }
            code = errno
            if code != EINTR && code != EAGAIN { break }
        }
        guard code == ENOSYS || code == EPERM else { throw SystemError(call: "openat2", object: name, errno: code) }
        return try FileDescriptor.open(name, relativeTo: self, flags: [.readOnly, .directory, .noFollow])
    }

    /// The names in this directory, then closes it.
    public func entriesAndClose() throws(SystemError) -> [String] {
        defer { close() }
        return try entries()
    }

    /// The names in this directory, "." and ".." left out, as text (bytes that are not UTF-8
    /// replaced: `byteEntries` keeps them). The corresponding C function is `readdir`.
    public func entries() throws(SystemError) -> [String] {
        try byteEntries().map { String(decoding: $0.bytes, as: UTF8.self) }
    }
}

/// A name in a folder below a directory (`FileDescriptor.parentBeneath`).
public struct Beneath {
    /// The folder (the directory itself for a name without folders).
    public let folder: FileDescriptor
    /// The last component.
    public let name: String
    let owned: Bool
    /// Closes the folder if it was opened for this.
    public func close() { if owned { folder.close() } }
}

/// Creates the directory `path`, which must not exist (EEXIST for anything there, a symlink
/// included: nothing is followed). The corresponding C function is `mkdir`.
public func makeNewDirectory(_ path: String, mode: FileMode) throws(SystemError) {
    _ = try syscall("mkdir", path) { mkdir(path, mode_t(mode)) }
}

/// Creates `path` and its missing parents, like `mkdir -p`.
public func makeDirectories(_ path: String, mode: FileMode = 0o755) throws(SystemError) {
    var prefix = path.startsWithScalar("/") ? "/" : ""
    for part in path.parts(separatedBy: "/", omittingEmpty: true) {
        prefix += part
        do { _ = try syscall("mkdir", prefix) { mkdir(prefix, mode_t(mode)) } } catch where error.code == .exists {}
        prefix += "/"
    }
}

extension FileDescriptor {
    /// Renames `oldName` to `newName`, both in this directory, failing with EEXIST rather than
    /// replacing a file. The corresponding C function is `renameat2` with `RENAME_NOREPLACE`.
    public func rename(_ oldName: String, to newName: String) throws(SystemError) {
        try move(oldName, in: self, to: newName)
    }

    /// Run as root, gives this file or directory the owner and group of the directory at
    /// `path` when they are not root's, so that the service user owning it can still write
    /// what root created there. Does nothing otherwise. The corresponding C function is `fchown`.
    public func takeOwner(of path: String) throws(SystemError) {
        guard let owner = try ownerToGive(path) else { return }
        _ = try syscall("fchown", path) { fchown(rawValue, owner.owner, owner.group) }
    }

    /// As `takeOwner(of:)`, with the owner of the open `directory` (asked of its descriptor).
    public func takeOwner(of directory: FileDescriptor) throws(SystemError) {
        guard let owner = try directory.ownerForEntries() else { return }
        _ = try syscall("fchown") { fchown(rawValue, owner.owner, owner.group) }
    }
}

// MARK: Files in a directory another user owns (issue 42)

/// A name below a directory that a file operation will not go through: a symbolic link (which
/// the user owning the directory may have planted to send root's writes elsewhere), a lock
/// file with a second hard link (another name for someone else's file), or something that is
/// not the regular file or directory expected. `path` names it in full for the message.
public struct RefusedFileError: Error, CustomStringConvertible, Equatable, Sendable {
    public enum Reason: Equatable, Sendable {
        case symbolicLink
        case hardLinks(Int)
        case notRegularFile
        case notDirectory
    }

    public var path: String
    public var reason: Reason

    public init(path: String, reason: Reason) {
        self.path = path
        self.reason = reason
    }

    public var description: String {
        switch reason {
        case .symbolicLink:
            return "\(path) is a symbolic link, which is not followed (one planted there could send what is written, read or deleted elsewhere): remove it, and check who made it"
        case .hardLinks(let n):
            return "\(path) has \(n) hard links, and a lock file must have one (another name could make it someone else's file): remove it (it is made again), and check who linked it"
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
    public func openDirectoryRefusingLinks(_ name: String, path: String, creating mode: FileMode? = nil) throws -> FileDescriptor {
        try Self.checkComponent(name, path: path)
        switch Result(catching: { () throws(SystemError) in try openSubdirectory(name) }) {
        case .success(let fd): return fd
        case .failure(let error):
            guard error.code == .noSuchFile, let mode else { throw explained(error, name: name, path: path, directory: true) }
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
        do { status = try self.status(of: name) } catch where error.code == .noSuchFile { return false }
        if status.isSymlink { throw RefusedFileError(path: path, reason: .symbolicLink) }
        if !status.isRegularFile { throw RefusedFileError(path: path, reason: .notRegularFile) }
        do { try unlink(name) } catch where error.code == .noSuchFile { return false }
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
    public func withLockFileRefusingLinks<R>(_ name: String, path: String, guards: String, patience: LockPatience = .lockFile,
                                             _ body: () throws -> R) throws -> R {
        try Self.checkComponent(name, path: path)
        let fd: FileDescriptor
        do {
            fd = try openWaitingOutLeases(name, flags: [.readWrite, .create], mode: 0o644, path: path, patience: patience)
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
