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
    public func openDirectoryBeneath(_ path: String, creating mode: FileMode, ownerOf: String) throws(SystemError)
        -> FileDescriptor
    {
        try openDirectoryBeneath(path, creating: mode, ownerOf: ownerOf, sidestepping: false).directory
    }

    /// As `openDirectoryBeneath(_:creating:ownerOf:)`; with `sidestepping`, a component whose
    /// name is taken by something that is not a directory (a symlink, a file) is replaced by
    /// "name (2)", "name (3)", ... (the first that is a directory or can be made one), so that
    /// a folder named by a sender is found or made whatever the directory holds. Returns the
    /// directory and the path it has below this one.
    public func openDirectoryBeneath(
        _ path: String, creating mode: FileMode, ownerOf: String,
        sidestepping: Bool
    ) throws(SystemError) -> (directory: FileDescriptor, path: String) {
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
                } catch
                    where sidestepping && counter < 100
                    && (error.code == .tooManySymlinks || error.code == .notDirectory)
                {
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
    private func openOrMakeComponent(_ part: String, mode: FileMode, ownerOf: String) throws(SystemError)
        -> FileDescriptor
    {
        do { return try openComponent(part) } catch  where error.code == .noSuchFile {
            do { try makeDirectory(part, mode: mode) } catch  where error.code == .exists {}
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
    public func openBeneath(_ path: String, flags: OpenFlags, mode: FileMode = 0o644) throws(SystemError)
        -> FileDescriptor
    {
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

/// Creates `path` and its missing parents, like `mkdir -p`: a component that exists must be a
/// directory (or a symlink to one: this follows symlinks, so use it only where no one else can
/// write the way); a file there fails with ENOTDIR naming it, as `mkdir -p` does.
public func makeDirectories(_ path: String, mode: FileMode = 0o755) throws(SystemError) {
    var prefix = path.startsWithScalar("/") ? "/" : ""
    for part in path.parts(separatedBy: "/", omittingEmpty: true) {
        prefix += part
        do { _ = try syscall("mkdir", prefix) { mkdir(prefix, mode_t(mode)) } } catch  where error.code == .exists {
            guard try fileStatus(prefix).isDirectory else {
                throw SystemError(call: "mkdir", object: prefix, errno: ENOTDIR)
            }
        }
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
