import CLinux
import Glibc
import PTKVocabulary

/// The whole contents of a small file (at most `limit` bytes).
public func readFileBytes(_ path: String, limit: Int = 1 << 20) throws(SystemError) -> [UInt8] {
    let fd = try FileDescriptor.open(path, flags: .readOnly)
    defer { fd.close() }
    return try fd.readAll(limit: limit, name: path)
}

extension FileDescriptor {
    /// What is left to read of this open file, at most `limit` bytes (EFBIG beyond; `name` says
    /// which file in the error).
    public func readAll(limit: Int, name: String) throws(SystemError) -> [UInt8] {
        var out: [UInt8] = []
        var buf = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = try buf.withUnsafeMutableBytes { b in Result { () throws(SystemError) in try read(into: b) } }.get()
            if n == 0 { break }
            out.append(contentsOf: buf[..<n])
            if out.count > limit { throw SystemError(call: "read", object: name, errno: EFBIG) }
        }
        return out
    }

    /// Opens `path` to read a small file another user may have planted: without following a
    /// symlink, without blocking on a FIFO or a device (O_NONBLOCK), and only if what was
    /// opened is a regular file (ENXIO otherwise, as for a FIFO with no writer). Read it
    /// through the descriptor (`readAll`): never open it by name again.
    public static func openRegularFile(_ path: String) throws(SystemError) -> (FileDescriptor, FileStatus) {
        let fd = try FileDescriptor.open(path, flags: [.readOnly, .noFollow, .nonBlocking])
        do throws(SystemError) {
            let status = try fd.status()
            guard status.isRegularFile else { throw SystemError(call: "open", object: path, errno: ENXIO) }
            return (fd, status)
        } catch {
            fd.close()
            throw error
        }
    }
}

/// The directory part of `path` ("." when it has none).
public func parentDirectory(of path: String) -> String {
    // At the last "/" scalar: a "/" followed by a combining mark is one Character, not a "/".
    let scalars = path.unicodeScalars
    guard let slash = scalars.lastIndex(of: "/") else { return "." }
    return slash == scalars.startIndex ? "/" : String(String.UnicodeScalarView(scalars[..<slash]))
}

/// Replaces `path` with `bytes` all at once: a temporary file beside it, written, given
/// `mode`, flushed and renamed over it, so a reader sees the old file or the new one, never
/// half of one; then the directory is flushed, so the new file is the one a power cut leaves.
/// Run as root, the file gets the owner and group of its directory, so a service user that
/// owns the directory can still replace it. The temporary is made new (O_EXCL | O_NOFOLLOW |
/// O_NONBLOCK: whatever was left or put at its name is removed first, never written through
/// or waited on). The corresponding C functions are `open`, `write`, `fchmod`, `fchown`,
/// `fsync` and `rename`.
public func writeFileAtomically(_ path: String, _ bytes: [UInt8], mode: FileMode) throws(SystemError) {
    let temporary = path + ".tmp.\(getpid())"
    let flags: OpenFlags = [.writeOnly, .create, .exclusive, .noFollow, .nonBlocking]
    let fd: FileDescriptor
    do { fd = try FileDescriptor.open(temporary, flags: flags, mode: mode) } catch  where error.code == .exists {
        // Left by a process killed mid-write (its pid is ours now), or put there: its name only goes.
        try removeFile(temporary)
        fd = try FileDescriptor.open(temporary, flags: flags, mode: mode)
    }
    do {
        try fd.writeAll(bytes)
        try fd.setPermissions(mode)
        if let owner = try ownerToGive(parentDirectory(of: path)) {
            _ = try syscall("fchown", temporary) { fchown(fd.rawValue, owner.owner, owner.group) }
        }
        try fd.sync()
        fd.close()
        _ = try syscall("rename", path) { rename(temporary, path) }
    } catch {
        fd.close()
        _ = unlink(temporary)
        throw error
    }
    // The file is in place; its name survives a power cut once the directory is flushed.
    let directory = try FileDescriptor.open(parentDirectory(of: path), flags: [.readOnly, .directory])
    defer { directory.close() }
    try directory.sync()
}

/// Writes several files into `directory`, each replacing any file of its name atomically, and
/// makes them durable together: every file is written under a temporary name, then one
/// `syncfs` flushes them all (instead of an `fsync` each, which is what costs when a few
/// hundred small files are written), then each is renamed into place and the directory is
/// flushed. Returns, for each file in order, the error that kept it from its name, or nil. With
/// `flushEach`, each file is flushed by its own `fsync` instead of one `syncfs` (for a few
/// larger files written again and again, such as previews: `syncfs` would also flush whatever
/// else is being written on that file system, each time). The directory is opened once and
/// everything is done through that descriptor (`FileDescriptor.writeFilesAtomically`).
public func writeFilesAtomically(
    in directory: String, _ files: [(name: String, bytes: [UInt8])], mode: FileMode, flushEach: Bool = false
) -> [SystemError?] {
    let dir: FileDescriptor
    do { dir = try FileDescriptor.open(directory, flags: [.readOnly, .directory]) } catch {
        return files.map { _ in error }
    }
    defer { dir.close() }
    return dir.writeFilesAtomically(files, mode: mode, flushEach: flushEach, path: directory)
}

extension FileDescriptor {
    /// `writeFilesAtomically(in:_:mode:flushEach:)` into this open directory (`path` names it in
    /// errors): every name is resolved in this descriptor (`openat`, `renameat`), never by a
    /// path that could lead elsewhere since it was opened; each temporary ("<name>.tmp.<pid>",
    /// which reconcile sweeps when its process is gone) is made new (O_EXCL | O_NOFOLLOW |
    /// O_NONBLOCK: whatever was left or planted at that name is removed first, never written
    /// through); run as root, each file gets this directory's owner and group when they are
    /// not root's (asked of the descriptor, given with `fchown`). The corresponding C functions
    /// are `openat`, `write`, `fchmod`, `fchown`, `syncfs`, `renameat` and `fsync`.
    public func writeFilesAtomically(
        _ files: [(name: String, bytes: [UInt8])], mode: FileMode, flushEach: Bool = false, path directory: String
    ) -> [SystemError?] {
        var errors = [SystemError?](repeating: nil, count: files.count)
        let owner: FileStatus?
        do { owner = try ownerForEntries() } catch {
            return files.map { _ in SystemError(call: error.call, object: directory, errno: error.errno) }
        }
        let suffix = ".tmp.\(getpid())"
        func openTemporary(_ temporary: String, shown: String) throws(SystemError) -> FileDescriptor {
            let flags: OpenFlags = [.writeOnly, .create, .exclusive, .noFollow, .nonBlocking]
            do { return try .open(temporary, relativeTo: self, flags: flags, mode: mode) } catch
                where error.code == .exists
            {
                // Left by a process killed mid-write, or put there: its name only is removed.
                _ = try syscall("unlink", shown) { unlinkat(rawValue, temporary, 0) }
                return try .open(temporary, relativeTo: self, flags: flags, mode: mode)
            } catch {
                throw SystemError(call: error.call, object: shown, errno: error.errno)
            }
        }
        for (i, file) in files.enumerated() {
            let temporary = file.name + suffix
            let shown = directory + "/" + temporary
            do {
                let fd = try openTemporary(temporary, shown: shown)
                defer { fd.close() }
                try fd.writeAll(file.bytes)
                try fd.setPermissions(mode)
                if let owner { _ = try syscall("fchown", shown) { fchown(fd.rawValue, owner.owner, owner.group) } }
                if flushEach { try fd.sync() }
            } catch {
                errors[i] = error
                _ = unlinkat(rawValue, temporary, 0)
            }
        }
        func failWritten(_ error: SystemError) {
            for (i, file) in files.enumerated() where errors[i] == nil {
                errors[i] = error
                _ = unlinkat(rawValue, file.name + suffix, 0)
            }
        }
        if !flushEach {
            do { _ = try syscall("syncfs", directory) { syncfs(rawValue) } } catch {
                failWritten(error)
                return errors
            }
        }
        for (i, file) in files.enumerated() where errors[i] == nil {
            do {
                _ = try syscall("rename", directory + "/" + file.name) {
                    renameat(rawValue, file.name + suffix, rawValue, file.name)
                }
            } catch {
                errors[i] = error
                _ = unlinkat(rawValue, file.name + suffix, 0)
            }
        }
        do { try sync() } catch {
            // The files are in place but their names may not survive a power cut: say so.
            for i in errors.indices where errors[i] == nil { errors[i] = error }
        }
        return errors
    }
}

extension FileDescriptor {
    /// This open file's status with what `FileStatus` leaves out: how many hard links it has,
    /// and what it is in words ("a regular file", "a FIFO"). The corresponding C function is `fstat`.
    public func statusWithLinks() throws(SystemError) -> (status: FileStatus, links: Int, kind: String) {
        var st = stat()
        _ = try syscall("fstat") { fstat(rawValue, &st) }
        return (FileStatus(st), Int(st.st_nlink), fileKind(st.st_mode))
    }

    /// As `statusWithLinks()`, of the name `name` in this directory, not following a final
    /// symlink. The corresponding C function is `fstatat`.
    public func statusWithLinks(of name: String) throws(SystemError) -> (status: FileStatus, links: Int, kind: String) {
        var st = stat()
        _ = try syscall("stat", name) { fstatat(rawValue, name, &st, AT_SYMLINK_NOFOLLOW) }
        return (FileStatus(st), Int(st.st_nlink), fileKind(st.st_mode))
    }
}

/// The kind of file a `st_mode` says, in words.
private func fileKind(_ mode: mode_t) -> String {
    switch mode & S_IFMT {
    case S_IFREG: return "a regular file"
    case S_IFDIR: return "a directory"
    case S_IFLNK: return "a symbolic link"
    case S_IFIFO: return "a FIFO"
    case S_IFSOCK: return "a socket"
    case S_IFCHR: return "a character device"
    case S_IFBLK: return "a block device"
    default: return "of an unknown kind"
    }
}

/// `path` made absolute with every symlink in it resolved, or nil when it cannot be (it is
/// missing, or unreadable). The corresponding C function is `realpath`.
public func resolvedPath(_ path: String) -> String? {
    guard let resolved = realpath(path, nil) else { return nil }
    defer { free(resolved) }
    return String(cString: resolved)
}

/// Deletes `path`; a file that is already gone is not an error. The corresponding C function
/// is `unlink`.
public func removeFile(_ path: String) throws(SystemError) {
    do { _ = try syscall("unlink", path) { unlink(path) } } catch  where error.code == .noSuchFile {}
}

/// Makes `path` and its missing parents, like `mkdir -p`, without ever naming a directory it
/// made again: each missing component is made with `mkdirat` in its parent's descriptor, then
/// opened without following a link (O_NOFOLLOW | O_DIRECTORY), and with `ownerLike`, run as
/// root, given that path's owner and group through the descriptor (`fchown`): every directory
/// it creates, not only the last. Nothing is chowned or chmodded by name, so a symlink swapped
/// in for a directory just made is refused, not chowned through. A symlink already on the way
/// is followed only where no one but root or this user can have put it (`openDirectory(_:followingLinks:)`);
/// one in a directory another user may write (the service user's) is refused with ELOOP.
/// The corresponding C functions are `openat`, `mkdirat`, `fstatat`, `readlinkat` and `fchown`.
public func makeDirectories(_ path: String, mode: FileMode, ownerLike: String?) throws(SystemError) {
    var owner: FileStatus? = nil
    if let ownerLike { owner = try ownerToGive(ownerLike) }
    let absolute = path.startsWithScalar("/")
    var current = try FileDescriptor.open(absolute ? "/" : ".", flags: [.readOnly, .directory])
    defer { current.close() }
    var walked = absolute ? "/" : ""
    for part in path.parts(separatedBy: "/", omittingEmpty: true) {
        walked += part
        let next: FileDescriptor
        do {
            next = try current.openTrustedComponent(part, named: walked, followingLinks: true, depth: 0)
        } catch  where error.code == .noSuchFile {
            var made = true
            do { try current.makeDirectory(part, mode: mode) } catch  where error.code == .exists { made = false } catch
            {
                throw SystemError(call: error.call, object: walked, errno: error.errno)
            }
            // Opened as what was just made: a symlink put there since is refused, never followed.
            do {
                next = try FileDescriptor.open(part, relativeTo: current, flags: [.readOnly, .directory, .noFollow])
            } catch {
                throw SystemError(
                    call: error.call, object: walked, errno: error.code == .notDirectory ? ELOOP : error.errno)
            }
            if made, let owner {
                do { _ = try syscall("fchown", walked) { fchown(next.rawValue, owner.owner, owner.group) } } catch {
                    next.close()
                    throw error
                }
            }
        }
        current.close()
        current = next
        walked += "/"
    }
}

/// Opens the existing directory `path`. A symlink on the way is followed only when root or
/// this process's user owns it and the directory holding it, and no one else may write that
/// directory (so no other user can have put it there or swapped it: a path through /var/run
/// is followed, a link in the service user's folder is not); its target is walked by the same
/// rule. With `followingLinks` false, a symlink as the last component is refused whoever made
/// it. A refused symlink is ELOOP naming the path up to it. The corresponding C functions are
/// `openat`, `fstatat` and `readlinkat`.
public func openDirectory(_ path: String, followingLinks: Bool) throws(SystemError) -> FileDescriptor {
    let absolute = path.startsWithScalar("/")
    var current = try FileDescriptor.open(absolute ? "/" : ".", flags: [.readOnly, .directory])
    let parts = path.parts(separatedBy: "/", omittingEmpty: true)
    var walked = absolute ? "/" : ""
    for (i, part) in parts.enumerated() {
        walked += part
        let next: FileDescriptor
        do {
            next = try current.openTrustedComponent(
                part, named: walked, followingLinks: followingLinks || i < parts.count - 1, depth: 0)
        } catch {
            current.close()
            throw error
        }
        current.close()
        current = next
        walked += "/"
    }
    return current
}

extension FileDescriptor {
    /// Opens the directory `part` (one component) in this one: a directory as it is, a symlink
    /// only when `followingLinks` and it is trusted (`openDirectory(_:followingLinks:)`), its
    /// target then walked component by component by the same rule (at most 40 links deep).
    /// `name` is the path shown in errors.
    fileprivate func openTrustedComponent(_ part: String, named name: String, followingLinks: Bool, depth: Int)
        throws(SystemError) -> FileDescriptor
    {
        do { return try FileDescriptor.open(part, relativeTo: self, flags: [.readOnly, .directory, .noFollow]) } catch {
            guard error.code == .tooManySymlinks || error.code == .notDirectory else {
                throw SystemError(call: error.call, object: name, errno: error.errno)
            }
        }
        var st = stat()
        _ = try syscall("stat", name) { fstatat(rawValue, part, &st, AT_SYMLINK_NOFOLLOW) }
        guard (st.st_mode & S_IFMT) == S_IFLNK else { throw SystemError(call: "open", object: name, errno: ENOTDIR) }
        guard followingLinks, depth < 40, try isTrustedLink(st) else {
            throw SystemError(call: "open", object: name, errno: ELOOP)
        }
        var buffer = [CChar](repeating: 0, count: 4097)
        let n = try syscall("readlink", name) { readlinkat(rawValue, part, &buffer, buffer.count - 1) }
        let target = String(decoding: buffer[..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        var current =
            target.startsWithScalar("/")
            ? try FileDescriptor.open("/", flags: [.readOnly, .directory]) : try duplicate()
        for component in target.parts(separatedBy: "/", omittingEmpty: true) {
            let next: FileDescriptor
            do {
                next = try current.openTrustedComponent(component, named: name, followingLinks: true, depth: depth + 1)
            } catch {
                current.close()
                throw error
            }
            current.close()
            current = next
        }
        return current
    }

    /// True when the symlink whose status is `link`, in this directory, can only have been put
    /// there by root or this process's user: both own it and the directory, which no one else
    /// may write.
    private func isTrustedLink(_ link: stat) throws(SystemError) -> Bool {
        let me = geteuid()
        let folder = try status()
        return (link.st_uid == 0 || link.st_uid == me) && (folder.owner == 0 || folder.owner == me)
            && folder.permissions & 0o022 == 0
    }
}

/// Run as root, the owner and group of `path` when they are not root's: what a file root
/// creates beside it must get, so that the service user owning `path` can still write it.
/// Nil otherwise (nothing to change, and no chown call that a sandbox would refuse).
func ownerToGive(_ path: String) throws(SystemError) -> FileStatus? {
    guard geteuid() == 0 else { return nil }
    let status = try fileStatus(path)
    return status.owner == 0 && status.group == 0 ? nil : status
}

/// Renames `old` to `new`, failing with EEXIST rather than replacing anything there (a file or
/// a directory, empty or not). The corresponding C function is `renameat2` with `RENAME_NOREPLACE`.
public func renameWithoutReplacing(_ old: String, to new: String) throws(SystemError) {
    _ = try syscall("rename", new) { renameat2(AT_FDCWD, old, AT_FDCWD, new, 1) }
}

/// The current working directory. The corresponding C function is `getcwd`.
public func currentDirectory() -> String {
    var buffer = [CChar](repeating: 0, count: 4096)
    guard getcwd(&buffer, buffer.count) != nil else { return "." }
    return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

/// Removes the empty directory `path`. The corresponding C function is `rmdir`.
public func removeDirectory(_ path: String) throws(SystemError) {
    _ = try syscall("rmdir", path) { rmdir(path) }
}
