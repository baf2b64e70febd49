import PTKSystem

/// Hashes files in a given order on a thread of its own, so that each file's SHA-256 (which its
/// OFFER carries) is ready, or nearly, when a session is due to offer it: only the first file's
/// hash is waited for, the others are computed while the files before them are sent. Started
/// before the first session connects (`Delivery`), so that the first hash overlaps the TCP and
/// TLS handshakes and HELLO; one hasher serves every session of a call, which take their files
/// in the same order. Without a thread it hashes every file at once, when it is made.
final class HashAhead: @unchecked Sendable {
    // `results` and `cancelled` are guarded by `lock`; `ready[i]` is signalled once `results[i]` is set.
    private let lock = Lock()
    private var results: [Int: Result<String, LocalFileError>] = [:]
    private let ready: [Int: Semaphore]
    private var cancelled = false
    /// Files that will not be offered (the receiver does not keep their type): not hashed.
    private var passedOver: (@Sendable (Int) -> Bool)?
    private let stopped = Semaphore()

    /// Hashes `files[i]` for each `i` of `order` (default: all, in order); only those may be asked for.
    init(_ files: [LocalFile], order: [Int]? = nil) {
        let order = order ?? Array(files.indices)
        ready = Dictionary(uniqueKeysWithValues: order.map { ($0, Semaphore()) })
        do { try startThread(name: "hash-ahead") { [self] in run(files, order) } } catch { run(files, order) }
    }

    private func run(_ files: [LocalFile], _ order: [Int]) {
        defer { stopped.signal() }
        for (k, i) in order.enumerated() {
            let skip = lock.withLock { passedOver?(i) ?? false }
            let result =
                skip
                ? .failure(LocalFileError(path: files[i].path, reason: "not offered"))
                : Result { () throws(LocalFileError) in try files[i].sha256 { lock.withLock { cancelled } } }
            // Set even when cancelled (the result is then the cancellation), so that nothing
            // waiting on it waits for ever; so are the results of the files not reached.
            let stop = lock.withLock { () -> Bool in
                results[i] = result
                guard cancelled else { return false }
                for j in order[(k + 1)...] {
                    results[j] = .failure(LocalFileError(path: files[j].path, reason: "hashing was cancelled"))
                }
                return true
            }
            ready[i]!.signal()
            if stop {
                for j in order[(k + 1)...] { ready[j]!.signal() }
                return
            }
        }
    }

    /// From now on, files for which `predicate` holds are not hashed (their result says they
    /// are not offered): the receiver's WELCOME showed it does not keep their type.
    func passOver(_ predicate: @escaping @Sendable (Int) -> Bool) {
        lock.withLock { passedOver = predicate }
    }

    /// True when the SHA-256 of `files[file]` is computed (or failed), so asking does not wait.
    func isReady(_ file: Int) -> Bool { lock.withLock { results[file] != nil } }

    /// The SHA-256 of `files[file]`, waiting for it if it is not computed yet.
    func sha256(of file: Int) throws(LocalFileError) -> String {
        guard let semaphore = ready[file] else { preconditionFailure("file \(file) is not hashed here") }
        semaphore.wait()
        semaphore.signal()  // a later call does not wait again
        return try lock.withLock { results[file]! }.get()
    }

    /// Stops hashing and returns once the thread is done with OpenSSL: the process may exit
    /// right after, and OpenSSL's exit-time clean-up must not pull state from under a hash.
    /// Every file not hashed by then has the cancellation as its result.
    func cancel() {
        lock.withLock { cancelled = true }
        stopped.wait()
        stopped.signal()  // a second cancel does not wait again
    }
}
