import PTKDigest
import PTKSystem

/// SHA-256 on a thread of its own, fed in order. For a big photo the hash (about a third of the
/// receiver's work per byte) then overlaps the session's reading, checking and writing instead
/// of adding to it: on the build machine a 256 MB photo went from about 0.9 s to 0.75 s from
/// OFFER to SAVED. At most `depth` copies wait, so memory stays bounded and a slow hash holds
/// the writer back rather than piling up. If no thread can be started, it hashes inline.
final class HashingThread: @unchecked Sendable {
    // `queue` and `spare` are guarded by `lock`. `hasher` is used by the thread alone until it
    // signals `done`, and `digest` is written before that signal and read after it.
    private let lock = Lock()
    private var queue: [[UInt8]?] = []  // nil marks the end
    private var spare: [[UInt8]] = []
    private let filled = Semaphore()
    private let room: Semaphore
    private let done = Semaphore()
    private var hasher: SHA256
    private var digest = ""
    private var threaded = false
    private var finished = false

    /// Continues `hasher`, which may already hold earlier bytes (a resumed upload).
    init(continuing hasher: consuming SHA256, depth: Int = 4) {
        self.hasher = hasher
        self.room = Semaphore(value: UInt32(depth))
        do {
            try startThread { [self] in run() }
            threaded = true
        } catch {
            threaded = false
        }
    }

    private func run() {
        while true {
            filled.wait()
            guard let buffer = lock.withLock({ queue.removeFirst() }) else { break }
            buffer.withUnsafeBytes { hasher.update($0) }
            lock.withLock { spare.append(buffer) }
            room.signal()
        }
        digest = hasher.finalizeHex()
        done.signal()
    }

    /// Queues a copy of `bytes`; waits while `depth` copies are already queued.
    func update(_ bytes: UnsafeRawBufferPointer) {
        guard threaded else { return hasher.update(bytes) }
        room.wait()
        var buffer = lock.withLock { spare.popLast() } ?? []
        buffer.removeAll(keepingCapacity: true)
        buffer.append(contentsOf: bytes)
        lock.withLock { queue.append(buffer) }
        filled.signal()
    }

    /// Waits until every queued byte is hashed, ends the thread and returns the hex digest.
    /// Later calls return the same digest.
    func finish() -> String {
        if finished { return digest }
        finished = true
        guard threaded else {
            digest = hasher.finalizeHex()
            return digest
        }
        lock.withLock { queue.append(nil) }
        filled.signal()
        done.wait()
        return digest
    }
}
