import PTKDigest
import PTKSystem

/// What `IncomingFile` knew of partial uploads when it last let them go: the hash and structure
/// check after their bytes, so a partial nobody changed since is not read and hashed again at
/// every offer of its content. (A planted 255 MB partial cost 255 MB of reading and hashing per
/// OFFER, for as many OFFERs as anyone sends: issue 54, second image audit F4.)
///
/// A state is taken out when its partial is opened, so only the session holding the partial's
/// lock knows it, and put back when that session lets the partial go. It is used again only for
/// the same file unchanged: the same device, inode, size, modification and change time. The
/// change time is the kernel's (no caller can set it) and moves with every write, truncate,
/// chmod or link, so the inode number is never trusted alone; as the kernel's clock for it is
/// coarse (a tick of up to 10 ms), a file changed less than `settle` before its state was taken
/// is read again rather than trusted.
final class ResumeStates: @unchecked Sendable {
    /// One partial's checks after its first `length` bytes, and the file's status then.
    final class Remembered {
        let status: FileStatus
        let taken: WallTime
        let length: Int64
        /// The hash after `length` bytes; nil when the partial holds the whole file and its
        /// hash is finished (`wholeDigest`).
        var hasher: SHA256?
        let structure: StructureCheck
        let wholeDigest: String?

        init(status: FileStatus, taken: WallTime, length: Int64, hasher: consuming SHA256?, structure: StructureCheck, wholeDigest: String?) {
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
            let changed = status.changed * 1000 + status.changedNanoseconds / 1_000_000
            return now == status && now.changed == status.changed && now.changedNanoseconds == status.changedNanoseconds
                && now.size == length && taken.milliseconds - changed >= ResumeStates.settleMilliseconds
        }
    }

    /// Partials remembered at most, the least recently let go forgotten first. Each costs a
    /// hash context and a structure check's state (under a kilobyte); cycling more partials
    /// than this to make each be read again means holding that many on disk.
    static let limit = 1024
    /// How long before its state was taken a partial's last change must be for the state to be trusted.
    static let settleMilliseconds: Int64 = 100

    private let lock = Lock()
    // Guarded by `lock`: by partial name, and the names in the order they were let go.
    private var byName: [String: Remembered] = [:]
    private var order: [String] = []
    private var bytesRead: Int64 = 0

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

    /// Counts bytes of partials read back to rebuild their state.
    func read(_ count: Int) { lock.withLock { bytesRead += Int64(count) } }

    /// Bytes of partials read back so far (tests).
    var partialBytesRead: Int64 { lock.withLock { bytesRead } }
}
