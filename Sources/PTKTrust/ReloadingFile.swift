import PTKSystem

/// A text file's parsed contents, read again only when its inode, size or time changed (the
/// trust list, the web sessions: ptkd asks at every connection or request, `ptk` edits them).
/// A file that is missing or cannot be read gives `empty`: it fails closed, so nobody is
/// trusted or logged in by mistake. So does a symlink there or at a directory on the way: it
/// is never followed (the service user owns these directories; issue 42).
final class ReloadingFile<Value: Sendable>: @unchecked Sendable {
    // `cached` and `cachedStatus` are guarded by `lock`.
    let path: String
    private let directory: StateDirectory
    private let name: String
    private let empty: Value
    private let parse: @Sendable (String) -> Value
    private let lock = Lock()
    private var cached: Value
    private var cachedStatus: FileStatus?
    /// `cached` is what the file says (not `empty` for want of a file that can be read).
    private var cachedRead = false

    init(_ name: String, in directory: StateDirectory, empty: Value, parse: @escaping @Sendable (String) -> Value) {
        self.directory = directory
        self.name = name
        path = directory.path(of: name)
        self.empty = empty
        self.parse = parse
        cached = empty
    }

    /// The contents as now on disk.
    var current: Value { lock.withLock { refresh() } }

    /// The contents as now on disk, nil when there is no file that can be read (where
    /// `current` gives `empty`): for a caller that must tell "none" from "not known now".
    var readable: Value? {
        lock.withLock {
            let value = refresh()
            return cachedRead ? value : nil
        }
    }

    /// Reads the file again if it changed. Call under `lock`.
    private func refresh() -> Value {
        // No directory (or a link in its place): empty, as below.
        guard let dir = try? directory.open() else {
            cached = empty
            cachedStatus = nil
            cachedRead = false
            return cached
        }
        defer { dir.close() }
        // No file, or none that can be stat'ed: empty, as below.
        let status = try? dir.status(of: name)
        if status == nil || status?.isRegularFile != true {
            cached = empty
            cachedStatus = nil
            cachedRead = false
        } else if status != cachedStatus {
            // Unreadable counts as empty (fails closed; `ptk` shows the error when it reads),
            // and is read again next time (a passing error, out of descriptors, is not kept).
            let text = try? dir.readFileRefusingLinks(name, path: path)
            cached = text.map { parse(String(decoding: $0, as: UTF8.self)) } ?? empty
            cachedRead = text != nil
            cachedStatus = text == nil ? nil : status
        }
        return cached
    }

    /// Makes the next `current` read the file again (after this process wrote it: a write
    /// within the file system's time granularity may leave the same size and time).
    func forget() { lock.withLock { cachedStatus = nil } }
}
