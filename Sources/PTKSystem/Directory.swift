import CLinux
import Glibc

/// Operations on names inside a directory descriptor (the `*at` family), so that a path is
/// always resolved below that directory.
extension FileDescriptor {
    /// Creates a hard link `newName` to `oldName`; fails with EEXIST rather than replace.
    /// The corresponding C function is `linkat`.
    public func link(_ oldName: String, in oldDirectory: FileDescriptor, to newName: String) throws(SystemError) {
        _ = try syscall("link", newName) { linkat(oldDirectory.rawValue, oldName, rawValue, newName, 0) }
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

    /// The names in this directory, then closes it.
    public func entriesAndClose() throws(SystemError) -> [String] {
        defer { close() }
        return try entries()
    }

    /// The names in this directory, "." and ".." left out. The corresponding C function is `readdir`.
    public func entries() throws(SystemError) -> [String] {
        // fdopendir takes ownership of its descriptor, so give it a duplicate.
        let copy = try syscall("dup") { fcntl(rawValue, F_DUPFD_CLOEXEC, 0) }
        guard let dir = fdopendir(copy) else {
            let err = errno
            Glibc.close(copy)
            throw SystemError(call: "fdopendir", errno: err)
        }
        defer { closedir(dir) }
        rewinddir(dir)
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafePointer(to: entry.pointee.d_name) {
                $0.withMemoryRebound(to: CChar.self, capacity: 256) { String(cString: $0) }
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }
}

/// Creates `path` and its missing parents, like `mkdir -p`.
public func makeDirectories(_ path: String, mode: FileMode = 0o755) throws(SystemError) {
    var prefix = path.hasPrefix("/") ? "/" : ""
    for part in path.split(separator: "/") {
        prefix += part
        if mkdir(prefix, mode_t(mode)) != 0 && errno != EEXIST {
            throw SystemError(call: "mkdir", object: prefix, errno: errno)
        }
        prefix += "/"
    }
}

extension FileDescriptor {
    /// Renames `oldName` to `newName`, both in this directory, failing with EEXIST rather than
    /// replacing a file. The corresponding C function is `renameat2` with `RENAME_NOREPLACE`.
    public func rename(_ oldName: String, to newName: String) throws(SystemError) {
        _ = try syscall("rename", newName) { renameat2(rawValue, oldName, rawValue, newName, 1) }
    }

    /// Run as root, gives this file or directory the owner and group of the directory at
    /// `path` when they are not root's, so that the service user owning it can still write
    /// what root created there. Does nothing otherwise. The corresponding C function is `fchown`.
    public func takeOwner(of path: String) throws(SystemError) {
        guard let owner = try ownerToGive(path) else { return }
        _ = try syscall("fchown", path) { fchown(rawValue, owner.owner, owner.group) }
    }
}
