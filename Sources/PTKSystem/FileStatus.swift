import Glibc

/// Permission bits (0o644).
public typealias FileMode = UInt32

/// What `stat` says about a file, in the words the program needs.
public struct FileStatus: Sendable, Equatable {
    /// A regular file (S_IFREG).
    public var isRegularFile: Bool
    /// A directory (S_IFDIR).
    public var isDirectory: Bool
    /// A symbolic link (S_IFLNK); only a status taken without following links can say so.
    public var isSymlink: Bool
    /// The length in bytes (`st_size`).
    public var size: Int64
    /// The permission bits (0o777 and set-id bits).
    public var permissions: FileMode
    /// The inode number (`st_ino`); with `device`, which file this is.
    public var inode: UInt64
    /// The device the file is on (with `inode`, what tells two files apart).
    public var device: UInt64
    /// The owning user id (`st_uid`).
    public var owner: UInt32
    /// The owning group id (`st_gid`).
    public var group: UInt32
    /// Last modification, in seconds since the epoch.
    public var modified: Int64
    /// The nanoseconds part of the last modification.
    public var modifiedNanoseconds: Int64
    /// The last change of the file or its inode (ctime: a write, a rename, a chmod, a link),
    /// in seconds since the epoch. Set by the kernel to its clock, never to a value a caller
    /// chooses, so with `inode` it tells a file from a later one that reused its inode number.
    /// Not part of `==` (a hard link made elsewhere changes it, not the file).
    public var changed: Int64
    /// The nanoseconds part of `changed`.
    public var changedNanoseconds: Int64
    /// How many names the file has (`st_nlink`): more than one, another name (a hard link)
    /// shares these bytes. Not part of `==` (a link made elsewhere changes it, not the file).
    public var linkCount: Int
    /// `changed` in nanoseconds since the epoch (in range until 2262), to compare with
    /// `changeClockNanoseconds()`.
    public var changedAt: Int64 { changed &* 1_000_000_000 &+ changedNanoseconds }

    /// The same kind, size, permissions, inode, device, owner, group and modification time
    /// (not `changed`).
    public static func == (a: FileStatus, b: FileStatus) -> Bool {
        a.isRegularFile == b.isRegularFile && a.isDirectory == b.isDirectory && a.isSymlink == b.isSymlink
            && a.size == b.size
            && a.permissions == b.permissions && a.inode == b.inode && a.device == b.device && a.owner == b.owner
            && a.group == b.group
            && a.modified == b.modified && a.modifiedNanoseconds == b.modifiedNanoseconds
    }

    init(_ st: stat) {
        isRegularFile = (st.st_mode & S_IFMT) == S_IFREG
        isDirectory = (st.st_mode & S_IFMT) == S_IFDIR
        isSymlink = (st.st_mode & S_IFMT) == S_IFLNK
        size = Int64(st.st_size)
        permissions = FileMode(st.st_mode & 0o7777)
        inode = UInt64(st.st_ino)
        device = UInt64(st.st_dev)
        owner = st.st_uid
        group = st.st_gid
        modified = Int64(st.st_mtim.tv_sec)
        modifiedNanoseconds = Int64(st.st_mtim.tv_nsec)
        changed = Int64(st.st_ctim.tv_sec)
        changedNanoseconds = Int64(st.st_ctim.tv_nsec)
        linkCount = Int(st.st_nlink)
    }
}

extension FileStatus {
    /// When the file was last modified.
    /// (A time set beyond what milliseconds hold, some 292 million years, is the farthest they can.)
    public var modifiedTime: WallTime {
        let (ms, overflow) = WallTime(seconds: modified).milliseconds.addingReportingOverflow(
            modifiedNanoseconds / 1_000_000)
        return WallTime(milliseconds: overflow ? .max : ms)
    }
}

/// The status of `path`, following symlinks. The corresponding C function is `stat`.
public func fileStatus(_ path: String) throws(SystemError) -> FileStatus {
    var st = stat()
    _ = try syscall("stat", path) { stat(path, &st) }
    return FileStatus(st)
}
