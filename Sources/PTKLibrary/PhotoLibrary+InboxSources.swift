import PTKSystem

/// A file a watched inbox or drop folder held (issue 56), as the library remembers it once it
/// was taken: where it was, which file it was, the bytes taken, and the photo they are. Kept
/// across restarts so that a restart, a rescan or a second copy never stores anything twice,
/// and so that `ptk show` says where a photo came from.
///
/// Which file it was is `identity`: the device, inode, size, modification and change times
/// together. An inode number alone decides nothing: the file system gives a removed file's
/// number to the next file it makes, so a new photo written where an old one was (Syncthing
/// replacing a file by rename, a camera overwriting its folder) may well have the old one's
/// inode, and often its size. The change time (ctime) is the kernel's clock at the file's last
/// write or rename, which no writer can set, so a file that reuses an inode number differs in
/// it. A source whose identity matches in every field is the very file taken (`isSameFile`);
/// any other is new to the inbox, and its SHA-256 says whether its bytes are stored already
/// (a rename, a second copy, a touch: nothing stored twice).
public struct InboxSourceRecord: Sendable, Equatable {
    /// Which file a source is, as its status says: equal in every field, the same file
    /// unchanged; differing in any, another file or the same one changed.
    public struct FileIdentity: Sendable, Hashable {
        /// The device the file is on (`st_dev`).
        public var device: UInt64
        /// Its inode number (`st_ino`): reused by the file system, so never decisive alone.
        public var inode: UInt64
        /// Its length in bytes (`st_size`).
        public var size: Int64
        /// Its modification time in nanoseconds since the epoch (wrapping beyond 2262: any
        /// writer can set this one, and it is only ever compared).
        public var modifiedNanoseconds: Int64
        /// Its change time (ctime) in nanoseconds since the epoch: set by the kernel's clock.
        public var changedNanoseconds: Int64

        /// The identity of these fields.
        public init(device: UInt64, inode: UInt64, size: Int64, modifiedNanoseconds: Int64, changedNanoseconds: Int64) {
            self.device = device
            self.inode = inode
            self.size = size
            self.modifiedNanoseconds = modifiedNanoseconds
            self.changedNanoseconds = changedNanoseconds
        }

        /// The identity `status` (taken without following links) gives.
        public init(_ status: FileStatus) {
            self.init(
                device: status.device, inode: status.inode, size: status.size,
                modifiedNanoseconds: status.modified &* 1_000_000_000 &+ status.modifiedNanoseconds,
                changedNanoseconds: status.changedAt)
        }
    }

    /// The inbox as configured (its path in ptkd's configuration).
    public var inbox: String
    /// The file's path relative to the inbox's root, its bytes as the folder gave them: names
    /// need not be UTF-8, and "é" precomposed (NFC) and "e" + U+0301 (NFD) are two sources.
    public var path: BytePath
    /// Which file it was when its bytes were taken.
    public var identity: FileIdentity
    /// The SHA-256 of the bytes taken, 64 lowercase hex digits: `identity.size` of them.
    public var sha256: String
    /// The photo those bytes are in the photos directory: the one made from them, or, when they
    /// were skipped as a duplicate, the photo already held with the same bytes. Follows the
    /// photo when it is renamed (ptk rename, WebDAV MOVE, a rename by hand found by reconcile);
    /// nil once that photo is removed, the record kept so that the source is not taken again.
    public var photo: String?
    /// When it was taken.
    public var taken: WallTime

    /// A record of these fields.
    public init(
        inbox: String, path: BytePath, identity: FileIdentity, sha256: String, photo: String?, taken: WallTime
    ) {
        self.inbox = inbox
        self.path = path
        self.identity = identity
        self.sha256 = sha256
        self.photo = photo
        self.taken = taken
    }

    /// The length of the bytes taken. A file found later at `path` that is longer and whose
    /// first `size` bytes hash to `sha256` completed what was taken (an interrupted copy, issue
    /// 56's drop folders); deciding that is the caller's, which reads the file.
    public var size: Int64 { identity.size }

    /// How long before `taken` the file's last change must have been for its identity to be
    /// trusted. The kernel stamps times from a clock that moves in ticks (1 to 10 ms): a file
    /// removed and another made in its place within one tick could share every field. A
    /// source taken only once settled (issue 56's `inbox-settle`) changed long before, and a
    /// file made after it was taken has a later change time.
    public static let settledBefore: Duration = .seconds(1)

    /// True when `status` (of the file now at `path`) is the file taken, unchanged: the same
    /// device, inode, size, modification and change times, and that change at least
    /// `settledBefore` before `taken`. Never true by the inode alone; false says only "read it":
    /// its SHA-256 then says whether its bytes are stored already.
    public func isSameFile(as status: FileStatus) -> Bool {
        let margin = Self.settledBefore.components.seconds &* 1_000_000_000
        return identity == FileIdentity(status)
            && identity.changedNanoseconds <= taken.milliseconds &* 1_000_000 &- margin
    }

    /// The source's full path, for people: the inbox, "/", the path (bytes that are not UTF-8
    /// written as `\xE9`, as `BytePath.description` does). Not escaped: the caller escapes it
    /// for where it goes (`escapedForTerminal`, HTML).
    public var location: String {
        (inbox.hasSuffix("/") ? inbox : inbox + "/") + path.description
    }
}

/// The library's record of inbox sources (schema 7, issue 56): the `inbox_sources` table, one
/// row a source by (inbox, path), with indices by SHA-256 and by photo. Each write is one write
/// transaction (BEGIN IMMEDIATE, waiting for another writer at most as the connection's busy
/// handling says, as every other write), so ptkd's writer and `ptk` never interleave.
///
/// Rows outlive their photos: removing a photo (ptk rm, the web's delete, WebDAV DELETE, a
/// file removed by hand that reconcile finds gone) clears `photo` in the rows that name it and
/// keeps them, so that a source whose photo was removed on purpose is not taken again. Both
/// that and a rename following its photo are triggers on `photos`, so every way of changing
/// it (ptk, the doors, reconcile) keeps the rows right in the same transaction.
extension PhotoLibrary {
    /// The table, its indices and the triggers that keep `photo` with the photos' names.
    static let inboxSourcesSchema = """
        CREATE TABLE IF NOT EXISTS inbox_sources(
            inbox TEXT NOT NULL,
            path BLOB NOT NULL,
            device INTEGER NOT NULL,
            inode INTEGER NOT NULL,
            size INTEGER NOT NULL,
            modified_ns INTEGER NOT NULL,
            changed_ns INTEGER NOT NULL,
            sha256 TEXT NOT NULL,
            photo TEXT,
            taken INTEGER NOT NULL,
            PRIMARY KEY (inbox, path)
        );
        CREATE INDEX IF NOT EXISTS inbox_sources_sha256 ON inbox_sources(sha256);
        CREATE INDEX IF NOT EXISTS inbox_sources_photo ON inbox_sources(photo) WHERE photo IS NOT NULL;
        CREATE TRIGGER IF NOT EXISTS inbox_sources_photo_renamed AFTER UPDATE OF name ON photos
            WHEN NEW.name IS NOT OLD.name
            BEGIN UPDATE inbox_sources SET photo = NEW.name WHERE photo = OLD.name; END;
        CREATE TRIGGER IF NOT EXISTS inbox_sources_photo_removed AFTER DELETE ON photos
            BEGIN UPDATE inbox_sources SET photo = NULL WHERE photo = OLD.name; END;
        """

    /// What a SELECT of the records names, in `inboxSource(from:)`'s order.
    private static let inboxSourceColumns =
        "inbox, path, device, inode, size, modified_ns, changed_ns, sha256, photo, taken"

    /// A row of a SELECT of `inboxSourceColumns` as a record. The service user may have written
    /// anything there (root's `ptk` reads it): a NULL where a value belongs reads as empty or 0.
    private static func inboxSource(from s: Statement) -> InboxSourceRecord {
        InboxSourceRecord(
            inbox: s.text(0) ?? "", path: BytePath(bytes: s.blob(1) ?? []),
            identity: .init(
                device: UInt64(bitPattern: s.int(2) ?? 0), inode: UInt64(bitPattern: s.int(3) ?? 0),
                size: s.int(4) ?? 0, modifiedNanoseconds: s.int(5) ?? 0, changedNanoseconds: s.int(6) ?? 0),
            sha256: s.text(7) ?? "", photo: s.text(8), taken: WallTime(milliseconds: s.int(9) ?? 0))
    }

    /// The records a query gives, at most `limit`.
    private func inboxSources(_ s: Statement, limit: Int) throws(LibraryError) -> [InboxSourceRecord] {
        var out: [InboxSourceRecord] = []
        while out.count < limit, try s.step() { out.append(Self.inboxSource(from: s)) }
        return out
    }

    /// The record of the source at `path` (bytes, relative to its root) in `inbox`, if one was
    /// taken from there: the caller compares its identity (`isSameFile`) with the file there now.
    public func inboxSource(inbox: String, path: BytePath) throws(LibraryError) -> InboxSourceRecord? {
        let s = try database.prepare(
            "SELECT \(Self.inboxSourceColumns) FROM inbox_sources WHERE inbox = ? AND path = ?"
        ).bind(inbox, path.bytes)
        return try inboxSources(s, limit: 1).first
    }

    /// Remembers a source taken, replacing the record of the same inbox and path: a source
    /// edited in place (new bytes, a new photo) replaces the record, and the photo its old bytes
    /// became stays in the library. May name a photo not entered yet (ptkd enters a photo after
    /// its door saved it).
    public func rememberInboxSource(_ record: InboxSourceRecord) throws(LibraryError) {
        try rememberInboxSources([record])
    }

    /// `rememberInboxSource` for several sources, in one write transaction (a scan's batch).
    public func rememberInboxSources(_ records: [InboxSourceRecord]) throws(LibraryError) {
        guard !records.isEmpty else { return }
        try database.writeTransaction { () throws(LibraryError) in
            let s = try database.prepare(
                """
                INSERT INTO inbox_sources(\(Self.inboxSourceColumns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT(inbox, path) DO UPDATE SET device = excluded.device, inode = excluded.inode,
                    size = excluded.size, modified_ns = excluded.modified_ns, changed_ns = excluded.changed_ns,
                    sha256 = excluded.sha256, photo = excluded.photo, taken = excluded.taken
                """)
            for r in records {
                let i = r.identity
                try s.bind(
                    r.inbox, r.path.bytes, i.device, i.inode, i.size, i.modifiedNanoseconds, i.changedNanoseconds,
                    r.sha256, r.photo, r.taken.milliseconds
                ).run()
            }
        }
    }

    /// The sources whose bytes the photo `name` (exactly, as `Photo.name`) holds, oldest taken
    /// first, at most `limit`: where it came from (`ptk show`). Empty for a photo no inbox gave.
    public func inboxSources(ofPhoto name: String, limit: Int = .max) throws(LibraryError) -> [InboxSourceRecord] {
        let s = try database.prepare(
            "SELECT \(Self.inboxSourceColumns) FROM inbox_sources WHERE photo = ? ORDER BY taken, inbox, path"
        ).bind(name)
        return try inboxSources(s, limit: limit)
    }

    /// The sources taken whose bytes had this SHA-256 (of any inbox, its photo removed or not),
    /// oldest taken first, at most `limit`: whether bytes found at a new path were taken before.
    public func inboxSources(sha256: String, limit: Int = .max) throws(LibraryError) -> [InboxSourceRecord] {
        let s = try database.prepare(
            "SELECT \(Self.inboxSourceColumns) FROM inbox_sources WHERE sha256 = ? ORDER BY taken, inbox, path"
        ).bind(sha256)
        return try inboxSources(s, limit: limit)
    }

    /// Forgets every source of `inbox` (one taken out of the configuration for good): if it is
    /// watched again, its files are new to it, and only `duplicates = skip` keeps bytes the
    /// library still holds from being stored twice. Returns how many records went.
    @discardableResult
    public func forgetInboxSources(inbox: String) throws(LibraryError) -> Int {
        try database.writeTransaction { () throws(LibraryError) -> Int in
            try database.prepare("DELETE FROM inbox_sources WHERE inbox = ?").bind(inbox).run()
            return database.changes
        }
    }
}
