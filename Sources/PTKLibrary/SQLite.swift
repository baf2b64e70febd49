import CSQLite
import PTKSystem

/// A failure of the photo library: its database, a thumbnail, a file, or a name.
public struct LibraryError: Error, Sendable, CustomStringConvertible {
    /// What went wrong, so callers can choose an exit status or an HTTP status.
    public enum Kind: Sendable, Equatable {
        /// No photo of that name (with the closest names, for a suggestion).
        case notFound(suggestions: [String])
        /// The name is taken, or the request is refused for a reason the message gives.
        case refused
        /// Bad input: a package or file that is not what it claims.
        case badInput
        /// The database or a file could not be read or written.
        case io
    }
    /// Which kind of failure.
    public var kind: Kind
    /// The message for people, naming the photo or the file.
    public var description: String
    /// A failure of `kind`, described by `description`.
    public init(_ kind: Kind, _ description: String) {
        self.kind = kind
        self.description = description
    }
}

/// One SQLite connection (libsqlite3). Not shared between threads: each thread or process opens its own.
final class Database {
    private var handle: OpaquePointer?
    let path: String
    /// A short-lived command's bound on all its waits for another process's lock together (and
    /// whom to tell it waits); nil: each wait lasts at most `eachWait` (ptkd).
    private let patience: LockPatience?
    /// ptkd's bound on one wait for a lock (SQLite's busy timeout).
    static let eachWait: Duration = .seconds(10)
    /// What the busy handler has slept in all (since waits began to follow one another), when
    /// it last ran, and whether `patience.waiting` was told.
    private var slept: Duration = .zero
    private var lastWait: Instant?
    private var told = false
    /// The index's files opened before SQLite opened them (`PhotoLibrary.holdIndexFiles`),
    /// closed only after the connection is: closing any descriptor of a file drops every
    /// POSIX lock this process holds on it, SQLite's included.
    private let held: [FileDescriptor]

    /// Opens `file` (creating it when `create`), in WAL mode, waiting for another writer (ptkd
    /// and ptk write the same database) as `patience` says: with it, all waits together last
    /// at most its limit, and its `waiting` is told once one lasts `announceAfter`; without it,
    /// each wait lasts at most `eachWait`. `path` names the file in messages. SQLite follows no
    /// symlink anywhere in `file` (SQLITE_OPEN_NOFOLLOW, which also opens the -wal and -shm
    /// files with O_NOFOLLOW): pass it with the links of the path resolved. `holding` are
    /// descriptors of the index's files to close after the connection (`held`).
    init(file: String, path: String, create: Bool, patience: LockPatience? = nil, holding: [FileDescriptor] = [])
        throws(LibraryError)
    {
        self.path = path
        self.patience = patience
        held = holding
        let flags =
            SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0) | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_NOFOLLOW
        let rc = sqlite3_open_v2(file, &handle, flags, nil)
        guard rc == SQLITE_OK else {
            let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(rc))
            sqlite3_close(handle)
            handle = nil
            throw LibraryError(.io, "cannot open the library index \(path): \(message)")
        }
        if patience != nil {
            // The connection lives no longer than this object (closed in deinit): unretained.
            sqlite3_busy_handler(
                handle,
                { context, count in
                    Unmanaged<Database>.fromOpaque(context!).takeUnretainedValue().waitForLock(first: count == 0)
                }, Unmanaged.passUnretained(self).toOpaque())
        } else {
            sqlite3_busy_timeout(handle, Int32(Self.eachWait.components.seconds * 1000))
        }
        // WAL: readers (ptk list) never wait for ptkd's writes. NORMAL is durable across a crash
        // of the process (the WAL is synced at checkpoints); a power loss may lose the last
        // entries, which the next start's reconcile finds again from the files.
        try enableWAL()
        try execute("PRAGMA synchronous=NORMAL")
        try execute("PRAGMA foreign_keys=ON")
    }

    /// SQLite's busy handler with `patience` (`first`: a new wait): 1 to try again after a
    /// pause (5 ms, growing to 100 ms), 0 to give up (SQLITE_BUSY) once the pauses add up to
    /// the limit. They add up over every wait that follows another within the limit: a lock
    /// let go for a moment now and then extends nothing, while `ptk watch`, which runs for
    /// days, starts afresh after a quiet spell.
    private func waitForLock(first: Bool) -> Int32 {
        guard let patience else { return 0 }
        let now = Instant.now
        if first, let lastWait, now - lastWait > patience.limit {
            slept = .zero
            told = false
        }
        lastWait = now
        guard slept < patience.limit else { return 0 }
        if !told && slept >= patience.announceAfter, let waiting = patience.waiting {
            told = true
            waiting(
                "waiting for the library index \(path), which another process has locked; giving up after \(patience.limitText)"
            )
        }
        let pause = min(max(.milliseconds(5), slept / 8), .milliseconds(100), patience.limit - slept)
        sleep(for: pause)
        slept += pause
        return 1
    }

    /// The error for a statement that failed with `code`: another process's lock held past
    /// the wait said plainly (which SQLite calls "database is locked").
    fileprivate func failure(_ code: Int32, _ text: String) -> LibraryError {
        guard code & 0xFF == SQLITE_BUSY || code & 0xFF == SQLITE_LOCKED else {
            return LibraryError(.io, "library index \(path): \(text)")
        }
        let limit = patience?.limitText ?? LockPatience(limit: Self.eachWait).limitText
        return LibraryError(
            .io,
            "library index \(path): another process held a lock on it for \(limit) (\(text)), so nothing was done; "
                + "ptkd holds one for well under a second: try again, and if it persists see who holds it (fuser -v \(path))"
        )
    }

    deinit {
        sqlite3_close_v2(handle)
        held.forEach { $0.close() }
    }

    /// WAL mode is kept in the file once set. Setting it needs the database to itself, and
    /// SQLite answers "locked" at once rather than wait while another process (ptkd and ptk
    /// opening a new library together) holds it: so try for a while.
    private func enableWAL() throws(LibraryError) {
        var lastError: LibraryError? = nil
        // Bounded in time, not only in tries: each try may wait for a lock.
        let deadline = Instant.now + (patience?.limit ?? .seconds(30))
        for attempt in 0..<100 where attempt == 0 || Instant.now < deadline {
            do throws(LibraryError) {
                if try firstText("PRAGMA journal_mode")?.lowercased() == "wal" { return }
                try execute("PRAGMA journal_mode=WAL")
            } catch {
                lastError = error
            }
            sqlite3_sleep(50)
        }
        throw lastError ?? LibraryError(.io, "library index \(path): cannot switch to WAL mode")
    }

    private func error(_ what: String) -> LibraryError {
        failure(sqlite3_extended_errcode(handle), "\(what): \(String(cString: sqlite3_errmsg(handle)))")
    }

    /// Runs statements that return no rows.
    func execute(_ sql: String) throws(LibraryError) {
        var message: UnsafeMutablePointer<CChar>?
        let rc = sqlite3_exec(handle, sql, nil, nil, &message)
        if rc != SQLITE_OK {
            let text = message.map { String(cString: $0) } ?? "failed"
            sqlite3_free(message)
            throw failure(rc, text)
        }
    }

    func prepare(_ sql: String) throws(LibraryError) -> Statement {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(handle, sql, -1, &statement, nil) == SQLITE_OK, let statement else {
            throw error("cannot prepare \(sql.prefix(40))")
        }
        return Statement(statement, database: self)
    }

    /// The first column of the first row of a query (its statement finished before returning,
    /// so that no read stays open).
    func firstText(_ sql: String) throws(LibraryError) -> String? {
        let s = try prepare(sql).bind()
        return try s.step() ? s.text(0) : nil
    }

    func firstInt(_ sql: String) throws(LibraryError) -> Int64? {
        let s = try prepare(sql).bind()
        return try s.step() ? s.int(0) : nil
    }

    /// Rows changed by the last INSERT, UPDATE or DELETE.
    var changes: Int { Int(sqlite3_changes(handle)) }
    fileprivate var lastError: String { String(cString: sqlite3_errmsg(handle)) }
    fileprivate var lastErrorCode: Int32 { sqlite3_extended_errcode(handle) }

    /// Runs `body` in a write transaction taken at once (BEGIN IMMEDIATE), so that two writers
    /// queue at the start instead of failing at their first write; rolled back if `body` throws.
    func writeTransaction<R>(_ body: () throws(LibraryError) -> R) throws(LibraryError) -> R {
        try execute("BEGIN IMMEDIATE")
        do {
            let result = try body()
            try execute("COMMIT")
            return result
        } catch {
            // The body's error is the one thrown; SQLite rolls back an unfinished transaction itself.
            try? execute("ROLLBACK")
            throw error
        }
    }

    /// Runs `body` in a read transaction: one consistent snapshot.
    func readTransaction<R>(_ body: () throws(LibraryError) -> R) throws(LibraryError) -> R {
        try execute("BEGIN")
        // A read transaction has nothing to commit; ending it cannot lose anything.
        defer { try? execute("COMMIT") }
        return try body()
    }
}

/// A prepared statement. Bind with `bind`, then `step` through the rows.
final class Statement {
    private let statement: OpaquePointer
    private let database: Database
    /// SQLite copies bound text at once (the destructor value -1, SQLITE_TRANSIENT).
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    fileprivate init(_ statement: OpaquePointer, database: Database) {
        self.statement = statement
        self.database = database
    }

    deinit { sqlite3_finalize(statement) }

    /// Binds the values in order (1-based): Int, Int64, String, [UInt8] or nil.
    @discardableResult
    func bind(_ values: Any?...) -> Statement {
        sqlite3_reset(statement)
        sqlite3_clear_bindings(statement)
        for (i, value) in values.enumerated() {
            let index = Int32(i + 1)
            switch value {
            case nil: sqlite3_bind_null(statement, index)
            case let v as Int: sqlite3_bind_int64(statement, index, Int64(v))
            case let v as Int64: sqlite3_bind_int64(statement, index, v)
            case let v as UInt64: sqlite3_bind_int64(statement, index, Int64(bitPattern: v))
            case let v as String: sqlite3_bind_text(statement, index, v, -1, Self.transient)
            case let v as Bool: sqlite3_bind_int64(statement, index, v ? 1 : 0)
            // A BLOB, compared byte by byte (an empty one is a BLOB too, not NULL).
            case let v as [UInt8]:
                if v.isEmpty {
                    sqlite3_bind_zeroblob(statement, index, 0)
                } else {
                    v.withUnsafeBytes {
                        _ = sqlite3_bind_blob64(
                            statement, index, $0.baseAddress, sqlite3_uint64($0.count), Self.transient)
                    }
                }
            default: preconditionFailure("cannot bind \(type(of: value!))")
            }
        }
        return self
    }

    /// Advances to the next row: true if there is one.
    func step() throws(LibraryError) -> Bool {
        switch sqlite3_step(statement) {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        case let rc:
            if database.lastErrorCode == 2067 /* SQLITE_CONSTRAINT_UNIQUE, a macro Swift does not import */ {
                throw LibraryError(.refused, "library index \(database.path): \(database.lastError)")
            }
            throw database.failure(rc, database.lastError)
        }
    }

    /// Runs a statement that returns no rows.
    func run() throws(LibraryError) { while try step() {} }

    func int(_ column: Int32) -> Int64? {
        sqlite3_column_type(statement, column) == SQLITE_NULL ? nil : sqlite3_column_int64(statement, column)
    }

    /// The bytes of a column (a BLOB, or the UTF-8 of a TEXT); nil for NULL.
    func blob(_ column: Int32) -> [UInt8]? {
        if sqlite3_column_type(statement, column) == SQLITE_NULL { return nil }
        // The pointer first, then the length (SQLite's order: the length of what it gave).
        let pointer = sqlite3_column_blob(statement, column)
        let count = Int(sqlite3_column_bytes(statement, column))
        guard let pointer, count > 0 else { return [] }
        return Array(UnsafeRawBufferPointer(start: pointer, count: count))
    }

    func text(_ column: Int32) -> String? {
        guard let p = sqlite3_column_text(statement, column) else { return nil }
        return String(cString: p)
    }
}
