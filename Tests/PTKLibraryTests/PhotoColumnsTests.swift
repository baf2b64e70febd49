import PTKSystem
import PTKTestSupport
import PTKTestTags
import Testing

@testable import PTKLibrary

/// The `photos` table that `PhotoLibrary.photoColumns` drives: the schema it makes is the one
/// the hand-written migrations made (pinned below as they made it), and the SELECT decodes
/// every field from its own column.
@Suite(.tags(.unit)) struct PhotoColumnsTests {
    /// `pragma_table_xinfo('photos')` of an index of schema 6 as the hand-written migrations
    /// made it (before the column table), schema 8's `alpha`, schema 9's video facts and schema
    /// 10's Live Photo keys after it:
    /// cid|name|type|notnull|default|pk|hidden.
    static let schema6 = """
        0|id|INTEGER|0||1|0
        1|name|TEXT|1||0|0
        2|size|INTEGER|1||0|0
        3|sha256|TEXT|0||0|0
        4|width|INTEGER|0||0|0
        5|height|INTEGER|0||0|0
        6|bit_depth|INTEGER|0||0|0
        7|color_type|INTEGER|0||0|0
        8|interlace|INTEGER|0||0|0
        9|received|INTEGER|1||0|0
        10|sender_name|TEXT|0||0|0
        11|sender_address|TEXT|0||0|0
        12|sender_id|TEXT|0||0|0
        13|note|TEXT|0||0|0
        14|rating|INTEGER|0||0|0
        15|indexed|INTEGER|1|0|0|0
        16|thumbnail|INTEGER|1|0|0|0
        17|problem|TEXT|0||0|0
        18|inode|INTEGER|0||0|0
        19|mtime|INTEGER|0||0|0
        20|orientation|INTEGER|0||0|0
        21|taken|TEXT|0||0|0
        22|taken_ms|INTEGER|0||0|0
        23|camera_make|TEXT|0||0|0
        24|camera_model|TEXT|0||0|0
        25|location|INTEGER|0||0|0
        26|preview|INTEGER|0||0|0
        27|preview_problem|TEXT|0||0|0
        28|folder|TEXT|0||0|2
        29|day|TEXT|0||0|2
        30|alpha|INTEGER|0||0|0
        31|duration_ms|INTEGER|0||0|0
        32|frame_rate_milli|INTEGER|0||0|0
        33|codec|TEXT|0||0|0
        34|live_id|TEXT|0||0|0
        35|live_role|INTEGER|0||0|2
        36|live_name|TEXT|0||0|2
        """

    /// SQL that takes schema 10's Live Photo columns and indices away: an index of schema 9.
    static let dropLive = """
        DROP INDEX photos_live_id;
        DROP INDEX photos_live_name;
        ALTER TABLE photos DROP COLUMN live_name;
        ALTER TABLE photos DROP COLUMN live_role;
        ALTER TABLE photos DROP COLUMN live_id;
        """

    /// The table's columns as `schema6` shows them.
    static func tableInfo(_ library: PhotoLibrary) throws -> String {
        let s = try library.database.prepare(
            """
            SELECT cid || '|' || name || '|' || type || '|' || "notnull" || '|' || coalesce(dflt_value, '') || '|' || pk || '|' || hidden
            FROM pragma_table_xinfo('photos')
            """
        ).bind()
        var rows: [String] = []
        while try s.step() { rows.append(s.text(0) ?? "") }
        return rows.joined(separator: "\n")
    }

    static func indices(_ library: PhotoLibrary) throws -> [String] {
        let s = try library.database.prepare(
            "SELECT sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'photos' AND sql IS NOT NULL ORDER BY name"
        ).bind()
        var rows: [String] = []
        while try s.step() { rows.append(s.text(0) ?? "") }
        return rows
    }

    @Test("a new index has the columns the hand-written migrations made, in their order")
    func aNewIndexHasTheSchema() throws {
        let f = Fixture()
        #expect(try Self.tableInfo(f.library) == Self.schema6)
        #expect(try f.library.database.firstInt("PRAGMA user_version") == PhotoLibrary.schemaVersion)
        // The CHECK of schema 1 stays.
        #expect(throws: LibraryError.self) {
            try f.library.database.execute("INSERT INTO photos(name, size, received, rating) VALUES ('a.png', 1, 0, 6)")
        }
    }

    @Test("an index of schema 1 with a photo gets every later column, keeps its photo and is indexed again")
    func migrationFromSchema1() throws {
        let f = Fixture()
        let fresh = try Self.indices(f.library)
        try f.library.database.execute(
            """
            DROP TABLE photos;
            CREATE TABLE photos(
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                name TEXT NOT NULL UNIQUE,
                size INTEGER NOT NULL,
                sha256 TEXT,
                width INTEGER, height INTEGER, bit_depth INTEGER, color_type INTEGER, interlace INTEGER,
                received INTEGER NOT NULL,
                sender_name TEXT, sender_address TEXT, sender_id TEXT,
                note TEXT,
                rating INTEGER CHECK (rating BETWEEN 0 AND 5),
                indexed INTEGER NOT NULL DEFAULT 0,
                thumbnail INTEGER NOT NULL DEFAULT 0,
                problem TEXT,
                inode INTEGER,
                mtime INTEGER
            );
            CREATE INDEX photos_pending ON photos(id) WHERE indexed = 0;
            INSERT INTO photos(id, name, size, sha256, width, height, bit_depth, color_type, interlace, received, sender_name,
                sender_address, sender_id, note, rating, indexed, thumbnail, problem, inode, mtime)
                VALUES (7, 'a/beach.png', 1234, 'ab12', 600, 300, 8, 2, 0, 1700000000123, 'Alice', '192.0.2.7:40000', 'ABCD',
                'the sea', 4, 1, 0, 'why not', 99, 1600000000000);
            PRAGMA user_version = 1;
            """)
        let reopened = try PhotoLibrary(directory: f.directory, create: false)
        #expect(try Self.tableInfo(reopened) == Self.schema6)
        #expect(try Self.indices(reopened) == fresh)
        let p = try #require(try reopened.photo(id: 7))
        #expect(p.name == "a/beach.png" && p.size == 1234 && p.sha256 == "ab12")
        #expect(p.width == 600 && p.height == 300 && p.bitDepth == 8 && p.colorType == 2 && p.interlace == 0)
        #expect(
            p.received == WallTime(milliseconds: 1_700_000_000_123)
                && p.modified == WallTime(milliseconds: 1_600_000_000_000))
        #expect(p.senderName == "Alice" && p.senderAddress == "192.0.2.7:40000" && p.senderID == "ABCD")
        #expect(p.note == "the sea" && p.rating == 4 && p.problem == "why not")
        #expect(!p.indexed, "schema 4 indexes every photo again")
        #expect(
            p.orientation == nil && p.taken == nil && p.cameraMake == nil && p.hasLocation == nil
                && p.preview == .pending)
        #expect(
            try reopened.database.firstInt("SELECT count(*) FROM photos WHERE folder = 'a/' AND day = '2023-11-14'")
                == 1)
    }

    @Test(
        "schema 8: an index of schema 7 learns which photos have transparency from their thumbnails' format, and indexes again the small PNGs with JPEG thumbnails (and, for schema 9, its videos)"
    )
    func migrationFromSchema7() throws {
        let f = Fixture()
        try f.library.database.execute(
            Self.dropLive + """
                ALTER TABLE photos DROP COLUMN alpha;
                ALTER TABLE photos DROP COLUMN duration_ms;
                ALTER TABLE photos DROP COLUMN frame_rate_milli;
                ALTER TABLE photos DROP COLUMN codec;
                INSERT INTO photos(id, name, size, width, height, received, indexed, thumbnail) VALUES
                    (1, 'photo.jpg', 10, 4000, 3000, 0, 1, 2),
                    (2, 'glass.png', 10, 4000, 3000, 0, 1, 3),
                    (3, 'icon.png', 10, 32, 32, 0, 1, 2),
                    (4, 'old.png', 10, 32, 32, 0, 0, 1),
                    (5, 'none.png', 10, 32, 32, 0, 1, 0),
                    (6, 'strip.png', 10, 361, 20, 0, 1, 2),
                    (7, 'small.jpg', 10, 32, 32, 0, 1, 2),
                    (8, 'VID_1.mp4', 10, 320, 240, 0, 1, 2);
                PRAGMA user_version = 7;
                """)
        let reopened = try PhotoLibrary(directory: f.directory, create: false)
        #expect(try Self.tableInfo(reopened) == Self.schema6)
        let photos = try reopened.all(sort: .name)
        let found = Dictionary(uniqueKeysWithValues: photos.map { ($0.name, ($0.hasAlpha, $0.indexed)) })
        #expect(found["photo.jpg"]! == (false, true))
        #expect(found["glass.png"]! == (true, true))
        #expect(found["icon.png"]! == (false, false), "indexed again for its PNG thumbnails")
        #expect(found["old.png"]! == (nil, false))
        #expect(found["none.png"]! == (nil, true))
        #expect(found["strip.png"]! == (false, true), "larger than a thumbnail: its JPEG ones stay")
        #expect(found["small.jpg"]! == (false, true), "a JPEG was lossy already: its JPEG ones stay")
        #expect(found["VID_1.mp4"]! == (false, false), "a video kept under schema 7 is indexed again for its facts")
    }

    @Test(
        "schema 9: an index of schema 8 gains the video facts' columns and indexes its videos again (and nothing else); facts out of range are read as unknown"
    )
    func migrationFromSchema8() throws {
        let f = Fixture()
        try f.library.database.execute(
            Self.dropLive + """
                ALTER TABLE photos DROP COLUMN duration_ms;
                ALTER TABLE photos DROP COLUMN frame_rate_milli;
                ALTER TABLE photos DROP COLUMN codec;
                INSERT INTO photos(id, name, size, width, height, received, indexed, thumbnail) VALUES
                    (1, 'photo.jpg', 10, 4000, 3000, 0, 1, 2),
                    (2, 'VID_1.MP4', 10, 320, 240, 0, 1, 2),
                    (3, 'a/IMG_2.mov', 10, 320, 240, 0, 1, 2),
                    (4, 'clip.m4v', 10, 320, 240, 0, 1, 0),
                    (5, 'old.qt', 10, 320, 240, 0, 1, 2),
                    (6, 'mp4.png', 10, 32, 32, 0, 1, 3);
                PRAGMA user_version = 8;
                """)
        let reopened = try PhotoLibrary(directory: f.directory, create: false)
        #expect(try Self.tableInfo(reopened) == Self.schema6)
        let indexed = Dictionary(uniqueKeysWithValues: try reopened.all(sort: .name).map { ($0.name, $0.indexed) })
        #expect(
            indexed == [
                "photo.jpg": true, "VID_1.MP4": false, "a/IMG_2.mov": false, "clip.m4v": false, "old.qt": false,
                "mp4.png": true,
            ])
        try reopened.database.execute(
            """
            UPDATE photos SET duration_ms = 12500, frame_rate_milli = 29970, codec = 'hvc1' WHERE id = 2;
            UPDATE photos SET duration_ms = -1, frame_rate_milli = 0, codec = 'h<1>' WHERE id = 3;
            UPDATE photos SET duration_ms = 9223372036854775807, frame_rate_milli = 10000001, codec = 'avc1x' WHERE id = 4;
            """)
        let video = try #require(try reopened.photo(id: 2))
        #expect(
            video.duration == 12.5 && video.frameRate == 29.97 && video.codec == "hvc1" && video.codecName == "HEVC")
        #expect(video.bitRate == 6.4)
        for id in [Int64(3), 4] {
            let p = try #require(try reopened.photo(id: id))
            #expect(p.duration == nil && p.frameRate == nil && p.codec == nil, "\(p.name)")
        }
    }

    @Test("the SELECT reads every field of Photo from its column")
    func everyFieldIsDecoded() throws {
        let f = Fixture()
        try f.library.database.execute(
            """
            INSERT INTO photos(id, name, size, sha256, width, height, bit_depth, color_type, interlace, received, sender_name,
                sender_address, sender_id, note, rating, indexed, thumbnail, problem, inode, mtime, orientation, taken, taken_ms,
                camera_make, camera_model, location, preview, preview_problem, alpha, duration_ms, frame_rate_milli, codec, live_id)
                VALUES (3, 'x.jpg', 10, 'cd', 4000, 3000, 8, 2, 1, 5, 'Bob', '[2001:db8::1]:5', 'EFGH', 'n', 5, 1, 2, 'p', 1, 6,
                6, '2024-07-03T14:22:00', 7, 'Make', 'Model', 1, 2, 'too big', 0, 61000, 25000, 'avc1', 'ab-12');
            INSERT INTO photos(id, name, size, received, thumbnail, preview) VALUES (4, 'y.png', 1, 0, 1, 3);
            """)
        let p = try #require(try f.library.photo(id: 3))
        var want = Photo(id: 3, name: "x.jpg", size: 10, received: WallTime(milliseconds: 5))
        want.sha256 = "cd"
        (want.width, want.height, want.bitDepth, want.colorType, want.interlace) = (4000, 3000, 8, 2, 1)
        (want.senderName, want.senderAddress, want.senderID) = ("Bob", "[2001:db8::1]:5", "EFGH")
        (want.note, want.rating, want.indexed, want.problem) = ("n", 5, true, "p")
        (want.thumbnailType, want.hasThumbnail, want.hasAlpha) = (.jpeg, true, false)
        want.modified = WallTime(milliseconds: 6)
        (want.orientation, want.taken, want.cameraMake, want.cameraModel, want.hasLocation) = (
            6, "2024-07-03T14:22:00", "Make", "Model", true
        )
        want.preview = .failed("too big")
        (want.duration, want.frameRate, want.codec) = (61, 25, "avc1")
        want.liveID = "AB-12"
        #expect(p == want)
        let old = try #require(try f.library.photo(id: 4))
        #expect(old.hasOldThumbnail && old.thumbnailType == .png && old.hasThumbnail)
        #expect(old.preview == .made && old.previewType == .png)
        #expect(old.hasAlpha == nil, "not known until its thumbnails are made")
        #expect(
            PhotoLibrary.columnCount == 33,
            "every column but inode, taken_ms, folder, day, live_role and live_name; then a still's motion and a motion's still"
        )
    }
}
