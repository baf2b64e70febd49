import Glibc

/// An inotify instance (issue 56's watched inboxes): watches on folders already open, and the
/// raw events, for a pure parser to read. Nothing here follows a path: a folder is opened
/// beneath the inbox root without following links by the caller, and watched through its
/// descriptor (`addWatch(folder:mask:)`), so a folder swapped for a symlink between the open
/// and the watch is never the one watched.
public final class Inotify: @unchecked Sendable {
    // The descriptor is fixed at init and closed only in deinit; inotify_add_watch,
    // inotify_rm_watch and read on it are safe from several threads.

    /// What `poll` waits on (`.readable`: events to read); non-blocking. Owned by this
    /// instance and closed in its deinit: never close it.
    public let descriptor: FileDescriptor

    /// A new instance, with no watches, non-blocking and close-on-exec. Fails with EMFILE when
    /// this user has `fs.inotify.max_user_instances` already (`isOutOfInotifyInstances`), or
    /// the process is out of descriptors. The corresponding C function is `inotify_init1` with
    /// IN_NONBLOCK | IN_CLOEXEC.
    public init() throws(SystemError) {
        let fd = try syscall("inotify_init1") { inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC)) }
        descriptor = FileDescriptor(rawValue: fd)
    }

    deinit { descriptor.close() }

    /// Watches the open directory `folder` for the events in `mask` (the IN_* bits:
    /// `closeWrite`, `movedTo`...), adding `onlyDirectory` and `excludeUnlinked`; returns the
    /// watch descriptor the events carry. Watching a folder watched already (through any of
    /// its descriptors) gives its watch descriptor again, its mask replaced.
    ///
    /// The folder is named to the kernel as `/proc/self/fd/N`, a link the kernel resolves to
    /// the open directory itself, whatever its path has become: there is no path to race. That
    /// link must be followed, so `dontFollow` is taken out of `mask` (with it, the watch would
    /// be on the link in /proc, and IN_ONLYDIR refuses that: ENOTDIR). A descriptor that is
    /// not a directory (a symlink opened with O_PATH | O_NOFOLLOW, a file) fails with ENOTDIR.
    ///
    /// Fails with ENOSPC when this user has `fs.inotify.max_user_watches` watches already
    /// (`SystemError.isOutOfInotifyWatches`, which says to raise it; never `isNoSpace`), and
    /// with ENOENT, the object saying so, when /proc is not mounted (a chroot or a container
    /// without it): watches need it. The corresponding C function is `inotify_add_watch`.
    public func addWatch(folder: FileDescriptor, mask: UInt32) throws(SystemError) -> Int32 {
        let path = "/proc/self/fd/\(folder.rawValue)"
        let flags = (mask & ~Inotify.dontFollow) | Inotify.onlyDirectory | Inotify.excludeUnlinked
        do {
            return try syscall("inotify_add_watch", path) { inotify_add_watch(descriptor.rawValue, path, flags) }
        } catch  where error.code == .noSuchFile && Glibc.access("/proc/self/fd", F_OK) != 0 {
            throw SystemError(
                call: "inotify_add_watch", object: "\(path): folders are watched through /proc, which is not mounted",
                errno: error.errno)
        }
    }

    /// Stops the watch `wd`; the kernel then queues an IN_IGNORED event for it. False when it
    /// was gone already: the kernel ends a watch itself when its folder is deleted or its file
    /// system unmounted (IN_IGNORED told so). The corresponding C function is `inotify_rm_watch`.
    @discardableResult
    public func removeWatch(_ wd: Int32) -> Bool {
        inotify_rm_watch(descriptor.rawValue, wd) == 0
    }

    /// Reads the events queued, raw (`struct inotify_event`s: wd, mask, cookie, len, name,
    /// each whole), into `buffer`; returns how many bytes, 0 when none is queued (never
    /// waits: poll `descriptor` first). The buffer must hold the largest event,
    /// `minimumReadSize` bytes, or the read fails with EINVAL; 64 KiB reads a burst at once.
    /// An event with IN_Q_OVERFLOW (`queueOverflow`) says events were lost: rescan. The
    /// corresponding C function is `read`.
    public func read(into buffer: UnsafeMutableRawBufferPointer) throws(SystemError) -> Int {
        // Not through the funnel: its EAGAIN pauses would wait for events; here EAGAIN is "none".
        while true {
            let n = Glibc.read(descriptor.rawValue, buffer.baseAddress, buffer.count)
            if n >= 0 { return n }
            let code = errno
            if code == EINTR { continue }
            if code == EAGAIN { return 0 }
            throw SystemError(call: "read", object: "inotify", errno: code)
        }
    }

    /// The smallest buffer `read(into:)` takes: one event with the longest name
    /// (sizeof(struct inotify_event) + NAME_MAX + 1).
    public static let minimumReadSize = 16 + 255 + 1

    /// How many watches a user may have (`fs.inotify.max_user_watches`), for the message when
    /// they run out; nil when /proc cannot say.
    public static func maxUserWatches() -> Int? {
        // Unreadable or missing: the message goes without the number.
        guard let bytes = try? readFileBytes("/proc/sys/fs/inotify/max_user_watches", limit: 64) else { return nil }
        // "8192\n": the digits before the newline.
        return Int(String(decoding: bytes.prefix { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }, as: UTF8.self))
    }

    /// What to tell the administrator when watches run out (`isOutOfInotifyWatches`): the
    /// limit, if known, and how to raise it.
    public static func outOfWatchesAdvice(limit: Int?) -> String {
        let now = limit.map { " (now \($0))" } ?? ""
        return "out of inotify watches: raise fs.inotify.max_user_watches\(now), e.g. a line "
            + "fs.inotify.max_user_watches = 524288 in /etc/sysctl.d/60-ptk.conf, then sysctl --system"
    }

    /// IN_ACCESS: a file was read.
    public static let access: UInt32 = 0x0000_0001
    /// IN_MODIFY: a file was written (each write: not a sign that it is whole).
    public static let modify: UInt32 = 0x0000_0002
    /// IN_ATTRIB: a file's metadata changed (permissions, times, links, owner).
    public static let attributes: UInt32 = 0x0000_0004
    /// IN_CLOSE_WRITE: a file open for writing was closed.
    public static let closeWrite: UInt32 = 0x0000_0008
    /// IN_MOVED_FROM: a name moved out of the folder (`cookie` pairs it with its IN_MOVED_TO).
    public static let movedFrom: UInt32 = 0x0000_0040
    /// IN_MOVED_TO: a name moved into the folder (a writer's rename of a finished file).
    public static let movedTo: UInt32 = 0x0000_0080
    /// IN_CREATE: a name was made in the folder (a file begun, or a new folder to watch).
    public static let create: UInt32 = 0x0000_0100
    /// IN_DELETE: a name was removed from the folder.
    public static let delete: UInt32 = 0x0000_0200
    /// IN_DELETE_SELF: the watched folder itself was deleted.
    public static let deleteSelf: UInt32 = 0x0000_0400
    /// IN_MOVE_SELF: the watched folder itself was moved.
    public static let moveSelf: UInt32 = 0x0000_0800
    /// IN_UNMOUNT (in events only): the watched folder's file system was unmounted.
    public static let unmounted: UInt32 = 0x0000_2000
    /// IN_Q_OVERFLOW (in events only, wd -1): the queue overflowed and events were lost.
    public static let queueOverflow: UInt32 = 0x0000_4000
    /// IN_IGNORED (in events only): the watch ended (removed, or its folder gone).
    public static let ignored: UInt32 = 0x0000_8000
    /// IN_ONLYDIR: watch only a directory (ENOTDIR otherwise); `addWatch` always adds it.
    public static let onlyDirectory: UInt32 = 0x0100_0000
    /// IN_DONT_FOLLOW: do not follow a final symlink; `addWatch` takes it out (see there).
    public static let dontFollow: UInt32 = 0x0200_0000
    /// IN_EXCL_UNLINK: no events for a file once unlinked from the folder; `addWatch` adds it.
    public static let excludeUnlinked: UInt32 = 0x0400_0000
    /// IN_ISDIR (in events only): the name is a directory.
    public static let isDirectory: UInt32 = 0x4000_0000
}

extension SystemError {
    /// True for inotify_add_watch's ENOSPC: this user has `fs.inotify.max_user_watches`
    /// watches already (the disk is not full). `Inotify.outOfWatchesAdvice` says what to do.
    public var isOutOfInotifyWatches: Bool { call == "inotify_add_watch" && errno == ENOSPC }

    /// True for inotify_init1's EMFILE: this user has `fs.inotify.max_user_instances`
    /// instances already (or, rarely, the process is out of descriptors).
    public var isOutOfInotifyInstances: Bool { call == "inotify_init1" && errno == EMFILE }
}
