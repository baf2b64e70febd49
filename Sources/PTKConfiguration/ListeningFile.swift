import PTKSystem

/// One address ptkd listens on: its door ("v1", "localsend" or "web"), address and port.
public struct ListeningDoor: Sendable, Equatable {
    /// The door's name: "v1", "localsend" or "web".
    public var door: String
    /// The address as bound, numeric.
    public var address: String
    /// The port really bound (never 0).
    public var port: UInt16

    /// One line of the file.
    public init(door: String, address: String, port: UInt16) {
        self.door = door
        self.address = address
        self.port = port
    }
}

/// STATE/listening: where the running ptkd listens (every door, the ports it really got, so a
/// `--web-port` flag or a port 0 is seen by `ptk web-link`). ptkd writes it at start (atomically:
/// a temporary file renamed into place) and removes it at a clean stop; while it runs it holds an
/// exclusive flock on the file, so a file left by a ptkd that was killed is told from a live one:
/// nobody holds its lock. One line per address, "DOOR ADDRESS PORT", after a "pid N" line.
public enum ListeningFile {
    /// The file's name in the state directory.
    public static let name = "listening"

    /// Where the file is for `stateDirectory`.
    public static func path(stateDirectory: String) -> String { stateDirectory + "/" + name }

    /// The file's text for ptkd with process ID `pid`.
    public static func text(pid: Int32, doors: [ListeningDoor]) -> String {
        var out = "# where ptkd listens; written at its start, removed at its stop (ptk reads it)\npid \(pid)\n"
        for d in doors { out += "\(d.door) \(d.address) \(d.port)\n" }
        return out
    }

    /// The doors a file's text lists (lines it does not understand are skipped).
    public static func parse(_ text: String) -> [ListeningDoor] {
        text.split(separator: "\n").compactMap { line in
            let words = line.split(separator: " ")
            guard words.count == 3, !line.hasPrefix("#"), let port = UInt16(words[2]) else { return nil }
            return ListeningDoor(door: String(words[0]), address: String(words[1]), port: port)
        }
    }

    /// The doors of the ptkd running with `stateDirectory`; nil when none runs (no file, a file
    /// nobody holds the lock of, or one that cannot be read).
    public static func read(stateDirectory: String) -> [ListeningDoor]? {
        let path = path(stateDirectory: stateDirectory)
        // No file, or not a regular file (a symlink, a FIFO the service user planted: never
        // followed, never waited on): no ptkd to ask; the caller falls back to the configuration.
        guard let (fd, _) = try? FileDescriptor.openRegularFile(path) else { return nil }
        defer { fd.close() }
        // The lock free (taken here, released at close) means ptkd did not stop cleanly: stale.
        // An error from flock itself tells nothing either way: treated as no ptkd.
        guard let free = try? fd.tryLock(), !free else { return nil }
        // Read through the descriptor that was checked, never by name again. Unreadable: as no file.
        guard let bytes = try? fd.readAll(limit: 64 << 10, name: path) else { return nil }
        return parse(String(decoding: bytes, as: UTF8.self))
    }

    /// The port of `door` in `doors`.
    public static func port(_ door: String, in doors: [ListeningDoor]) -> UInt16? {
        doors.first { $0.door == door }?.port
    }
}
