import PTKSystem

/// A text file's parsed contents, read again only when its inode, size or time changed (the
/// trust list, the web sessions: ptkd asks at every connection or request, `ptk` edits them).
/// A file that is missing or cannot be read gives `empty`: it fails closed, so nobody is
/// trusted or logged in by mistake.
final class ReloadingFile<Value: Sendable>: @unchecked Sendable {
    // `cached` and `cachedStatus` are guarded by `lock`.
    let path: String
    private let empty: Value
    private let parse: @Sendable (String) -> Value
    private let lock = Lock()
    private var cached: Value
    private var cachedStatus: FileStatus?

    init(path: String, empty: Value, parse: @escaping @Sendable (String) -> Value) {
        self.path = path
        self.empty = empty
        self.parse = parse
        cached = empty
    }

    /// The contents as now on disk.
    var current: Value {
        lock.withLock {
            // No file, or none that can be stat'ed: empty, as below.
            let status = try? fileStatus(path)
            if status == nil {
                cached = empty
                cachedStatus = nil
            } else if status != cachedStatus {
                // Unreadable counts as empty (fails closed; `ptk` shows the error when it reads).
                cached = (try? readTextFile(path)).map(parse) ?? empty
                cachedStatus = status
            }
            return cached
        }
    }

    /// Makes the next `current` read the file again (after this process wrote it: a write
    /// within the file system's time granularity may leave the same size and time).
    func forget() { lock.withLock { cachedStatus = nil } }
}
