import Glibc

// <sys/fsuid.h> is not in the Glibc module; glibc's functions are plain system calls (this thread).
@_silgen_name("setfsuid") private func setfsuid(_ uid: uid_t) -> Int32
@_silgen_name("setfsgid") private func setfsgid(_ gid: gid_t) -> Int32

/// Runs `body` with this thread's file access checked as `uid`:`gid` (setfsuid and setfsgid,
/// which change the calling thread's credentials alone and take root's CAP_DAC_OVERRIDE and
/// CAP_DAC_READ_SEARCH from it while they last), after giving `tree` to that user, so that a
/// test of what an unreadable file does runs as root too (as CI runs the tests). Root's access is
/// back before it returns. As any other user, `body` runs as it is: that user already lacks
/// root's reach. Keep `body` to the calls under test (no thread pools started from it: a thread
/// started inside inherits the credentials), and the `#expect`s outside it.
/// Throws (the test fails, naming the cause) when this root cannot change them (no CAP_SETUID).
public func withFileAccess<T>(
    asUser uid: uid_t = 65534, group gid: gid_t = 65534, giving tree: String,
    _ body: () throws -> T
) throws -> T {
    guard geteuid() == 0 else { return try body() }
    giveAway(tree, uid, gid)
    _ = setfsgid(gid)
    _ = setfsuid(uid)
    // setfsuid answers the previous value: asking again tells whether the change took.
    guard setfsuid(uid) == Int32(bitPattern: uid) && setfsgid(gid) == Int32(bitPattern: gid) else {
        _ = setfsuid(0)
        _ = setfsgid(0)
        throw FileAccessError(
            description:
                "setfsuid(\(uid))/setfsgid(\(gid)) did not take: this root cannot take on another user's file access")
    }
    defer {
        _ = setfsuid(0)
        _ = setfsgid(0)
        precondition(setfsuid(0) == 0 && setfsgid(0) == 0, "cannot take root's file access back")
    }
    return try body()
}

/// lchown of a tree, symlinks not followed (test directories only).
private func giveAway(_ path: String, _ uid: uid_t, _ gid: gid_t) {
    precondition(path.hasPrefix("/tmp/"), "gives away test directories only")
    _ = lchown(path, uid, gid)
    var st = stat()
    guard lstat(path, &st) == 0, st.st_mode & S_IFMT == S_IFDIR, let dir = opendir(path) else { return }
    defer { closedir(dir) }
    while let entry = readdir(dir) {
        let name = withUnsafeBytes(of: entry.pointee.d_name) {
            String(cString: $0.bindMemory(to: CChar.self).baseAddress!)
        }
        if name == "." || name == ".." { continue }
        giveAway(path + "/" + name, uid, gid)
    }
}

/// Why `withFileAccess` could not run its body as another user.
public struct FileAccessError: Error, CustomStringConvertible {
    /// Why the file access could not be switched to the other user, for the test's failure.
    public let description: String
}
