import CLinux
import Glibc
import PTKVocabulary

// Root's `ptk` decides whom to act as from the folders on the way to the directory it works
// in (issue 42), and that decision was made on paths (lstat, realpath) before anything was
// opened: the service user swapped a folder for a moment and the check saw only root's, or
// failed and counted as "root only" (issue 54, second audit). So the way is walked here by
// descriptors, one component at a time, each link followed by hand: what is judged is what
// was opened, and the directory at the end is the one the command then works in.

/// One object passed on a way: a folder opened, or a symbolic link followed (by its own
/// owner), with the path it was reached by.
public struct WayStep: Equatable, Sendable {
    /// The path as walked (a link's target continues it), for messages.
    public var path: String
    /// The owning user id (`st_uid`): a user who may change its mode, and so what may be put below it.
    public var owner: UInt32
    /// The owning group id (`st_gid`), whose members the group bits (or an ACL's mask) govern.
    public var group: UInt32
    /// The whole `st_mode`: the kind of file and its permission bits.
    public var mode: UInt32
    /// A folder whose access ACL may grant write to users and groups its mode does not name
    /// (its group bits are then the ACL's mask).
    public var hasAccessACL: Bool

    /// A step as tests and callers describe one; the walk itself fills it from `fstat` or `fstatat`.
    public init(path: String, owner: UInt32, group: UInt32, mode: UInt32, hasAccessACL: Bool = false) {
        self.path = path
        self.owner = owner
        self.group = group
        self.mode = mode
        self.hasAccessACL = hasAccessACL
    }

    /// True for a folder (S_IFDIR), the only kind whose write bits matter to `changeableFolder`.
    public var isDirectory: Bool { mode & UInt32(S_IFMT) == UInt32(S_IFDIR) }
    /// True for a symbolic link (S_IFLNK), noted by its own status before the walk follows it.
    public var isSymlink: Bool { mode & UInt32(S_IFMT) == UInt32(S_IFLNK) }

    init(_ st: stat, path: String, acl: Bool = false) {
        self.init(path: path, owner: st.st_uid, group: st.st_gid, mode: UInt32(st.st_mode), hasAccessACL: acl)
    }
}

/// A folder on a way through which a user other than root (and the one user trusted there)
/// could put something else in its place or below it: its path, owner, group and mode
/// (permission bits with the sticky bit), and whether an access ACL grants others write.
public struct ChangeableFolder: Equatable, Sendable {
    /// The path as walked, for the refusal's message.
    public var path: String
    /// The folder's owning user id.
    public var owner: UInt32
    /// The folder's owning group id.
    public var group: UInt32
    /// Permission bits with the sticky bit (`st_mode & 0o7777`), without the kind of file.
    public var mode: UInt32
    /// True when an access ACL may grant write beyond what the mode shows (the group bits are then its mask).
    public var hasAccessACL: Bool

    /// A folder as tests and `changeableFolder` describe one.
    public init(path: String, owner: UInt32, group: UInt32, mode: UInt32, hasAccessACL: Bool = false) {
        self.path = path
        self.owner = owner
        self.group = group
        self.mode = mode
        self.hasAccessACL = hasAccessACL
    }
}

/// A path walked by descriptors from "/" (`openWay`): every folder and link passed, in order,
/// and the directory at the end, open.
public struct Way {
    /// Every folder opened and every symbolic link followed, in order: "/" first, a link's
    /// own status before its target's way (which starts again at "/", or at the folder
    /// holding it for a relative target).
    public var steps: [WayStep]
    /// The directory at the end, open for reading (the caller closes it); nil when a
    /// component was missing (`openWay`'s `allowingMissing`) or for `beneath`'s ways.
    public var directory: FileDescriptor?
    /// The path up to the first component that is not there, when one is missing; nil when the
    /// way is whole.
    public var missing: String?

    /// The users other than root who own a step (in the order met), each with the group of
    /// the deepest step it owns: a user who could replace what lies below what it owns.
    public var owners: [(user: UInt32, group: UInt32)] { Self.owners(steps) }

    /// The users other than root who own one of `steps`, as `owners` says.
    public static func owners(_ steps: [WayStep]) -> [(user: UInt32, group: UInt32)] {
        var owners: [(user: UInt32, group: UInt32)] = []
        for step in steps where step.owner != 0 {
            if let i = owners.firstIndex(where: { $0.user == step.owner }) {
                owners[i].group = step.group
            } else {
                owners.append((step.owner, step.group))
            }
        }
        return owners
    }

    /// The first folder on the way through which a user other than root and `trusted` (the
    /// one non-root user acting there, nil for none) could change what the way reaches: a
    /// folder writable by its group or by others (whatever the group: root's included; with an
    /// access ACL the group bits are its mask) that `trusted` does not own, where either
    ///
    /// - it lacks the sticky bit (anyone who may write it may rename or remove what is in it), or
    /// - it has it (as /tmp), but what follows on the way is missing there (anyone may make it),
    ///   or is not root's or `trusted`'s (its owner may rename it), or it is the end of the way
    ///   (what is worked with is found, made and named in it).
    ///
    /// Nil when there is none: then only root and `trusted` can change the way.
    public func changeableFolder(trusting trusted: UInt32?) -> ChangeableFolder? {
        for (i, folder) in steps.enumerated() {
            guard folder.isDirectory, folder.mode & 0o022 != 0, trusted == nil || folder.owner != trusted else {
                continue
            }
            let found = ChangeableFolder(
                path: folder.path, owner: folder.owner, group: folder.group, mode: folder.mode & 0o7777,
                hasAccessACL: folder.hasAccessACL)
            if folder.mode & UInt32(S_ISVTX) == 0 { return found }
            // Sticky: only an entry's owner (and the folder's) may rename or remove it.
            guard i + 1 < steps.count else { return found }
            let next = steps[i + 1]
            if next.owner != 0 && (trusted == nil || next.owner != trusted) { return found }
        }
        return nil
    }

    /// This way continued by `relative` (components separated by "/") beneath its directory,
    /// walked as `openWay` walks (links followed by hand, each noted), but ending where a
    /// component is missing (`missing`) or is neither a folder nor a link (noted by its own
    /// status: a file at `.ptk`), which the callers refuse when they get there. Nothing is
    /// kept open. Any other failure is an error, as for `openWay`.
    public func beneath(_ relative: String) throws(SystemError) -> Way {
        guard missing == nil, let directory else { return Way(steps: steps, directory: nil, missing: missing) }
        var way = Way(steps: steps, directory: nil, missing: nil)
        let (end, missing) = try walkWay(
            from: try directory.duplicate(), at: steps.last?.path ?? "/",
            through: relative.parts(separatedBy: "/", omittingEmpty: true),
            steps: &way.steps, links: 0, allowingMissing: true, endingAtOther: true, afterEach: nil)
        end?.close()
        way.missing = missing
        return way
    }
}

extension Way {
    /// What the folder `relative` beneath this way's directory ("" for the directory itself)
    /// holds, each entry by its own status (`fstatat`, no link followed): files a user may
    /// own in a folder of root's, whose bytes root would read if it acted as root. The folder
    /// is reached as `beneath` reaches it, but no link is followed to it (the library and the
    /// state's stores refuse one there); nil when it is missing or not a folder. Any other
    /// failure is an error. The corresponding C functions are `openat`, `getdents` and
    /// `fstatat`.
    public func entries(of relative: String) throws(SystemError) -> [WayStep]? {
        guard missing == nil, let directory else { return nil }
        var folder = try directory.duplicate()
        defer { folder.close() }
        var walked = steps.last?.path ?? "/"
        for part in relative.parts(separatedBy: "/", omittingEmpty: true) {
            walked = joined(walked, part)
            let fd = openat(folder.rawValue, part, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            guard fd >= 0 else {
                let code = errno
                if code == ENOENT || code == ENOTDIR || code == ELOOP { return nil }
                throw SystemError(call: "open", object: walked, errno: code)
            }
            folder.close()
            folder = FileDescriptor(rawValue: fd)
        }
        var found: [WayStep] = []
        for name in try folder.entries() {
            var st = stat()
            // Gone since it was listed: nothing of it to read.
            guard fstatat(folder.rawValue, name, &st, AT_SYMLINK_NOFOLLOW) == 0 else { continue }
            found.append(
                WayStep(
                    st, path: joined(walked, name),
                    acl: st.st_mode & S_IFMT == S_IFREG && st.st_mode & 0o022 != 0
                        && fileHasAccessACL(name, in: folder, st)))
        }
        return found
    }

    /// The first of `files` (as `entries(of:)` gives them) whose bytes a user other than root
    /// and `trusted` (nil for none) could rewrite: a regular file that `trusted` does not own,
    /// writable by its group or by others (whatever the group: root's included). An access ACL
    /// that grants a user or group write shows in the group bits, which are then its mask.
    /// Nil when there is none. Links, folders and other kinds are not judged here (a folder's
    /// way is judged by `changeableFolder`; nothing else is read for its bytes).
    public static func changeableFile(_ files: [WayStep], trusting trusted: UInt32?) -> WayStep? {
        files.first { file in
            file.mode & UInt32(S_IFMT) == UInt32(S_IFREG) && file.mode & 0o022 != 0
                && (trusted == nil || file.owner != trusted)
        }
    }
}

/// Whether the regular file `name` in `folder` (of status `st`, by `fstatat`) has an access
/// ACL: opened without following a link and without waiting (O_NONBLOCK: a lease another
/// process holds is not waited for), and only if it is still the file `st` describes. False
/// when it cannot be told: this only chooses the words of a refusal. The corresponding C
/// functions are `openat`, `fstat` and `fgetxattr`.
private func fileHasAccessACL(_ name: String, in folder: FileDescriptor, _ st: stat) -> Bool {
    let fd = openat(folder.rawValue, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)
    guard fd >= 0 else { return false }
    let file = FileDescriptor(rawValue: fd)
    defer { file.close() }
    var now = stat()
    guard fstat(fd, &now) == 0, now.st_dev == st.st_dev, now.st_ino == st.st_ino else { return false }
    return file.hasAccessACL
}

/// Opens the directory `path` by walking it from "/" one component at a time (a relative
/// path from the working directory's path), each with `openat` and O_NOFOLLOW, noting the
/// status of every folder opened (`fstat` of what was opened, never a name looked up again)
/// and of every symbolic link met, which is then followed by hand (`readlinkat`; its target
/// walked the same way, at most 40 links). What the returned way says of the folders on the
/// way is true of the directory it holds open: a folder renamed or swapped meanwhile is either
/// the one opened (and judged) or not on the way at all.
///
/// Any failure is an error naming the path walked so far (ENOENT for a missing component,
/// ENOTDIR for one that is neither a folder nor a link, ELOOP past 40 links); with
/// `allowingMissing`, a missing component ends the way with `missing` set instead. `afterEach`
/// is called with each folder's path once it is open (tests change the tree there). The
/// corresponding C functions are `openat`, `fstat`, `fstatat` and `readlinkat`.
public func openWay(_ path: String, allowingMissing: Bool = false, afterEach: ((String) -> Void)? = nil)
    throws(SystemError) -> Way
{
    let absolute = path.startsWithScalar("/") ? path : currentDirectory() + "/" + path
    let top = try FileDescriptor.open("/", flags: [.readOnly, .directory])
    var steps = [WayStep(try top.rawStatusClosingOnError(), path: "/", acl: top.hasAccessACL)]
    let (end, missing) = try walkWay(
        from: top, at: "/", through: absolute.parts(separatedBy: "/", omittingEmpty: true), steps: &steps, links: 0,
        allowingMissing: allowingMissing, endingAtOther: false, afterEach: afterEach)
    return Way(steps: steps, directory: end, missing: missing)
}

/// Walks `parts` from the open folder `start` (reached as `walked`; this takes it over and
/// closes it), appending to `steps`, as `openWay` says; with `endingAtOther`, something that
/// is neither a folder nor a link ends the way (noted) instead of failing. Returns the folder
/// at the end, open (nil when the way ended early), and the path of a missing component.
private func walkWay(
    from start: FileDescriptor, at walked: String, through parts: [String], steps: inout [WayStep], links: Int,
    allowingMissing: Bool, endingAtOther: Bool, afterEach: ((String) -> Void)?
) throws(SystemError) -> (FileDescriptor?, String?) {
    var current = start
    var walked = walked
    var pending = parts
    var links = links
    while !pending.isEmpty {
        let part = pending.removeFirst()
        if part.utf8.elementsEqual(".".utf8) { continue }
        let shown = joined(walked, part)
        let fd = openat(current.rawValue, part, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        if fd >= 0 {
            let next = FileDescriptor(rawValue: fd)
            current.close()
            current = next
            let st = try current.rawStatusClosingOnError()
            steps.append(WayStep(st, path: shown, acl: current.hasAccessACL))
            walked = shown
            afterEach?(shown)
            continue
        }
        let code = errno
        if code == ENOENT && allowingMissing {
            current.close()
            return (nil, shown)
        }
        guard code == ELOOP || code == ENOTDIR else {
            current.close()
            throw SystemError(call: "open", object: shown, errno: code)
        }
        // A link (O_NOFOLLOW refused it), or something that is not a folder.
        var st = stat()
        guard fstatat(current.rawValue, part, &st, AT_SYMLINK_NOFOLLOW) == 0 else {
            let failed = errno
            current.close()
            // Gone since the open found it: missing as any other.
            if failed == ENOENT && allowingMissing { return (nil, shown) }
            throw SystemError(call: "stat", object: shown, errno: failed)
        }
        guard st.st_mode & S_IFMT == S_IFLNK else {
            current.close()
            if endingAtOther {
                steps.append(WayStep(st, path: shown))
                return (nil, nil)
            }
            throw SystemError(call: "open", object: shown, errno: ENOTDIR)
        }
        links += 1
        guard links <= 40 else {
            current.close()
            throw SystemError(call: "open", object: shown, errno: ELOOP)
        }
        steps.append(WayStep(st, path: shown))
        var buffer = [CChar](repeating: 0, count: 4097)
        let n = readlinkat(current.rawValue, part, &buffer, buffer.count - 1)
        guard n > 0 else {
            // Replaced by something else since it was seen to be a link: refused, not looked at again.
            let failed = n < 0 ? errno : ENOENT
            current.close()
            throw SystemError(call: "readlink", object: shown, errno: failed)
        }
        let target = String(decoding: buffer[..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        if target.startsWithScalar("/") {
            let top: FileDescriptor
            do { top = try FileDescriptor.open("/", flags: [.readOnly, .directory]) } catch {
                current.close()
                throw error
            }
            current.close()
            current = top
            walked = "/"
        }
        // The folder the target's way starts from, again: the way goes on through it.
        steps.append(WayStep(try current.rawStatusClosingOnError(), path: walked, acl: current.hasAccessACL))
        pending = target.parts(separatedBy: "/", omittingEmpty: true) + pending
    }
    return (current, nil)
}

/// `folder` + "/" + `part`, without doubling the "/" of the root.
private func joined(_ folder: String, _ part: String) -> String {
    folder.endsWithScalar("/") ? folder + part : folder + "/" + part
}

extension FileDescriptor {
    /// The C `stat` of this open file. The corresponding C function is `fstat`.
    func rawStatus() throws(SystemError) -> stat {
        var st = stat()
        _ = try syscall("fstat") { fstat(rawValue, &st) }
        return st
    }

    /// As `rawStatus`, closing this descriptor when it fails (the walk gives up then).
    fileprivate func rawStatusClosingOnError() throws(SystemError) -> stat {
        do { return try rawStatus() } catch {
            close()
            throw error
        }
    }

    /// True when this file has a POSIX access ACL (the extended attribute
    /// `system.posix_acl_access`); false when it has none or it cannot be told. The
    /// corresponding C function is `fgetxattr`.
    public var hasAccessACL: Bool { fgetxattr(rawValue, "system.posix_acl_access", nil, 0) > 0 }

    /// The path the kernel now gives this open file or directory (`/proc/self/fd`'s link):
    /// where it is now, whatever it was opened by; nil when it cannot be told or is gone.
    /// The corresponding C function is `readlink`.
    public func currentPath() -> String? {
        var buffer = [CChar](repeating: 0, count: 4097)
        let n = readlink("/proc/self/fd/\(rawValue)", &buffer, buffer.count - 1)
        guard n > 0 else { return nil }
        let path = String(decoding: buffer[..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return path.startsWithScalar("/") && !path.hasSuffix(" (deleted)") ? path : nil
    }
}

/// The device and inode of a file held open: which file it is, for as long as it is held
/// (an inode number is reused only once nothing holds the file).
public struct FileIdentity: Hashable, Sendable {
    /// The file system's device number (`st_dev`).
    public var device: UInt64
    /// The inode number (`st_ino`), unique within the device while the file is held.
    public var inode: UInt64
    /// A file by its device and inode numbers.
    public init(device: UInt64, inode: UInt64) {
        self.device = device
        self.inode = inode
    }
    /// The identity of the file `status` describes.
    public init(_ status: FileStatus) { self.init(device: status.device, inode: status.inode) }
}

/// The identities of the regular files this process holds open now (its descriptors, listed
/// in `/proc/self/fd`): to tell which files a library call opened that were not open before.
/// The corresponding C functions are `opendir`, `readdir` and `fstat`.
public func openRegularFileIdentities() -> Set<FileIdentity> {
    // no /proc: nothing to tell
    guard let listing = try? FileDescriptor.open("/proc/self/fd", flags: [.readOnly, .directory]) else { return [] }
    defer { listing.close() }
    var found: Set<FileIdentity> = []
    for name in (try? listing.entries()) ?? [] {  // unreadable: nothing to tell
        guard let fd = Int32(name), fd != listing.rawValue else { continue }
        var st = stat()
        if fstat(fd, &st) == 0 && st.st_mode & S_IFMT == S_IFREG {
            found.insert(FileIdentity(device: UInt64(st.st_dev), inode: UInt64(st.st_ino)))
        }
    }
    return found
}
