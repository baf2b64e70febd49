import PTKSystem

/// Hashes a session's files in order on a thread of its own, so that each file's SHA-256 (which
/// its OFFER carries) is ready, or nearly, when the session is due to offer it: only the first
/// file's hash is waited for, the others are computed while the files before them are sent.
/// Without a thread it hashes every file at once, before the session starts.
///
/// A `head` already hashing the first file (started by `Delivery` before it connects, so the
/// first hash overlaps the TCP and TLS handshakes and HELLO) gives that file's result.
final class HashAhead: @unchecked Sendable {
    // `results` and `cancelled` are guarded by `lock`; `ready[i]` is signalled once `results[i]` is set.
    private let lock = Lock()
    private var results: [Result<String, LocalFileError>?]
    private let ready: [Semaphore]
    private var cancelled = false
    private let stopped = Semaphore()
    private let head: HashAhead?

    /// Hashes `files` in order; `head`, when given, is hashing `files[0]` (as its own first file).
    init(_ files: [LocalFile], head: HashAhead? = nil) {
        results = Array(repeating: nil, count: files.count)
        ready = files.map { _ in Semaphore() }
        self.head = files.isEmpty ? nil : head
        do { try startThread { [self] in run(files) } } catch { run(files) }
    }

    private func run(_ files: [LocalFile]) {
        defer { stopped.signal() }
        for (i, file) in files.enumerated() {
            let result = if i == 0, let head {
                Result { () throws(LocalFileError) in try head.sha256(of: 0) }
            } else {
                Result { () throws(LocalFileError) in try file.sha256 { lock.withLock { cancelled } } }
            }
            // Set even when cancelled (the result is then the cancellation), so that nothing
            // waiting on it waits for ever.
            lock.withLock { results[i] = result }
            ready[i].signal()
            if lock.withLock({ cancelled }) { return }
        }
    }

    /// True when the SHA-256 of file `index` is computed (or failed), so asking does not wait.
    func isReady(_ index: Int) -> Bool { lock.withLock { results[index] != nil } }

    /// The SHA-256 of file `index`, waiting for it if it is not computed yet.
    func sha256(of index: Int) throws(LocalFileError) -> String {
        ready[index].wait()
        ready[index].signal()  // a later call does not wait again
        return try lock.withLock { results[index]! }.get()
    }

    /// Stops hashing and returns once the thread is done with OpenSSL: the process may exit
    /// right after, and OpenSSL's exit-time clean-up must not pull state from under a hash.
    func cancel() {
        lock.withLock { cancelled = true }
        head?.cancel()
        stopped.wait()
        stopped.signal()  // a second cancel does not wait again
    }
}
