import PTKSystem
import PTKVocabulary

/// One column of the index's `photos` table: its SQL, the schema that added it, and what its
/// value says of a `Photo`. `PhotoLibrary.photoColumns` lists them all; the table's creation
/// and the migrations add them from it, and the photo SELECT reads and decodes those that have
/// a `decode`, in the list's order.
struct PhotoColumn: Sendable {
    /// Its name in SQL.
    let name: String
    /// Its type, constraints or generating expression, as `CREATE TABLE` and `ALTER TABLE …
    /// ADD COLUMN` take them after the name.
    let definition: String
    /// The schema that added it: 1 for those the table was created with, else the migration
    /// to that schema adds it (`PhotoLibrary.migrate`).
    let since: Int64
    /// Sets what the value in column `index` of the statement's row says of the photo; nil for
    /// a column the library keeps for itself (the SELECT leaves it out).
    let decode: (@Sendable (inout Photo, Statement, Int32) -> Void)?

    init(
        _ name: String, _ definition: String, since: Int64,
        decode: (@Sendable (inout Photo, Statement, Int32) -> Void)? = nil
    ) {
        self.name = name
        self.definition = definition
        self.since = since
        self.decode = decode
    }

    /// "name TYPE …", as the table's creation and `ADD COLUMN` write it.
    var sql: String { "\(name) \(definition)" }
}

extension PhotoLibrary {
    /// The `photos` table, in its columns' order on disk (an index made by an older schema has
    /// them in this order too: each migration appends its own). The service user may have
    /// written anything into the index (root's `ptk` reads it): numbers that drive arithmetic
    /// or counts are taken only within their range (a side in 1...2³¹−1, a rating in 0...5, an
    /// orientation in 1...8), else as unknown.
    static let photoColumns: [PhotoColumn] = [
        PhotoColumn("id", "INTEGER PRIMARY KEY AUTOINCREMENT", since: 1) { p, s, i in p.id = s.int(i) ?? 0 },
        PhotoColumn("name", "TEXT NOT NULL UNIQUE", since: 1) { p, s, i in p.name = s.text(i) ?? "" },
        PhotoColumn("size", "INTEGER NOT NULL", since: 1) { p, s, i in p.size = s.int(i) ?? 0 },
        PhotoColumn("sha256", "TEXT", since: 1) { p, s, i in p.sha256 = s.text(i) },
        PhotoColumn("width", "INTEGER", since: 1) { p, s, i in p.width = s.int(i).flatMap(side) },
        PhotoColumn("height", "INTEGER", since: 1) { p, s, i in p.height = s.int(i).flatMap(side) },
        PhotoColumn("bit_depth", "INTEGER", since: 1) { p, s, i in p.bitDepth = s.int(i).map(Int.init) },
        PhotoColumn("color_type", "INTEGER", since: 1) { p, s, i in p.colorType = s.int(i).map(Int.init) },
        PhotoColumn("interlace", "INTEGER", since: 1) { p, s, i in p.interlace = s.int(i).map(Int.init) },
        PhotoColumn("received", "INTEGER NOT NULL", since: 1) { p, s, i in
            p.received = WallTime(milliseconds: s.int(i) ?? 0)
        },
        PhotoColumn("sender_name", "TEXT", since: 1) { p, s, i in p.senderName = s.text(i) },
        PhotoColumn("sender_address", "TEXT", since: 1) { p, s, i in p.senderAddress = s.text(i) },
        PhotoColumn("sender_id", "TEXT", since: 1) { p, s, i in p.senderID = s.text(i) },
        PhotoColumn("note", "TEXT", since: 1) { p, s, i in p.note = s.text(i) },
        PhotoColumn("rating", "INTEGER CHECK (rating BETWEEN 0 AND 5)", since: 1) { p, s, i in
            p.rating = s.int(i).flatMap { (0...5).contains($0) ? Int($0) : nil }
        },
        PhotoColumn("indexed", "INTEGER NOT NULL DEFAULT 0", since: 1) { p, s, i in p.indexed = s.int(i) == 1 },
        // The gallery thumbnails' format (`thumbnailTypes`); 1, the 256-pixel PNG of schemas
        // before 5 (`<id>.png`), is shown until the photo is indexed again and its new
        // thumbnails replace it.
        PhotoColumn("thumbnail", "INTEGER NOT NULL DEFAULT 0", since: 1) { p, s, i in
            let thumbnail = s.int(i) ?? 0
            p.hasOldThumbnail = thumbnail == oldThumbnail
            p.thumbnailType = p.hasOldThumbnail ? .png : thumbnailTypes[thumbnail]
            p.hasThumbnail = p.thumbnailType != nil
        },
        PhotoColumn("problem", "TEXT", since: 1) { p, s, i in p.problem = s.text(i) },
        // Reconciling tells a file replaced in place by its inode (never shown).
        PhotoColumn("inode", "INTEGER", since: 1),
        PhotoColumn("mtime", "INTEGER", since: 1) { p, s, i in
            p.modified = s.int(i).map { WallTime(milliseconds: $0) }
        },
        PhotoColumn("orientation", "INTEGER", since: 3) { p, s, i in
            p.orientation = s.int(i).flatMap { (1...8).contains($0) ? Int($0) : nil }
        },
        PhotoColumn("taken", "TEXT", since: 3) { p, s, i in p.taken = s.text(i) },
        // `taken` as an instant, for `SortOrder.taken` (never shown).
        PhotoColumn("taken_ms", "INTEGER", since: 3),
        PhotoColumn("camera_make", "TEXT", since: 3) { p, s, i in p.cameraMake = s.text(i) },
        PhotoColumn("camera_model", "TEXT", since: 3) { p, s, i in p.cameraModel = s.text(i) },
        PhotoColumn("location", "INTEGER", since: 3) { p, s, i in p.hasLocation = s.int(i).map { $0 != 0 } },
        // NULL pending, 0 not needed, 1 made as JPEG, 2 failed (`preview_problem` says why:
        // it comes next, so its decoding finds `.failed` here), 3 made as PNG.
        PhotoColumn("preview", "INTEGER", since: 5) { p, s, i in
            switch s.int(i) {
            case nil: p.preview = .pending
            case 0: p.preview = .notNeeded
            case 2: p.preview = .failed("unknown reason")
            case let made?:
                p.preview = .made
                p.previewType = made == 3 ? .png : .jpeg
            }
        },
        PhotoColumn("preview_problem", "TEXT", since: 5) { p, s, i in
            if case .failed = p.preview, let reason = s.text(i) { p.preview = .failed(reason) }
        },
        // The gallery's keys (issue 45), which SQLite computes on every write: the photo's
        // folder ("a/b/", "" at the top: the name up to its last "/") and its day (taken, else
        // received in UTC, as `Photo.day` says). Read by the gallery's queries, not decoded.
        PhotoColumn("folder", "TEXT GENERATED ALWAYS AS (rtrim(name, replace(name, '/', ''))) VIRTUAL", since: 6),
        PhotoColumn(
            "day",
            """
            TEXT GENERATED ALWAYS AS
                (coalesce(substr(coalesce(taken, strftime('%Y-%m-%d', received / 1000.0, 'unixepoch')), 1, 10), '')) VIRTUAL
            """, since: 6),
        // Some pixel not fully opaque (issue 58): 1, else 0; NULL until thumbnails are made.
        PhotoColumn("alpha", "INTEGER", since: 8) { p, s, i in p.hasAlpha = s.int(i).map { $0 != 0 } },
        // A video's facts (issue 58), from its moov box; NULL for a photo. Taken only within
        // their range: a duration up to ten years, a frame rate up to 10,000 a second (kept
        // in thousandths), a codec of four letters or digits.
        PhotoColumn("duration_ms", "INTEGER", since: 9) { p, s, i in
            p.duration = s.int(i).flatMap { (0...315_360_000_000).contains($0) ? Double($0) / 1000 : nil }
        },
        PhotoColumn("frame_rate_milli", "INTEGER", since: 9) { p, s, i in
            p.frameRate = s.int(i).flatMap { (1...10_000_000).contains($0) ? Double($0) / 1000 : nil }
        },
        PhotoColumn("codec", "TEXT", since: 9) { p, s, i in p.codec = s.text(i).flatMap(VideoCodec.fourCC) },
        // A Live Photo's content identifier (issue 58), and the two keys SQLite derives from
        // the name that pair a still with its video (`LivePhotos`): read by the pairing, not
        // decoded.
        PhotoColumn("live_id", "TEXT", since: 10) { p, s, i in p.liveID = LivePhotos.contentID(s.text(i)) },
        PhotoColumn("live_role", "INTEGER GENERATED ALWAYS AS (\(LivePhotos.roleSQL)) VIRTUAL", since: 10),
        PhotoColumn("live_name", "TEXT GENERATED ALWAYS AS (\(LivePhotos.nameSQL)) VIRTUAL", since: 10),
    ]

    /// A width or height as a row may say it: within `sideRange`, else unknown.
    static func side(_ value: Int64) -> Int? { sideRange.contains(value) ? Int(value) : nil }

    /// The columns a photo is read from, in `photoColumns`' order.
    static let decodedColumns = photoColumns.filter { $0.decode != nil }

    /// What the photo SELECT names: "id, name, size, …", then the Live Photo partners it
    /// derives (`LivePhotos`): a still's motion and a motion's still. A query may name more
    /// columns after these (at `columnCount`).
    static let columns =
        decodedColumns.map(\.name).joined(separator: ", ") + ", \(LivePhotos.motionColumn), \(LivePhotos.stillColumn)"

    /// How many columns `columns` names: a gallery query's extra column comes after them.
    static let columnCount = Int32(decodedColumns.count + 2)

    /// A row of a SELECT of `columns` as a photo.
    static func photo(from s: Statement) -> Photo {
        var p = Photo(id: 0, name: "", size: 0, received: WallTime(milliseconds: 0))
        for (i, column) in decodedColumns.enumerated() { column.decode?(&p, s, Int32(i)) }
        p.motionID = s.int(Int32(decodedColumns.count))
        p.stillID = s.int(Int32(decodedColumns.count + 1))
        return p
    }
}
