import PTKConfiguration
import PTKDoor
import PTKSystem

/// STATE/listening while ptkd runs (see ListeningFile): written at start under an exclusive
/// flock that ptkd holds until it stops, then removed.
final class ListeningRecord {
    private let directory: FileDescriptor
    private let file: FileDescriptor

    /// Writes the file for `doors` in `stateDirectory`: a temporary file, locked before it gets
    /// its name, so a reader sees no file or the whole one. A file an earlier run left (it
    /// crashed: nobody holds its lock) is removed first.
    init(stateDirectory: String, doors: [ListeningDoor]) throws(SystemError) {
        directory = try FileDescriptor.open(stateDirectory, flags: [.readOnly, .directory])
        let temporary = ListeningFile.name + ".tmp.\(processID())"
        do {
            file = try FileDescriptor.open(
                temporary, relativeTo: directory, flags: [.writeOnly, .create, .truncate, .noFollow], mode: 0o644)
        } catch {
            directory.close()
            throw error
        }
        do {
            _ = try file.tryLock()
            try file.writeAll(Array(ListeningFile.text(pid: processID(), doors: doors).utf8))
            try file.setPermissions(0o644)
            do { try directory.unlink(ListeningFile.name) } catch  where error.code == .noSuchFile {}
            try directory.rename(temporary, to: ListeningFile.name)
        } catch {
            // The temporary file is ours and half made: gone either way, and the error is the write's.
            try? directory.unlink(temporary)
            file.close()
            directory.close()
            throw error
        }
    }

    /// Removes the file (ptkd is stopping) and lets its lock go.
    func remove() {
        // A file that cannot be removed is stale once its lock is released below: ptk ignores it.
        try? directory.unlink(ListeningFile.name)
        file.close()
        directory.close()
    }

    /// What the file lists of `doors`: each address each door listens on, under its name.
    static func doors(_ doors: [any Door]) -> [ListeningDoor] {
        doors.flatMap { door in
            door.listener.addresses.map { ListeningDoor(door: door.name, address: $0.host, port: $0.port) }
        }
    }
}
