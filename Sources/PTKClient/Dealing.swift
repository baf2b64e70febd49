import PTKProtocol

/// How many sessions `ptk-send` opens when `--parallel` is not given, for two or more files.
/// From `bench/run` (docs/PERFORMANCE.md): 1000 photos of 20 kB took 0.66-1.23 s over one
/// session, 0.55-0.70 s over four and 0.49-0.52 s over eight; four leave half of the
/// receiver's default per-address limit (8) free for another sender on the same host.
public let defaultParallelSessions = 4

/// Deals files to at most `sessions` sessions, as lists of indices into `files`, each in the
/// order given. Files that would take the same name on the receiver stay in one session in
/// their given order, so the " (2)" suffixes come out as they would over one session; every
/// other file goes to the session with the fewest bytes so far. No list is empty.
public func dealFiles(_ files: [LocalFile], sessions: Int) -> [[Int]] {
    let count = max(1, min(sessions, files.count))
    var groups = [[Int]](repeating: [], count: count)
    var bytes = [Int64](repeating: 0, count: count)
    var groupOfName: [String: Int] = [:]
    for (i, file) in files.enumerated() {
        // The receiver's own naming rules say which names compete there (protocol §5).
        let key = FileName.collisionKey(file.name)
        let g = groupOfName[key] ?? bytes.indices.min { bytes[$0] < bytes[$1] }!
        groupOfName[key] = g
        groups[g].append(i)
        bytes[g] += file.size
    }
    return groups.filter { !$0.isEmpty }
}

/// The sessions of one call, as lists of indices into `files`, once the first session's WELCOME
/// said how many the receiver serves at once for this sender (`receiverSessions`,
/// protocol-v1.md §4): every file in one session, in order, when that is 1 (or `parallel` is);
/// otherwise the files dealt to min(`parallel`, `receiverSessions`) sessions by `dealFiles`.
/// The first list is the first session's.
public func planSessions(_ files: [LocalFile], parallel: Int, receiverSessions: Int) -> [[Int]] {
    let count = min(parallel, receiverSessions)
    return count <= 1 ? [Array(files.indices)] : dealFiles(files, sessions: count)
}
