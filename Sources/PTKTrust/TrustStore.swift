import PTKProtocol
import PTKSystem
import PTKVocabulary

/// A device allowed to send: its ID and the name the administrator gave it.
public struct TrustedSender: Sendable, Equatable {
    /// The device ID or LocalSend fingerprint the sender proves over TLS.
    public var id: SenderID
    /// The administrator's name for it, from the trust list's line; may be empty.
    public var name: String
    /// Takes both as given; `parseTrustList` makes these from the file's lines.
    public init(id: SenderID, name: String) {
        self.id = id
        self.name = name
    }
    /// A ptk device (protocol v1); LocalSend apps go through the `SenderID` form.
    public init(id: DeviceID, name: String) { self.init(id: .device(id), name: name) }
}

/// A device that was refused under `--senders trusted`, kept so the administrator can allow it.
public struct PendingSender: Sendable, Equatable {
    /// The ID the administrator allows it by (`ptk trust allow`, a prefix is enough).
    public var id: SenderID
    /// The name from its last HELLO.
    public var name: String
    /// The address of its last attempt.
    public var address: String
    /// First and last attempt, seconds since 1970.
    public var firstAttempt: WallTime
    /// Seconds since 1970; the pending list drops the device whose last attempt is oldest when full.
    public var lastAttempt: WallTime
    /// Refused attempts counted, at least 1.
    public var attempts: Int

    /// Takes the fields as given; `TrustStore` keeps the counts.
    public init(
        id: SenderID, name: String, address: String, firstAttempt: WallTime, lastAttempt: WallTime, attempts: Int
    ) {
        self.id = id
        self.name = name
        self.address = address
        self.firstAttempt = firstAttempt
        self.lastAttempt = lastAttempt
        self.attempts = attempts
    }
    /// A ptk device (protocol v1); LocalSend apps go through the `SenderID` form.
    public init(
        id: DeviceID, name: String, address: String, firstAttempt: WallTime, lastAttempt: WallTime, attempts: Int
    ) {
        self.init(
            id: .device(id), name: name, address: address, firstAttempt: firstAttempt, lastAttempt: lastAttempt,
            attempts: attempts)
    }
}

/// The trust list and the pending senders, as two text files in the state directory:
///
/// - `trusted-senders`: one `ID name` a line (the ID in any case, with or without dashes: a ptk
///   device ID, 52 base32 characters, or a LocalSend fingerprint, 64 hex digits), `#` comments. The administrator may edit it by hand; ptkd re-reads it when it changes.
/// - `pending-senders`: one refused device a line, tab-separated: ID, attempts, first and last
///   attempt (Unix time), address, name.
///
/// Every read-modify-write holds `.trust.lock` (flock), so ptkd and `ptk` never lose each
/// other's changes; files are replaced atomically, and as root keep the directory's owner.
/// The service user owns the directory, so every file is opened, replaced and locked relative
/// to the directory's descriptor, never following a symlink: one planted at a file's name is
/// refused with an error naming it (`RefusedFileError`), and a lock file with a second hard
/// link too (issue 42).
public final class TrustStore: @unchecked Sendable {
    /// The state directory holding both files, as given at init.
    public let directory: String
    private let state: StateDirectory
    private let trustList: ReloadingFile<[TrustedSender]>
    /// The most devices the pending list keeps: the one whose last attempt is oldest goes.
    public static let pendingLimit = 100
    /// The attempts a pending line may count (more are counted as this many).
    static let attemptsRange = 1...Int(Int32.max)
    /// The pending list is rewritten at most this often; attempts in between are written together.
    public static let pendingInterval: Duration = .seconds(1)
    // `unwritten`, `lastWrite` and `flushing` are guarded by `attempts`.
    private let attempts = Lock()
    /// Refused attempts not yet in the file, in the order they came.
    private var unwritten: [(id: SenderID, name: String, address: String, time: WallTime)] = []
    private var lastWrite: Instant?
    private var flushing = false
    /// Times this store rewrote the pending list (for the tests).
    private(set) var pendingWrites = 0

    /// `lockPatience`: how long a change waits for another process holding `.trust.lock`.
    public init(directory: String, lockPatience: LockPatience = .lockFile) {
        self.directory = directory
        var state = StateDirectory(opening: directory)
        state.patience = lockPatience
        self.state = state
        trustList = ReloadingFile("trusted-senders", in: state, empty: [], parse: Self.parseTrustList)
    }

    /// The trust list's path, for messages that tell the administrator where to look.
    public var trustFile: String { trustList.path }
    /// The pending list's path, for messages that tell the administrator where to look.
    public var pendingFile: String { state.path(of: "pending-senders") }
    var lockFile: String { state.path(of: ".trust.lock") }

    /// Whether `id` is on the trust list, reading the file again only when it changed.
    public func isTrusted(_ id: SenderID) -> Bool {
        trusted().contains { $0.id == id }
    }

    /// `isTrusted(_:)` for a ptk device ID.
    public func isTrusted(_ id: DeviceID) -> Bool { isTrusted(.device(id)) }

    /// The trust list as now on disk (re-read when its inode, size or time changed). A file
    /// that cannot be read counts as empty: nobody is trusted by mistake.
    public func trusted() -> [TrustedSender] { trustList.current }

    /// Notes a refused attempt by `id`: adds it to the pending list or updates its entry.
    public func recordAttempt(id: DeviceID, name: String, address: String, at time: WallTime = .now) throws(TrustError)
    {
        try files {
            try recordAttempt(id: .device(id), name: name, address: address, at: time)
        }
    }

    /// Refused devices come as fast as a peer can make certificates, so the file is rewritten
    /// at most once per `pendingInterval` (attempts within it are written together, by a
    /// short-lived thread when none follows) and keeps at most `pendingLimit` devices. An
    /// attempt that waits is not checked against the disk: the error of that later write is logged by no one.
    public func recordAttempt(id: SenderID, name: String, address: String, at time: WallTime = .now) throws(TrustError)
    {
        try files {
            let name = String(String.UnicodeScalarView(Self.cleanName(name).unicodeScalars.prefix(64)))
            let writeNow: Bool = attempts.withLock {
                unwritten.append((id, name, address, time))
                // Bounded while it waits, too: only the newest attempts matter.
                if unwritten.count > Self.pendingLimit * 2 {
                    unwritten.removeFirst(unwritten.count - Self.pendingLimit * 2)
                }
                if let lastWrite, Instant.now - lastWrite < Self.pendingInterval {
                    if !flushing {
                        flushing = true
                        let wait = Self.pendingInterval - (Instant.now - lastWrite)
                        // Without a thread the attempt is written with the next one (or never, if none comes).
                        try? startThread(name: "pending-senders") { [self] in
                            sleep(for: wait)
                            try? flushAttempts()  // nobody to tell: the next attempt writes again
                        }
                    }
                    return false
                }
                return true
            }
            if writeNow { try flushAttempts() }
        }
    }

    /// Attempts this process has not written yet are part of what the pending list says.
    private func flushWaitingAttempts() throws {
        if attempts.withLock({ !unwritten.isEmpty }) { try flushAttempts() }
    }

    /// Writes the attempts waiting into the pending list (one read-modify-write).
    func flushAttempts() throws {
        try state.locked(".trust.lock", guarding: "the trust lists") { dir in
            let batch: [(id: SenderID, name: String, address: String, time: WallTime)] = attempts.withLock {
                defer {
                    unwritten = []
                    lastWrite = .now
                    flushing = false
                }
                return unwritten
            }
            guard !batch.isEmpty else { return }
            var pending = try readPending(in: dir)
            for a in batch {
                if let i = pending.firstIndex(where: { $0.id == a.id }) {
                    pending[i].name = a.name
                    pending[i].address = a.address
                    pending[i].lastAttempt = a.time
                    pending[i].attempts = min(pending[i].attempts + 1, Self.attemptsRange.upperBound)
                } else {
                    pending.append(
                        PendingSender(
                            id: a.id, name: a.name, address: a.address, firstAttempt: a.time, lastAttempt: a.time,
                            attempts: 1))
                }
            }
            if pending.count > Self.pendingLimit {
                // The devices heard from least lately go (the list stays oldest first); within a
                // second (the file keeps seconds) the one further down the list is the later.
                let keep = Set(
                    pending.indices.sorted { a, b in
                        let ta = pending[a].lastAttempt.milliseconds / 1000
                        let tb = pending[b].lastAttempt.milliseconds / 1000
                        return ta != tb ? ta > tb : a > b
                    }.prefix(Self.pendingLimit))
                pending = pending.indices.filter(keep.contains).map { pending[$0] }
            }
            attempts.withLock { pendingWrites += 1 }
            try writePending(pending, in: dir)
        }
    }

    /// The pending senders, oldest first.
    public func pending() throws(TrustError) -> [PendingSender] {
        return try files {
            try flushWaitingAttempts()
            return try state.withExisting { dir in try readPending(in: dir) } ?? []
        }
    }

    /// Trusts the one pending or listed device whose ID starts with `prefix`, under `name`
    /// (default: the name from its HELLO, else its old name); drops its pending entry.
    /// Returns the entry as written.
    @discardableResult
    public func allow(_ prefix: String, name: String? = nil) throws(TrustError) -> TrustedSender {
        return try files {
            try flushWaitingAttempts()
            return try state.locked(".trust.lock", guarding: "the trust lists") { dir in
                var pending = try readPending(in: dir)
                var list = try readTrustList(in: dir)
                // A whole ID may be allowed before the device ever tried; a prefix must name one known device.
                let known = Array(Set(pending.map(\.id) + list.map(\.id))).sorted()
                let id =
                    try SenderID(parsing: prefix)
                    ?? Self.unique(
                        prefix, in: known, what: "pending or trusted device",
                        hint: "; give the whole ID (52 characters, or a LocalSend fingerprint's 64)")
                var defaultName = "device"
                if let p = pending.first(where: { $0.id == id }) { defaultName = p.name }
                if let old = list.first(where: { $0.id == id }) { defaultName = old.name }
                let entry = TrustedSender(id: id, name: Self.cleanName(name ?? defaultName))
                list.removeAll { $0.id == id }
                list.append(entry)
                try writeTrustList(list, in: dir)
                pending.removeAll { $0.id == id }
                try writePending(pending, in: dir)
                return entry
            }
        }
    }

    /// Removes a trusted device (by ID or unique prefix of a listed one).
    @discardableResult
    public func remove(_ prefix: String) throws(TrustError) -> TrustedSender {
        return try files {
            try state.locked(".trust.lock", guarding: "the trust lists") { dir in
                var list = try readTrustList(in: dir)
                let id = try Self.unique(prefix, in: list.map(\.id), what: "trusted device")
                let entry = list.first { $0.id == id }!
                list.removeAll { $0.id == entry.id }
                try writeTrustList(list, in: dir)
                return entry
            }
        }
    }

    /// Drops a pending entry (by ID or unique prefix of a pending one).
    @discardableResult
    public func deny(_ prefix: String) throws(TrustError) -> PendingSender {
        return try files {
            try flushWaitingAttempts()
            return try state.locked(".trust.lock", guarding: "the trust lists") { dir in
                var pending = try readPending(in: dir)
                let id = try Self.unique(prefix, in: pending.map(\.id), what: "pending device")
                let entry = pending.first { $0.id == id }!
                pending.removeAll { $0.id == entry.id }
                try writePending(pending, in: dir)
                return entry
            }
        }
    }

    /// The one ID of `ids` that starts with `prefix`, or an error saying why there is none.
    static func unique(_ prefix: String, in ids: [SenderID], what: String, hint: String = "") throws -> SenderID {
        let asDevice = DeviceID.normalized(prefix) ?? ""
        let asHex = SenderID.normalizedHex(prefix) ?? ""
        guard !asDevice.isEmpty || !asHex.isEmpty else {
            throw TrustError(
                "'\(prefix)' is not a device ID or LocalSend fingerprint, nor the start of one (A-Z and 2-7, or hex digits; dashes and spaces ignored)"
            )
        }
        let matches = ids.filter { $0.hasPrefix(prefix) }
        guard let first = matches.first else { throw TrustError("no \(what) ID starts with '\(prefix)'\(hint)") }
        guard matches.count == 1 else {
            throw TrustError(
                "'\(prefix)' matches \(matches.count) devices (\(matches.map(\.short).joined(separator: ", "))); give more of the ID"
            )
        }
        return first
    }

    /// A name fit for one line: control characters and tabs become spaces.
    /// A name a peer gave, fit for the files and for a terminal: controls of every kind (C0, C1,
    /// line separators, bidi overrides: `isTerminalControl`) become spaces.
    static func cleanName(_ name: String) -> String {
        let cleaned = String(name.unicodeScalars.map { isTerminalControl($0) ? " " : Character($0) })
            .trimmingSpaces
        return cleaned.isEmpty ? "device" : String(cleaned.prefix(200))
    }

    // MARK: Files

    func readTrustList(in dir: FileDescriptor) throws -> [TrustedSender] {
        Self.parseTrustList(try state.readText("trusted-senders", in: dir) ?? "")
    }

    func writeTrustList(_ list: [TrustedSender], in dir: FileDescriptor) throws {
        var text = "# Devices allowed to send to ptkd under `senders = trusted`: one `ID name` a line.\n"
        text += "# Edit with `ptk trust allow|remove`, or by hand: ptkd re-reads this file when it changes.\n"
        for e in list { text += "\(e.id) \(e.name)\n" }
        try state.replace("trusted-senders", in: dir, with: Array(text.utf8), mode: 0o644)
        trustList.forget()
    }

    func readPending(in dir: FileDescriptor) throws -> [PendingSender] {
        Self.parsePending(try state.readText("pending-senders", in: dir) ?? "")
    }

    func writePending(_ pending: [PendingSender], in dir: FileDescriptor) throws {
        var text = "# Devices refused under `senders = trusted` (`ptk trust pending` shows them).\n"
        text += "# ID, attempts, first and last attempt (Unix time), address, name; tab-separated.\n"
        for p in pending {
            text +=
                "\(p.id.compact)\t\(p.attempts)\t\(p.firstAttempt.seconds)\t\(p.lastAttempt.seconds)\t\(p.address)\t\(Self.cleanName(p.name))\n"
        }
        try state.replace("pending-senders", in: dir, with: Array(text.utf8), mode: 0o644)
    }

    /// The lines of `text` (LF or CRLF), split on the scalars themselves: as Characters, a
    /// newline or a separator followed by a combining mark (a name may start with one) would
    /// be one character and not split.
    static func lines(_ text: String) -> [String] {
        text.unicodeScalars.split(separator: "\n").map { line in
            String(line.last == "\r" ? line.dropLast() : line[...])
        }
    }

    /// `line` split at the first of `separators` (scalars, as `lines` explains); the second
    /// part is nil when there is none.
    static func splitOnce(_ line: String, at separators: Set<Unicode.Scalar>) -> (String, String?) {
        let scalars = line.unicodeScalars
        guard let i = scalars.firstIndex(where: separators.contains) else { return (line, nil) }
        return (String(scalars[..<i]), String(scalars[scalars.index(after: i)...]))
    }

    /// Parses the trust list; lines that are not `ID name` are skipped.
    public static func parseTrustList(_ text: String) -> [TrustedSender] {
        var out: [TrustedSender] = []
        for raw in lines(text) {
            let line = raw.trimmingSpaces
            if line.isEmpty || line.hasPrefix("#") { continue }
            let (idText, rest) = splitOnce(line, at: [" ", "\t"])
            guard let id = SenderID(parsing: idText) else { continue }
            out.append(TrustedSender(id: id, name: rest?.trimmingSpaces ?? ""))
        }
        return out
    }

    /// The pending list's lines; a malformed line is skipped, so a hand-damaged file loses only that line.
    public static func parsePending(_ text: String) -> [PendingSender] {
        var out: [PendingSender] = []
        for line in lines(text) where !line.hasPrefix("#") {
            let f = line.unicodeScalars.split(separator: "\t", omittingEmptySubsequences: false).map { String($0) }
            // A line that is not ID, count, two times (that are times), address, name is skipped;
            // so is one whose count or times are out of range (planted: counting on would trap).
            guard f.count >= 6, let id = SenderID(parsing: f[0]), let n = Int(f[1]), Self.attemptsRange.contains(n),
                let first = Int64(f[2]).flatMap(WallTime.init(storedSeconds:)),
                let last = Int64(f[3]).flatMap(WallTime.init(storedSeconds:))
            else { continue }
            out.append(
                PendingSender(
                    id: id, name: f[5...].joined(separator: " "), address: f[4], firstAttempt: first, lastAttempt: last,
                    attempts: n))
        }
        return out
    }
}
