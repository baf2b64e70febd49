import Glibc
import PTKDigest
import PTKPhotoPages
import PTKSystem
import PTKTestSupport
import PTKTestTags
import PTKVocabulary
import Testing

@testable import PTKLibrary

/// A record of `path` in `inbox` with made-up identity fields (`seed` varies them), taken at
/// 2026-01-01T00:00:00Z, its change a minute before.
func sourceRecord(
    _ path: BytePath, inbox: String = "/srv/inbox", photo: String?, sha256: String? = nil, seed: Int64 = 1,
    taken: WallTime = WallTime(milliseconds: 1_767_225_600_000)
) -> InboxSourceRecord {
    InboxSourceRecord(
        inbox: inbox, path: path,
        identity: .init(
            device: 2049, inode: UInt64(1000 + seed), size: 5000 + seed,
            modifiedNanoseconds: 1_700_000_000_000_000_000 + seed,
            changedNanoseconds: taken.milliseconds * 1_000_000 - 60_000_000_000),
        sha256: sha256 ?? SHA256.hex(of: Array("bytes \(seed)".utf8)), photo: photo, taken: taken)
}

@Suite("The inbox sources the library remembers (issue 56)", .tags(.unit))
struct InboxSourceTests {
    @Test("a library of schema 6 gets the table, its indices and triggers when opened, and keeps its photos")
    func migrationFromSchema6() throws {
        let f = Fixture()
        try makeDirectories(f.directory + "/a")
        let photo = try f.receive("a/beach.png", photoBytes(1))
        // Schema 6 is schema 7 without what this migration adds.
        try f.library.database.execute(
            """
            DROP TRIGGER inbox_sources_photo_renamed; DROP TRIGGER inbox_sources_photo_removed;
            DROP TABLE inbox_sources; PRAGMA user_version = 6;
            """)
        #expect(throws: LibraryError.self) { try f.library.inboxSource(inbox: "/i", path: BytePath("x")) }
        for round in 0..<2 {
            let reopened = try PhotoLibrary(directory: f.directory, create: false)
            #expect(try reopened.database.firstInt("PRAGMA user_version") == PhotoLibrary.schemaVersion)
            #expect(try schemaObjects(reopened) == schemaObjects(Fixture().library), "as a new library has them")
            let kept = try reopened.find("a/beach.png")
            #expect(kept.id == photo.id && kept.sha256 == photo.sha256 && kept.indexed, "nothing to index again")
            let r = sourceRecord(BytePath("anna/IMG_1.png"), photo: "a/beach.png", seed: Int64(round))
            try reopened.rememberInboxSource(r)
            #expect(try reopened.inboxSource(inbox: r.inbox, path: r.path) == r)
            // Set back (by hand or by a test): migrated again, the rows kept.
            try reopened.database.execute("PRAGMA user_version = 6")
        }
        #expect(try PhotoLibrary(directory: f.directory, create: false).inboxSources(ofPhoto: "a/beach.png").count == 1)
    }

    /// The table's columns, indices and triggers, as SQLite keeps their SQL.
    func schemaObjects(_ library: PhotoLibrary) throws -> [String] {
        let s = try library.database.prepare(
            """
            SELECT type || ' ' || name || ': ' || coalesce(sql, '') FROM sqlite_master
            WHERE tbl_name = 'inbox_sources' OR name LIKE 'inbox_sources%' ORDER BY name
            """
        ).bind()
        var rows: [String] = []
        while try s.step() { rows.append(s.text(0) ?? "") }
        let columns = try library.database.prepare(
            "SELECT name || ' ' || type || ' ' || \"notnull\" || ' ' || pk FROM pragma_table_info('inbox_sources')"
        ).bind()
        while try columns.step() { rows.append(columns.text(0) ?? "") }
        return rows
    }

    @Test("the table's columns and key are as the issue lists them")
    func columns() throws {
        let f = Fixture()
        let objects = try schemaObjects(f.library)
        #expect(
            Array(objects.suffix(10)) == [
                "inbox TEXT 1 1", "path BLOB 1 2", "device INTEGER 1 0", "inode INTEGER 1 0", "size INTEGER 1 0",
                "modified_ns INTEGER 1 0", "changed_ns INTEGER 1 0", "sha256 TEXT 1 0", "photo TEXT 0 0",
                "taken INTEGER 1 0",
            ], "\(objects)")
        // Lookups by SHA-256 and by photo (and the triggers' updates) use an index, not a scan.
        for (query, index) in [
            ("SELECT * FROM inbox_sources WHERE sha256 = 'x'", "inbox_sources_sha256"),
            ("SELECT * FROM inbox_sources WHERE photo = 'x'", "inbox_sources_photo"),
            ("UPDATE inbox_sources SET photo = NULL WHERE photo = 'x'", "inbox_sources_photo"),
            ("SELECT * FROM inbox_sources WHERE inbox = 'i' AND path = x'00'", "sqlite_autoindex_inbox_sources_1"),
        ] {
            let plan = try f.library.database.prepare("EXPLAIN QUERY PLAN " + query).bind()
            var steps: [String] = []
            while try plan.step() { steps.append(plan.text(3) ?? "") }
            #expect(steps.contains { $0.contains("USING INDEX \(index)") }, "\(query): \(steps)")
        }
    }

    @Test("remembering a source at a path taken before replaces its record; the old photo stays")
    func upsert() throws {
        let f = Fixture()
        try f.receive("IMG_1.png", photoBytes(1))
        try f.receive("IMG_1 (2).png", photoBytes(2))
        let first = sourceRecord(BytePath("anna/DCIM/IMG_1.png"), photo: "IMG_1.png", seed: 1)
        try f.library.rememberInboxSource(first)
        #expect(try f.library.inboxSource(inbox: "/srv/inbox", path: first.path) == first)
        #expect(try f.library.inboxSource(inbox: "/srv/other", path: first.path) == nil, "another inbox")
        #expect(try f.library.inboxSource(inbox: "/srv/inbox", path: BytePath("anna/DCIM/IMG_1.PNG")) == nil)
        // Edited in place: new bytes, a new identity, a new photo.
        let edited = sourceRecord(
            first.path, photo: "IMG_1 (2).png", seed: 2, taken: WallTime(milliseconds: 1_767_225_700_000))
        try f.library.rememberInboxSource(edited)
        #expect(try f.library.inboxSource(inbox: "/srv/inbox", path: first.path) == edited)
        #expect(try f.library.database.firstInt("SELECT count(*) FROM inbox_sources") == 1)
        #expect(try f.library.find("IMG_1.png").sha256 == SHA256.hex(of: photoBytes(1)), "the old photo stays")
        #expect(try f.library.inboxSources(ofPhoto: "IMG_1.png").isEmpty)
        #expect(try f.library.inboxSources(ofPhoto: "IMG_1 (2).png") == [edited])
        // What ptkd writes, root's ptk reads through its own connection.
        let other = try PhotoLibrary(directory: f.directory, create: false)
        #expect(try other.inboxSource(inbox: "/srv/inbox", path: first.path) == edited)
        // A batch is one transaction: a record that cannot be written leaves none of it.
        try f.library.database.execute(
            "CREATE TRIGGER refuse BEFORE INSERT ON inbox_sources WHEN NEW.inbox = 'bad' BEGIN SELECT RAISE(ABORT, 'no'); END"
        )
        #expect(throws: LibraryError.self) {
            try f.library.rememberInboxSources([
                sourceRecord(BytePath("one"), photo: nil, seed: 3),
                sourceRecord(BytePath("two"), inbox: "bad", photo: nil),
            ])
        }
        #expect(try f.library.inboxSource(inbox: "/srv/inbox", path: BytePath("one")) == nil)
    }

    @Test("NFC and NFD spellings of one name, and names that are not UTF-8, are distinct sources kept byte for byte")
    func namesByTheirBytes() throws {
        let f = Fixture()
        let nfc = BytePath("anna/caf\u{E9}.png")
        let nfd = BytePath("anna/cafe\u{301}.png")
        #expect(nfc.text == nfd.text, "one String to Swift")
        #expect(nfc.bytes != nfd.bytes)
        let latin1 = BytePath(bytes: Array("anna/caf".utf8) + [0xE9] + Array(".png".utf8))
        let records = [
            sourceRecord(nfc, photo: "cafe.png", seed: 1), sourceRecord(nfd, photo: "cafe (2).png", seed: 2),
            sourceRecord(latin1, photo: "cafe (3).png", seed: 3),
        ]
        try f.library.rememberInboxSources(records)
        #expect(try f.library.database.firstInt("SELECT count(*) FROM inbox_sources") == 3)
        for r in records {
            let found = try #require(try f.library.inboxSource(inbox: r.inbox, path: r.path))
            #expect(found == r && found.path.bytes == r.path.bytes, "\(r.path)")
        }
        #expect(try f.library.inboxSources(ofPhoto: "cafe (2).png").map(\.path.bytes) == [nfd.bytes])
        #expect(records[2].location == "/srv/inbox/anna/caf\\xE9.png")
        // The inbox's own name too is compared as it is written.
        #expect(try f.library.inboxSource(inbox: "/srv/inbox/", path: nfc) == nil)
    }

    @Test("by photo and by SHA-256: every source whose bytes a photo holds (duplicates too), oldest first")
    func byPhotoAndByHash() throws {
        let f = Fixture()
        let sha = SHA256.hex(of: photoBytes(1))
        let taken = sourceRecord(
            BytePath("anna/IMG_1.png"), photo: "IMG_1.png", sha256: sha, seed: 1,
            taken: WallTime(milliseconds: 1_767_225_600_000))
        // The same bytes later from another device, skipped as a duplicate: it names the photo held.
        let duplicate = sourceRecord(
            BytePath("bob/copy.png"), inbox: "/srv/drop", photo: "IMG_1.png", sha256: sha, seed: 2,
            taken: WallTime(milliseconds: 1_767_225_500_000))
        let another = sourceRecord(BytePath("anna/IMG_2.png"), photo: "IMG_2.png", seed: 3)
        try f.library.rememberInboxSources([taken, another, duplicate])
        #expect(try f.library.inboxSources(ofPhoto: "IMG_1.png") == [duplicate, taken])
        #expect(try f.library.inboxSources(ofPhoto: "IMG_1.png", limit: 1) == [duplicate])
        #expect(try f.library.inboxSources(ofPhoto: "IMG_1") == [], "exactly the name, not find's matching")
        #expect(try f.library.inboxSources(sha256: sha) == [duplicate, taken])
        #expect(try f.library.inboxSources(sha256: String(repeating: "0", count: 64)) == [])
        #expect(try f.library.forgetInboxSources(inbox: "/srv/drop") == 1)
        #expect(try f.library.inboxSources(ofPhoto: "IMG_1.png") == [taken])
        #expect(try f.library.forgetInboxSources(inbox: "/srv/none") == 0)
    }

    @Test(
        "identity: the same file only when device, inode, size, mtime and ctime all match, changed before it was taken")
    func identity() throws {
        let dir = makeTemporaryDirectory("ptk-inbox-identity")
        defer { removeTree(dir) }
        let file = dir + "/IMG_1.jpg"
        writeFile(file, Array(repeating: 7, count: 5000))
        let before = try fileStatus(file)
        let id = InboxSourceRecord.FileIdentity(before)
        #expect(id.device == before.device && id.inode == before.inode && id.size == 5000)
        #expect(id.modifiedNanoseconds == before.modified * 1_000_000_000 + before.modifiedNanoseconds)
        #expect(id.changedNanoseconds == before.changedAt)
        let settled = WallTime(milliseconds: before.changedAt / 1_000_000 + 5000)
        var r = InboxSourceRecord(
            inbox: dir, path: BytePath("IMG_1.jpg"), identity: id, sha256: "", photo: nil, taken: settled)
        #expect(r.isSameFile(as: before))
        // Taken within a clock tick of its last change: not trusted, whatever matches.
        r.taken = WallTime(milliseconds: before.changedAt / 1_000_000 + 500)
        #expect(!r.isSameFile(as: before))
        r.taken = settled
        // Its mode changed and its times set back (rsync -t, Syncthing): only the ctime tells.
        sleep(for: .milliseconds(30))
        #expect(chmod(file, 0o600) == 0)
        var times = [
            timespec(tv_sec: Int(before.modified), tv_nsec: Int(before.modifiedNanoseconds)),
            timespec(tv_sec: Int(before.modified), tv_nsec: Int(before.modifiedNanoseconds)),
        ]
        #expect(utimensat(AT_FDCWD, file, &times, 0) == 0)
        let after = try fileStatus(file)
        #expect(after.inode == before.inode && after.size == before.size && after.modified == before.modified)
        #expect(after.modifiedNanoseconds == before.modifiedNanoseconds)
        #expect(!r.isSameFile(as: after), "the ctime moved")
        // Each field alone tells another file: an inode reused with the same size and times is not the same file.
        let fields: [(inout InboxSourceRecord.FileIdentity) -> Void] = [
            { $0.device += 1 }, { $0.inode += 1 }, { $0.size += 1 }, { $0.modifiedNanoseconds += 1 },
            { $0.changedNanoseconds += 1 },
        ]
        for (i, change) in fields.enumerated() {
            var other = id
            change(&other)
            #expect(other != id, "field \(i)")
            let changed = InboxSourceRecord(
                inbox: dir, path: r.path, identity: other, sha256: "", photo: nil, taken: settled)
            #expect(!changed.isSameFile(as: before), "field \(i)")
        }
        // Stored and read back whole: numbers beyond Int64's range, times before 1970.
        let f = Fixture()
        var extreme = sourceRecord(BytePath("x"), photo: nil)
        extreme.identity = .init(
            device: .max, inode: UInt64(Int64.max) + 5, size: 0, modifiedNanoseconds: -1_234_567_890_123,
            changedNanoseconds: .min)
        try f.library.rememberInboxSource(extreme)
        #expect(try f.library.inboxSource(inbox: extreme.inbox, path: extreme.path) == extreme)
    }

    @Test("renaming a photo (ptk rename, WebDAV's MOVE of it or its folder, by hand) renames it in its sources")
    func renameFollows() throws {
        let f = Fixture()
        try f.receive("IMG_1.png", photoBytes(1))
        try f.receive("IMG_2.png", photoBytes(2))
        try f.library.rememberInboxSources([
            sourceRecord(BytePath("anna/IMG_1.png"), photo: "IMG_1.png", seed: 1),
            sourceRecord(BytePath("bob/IMG_1.png"), photo: "IMG_1.png", seed: 2),
            sourceRecord(BytePath("anna/IMG_2.png"), photo: "IMG_2.png", seed: 3),
        ])
        func photos() throws -> [String?] {
            let s = try f.library.database.prepare("SELECT photo FROM inbox_sources ORDER BY path").bind()
            var out: [String?] = []
            while try s.step() { out.append(s.text(0)) }
            return out
        }
        _ = try f.library.rename("IMG_1", to: "holiday/beach")
        #expect(try photos() == ["holiday/beach.png", "IMG_2.png", "holiday/beach.png"])
        #expect(try f.library.inboxSources(ofPhoto: "IMG_1.png").isEmpty)
        #expect(try f.library.inboxSources(ofPhoto: "holiday/beach.png").count == 2)
        try f.library.rename(exactly: "holiday", to: "2026")
        #expect(try photos() == ["2026/beach.png", "IMG_2.png", "2026/beach.png"])
        // Renamed by hand: reconcile follows the file, and so do its sources.
        #expect(rename(f.directory + "/IMG_2.png", f.directory + "/kept.png") == 0)
        #expect(try f.library.reconcile().moved == 1)
        #expect(try photos() == ["2026/beach.png", "kept.png", "2026/beach.png"])
        // A rename that fails changes nothing.
        #expect(throws: LibraryError.self) { try f.library.rename("kept", to: "2026/beach") }
        #expect(try photos() == ["2026/beach.png", "kept.png", "2026/beach.png"])
    }

    @Test("removing a photo keeps its sources (not taken again), naming no photo; a new photo of that name gets none")
    func removalKeepsTheRecord() throws {
        let f = Fixture()
        try f.receive("IMG_1.png", photoBytes(1))
        try f.receive("IMG_2.png", photoBytes(2))
        let r1 = sourceRecord(BytePath("anna/IMG_1.png"), photo: "IMG_1.png", seed: 1)
        let r2 = sourceRecord(BytePath("anna/IMG_2.png"), photo: "IMG_2.png", seed: 2)
        try f.library.rememberInboxSources([r1, r2])
        _ = try f.library.remove("IMG_1")
        var gone = r1
        gone.photo = nil
        #expect(try f.library.inboxSource(inbox: r1.inbox, path: r1.path) == gone)
        #expect(try f.library.inboxSources(sha256: r1.sha256) == [gone], "its bytes are known as taken")
        // Removed through WebDAV, and by hand (found by reconcile): the same.
        try f.library.remove(exactly: "IMG_2.png")
        #expect(try f.library.inboxSource(inbox: r2.inbox, path: r2.path)?.photo == nil)
        try f.receive("IMG_3.png", photoBytes(3))
        let r3 = sourceRecord(BytePath("anna/IMG_3.png"), photo: "IMG_3.png", seed: 3)
        try f.library.rememberInboxSource(r3)
        #expect(unlink(f.directory + "/IMG_3.png") == 0)
        #expect(try f.library.reconcile().dropped == 1)
        #expect(try f.library.inboxSource(inbox: r3.inbox, path: r3.path)?.photo == nil)
        #expect(try f.library.database.firstInt("SELECT count(*) FROM inbox_sources") == 3)
        // Another photo given the removed one's name is not said to come from its source.
        try f.receive("IMG_1.png", photoBytes(4))
        #expect(try f.library.inboxSources(ofPhoto: "IMG_1.png").isEmpty)
    }

    @Test("hostile paths (controls, a NUL, 4 KiB long) and inbox names are stored and returned intact")
    func hostilePaths() throws {
        let f = Fixture()
        let controls = BytePath(bytes: Array("anna/\u{1B}[31mred\r\n\t\u{7}\u{9B}\u{202E}gpj.png".utf8) + [0, 0xFF])
        let long = BytePath(
            String(repeating: String(repeating: "d", count: 254) + "/", count: 16) + String(repeating: "e", count: 80))
        #expect(long.bytes.count == 4160, "over PATH_MAX (4096)")
        let inbox = "/srv/in\u{1B}]0;box\u{7}"
        let records = [
            sourceRecord(controls, inbox: inbox, photo: "p\u{1B}.png", seed: 1),
            sourceRecord(long, inbox: inbox, photo: "p2.png", seed: 2),
            sourceRecord(BytePath(bytes: []), inbox: "", photo: nil, sha256: "", seed: 3),
        ]
        try f.library.rememberInboxSources(records)
        for r in records {
            #expect(try f.library.inboxSource(inbox: r.inbox, path: r.path) == r, "\(r.path)")
        }
        #expect(try f.library.inboxSources(ofPhoto: "p\u{1B}.png").first?.path.bytes == controls.bytes)
        #expect(try f.library.inboxSource(inbox: inbox, path: BytePath(bytes: controls.bytes.dropLast())) == nil)
        // Shown with every control escaped, as every value of `ptk show`.
        let shown = escapedForTerminal("inbox " + records[0].location)
        #expect(!shown.unicodeScalars.contains(where: isTerminalControl), "\(shown)")
        #expect(shown.hasPrefix("inbox /srv/in\\u{1B}]0;box\\u{7}/anna/\\u{1B}[31mred\\r\\n\\t"), "\(shown)")
    }

    @Test("ptk show's details: a source line for each inbox file, after the sender; none for a photo no inbox gave")
    func details() throws {
        let f = Fixture()
        let p = try f.receive("IMG_1.png", photoBytes(1))
        let plain = p.details(thumbnailFolder: f.library.thumbnailFolder).map(\.0)
        #expect(!plain.contains("source"))
        try f.library.rememberInboxSources([
            sourceRecord(BytePath("anna/DCIM/IMG_1.png"), photo: "IMG_1.png", seed: 1),
            sourceRecord(
                BytePath("bob/x.png"), inbox: "/srv/drop/", photo: "IMG_1.png", seed: 2,
                taken: WallTime(milliseconds: 1_767_225_700_000)),
        ])
        let sources = try f.library.inboxSources(ofPhoto: p.name)
        let lines = p.details(thumbnailFolder: f.library.thumbnailFolder, sources: sources, moreSources: true)
        let keys = lines.map(\.0)
        let shown = lines.filter { $0.0 == "source" }.map(\.1)
        #expect(shown.count == 3)
        #expect(shown.first == .text("inbox /srv/inbox/anna/DCIM/IMG_1.png"), "\(shown)")
        #expect(shown.dropFirst().first == .text("inbox /srv/drop/bob/x.png"), "\(shown)")
        #expect(shown.last == .text("(and more inbox files with the same bytes)"), "\(shown)")
        let first = try #require(keys.firstIndex(of: "source"))
        #expect(keys[first - 1] == "sender" && keys[first + 3] == "rating", "\(keys)")
        #expect(Array(keys.filter { $0 != "source" }) == plain)
    }
}
