/// The bits of an inotify event's mask that the inbox watches or is told (<sys/inotify.h>).
public enum InotifyMask {
    /// A file opened for writing was closed (IN_CLOSE_WRITE).
    public static let closeWrite: UInt32 = 0x8
    /// A name was moved out of the watched folder (IN_MOVED_FROM).
    public static let movedFrom: UInt32 = 0x40
    /// A name was moved into the watched folder (IN_MOVED_TO): a rename finishing a file.
    public static let movedTo: UInt32 = 0x80
    /// A name was created in the watched folder (IN_CREATE): never a file's end, only a new folder's start.
    public static let create: UInt32 = 0x100
    /// A name was deleted from the watched folder (IN_DELETE).
    public static let delete: UInt32 = 0x200
    /// The watched folder itself was deleted (IN_DELETE_SELF).
    public static let deleteSelf: UInt32 = 0x400
    /// The watched folder itself was moved (IN_MOVE_SELF).
    public static let moveSelf: UInt32 = 0x800
    /// The file system holding the watched folder was unmounted (IN_UNMOUNT).
    public static let unmount: UInt32 = 0x2000
    /// The kernel's event queue overflowed: events were lost (IN_Q_OVERFLOW, with descriptor -1).
    public static let queueOverflow: UInt32 = 0x4000
    /// The watch was removed, by inotify_rm_watch or because its folder is gone (IN_IGNORED).
    public static let ignored: UInt32 = 0x8000
    /// The name is a folder's (IN_ISDIR).
    public static let isDirectory: UInt32 = 0x4000_0000
    /// What the inbox adds to every watch: a file finished, a folder come or gone.
    public static let watched: UInt32 = closeWrite | movedTo | create | deleteSelf | moveSelf
}

/// One record read from an inotify descriptor (`struct inotify_event`).
public struct InotifyEvent: Sendable, Equatable {
    /// The watch it is about (`wd`); -1 for a queue overflow.
    public var watch: Int32
    /// What happened (`InotifyMask` bits).
    public var mask: UInt32
    /// Ties an IN_MOVED_FROM to its IN_MOVED_TO.
    public var cookie: UInt32
    /// The name in the watched folder, its bytes up to the first NUL; empty for an event about
    /// the folder itself.
    public var nameBytes: [UInt8]

    /// An event as read.
    public init(watch: Int32, mask: UInt32, cookie: UInt32, nameBytes: [UInt8]) {
        self.watch = watch
        self.mask = mask
        self.cookie = cookie
        self.nameBytes = nameBytes
    }

    /// The name as text, bytes that are not UTF-8 replaced (as PTKSystem's `entries()` reads a
    /// folder's names, so the two agree).
    public var name: String { String(decoding: nameBytes, as: UTF8.self) }

    /// What the inbox makes of it.
    public var kind: InotifyEventKind {
        if mask & InotifyMask.queueOverflow != 0 { return .overflow }
        // A folder moved (IN_MOVE_SELF) is not gone: it is watched on, under the name its
        // parent's IN_MOVED_TO gives it (and the watch keeps its number).
        if mask & (InotifyMask.ignored | InotifyMask.deleteSelf | InotifyMask.unmount) != 0 {
            return .folderGone(watch: watch)
        }
        guard !nameBytes.isEmpty else { return .other }
        let isFolder = mask & InotifyMask.isDirectory != 0
        if isFolder && mask & (InotifyMask.create | InotifyMask.movedTo) != 0 {
            return .folderAppeared(watch: watch, name: name)
        }
        if !isFolder && mask & (InotifyMask.closeWrite | InotifyMask.movedTo) != 0 {
            return .fileWritten(watch: watch, name: name)
        }
        return .other
    }
}

/// What an inotify event means to the inbox.
public enum InotifyEventKind: Sendable, Equatable {
    /// A file was closed after writing, or renamed into the folder: a candidate to observe.
    case fileWritten(watch: Int32, name: String)
    /// A folder was made or moved into the folder: watch it and scan it (files may already be in it).
    case folderAppeared(watch: Int32, name: String)
    /// The watch's folder is gone (deleted, unmounted, or the watch removed): forget the watch.
    case folderGone(watch: Int32)
    /// Events were lost: scan everything again (`ScanSchedule`).
    case overflow
    /// Nothing the inbox acts on (a file created or deleted, a name moved away; a file or
    /// folder event without a name).
    case other
}

/// Why the bytes read from an inotify descriptor are not inotify events.
public struct InotifyParseError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The name length the record announced.
    public var nameLength: UInt32

    /// The error for a record announcing `nameLength` bytes of name.
    public init(nameLength: UInt32) { self.nameLength = nameLength }

    /// For the log.
    public var description: String {
        "an inotify record announces a name of \(nameLength) bytes, more than \(InotifyEvents.maxNameLength)"
    }
}

/// An incremental parser of what `read` returns from an inotify descriptor: records of
/// `int32 wd, uint32 mask, uint32 cookie, uint32 len, char name[len]` in the machine's byte order,
/// the name padded with NULs. Fed any pieces (the kernel returns whole records, but nothing here
/// relies on it): the events come out the same.
///
/// A record announcing a name longer than `maxNameLength` is an error before anything is
/// allocated for it, and the parser then stays failed (the records' boundaries are lost) until
/// `reset()`: the caller rescans and starts a fresh descriptor or buffer.
public struct InotifyEvents: Sendable {
    /// The size of a record's fixed part.
    public static let headerSize = 16
    /// The longest name a record may announce: NAME_MAX + 1 (256) rounded up to alignment is
    /// what the kernel writes; this leaves room and still bounds the buffer.
    public static let maxNameLength = 4096

    /// Bytes of a record not complete yet (at most `headerSize + maxNameLength`).
    private var pending: [UInt8] = []
    /// The pending record's whole size, once its header is in.
    private var recordSize: Int?
    /// The error once one was found; every later `feed` throws it again.
    private var failure: InotifyParseError?

    /// A parser at a record's start.
    public init() {}

    /// Bytes held of a record not complete yet.
    public var pendingBytes: Int { pending.count }

    /// The events completed by `bytes`, in order; throws for a record announcing too long a
    /// name (the events completed before it in `bytes` are lost with it: the caller rescans).
    public mutating func feed(_ bytes: some Sequence<UInt8>) throws(InotifyParseError) -> [InotifyEvent] {
        if let failure { throw failure }
        var events: [InotifyEvent] = []
        for byte in bytes {
            pending.append(byte)
            if pending.count == Self.headerSize {
                let length = field(12)
                guard length <= Self.maxNameLength else {
                    let error = InotifyParseError(nameLength: length)
                    failure = error
                    pending = []
                    throw error
                }
                recordSize = Self.headerSize + Int(length)
            }
            guard pending.count == recordSize else { continue }
            let name = pending[Self.headerSize...].prefix { $0 != 0 }
            events.append(
                InotifyEvent(
                    watch: Int32(bitPattern: field(0)), mask: field(4), cookie: field(8), nameBytes: Array(name)))
            pending.removeAll(keepingCapacity: true)
            recordSize = nil
        }
        return events
    }

    /// Forgets the bytes held and any failure: the next byte fed is a record's first.
    public mutating func reset() {
        pending = []
        recordSize = nil
        failure = nil
    }

    /// The 32-bit field at `offset` of the pending record, in the machine's byte order: the
    /// bytes read as little-endian, then taken as the machine's (a no-op on x86-64 and arm64).
    private func field(_ offset: Int) -> UInt32 {
        var value: UInt32 = 0
        for i in (0..<4).reversed() { value = value << 8 | UInt32(pending[offset + i]) }
        return UInt32(littleEndian: value)
    }
}
