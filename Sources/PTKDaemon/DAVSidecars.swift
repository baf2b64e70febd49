import PTKSystem

/// The files operating systems write beside photos (`._NAME` AppleDouble, `.DS_Store`,
/// `Thumbs.db`, `desktop.ini`: `DAVName.Kind.sidecar`), kept apart from the photos and the
/// library, per app password, in `DIR/ID.sidecars/` under their percent-encoded paths, and
/// shown back to the client that wrote them: Finder's copy fails if these writes fail. Small
/// and bounded: at most `maxSize` bytes each, `maxCount` and `maxTotal` bytes per password,
/// and never into the state directory's file system's `min-free`.
final class DAVSidecars: @unchecked Sendable {
    static let maxSize = 1 << 20
    static let maxCount = 10_000
    static let maxTotal: Int64 = 64 << 20

    struct Entry: Sendable, Equatable {
        var size: Int64
        var modified: Int64
    }

    let directory: String
    // Serializes writes, so the count check and the write are one step.
    private let lock = Lock()

    init(directory: String) { self.directory = directory }

    private func folder(_ id: String) -> String { directory + "/" + id + ".sidecars" }
    private func file(_ id: String, _ path: String) -> String { folder(id) + "/" + DAVNames.encode(path) }

    /// The sidecar `path` of password `id`, nil when it has none.
    func entry(_ id: String, _ path: String) -> Optional<Entry> {
        guard let st = try? fileStatus(file(id, path)), st.isRegularFile else { return nil }  // not there
        return Entry(size: st.size, modified: st.modified)
    }

    func read(_ id: String, _ path: String) -> [UInt8]? { try? readFileBytes(file(id, path), limit: Self.maxSize) }  // gone meanwhile: an empty answer

    /// The sidecars directly in `folder`, by name.
    func children(_ id: String, of folder: String) -> [(name: String, entry: Entry)] {
        guard let names = try? FileDescriptor.open(self.folder(id), flags: [.readOnly, .directory, .noFollow]).entriesAndClose() else { return [] }  // none kept yet
        let prefix = Array((folder.isEmpty ? "" : folder + "/").utf8)
        return names.compactMap { encoded in
            // By bytes: two spellings of one name are two names.
            guard let path = DAVNames.decode(encoded), Array(path.utf8).starts(with: prefix) else { return nil }
            let name = String(decoding: Array(path.utf8).dropFirst(prefix.count), as: UTF8.self)
            guard !name.isEmpty, !name.containsScalar("/"), let entry = entry(id, path) else { return nil }
            return (name, entry)
        }
    }

    /// Keeps `bytes` as the sidecar `path`; nil, or the reason it cannot.
    func write(_ id: String, _ path: String, _ bytes: [UInt8], minFree: Int64) -> String? {
        lock.withLock {
            do throws(SystemError) {
                try makeDirectories(folder(id), mode: 0o700)
                let dir = try FileDescriptor.open(folder(id), flags: [.readOnly, .directory, .noFollow])
                defer { dir.close() }
                let names = try dir.entries()
                var total: Int64 = 0
                for name in names { total += (try? dir.status(of: name))?.size ?? 0 }  // gone meanwhile: nothing to count
                let before = entry(id, path)?.size ?? 0
                if before == 0 && names.count >= Self.maxCount { return "this password keeps \(Self.maxCount) such files already" }
                if total - before + Int64(bytes.count) > Self.maxTotal {
                    return "this password keeps \(formatBytes(Double(Self.maxTotal))) of such files already"
                }
                if try dir.availableSpace() - Int64(bytes.count) < minFree { return "no space for it (min-free)" }
                try writeFileAtomically(file(id, path), bytes, mode: 0o600)
                return nil
            } catch {
                return "cannot keep it: \(error)"
            }
        }
    }

    func remove(_ id: String, _ path: String) { try? removeFile(file(id, path)) }  // gone already is what was asked

    /// Removes every sidecar at or below `path`.
    func removeAll(_ id: String, within path: String) {
        guard let names = try? FileDescriptor.open(folder(id), flags: [.readOnly, .directory, .noFollow]).entriesAndClose() else { return }  // none kept
        for encoded in names {
            guard let p = DAVNames.decode(encoded), Self.within(p, path) else { continue }
            remove(id, p)
        }
    }

    /// Moves the sidecars at or below `from` to `to`.
    func move(_ id: String, _ from: String, to: String) {
        guard let names = try? FileDescriptor.open(folder(id), flags: [.readOnly, .directory, .noFollow]).entriesAndClose() else { return }  // none kept
        for encoded in names {
            guard let p = DAVNames.decode(encoded), Self.within(p, from) else { continue }
            let new = to + String(decoding: Array(p.utf8).dropFirst(from.utf8.count), as: UTF8.self)
            // Replaces what is there (these files are the client's own); one that cannot move stays.
            guard let bytes = read(id, p), write(id, new, bytes, minFree: 0) == nil else { continue }
            remove(id, p)
        }
    }

    /// Whether `path` is `folder` or below it, by bytes ("" holds everything).
    static func within(_ path: String, _ folder: String) -> Bool {
        folder.isEmpty || Array(path.utf8) == Array(folder.utf8) || Array(path.utf8).starts(with: Array((folder + "/").utf8))
    }
}
