import PTKDigest
import PTKSystem

/// The checks of a photo's bytes (SHA-256 and the structure: a PNG's with its CRC-32s) on a thread
/// of their own, fed the received chunks in order. For a big photo they then overlap the
/// session's reading and writing instead of adding to it.
///
/// A chunk is handed over as the array it was received into: no copy. The thread is woken
/// once per `batch` chunks (or at the end), not once per chunk: a wake-up costs both threads
/// a system call and a context switch, which per 100 KiB chunk was a tenth of the receiver's
/// CPU. At most `depth` chunks wait, so memory stays bounded and slow checks hold the
/// writer back rather than piling up. If no thread can be started, it checks inline.
final class CheckingThread: @unchecked Sendable {
    // `queue`, `ended`, `sleeping`, `producerWaiting` and `foundError` are guarded by `state`.
    // `hasher` and `structure` are used by the thread alone until it has concluded; `digest` and
    // `structureResult` are written before `concluded` is set and read after.
    private let state = ConditionLock()
    private var queue: [[UInt8]] = []
    private var ended = false
    /// Set with `ended` by `handBack`: the thread ends without concluding the checks.
    private var handingBack = false
    private var concluded = false
    private var sleeping = false
    private var producerWaiting = false
    private var foundError: FormatError?
    private var hasher: SHA256
    private var structure: StructureCheck
    private var digest = ""
    private var structureResult: FormatError?
    private var threaded = false
    private var finished = false
    private let depth: Int
    private let batch: Int
    /// Every check passes through it (PhotoStore.stopChecks).
    private let gate: ExitGate

    /// Given back once the thread has concluded (or at once, when none could be started).
    private let slot: Slots?

    /// Continues `hasher` and `structure`, which may already hold the file's first bytes.
    /// `slot`, when given, is one taken from it for this thread, given back when it ends. The
    /// thread is one of `group`'s.
    init(
        continuing hasher: consuming SHA256, structure: StructureCheck, gate: ExitGate, slot: Slots? = nil,
        group: ThreadGroup = .process, depth: Int = 8, batch: Int = 4
    ) {
        self.hasher = hasher
        self.structure = structure
        self.gate = gate
        self.slot = slot
        self.depth = max(1, depth)
        self.batch = min(max(1, batch), self.depth)
        do {
            try group.start(name: "check") { [self] in run() }
            threaded = true
        } catch {
            threaded = false
            slot?.give()
        }
    }

    /// The first structural error found so far, if any: it may lag the bytes fed by up to
    /// 2 x `depth` updates (a batch waiting, and one being checked).
    var formatError: FormatError? { state.withLock { foundError } }

    private func run() {
        while true {
            var (work, last, keep) = state.withLock { () -> ([[UInt8]], Bool, Bool) in
                while queue.isEmpty && !ended {
                    sleeping = true
                    state.wait()
                    sleeping = false
                }
                let work = queue
                queue.removeAll(keepingCapacity: true)
                if producerWaiting { state.broadcast() }
                return (work, ended, handingBack)
            }
            for i in work.indices {
                let buffer = work[i]
                work[i] = []
                gate.pass { buffer.withUnsafeBytes { check($0) } }
                // Received chunks come from the pool; anything else is simply kept a while.
                ByteArrayPool.chunks.give(buffer)
            }
            if last {
                if keep { break }
                gate.pass { conclude() }
                break
            }
        }
        // Given back before `finish` can return, so the next file finds it free.
        slot?.give()
        state.withLock {
            concluded = true
            state.broadcast()
        }
    }

    private func check(_ bytes: UnsafeRawBufferPointer) {
        hasher.update(bytes)
        guard structureResult == nil else { return }
        do { try structure.feed(bytes) } catch {
            structureResult = error
            state.withLock { foundError = error }
        }
    }

    private func conclude() {
        digest = hasher.finalizeHex()
        if structureResult == nil {
            do { try structure.finish() } catch { structureResult = error }
        }
    }

    /// The checks' state after every byte fed, not concluded: what a later session continues.
    struct Continuation: ~Copyable {
        /// Never nil as handed back; optional so it can be taken out.
        var hasher: SHA256?
        let structure: StructureCheck
        /// The structural error found, if any (then there is nothing to continue).
        let error: FormatError?
    }

    /// Waits until every queued byte is checked or `deadline` passes, ends the thread without
    /// concluding the checks, and hands back their state: for a partial kept for a later session,
    /// so that session need not read and hash the partial again. Nil when the thread did not end
    /// in time (the gate closed at exit) or the checks were finished or handed back already.
    func handBack(waitingUntil deadline: Instant) -> Continuation? {
        guard !finished else { return nil }
        finished = true
        if threaded {
            let ended = state.withLock { () -> Bool in
                handingBack = true
                self.ended = true
                state.broadcast()
                while !concluded {
                    if !state.wait(until: deadline) { return concluded }
                }
                return true
            }
            guard ended else { return nil }
        }
        var taken = SHA256()
        swap(&taken, &hasher)
        return Continuation(hasher: taken, structure: structure, error: structureResult)
    }

    /// Queues `bytes` (the array itself, not a copy); waits while `depth` chunks are queued.
    func update(_ bytes: [UInt8]) {
        guard threaded else { return bytes.withUnsafeBytes { b in gate.pass { check(b) } } }
        guard !bytes.isEmpty else { return }
        state.withLock {
            while queue.count >= depth {
                producerWaiting = true
                if sleeping { state.broadcast() }
                state.wait()
                producerWaiting = false
            }
            queue.append(bytes)
            if sleeping && queue.count >= batch { state.broadcast() }
        }
    }

    /// Queues a copy of `bytes`.
    func update(_ bytes: UnsafeRawBufferPointer) {
        guard threaded else { return gate.pass { check(bytes) } }
        update(Array(bytes))
    }

    /// Waits until every queued byte is checked, ends the thread, and returns the hex SHA-256
    /// and the structural verdict for the whole file. Later calls return the same.
    func finish() -> (sha256: String, structure: FormatError?) {
        if !finished {
            finished = true
            if threaded {
                state.withLock {
                    ended = true
                    state.broadcast()
                    while !concluded { state.wait() }
                }
            } else {
                gate.pass { conclude() }
            }
        }
        return (digest, structureResult)
    }
}
