import CLinux
import Glibc

/// A user (and the group to run with) a root process takes on before it touches files that
/// user could have planted.
public struct Credentials: Equatable, Sendable, CustomStringConvertible {
    /// The user id to take on (`setresuid`).
    public let user: UInt32
    /// The primary group id to take on (`setresgid`).
    public let group: UInt32
    /// The user's name in the password database, if it has an entry (then its supplementary
    /// groups are taken on too).
    public let name: String?

    /// A user and group as given; `name` decides whether supplementary groups are looked up.
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
        var r: uid_t = 0
        var e: uid_t = 0
        var s: uid_t = 0
        getresuid(&r, &e, &s)
        // Going back must fail now (it would succeed if any id were still 0).
        guard r == user, e == user, s == user, user == 0 || setuid(0) == -1 else {
            throw SystemError(call: "setresuid", object: description, errno: EPERM)
        }
    }
}

/// The name of group `gid` in the group database, nil when it has none. The corresponding C
/// function is `getgrgid_r`.
public func groupName(_ gid: UInt32) -> String? {
    var group = Glibc.group()
    var buffer = [CChar](repeating: 0, count: 4096)
    var result: UnsafeMutablePointer<Glibc.group>?
    guard getgrgid_r(gid, &group, &buffer, buffer.count, &result) == 0, result != nil, let name = group.gr_name else {
        return nil
    }
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
    public func moveReplacing(_ oldName: String, in oldDirectory: FileDescriptor, to newName: String)
        throws(SystemError)
    {
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
