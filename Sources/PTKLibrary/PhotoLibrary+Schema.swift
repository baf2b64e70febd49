import PTKSystem

/// The index's schema: its version, and the migrations that bring an older index up to it
/// (run by `init` in a write transaction).
extension PhotoLibrary {
    /// 1: the photos table; 2: an index of it by SHA-256 (duplicates are looked up by hash);
    /// 3: what a photo says of itself (orientation, taken, camera, location: yes or no), which
    /// a migration from 2 fills in by indexing every photo again; 4: thumbnails in linear light;
    /// 5 (issue 45): `thumbnail` says the gallery thumbnails' format (0 none, 1 the 256-pixel
    /// PNG `<id>.png` of schemas before 5, shown until the photo is indexed again, 2 JPEG, 3 PNG) and `preview`/`preview_problem`
    /// say where the preview stands (NULL pending, 0 not needed, 1 made as JPEG, 2 failed and
    /// why, 3 made as PNG); every photo is indexed again for its new thumbnails; 6: the
    /// gallery's keys, each photo's folder and day, as columns SQLite computes, and indices in
    /// the gallery's order.
    static let schemaVersion: Int64 = 6

    func migrate() throws(LibraryError) {
        let current = try database.firstInt("PRAGMA user_version") ?? 0
        if current > Self.schemaVersion {
            throw LibraryError(.refused, "the library index \(databasePath) was made by a newer ptk (schema \(current), this one reads \(Self.schemaVersion))")
        }
        if current == Self.schemaVersion { return }
        let hadOldThumbnails = try database.writeTransaction { () throws(LibraryError) -> Bool in
            // Read again inside the transaction: another process may have migrated meanwhile.
            let found = try database.firstInt("PRAGMA user_version") ?? 0
            if found >= Self.schemaVersion { return false }
            try database.execute("""
                CREATE TABLE IF NOT EXISTS photos(
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
                CREATE INDEX IF NOT EXISTS photos_pending ON photos(id) WHERE indexed = 0;
                CREATE INDEX IF NOT EXISTS photos_sha256 ON photos(sha256, size);
                """)
            if found < 3 {
                try database.execute("""
                    ALTER TABLE photos ADD COLUMN orientation INTEGER;
                    ALTER TABLE photos ADD COLUMN taken TEXT;
                    ALTER TABLE photos ADD COLUMN taken_ms INTEGER;
                    ALTER TABLE photos ADD COLUMN camera_make TEXT;
                    ALTER TABLE photos ADD COLUMN camera_model TEXT;
                    ALTER TABLE photos ADD COLUMN location INTEGER;
                    """)
            }
            if found < 4 {
                // Schema 3 added what photos say of themselves; schema 4 makes thumbnails in
                // linear light and true colour (and reads HEIF). Every photo is indexed again.
                try database.execute("UPDATE photos SET indexed = 0 WHERE indexed = 1")
            }
            if found < 5 {
                // Gallery thumbnails at two sizes in a compact format, and previews: every photo
                // is indexed again (its notes and ratings stay). Its old `<id>.png` thumbnail
                // (`thumbnail = 1`) is shown until then; indexing removes it once the entry names
                // the new ones. The sweep below removes only those no entry shows any more.
                // An index whose version was set back (by hand, or a test) has the columns already.
                if try database.firstInt("SELECT count(*) FROM pragma_table_xinfo('photos') WHERE name = 'preview'") == 0 {
                    try database.execute("""
                        ALTER TABLE photos ADD COLUMN preview INTEGER;
                        ALTER TABLE photos ADD COLUMN preview_problem TEXT;
                        """)
                }
                try database.execute("""
                    CREATE INDEX IF NOT EXISTS photos_preview_pending ON photos(id) WHERE indexed = 1 AND preview IS NULL;
                    UPDATE photos SET indexed = 0 WHERE indexed = 1;
                    """)
            }
            if found < 6 {
                // The gallery's order (issue 45) from indices rather than from every entry: a
                // photo's folder ("a/b/", "" at the top: the name up to its last "/") and its day
                // (taken, else received in UTC, as `Photo.day` says), kept by SQLite itself on
                // every write (record, reconcile, rename, index), and indices that give a page
                // in order: by day, by folder, and each for one sender (the gallery's filter), and one
                // that counts the photos of a rating and above.
                // An index whose version was set back (by hand, or a test) has the columns already.
                if try database.firstInt("SELECT count(*) FROM pragma_table_xinfo('photos') WHERE name = 'folder'") == 0 {
                    try database.execute("""
                        ALTER TABLE photos ADD COLUMN folder TEXT GENERATED ALWAYS AS (rtrim(name, replace(name, '/', ''))) VIRTUAL;
                        ALTER TABLE photos ADD COLUMN day TEXT GENERATED ALWAYS AS
                            (coalesce(substr(coalesce(taken, strftime('%Y-%m-%d', received / 1000.0, 'unixepoch')), 1, 10), '')) VIRTUAL;
                        """)
                }
                try database.execute("""
                    CREATE INDEX IF NOT EXISTS photos_gallery_day ON photos(day DESC, received DESC, id DESC);
                    CREATE INDEX IF NOT EXISTS photos_gallery_folder ON photos(folder, received DESC, id DESC);
                    CREATE INDEX IF NOT EXISTS photos_gallery_sender_day ON photos(sender_name, day DESC, received DESC, id DESC);
                    CREATE INDEX IF NOT EXISTS photos_gallery_sender_folder ON photos(sender_name, folder, received DESC, id DESC);
                    CREATE INDEX IF NOT EXISTS photos_rating ON photos(rating);
                    """)
            }
            try database.execute("PRAGMA user_version = \(Self.schemaVersion)")
            return found > 0 && found < 5
        }
        if hadOldThumbnails {
            // Best effort: what stays (a folder that cannot be listed now) goes at ptkd's next start.
            _ = try? sweepThumbnails()
        }
    }
}
