import PTKSystem
import PTKVocabulary

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
    /// the gallery's order; 7 (issue 56): `inbox_sources`, the files taken from watched inbox
    /// and drop folders (`inboxSourcesSchema`, PhotoLibrary+InboxSources.swift); 8 (issue 58):
    /// `alpha`, whether a photo has a pixel that is not fully opaque (the gallery's checkerboard
    /// goes behind those only), and a PNG no larger than the largest thumbnail gets PNG
    /// thumbnails (`Thumbnailer.losslessWithin`): those with JPEG ones are indexed again; 9
    /// (issue 58): a video's `duration_ms`, `frame_rate_milli` and `codec`, for which the
    /// videos kept under schema 8 are indexed again; 10 (issue 58): Live Photos, a photo's
    /// `live_id` (its content identifier) and the keys derived from its name (`live_role`,
    /// `live_name`) that pair a still with its video (`LivePhotos`), indexed; videos and
    /// Apple's stills are indexed again for their identifiers.
    ///
    /// A new column is a row of `photoColumns` whose `since` is this number raised by one;
    /// `migrate` adds it to older indices, and needs a step of its own only for what else the
    /// new schema asks (indexing every photo again, an index).
    static let schemaVersion: Int64 = 10

    /// The names of the `photos` table's columns (none before it is created).
    func photoTableColumns() throws(LibraryError) -> Set<String> {
        let s = try database.prepare("SELECT name FROM pragma_table_xinfo('photos')").bind()
        var names: Set<String> = []
        while try s.step() { if let name = s.text(0) { names.insert(name) } }
        return names
    }

    func migrate() throws(LibraryError) {
        let current = try database.firstInt("PRAGMA user_version") ?? 0
        if current > Self.schemaVersion {
            throw LibraryError(
                .refused,
                "the library index \(databasePath) was made by a newer ptk (schema \(current), this one reads \(Self.schemaVersion))"
            )
        }
        if current == Self.schemaVersion { return }
        let hadOldThumbnails = try database.writeTransaction { () throws(LibraryError) -> Bool in
            // Read again inside the transaction: another process may have migrated meanwhile.
            let found = try database.firstInt("PRAGMA user_version") ?? 0
            if found >= Self.schemaVersion { return false }
            // The table with the columns of schema 1, then each column a later schema added
            // that this index lacks, in `photoColumns`' order (an index whose version was set
            // back, by hand or by a test, has some already).
            let created = Self.photoColumns.filter { $0.since == 1 }.map { "    " + $0.sql }.joined(separator: ",\n")
            try database.execute(
                """
                CREATE TABLE IF NOT EXISTS photos(
                \(created)
                );
                CREATE INDEX IF NOT EXISTS photos_pending ON photos(id) WHERE indexed = 0;
                CREATE INDEX IF NOT EXISTS photos_sha256 ON photos(sha256, size);
                """)
            let present = try photoTableColumns()
            for column in Self.photoColumns where !present.contains(column.name) {
                try database.execute("ALTER TABLE photos ADD COLUMN \(column.sql)")
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
                try database.execute(
                    """
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
                try database.execute(
                    """
                    CREATE INDEX IF NOT EXISTS photos_gallery_day ON photos(day DESC, received DESC, id DESC);
                    CREATE INDEX IF NOT EXISTS photos_gallery_folder ON photos(folder, received DESC, id DESC);
                    CREATE INDEX IF NOT EXISTS photos_gallery_sender_day ON photos(sender_name, day DESC, received DESC, id DESC);
                    CREATE INDEX IF NOT EXISTS photos_gallery_sender_folder ON photos(sender_name, folder, received DESC, id DESC);
                    CREATE INDEX IF NOT EXISTS photos_rating ON photos(rating);
                    """)
            }
            if found < 7 {
                // What watched inboxes took (issue 56): a table of its own, kept with its photo's
                // name by triggers. Nothing to fill in: no inbox took anything before.
                try database.execute(Self.inboxSourcesSchema)
            }
            if found >= 5 && found < 8 {
                // Until schema 8 a PNG thumbnail (3) meant transparency and a JPEG (2) none;
                // the old 256-pixel PNG (1) says nothing: unknown until indexed again. A PNG no
                // larger than the largest thumbnail with JPEG ones is indexed again for its
                // lossless ones (its old ones are shown until then).
                try database.execute(
                    """
                    UPDATE photos SET alpha = (thumbnail = 3) WHERE thumbnail IN (2, 3);
                    UPDATE photos SET indexed = 0
                        WHERE indexed = 1 AND thumbnail = 2 AND lower(name) LIKE '%.png' AND width <= \(Thumbnailer.losslessWithin)
                            AND height <= \(Thumbnailer.losslessWithin);
                    """)
            }
            if found < 9 {
                // Videos were first kept under schemas 7 and 8; their facts come with 9.
                try database.execute(
                    """
                    UPDATE photos SET indexed = 0
                        WHERE indexed = 1 AND (\(PhotoType.allCases.filter(\.isVideo).flatMap(\.endings).map {
                            "lower(name) LIKE '%\($0)'"
                        }.joined(separator: " OR ")));
                    """)
            }
            if found < 10 {
                // Live Photos (issue 58): the pairing's lookups by identifier and by name (and
                // the count of the motions the gallery leaves out), each one index probe. The identifiers are read
                // when a photo is indexed: the videos and the iPhone's stills kept before are
                // indexed again (other stills pair by name, which needs nothing read).
                try database.execute(
                    LivePhotos.indicesSQL + """
                        UPDATE photos SET indexed = 0
                            WHERE indexed = 1 AND (live_role = 2 OR (live_role = 1 AND camera_make = 'Apple'));
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
