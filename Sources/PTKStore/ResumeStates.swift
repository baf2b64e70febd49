import PTKDigest
import PTKSystem

/// What `IncomingFile` knew of partial uploads when it last let them go: the hash and structure
/// check after their bytes, so a partial nobody changed since is not read and hashed again at
/// every offer of its content. (A planted 255 MB partial cost 255 MB of reading and hashing per
/// OFFER, for as many OFFERs as anyone sends: issue 54, second image audit F4.)
///
/// A state is taken out when its partial is opened, so only the session holding the partial's
/// lock knows it, and put back when that session lets the partial go, whether its checks ran
/// inline or on a checking thread. It is used again only for the same file unchanged: the same
/// device, inode, size, modification and change time. The change time is the kernel's (no
/// caller can set it) and moves with every write, truncate, chmod or link, so the inode number
/// is never trusted alone. As the kernel stamps it with a coarse clock (a tick of up to 10 ms),
/// a state is taken only once that clock has passed the file's change time (`taken`, at most a
/// tick after ptkd's own last write, while the session still holds the lock): any write after
/// that, by anyone, gets a later stamp.
///
/// Whatever the reason a partial is read back anyway (a state forgotten, a short last chunk cut
/// off), `rereads` counts the bytes; a partial read back more than twice its length within one
/// run of ptkd is started over, so the reading is paid for by its sender sending it again.
final class ResumeStates: @unchecked Sendable {
    /// One partial's checks after its first `length` bytes, and the file's status then.
    final class Remembered {
        let status: FileStatus
        /// `changeClockNanoseconds()` when the state was taken: after `status.changedAt`.
        let taken: Int64
        let length: Int64
        /// The hash after `length` bytes; nil when the partial holds the whole file and its
        /// hash is finished (`wholeDigest`).
        var hasher: SHA256?
        let structure: StructureCheck
        let wholeDigest: String?

        init(
            status: FileStatus, taken: Int64, length: Int64, hasher: consuming SHA256?, structure: StructureCheck,
            wholeDigest: String?
        ) {
            self.status = status
            self.taken = taken
            self.length = length
            self.hasher = hasher
            self.structure = structure
            self.wholeDigest = wholeDigest
        }

        /// True when the file whose status is `now` is the very file this state was taken of,
        /// as it was then.
        func describes(_ now: FileStatus) -> Bool {
            now == status && now.changedAt == status.changedAt && now.size == length && status.changedAt < taken
        }
    }

    /// Partials remembered at most, the least recently let go forgotten first. Each costs a
    /// hash context and a structure check's state (under a kilobyte); cycling more partials
    /// than this to make each be read again means holding that many on disk.
    static let limit = 1024
    /// How long letting a partial go may wait for the kernel's change clock to pass the
    /// partial's change time (a tick: 1 to 10 ms); past it, the state is not kept.
    static let settleLimit: Duration = .milliseconds(50)
    /// Times its length a partial may be read back within one run before it is started over.
    static let rereadLimit: Int64 = 2

    private let lock = Lock()
    // Guarded by `lock`: by partial name, and the names in the order they were let go.
    private var byName: [String: Remembered] = [:]
    private var order: [String] = []
    private var bytesRead: Int64 = 0
    // Guarded by `lock`: bytes read back of each partial, and the names in the order last counted.
    private var rereads: [String: Int64] = [:]
    private var rereadOrder: [String] = []

    /// The state of partial `name`, forgotten here.
    func take(_ name: String) -> Remembered? {
        lock.withLock {
            guard let state = byName.removeValue(forKey: name) else { return nil }
            order.removeAll { $0 == name }
            return state
        }
    }

    func remember(_ name: String, _ state: Remembered) {
        lock.withLock {
            if byName.updateValue(state, forKey: name) != nil { order.removeAll { $0 == name } }
            order.append(name)
            if order.count > Self.limit { byName.removeValue(forKey: order.removeFirst()) }
        }
    }

    /// Counts `count` bytes of partial `name` read back to rebuild its state.
    func read(_ count: Int, of name: String) {
        lock.withLock {
            bytesRead += Int64(count)
            if rereads[name] == nil {
                rereadOrder.append(name)
                if rereadOrder.count > Self.limit { rereads.removeValue(forKey: rereadOrder.removeFirst()) }
            }
            rereads[name, default: 0] += Int64(count)
        }
    }

    /// True when reading partial `name` back again, `length` bytes, would take the bytes read
    /// back of it past `rereadLimit` times its length: it is to be started over instead.
    func overRereadLimit(_ name: String, length: Int64) -> Bool {
        lock.withLock { (rereads[name] ?? 0) + length > Self.rereadLimit * length }
    }

    /// Forgets all about partial `name`: it is gone or started over.
    func forget(_ name: String) {
        lock.withLock {
            byName.removeValue(forKey: name)
            order.removeAll { $0 == name }
            if rereads.removeValue(forKey: name) != nil { rereadOrder.removeAll { $0 == name } }
        }
    }

    /// Bytes of partials read back so far (tests).
    var partialBytesRead: Int64 { lock.withLock { bytesRead } }
}
