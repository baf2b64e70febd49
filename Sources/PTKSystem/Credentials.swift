import CLinux
import Glibc

/// A user (and the group to run with) a root process takes on before it touches files that
/// user could have planted.
public struct Credentials: Equatable, Sendable, CustomStringConvertible {
    public let user: UInt32
    public let group: UInt32
    /// The user's name in the password database, if it has an entry (then its supplementary
    /// groups are taken on too).
    public let name: String?

    public init(user: UInt32, group: UInt32, name: String?) {
        self.user = user
        self.group = group
        self.name = name
    }

    /// "ptk (uid 998)", or "uid 4242" for a user without a password entry.
    public var description: String { name.map { "\($0) (uid \(user))" } ?? "uid \(user)" }

    /// The user owning `uid`, with its primary group from the password database, else `group`.
    public static func of(uid: UInt32, groupIfUnknown group: UInt32) -> Credentials {
        guard let entry = getpwuid(uid) else { return Credentials(user: uid, group: group, name: nil) }
        return Credentials(user: uid, group: entry.pointee.pw_gid, name: String(cString: entry.pointee.pw_name))
    }

    /// Takes on this user for good: supplementary groups, then the real, effective and saved
    /// group and user ids (a process that was root can never become root again), and checks
    /// it took. The corresponding C functions are `initgroups` (or `setgroups`), `setresgid`
    /// and `setresuid`.
    public func takeOn() throws(SystemError) {
        if let name {
            _ = try syscall("initgroups", name) { initgroups(name, group) }
        } else {
            var groups = [gid_t(group)]
            _ = try syscall("setgroups", description) { setgroups(1, &groups) }
        }
        _ = try syscall("setresgid", description) { setresgid(group, group, group) }
        _ = try syscall("setresuid", description) { setresuid(user, user, user) }
        var r: uid_t = 0, e: uid_t = 0, s: uid_t = 0
        getresuid(&r, &e, &s)
        // Going back must fail now (it would succeed if any id were still 0).
        guard r == user, e == user, s == user, user == 0 || setuid(0) == -1 else {
            throw SystemError(call: "setresuid", object: description, errno: EPERM)
        }
    }
}

/// The users other than root who own `path` or a directory it is reached through: every
/// existing component of the path as written (made absolute from the current directory; a
/// symbolic link counts by its own owner) and of the path it resolves to. Each with the group
/// of the deepest component it owns. Root acting there must take on such a user first: that
/// user can replace what lies below what it owns. The corresponding C functions are `lstat`
/// and `realpath`.
public func nonRootOwners(of path: String) -> [(user: UInt32, group: UInt32)] {
    var owners: [(user: UInt32, group: UInt32)] = []
    func note(_ status: stat) {
        guard status.st_uid != 0 else { return }
        if let i = owners.firstIndex(where: { $0.user == status.st_uid }) {
            owners[i].group = status.st_gid
        } else {
            owners.append((status.st_uid, status.st_gid))
        }
    }
    func walk(_ absolute: String) {
        var prefix = ""
        var status = stat()
        guard lstat("/", &status) == 0 else { return }
        note(status)
        // Split on the "/" byte: a component may begin with a scalar that joins a "/" into one Character.
        for component in absolute.utf8.split(separator: UInt8(ascii: "/")) {
            prefix += "/" + String(decoding: component, as: UTF8.self)
            guard lstat(prefix, &status) == 0 else { return }
            note(status)
        }
    }
    let absolute = path.startsWithScalar("/") ? path : currentDirectory() + "/" + path
    walk(absolute)
    if let resolved = realpath(absolute, nil) {
        walk(String(cString: resolved))
        free(resolved)
    }
    return owners
}

/// A folder on the way to a path through which a user other than root (and the one user
/// trusted there) could put something else in its place or below it: its path, owner, group
/// and mode (permission bits with the sticky bit).
public struct ChangeableFolder: Equatable, Sendable {
    public var path: String
    public var owner: UInt32
    public var group: UInt32
    public var mode: UInt32

    public init(path: String, owner: UInt32, group: UInt32, mode: UInt32) {
        self.path = path
        self.owner = owner
        self.group = group
        self.mode = mode
    }
}

/// The first folder on the way to `path` (as written, made absolute, and as resolved) through
/// which a user other than root and `trusted` (the one non-root user root acts as there, nil
/// for none) could change what root reaches: a folder writable by its group or by others
/// (whatever the group: root's included) that `trusted` does not own, where either
///
/// - it lacks the sticky bit (anyone who may write it may rename or remove what is in it), or
/// - it has it (as /tmp), but what follows on the way is missing there (anyone may make it),
///   or is not root's or `trusted`'s (its owner may rename it), or it is `path` itself (what
///   root works with is found, made and named in it).
///
/// Nil when there is none: then only root and `trusted` can change the way. The corresponding
/// C functions are `lstat` and `realpath`.
public func folderOthersMayChange(on path: String, trusting trusted: UInt32?) -> ChangeableFolder? {
    func walk(_ absolute: String) -> ChangeableFolder? {
        // Split on the "/" byte: a component may begin with a scalar that joins a "/" into one Character.
        let components = absolute.utf8.split(separator: UInt8(ascii: "/")).map { String(decoding: $0, as: UTF8.self) }
        var prefix = ""
        var status = stat()
        guard lstat("/", &status) == 0 else { return nil }
        var previous: stat? = status
        var previousPath = "/"
        // Index -1 is "/" itself, which `previous` holds already.
        for index in 0...components.count {
            let current: stat?
            if index < components.count {
                prefix += "/" + components[index]
                current = lstat(prefix, &status) == 0 ? status : nil
            } else {
                current = nil
            }
            if let folder = previous, folder.st_mode & S_IFMT == S_IFDIR, folder.st_mode & 0o022 != 0,
               trusted == nil || folder.st_uid != trusted {
                let found = ChangeableFolder(path: previousPath, owner: folder.st_uid, group: folder.st_gid, mode: folder.st_mode & 0o7777)
                if folder.st_mode & S_ISVTX == 0 { return found }
                // Sticky: only an entry's owner (and the folder's) may rename or remove it.
                guard let next = current else { return found }
                if next.st_uid != 0 && (trusted == nil || next.st_uid != trusted) { return found }
            }
            guard let current else { return nil }
            previous = current
            previousPath = prefix
        }
        return nil
    }
    let absolute = path.startsWithScalar("/") ? path : currentDirectory() + "/" + path
    if let found = walk(absolute) { return found }
    guard let resolved = realpath(absolute, nil) else { return nil }
    defer { free(resolved) }
    return walk(String(cString: resolved))
}

/// The name of group `gid` in the group database, nil when it has none. The corresponding C
/// function is `getgrgid_r`.
public func groupName(_ gid: UInt32) -> String? {
    var group = Glibc.group()
    var buffer = [CChar](repeating: 0, count: 4096)
    var result: UnsafeMutablePointer<Glibc.group>?
    guard getgrgid_r(gid, &group, &buffer, buffer.count, &result) == 0, result != nil, let name = group.gr_name else { return nil }
    return String(cString: name)
}

/// Whether this process runs as root (effective user id 0).
public var runningAsRoot: Bool { geteuid() == 0 }

extension FileDescriptor {
    /// A second descriptor of the same open file that a program this one starts inherits (not
    /// close-on-exec). The corresponding C function is `fcntl` with `F_DUPFD`.
    public func inheritable() throws(SystemError) -> FileDescriptor {
        FileDescriptor(rawValue: try syscall("fcntl") { fcntl(rawValue, F_DUPFD, 3) })
    }

    /// Makes this directory the working directory. The corresponding C function is `fchdir`.
    public func becomeWorkingDirectory() throws(SystemError) {
        _ = try syscall("fchdir") { fchdir(rawValue) }
    }

    /// Moves `oldName` in `oldDirectory` to `newName` in this directory, replacing a file of
    /// that name (never following a link: the name itself is replaced). The corresponding C
    /// function is `renameat`.
    public func moveReplacing(_ oldName: String, in oldDirectory: FileDescriptor, to newName: String) throws(SystemError) {
        _ = try syscall("rename", newName) { renameat(oldDirectory.rawValue, oldName, rawValue, newName) }
    }

    /// Gives this file or directory to `credentials`. The corresponding C function is `fchown`.
    public func give(to credentials: Credentials) throws(SystemError) {
        _ = try syscall("fchown", credentials.description) { fchown(rawValue, credentials.user, credentials.group) }
    }

    /// Removes the directory `name`. The corresponding C function is `unlinkat` with `AT_REMOVEDIR`.
    public func removeDirectory(_ name: String) throws(SystemError) {
        _ = try syscall("rmdir", name) { unlinkat(rawValue, name, AT_REMOVEDIR) }
    }
}
