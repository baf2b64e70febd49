import PTKSystem

/// The files operating systems write beside photos (`._NAME` AppleDouble, `.DS_Store`,
/// `Thumbs.db`, `desktop.ini`: `DAVName.Kind.sidecar`), kept apart from the photos and the
/// library, per app password, in `DIR/ID.sidecars/` under their percent-encoded paths, and
/// shown back to the client that wrote them: Finder's copy fails if these writes fail. Small
/// and bounded: at most `maxSize` bytes each and `maxCount` per password.
final class DAVSidecars: @unchecked Sendable {
    static let maxSize = 1 << 20
    static let maxCount = 10_000

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
        let prefix = folder.isEmpty ? "" : folder + "/"
        return names.compactMap { encoded in
            guard let path = DAVNames.decode(encoded), path.hasPrefix(prefix) else { return nil }
            let name = String(path.dropFirst(prefix.count))
            guard !name.isEmpty, !name.containsScalar("/"), let entry = entry(id, path) else { return nil }
            return (name, entry)
        }
    }

    /// Keeps `bytes` as the sidecar `path`; false with the reason when it cannot.
    func write(_ id: String, _ path: String, _ bytes: [UInt8]) -> String? {
        lock.withLock {
            do throws(SystemError) {
                try makeDirectories(folder(id), mode: 0o700)
                if entry(id, path) == nil, let count = try? FileDescriptor.open(folder(id), flags: [.readOnly, .directory, .noFollow]).entriesAndClose().count,  // unreadable: the write below says why
                   count >= Self.maxCount {
                    return "this password keeps \(Self.maxCount) such files already"
                }
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
            guard let p = DAVNames.decode(encoded), p == path || p.hasPrefix(path + "/") || path.isEmpty else { continue }
            remove(id, p)
        }
    }

    /// Moves the sidecars at or below `from` to `to`.
    func move(_ id: String, _ from: String, to: String) {
        guard let names = try? FileDescriptor.open(folder(id), flags: [.readOnly, .directory, .noFollow]).entriesAndClose() else { return }  // none kept
        for encoded in names {
            guard let p = DAVNames.decode(encoded), p == from || p.hasPrefix(from + "/") else { continue }
            let new = to + String(p.dropFirst(from.count))
            // Replaces what is there (these files are the client's own); one that cannot move stays.
            guard let bytes = read(id, p), write(id, new, bytes) == nil else { continue }
            remove(id, p)
        }
    }
}
