import CLinux
import Glibc
import PTKSystem

/// Makes a race happen at one exact step, every time: while another process opens one of the
/// marked files or folders, the gate holds it inside `open(2)` (fanotify's FAN_OPEN_PERM: the
/// kernel waits for the gate's answer), runs `onOpen` (which changes the tree as an attacker
/// would), and only then lets the open go on. Needs root (CAP_SYS_ADMIN). Opens by this
/// process are let through without `onOpen` unless `includingThisProcess` (a library under
/// test opening in this process; `onOpen` must then open nothing marked). Stopped (and every held open let go) by `stop`
/// or when it goes away; the kernel lets them go too should this process end.
public final class OpenGate: @unchecked Sendable {
    // `stopping` is read and written under `lock`; the rest is set once in init.
    private let group: Int32
    private let marked: [FileIdentity]
    private let onOpen: @Sendable (_ index: Int, _ pid: Int32) -> Void
    private let includingThisProcess: Bool
    private let lock = Lock()
    private var stopping = false
    private let threads = ThreadGroup()

    /// Marks `paths` (their inodes, as they are now: a folder's own opens included; a link is
    /// followed to what it names) and starts answering. `onOpen(i, pid)` runs for each open of
    /// `paths[i]` by process `pid` while that open waits.
    public init(
        _ paths: [String], includingThisProcess: Bool = false,
        onOpen: @escaping @Sendable (_ index: Int, _ pid: Int32) -> Void
    ) throws(SystemError) {
        // FAN_CLASS_CONTENT | FAN_CLOEXEC | FAN_NONBLOCK; events' descriptors O_RDONLY | O_LARGEFILE.
        group = try syscall("fanotify_init") { fanotify_init(0x4 | 0x1 | 0x2, UInt32(O_RDONLY) | 0x8000) }
        let fanotify = group
        var identities: [FileIdentity] = []
        for path in paths {
            // FAN_MARK_ADD; FAN_OPEN_PERM | FAN_ONDIR.
            do {
                _ = try syscall("fanotify_mark", path) {
                    fanotify_mark(fanotify, 0x1, 0x10000 | 0x4000_0000, AT_FDCWD, path)
                }
                identities.append(FileIdentity(try fileStatus(path)))
            } catch {
                Glibc.close(fanotify)
                throw error
            }
        }
        marked = identities
        self.includingThisProcess = includingThisProcess
        self.onOpen = onOpen
        do { try threads.start(name: "open-gate") { [self] in answer() } } catch {
            Glibc.close(group)
            throw error
        }
    }

    /// Lets every held open go on, and stops holding new ones.
    public func stop() {
        let first = lock.withLock { () -> Bool in
            defer { stopping = true }
            return !stopping
        }
        guard first else { return }
        _ = threads.join(until: nil)
        Glibc.close(group)
    }

    deinit { stop() }

    /// Reads the events and answers each (FAN_ALLOW) once `onOpen` ran, until stopped.
    private func answer() {
        var buffer = [UInt8](repeating: 0, count: 8192)
        while !lock.withLock({ stopping }) {
            var ready = pollfd(fd: group, events: Int16(POLLIN), revents: 0)
            guard poll(&ready, 1, 50) > 0 else { continue }
            let n = buffer.withUnsafeMutableBytes { Glibc.read(group, $0.baseAddress, $0.count) }
            guard n > 0 else { continue }
            var offset = 0
            // struct fanotify_event_metadata: event_len (u32), vers, reserved (u8), metadata_len
            // (u16), mask (u64), fd (s32), pid (s32).
            while offset + 24 <= n {
                let length = buffer.withUnsafeBytes { Int($0.loadUnaligned(fromByteOffset: offset, as: UInt32.self)) }
                let fd = buffer.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset + 16, as: Int32.self) }
                let pid = buffer.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset + 20, as: Int32.self) }
                guard length >= 24 else { break }
                if fd >= 0 {
                    var st = stat()
                    if includingThisProcess || pid != getpid(), fstat(fd, &st) == 0,
                        let index = marked.firstIndex(
                            of: FileIdentity(device: UInt64(st.st_dev), inode: UInt64(st.st_ino)))
                    {
                        onOpen(index, pid)
                    }
                    // struct fanotify_response: fd (s32), response (u32): FAN_ALLOW.
                    var response: (Int32, UInt32) = (fd, 0x01)
                    _ = withUnsafeBytes(of: &response) { Glibc.write(group, $0.baseAddress, 8) }
                    Glibc.close(fd)
                }
                offset += length
            }
        }
    }
}

/// Exchanges the names `a` and `b` (both in one folder, or any two on one file system) in one
/// step, as an attacker's `renameat2(RENAME_EXCHANGE)` does; false when it fails.
@discardableResult
public func exchangeNames(_ a: String, _ b: String) -> Bool {
    renameat2(AT_FDCWD, a, AT_FDCWD, b, 2 /* RENAME_EXCHANGE */) == 0
}
