import PTKDigest
import PTKSystem

/// The checks of a photo's bytes (SHA-256 and the PNG structure with its CRC-32s) on a thread
/// of their own, fed copies of the bytes in order. For a big photo they then overlap the
/// session's reading and writing instead of adding to it: they were half of the receiving
/// thread's work per byte. At most `depth` copies wait, so memory stays bounded and slow checks
/// hold the writer back rather than piling up. If no thread can be started, it checks inline.
final class CheckingThread: @unchecked Sendable {
    // `queue`, `spare` and `foundError` are guarded by `lock`. `hasher` and `png` are used by
    // the thread alone until it signals `done`; `digest` and `pngResult` are written before
    // that signal and read after it.
    private let lock = Lock()
    private var queue: [[UInt8]?] = []  // nil marks the end
    private var spare: [[UInt8]] = []
    private var foundError: PNGError?
    private let filled = Semaphore()
    private let room: Semaphore
    private let done = Semaphore()
    private var hasher: SHA256
    private var png: PNGValidator
    private var digest = ""
    private var pngResult: PNGError?
    private var threaded = false
    private var finished = false
    /// Every check passes through it (PhotoStore.stopChecks).
    private let gate: ExitGate

    /// Continues `hasher` and `png`, which may already hold the file's first bytes.
    init(continuing hasher: consuming SHA256, png: PNGValidator, gate: ExitGate, depth: Int = 4) {
        self.hasher = hasher
        self.png = png
        self.gate = gate
        self.room = Semaphore(value: UInt32(depth))
        do {
            try startThread { [self] in run() }
            threaded = true
        } catch {
            threaded = false
        }
    }

    /// The first PNG error found so far, if any: it may lag the bytes fed by up to `depth` updates.
    var pngError: PNGError? { lock.withLock { foundError } }

    private func run() {
        while true {
            filled.wait()
            guard let buffer = lock.withLock({ queue.removeFirst() }) else { break }
            gate.pass { buffer.withUnsafeBytes { check($0) } }
            lock.withLock { spare.append(buffer) }
            room.signal()
        }
        gate.pass { conclude() }
        done.signal()
    }

    private func check(_ bytes: UnsafeRawBufferPointer) {
        hasher.update(bytes)
        guard pngResult == nil else { return }
        do { try png.feed(bytes) } catch {
            pngResult = error
            lock.withLock { foundError = error }
        }
    }

    private func conclude() {
        digest = hasher.finalizeHex()
        if pngResult == nil {
            do { try png.finish() } catch { pngResult = error }
        }
    }

    /// Queues a copy of `bytes`; waits while `depth` copies are already queued.
    func update(_ bytes: UnsafeRawBufferPointer) {
        guard threaded else { return gate.pass { check(bytes) } }
        room.wait()
        var buffer = lock.withLock { spare.popLast() } ?? []
        buffer.removeAll(keepingCapacity: true)
        buffer.append(contentsOf: bytes)
        lock.withLock { queue.append(buffer) }
        filled.signal()
    }

    /// Waits until every queued byte is checked, ends the thread, and returns the hex SHA-256
    /// and the PNG verdict for the whole file. Later calls return the same.
    func finish() -> (sha256: String, png: PNGError?) {
        if !finished {
            finished = true
            if threaded {
                lock.withLock { queue.append(nil) }
                filled.signal()
                done.wait()
            } else {
                gate.pass { conclude() }
            }
        }
        return (digest, pngResult)
    }
}
