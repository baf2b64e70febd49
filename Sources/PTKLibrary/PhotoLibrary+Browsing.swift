import PTKVocabulary

/// What the gallery shows (issue 45): a filter, a page of it in the gallery's order (keyset
/// paging: a cursor names the last photo shown), its sections, and a photo's neighbours for
/// the viewer's next and previous.
public struct GalleryFilter: Sendable, Equatable {
    /// Only this sender's photos (its HELLO name as the gallery lists it).
    public var sender: String?
    /// Only photos rated at least this (1-5).
    public var minRating: Int?
    /// A filter of `sender` and `minRating` (nil: any).
    public init(sender: String? = nil, minRating: Int? = nil) {
        self.sender = sender
        self.minRating = minRating
    }
}

/// Where a gallery page starts: just after the photo it names, in the gallery's order. Its
/// `token` is URL-safe text ([A-Za-z0-9._-]) for `?after=`; one that does not parse is nil.
public struct GalleryCursor: Sendable, Equatable {
    /// The text as it goes into `?after=`; `init?(token:)` is what checks it.
    public var token: String
    /// The cursor `token` names; nil when it is empty, over 2,000 bytes, or holds other characters than [A-Za-z0-9._-].
    public init?(token: String) {
        guard !token.isEmpty, token.utf8.count <= 2_000,
            token.utf8.allSatisfy({
                ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x61 && $0 <= 0x7A) || $0 == 0x2E
                    || $0 == 0x5F || $0 == 0x2D
            })
        else { return nil }
        self.token = token
    }
}

/// One page of the gallery.
public struct GalleryPage: Sendable {
    /// The page's photos in sections (the gallery's order: newest first, by folder when the
    /// library has folders, else by day), titled as `WebPhoto.grouped` titles them.
    public var sections: [(title: String, photos: [Photo])]
    /// The first section goes on from the page before (it gets no title again).
    public var firstContinues: Bool
    /// Where the next page starts; nil on the last page.
    public var next: GalleryCursor?
    /// Photos that match the filter, and photos in all.
    public var matching: Int
    /// Photos in the library, whatever the filter.
    public var total: Int
    /// Every sender the library has, sorted: the filter's choices.
    public var senders: [String]
}

extension PhotoLibrary {
    /// The gallery's page after `cursor` (nil: the first), at most `limit` photos: read from
    /// the index in the gallery's order (keyset paging on the schema-6 indices, never every
    /// entry), in one read transaction. The cursor keeps its photo's whole place in the order, so
    /// a page goes on from there even if that photo was deleted or moved meanwhile (`GalleryKey`).
    /// A cursor that does not parse, or a way of sectioning the library no longer has, gives the
    /// first page.
    /// Pages after the first show only photos that were there at the first (ids up to the
    /// cursor's bound): one arriving meanwhile neither repeats a photo nor shifts the sections.
    public func galleryPage(_ filter: GalleryFilter, after cursor: GalleryCursor?, limit: Int) throws(LibraryError)
        -> GalleryPage
    {
        try database.readTransaction { () throws(LibraryError) -> GalleryPage in
            // A Live Photo's motion is not an item of its own: not counted either.
            let total =
                Int(try database.firstInt("SELECT count(*) FROM photos") ?? 0)
                - Int(
                    try database.firstInt(
                        "SELECT count(*) FROM photos WHERE live_role = 2 AND NOT \(LivePhotos.notMotion)") ?? 0)
            let senders = try gallerySenders()
            let newest = try database.firstInt("SELECT max(id) FROM photos") ?? 0
            // The cursor carries its whole place in the order (keyset paging): it goes on from
            // there whether or not its photo is still there; sectioned otherwise now: page one.
            var after: (group: String, received: Int64, id: Int64)? = nil
            var q = GalleryQuery(filter: filter, bound: newest)
            var shape: GalleryShape
            if let key = cursor.flatMap({ GalleryKey(token: $0.token) }), key.id <= key.bound {
                q.bound = key.bound
                shape = try galleryShape(q)
                if key.byFolder == shape.byFolder {
                    after = (key.group, key.received, key.id)
                } else {
                    q.bound = newest
                    shape = try galleryShape(q)
                }
                if let a = after, shape.byFolder {
                    // The folders still to come: the cursor's own (from the cursor on), then those
                    // whose newest photo sorts after the cursor folder's newest as the token keeps
                    // it (so a folder gone meanwhile resumes at the next folder after where it was);
                    // or is that very photo, moved since to a folder not yet shown.
                    let fromNewest = (key.folderReceived, key.folderID)
                    shape.folders = shape.folders.filter { $0.folder == a.group || ($0.received, $0.id) <= fromNewest }
                    if let i = shape.folders.firstIndex(where: { $0.folder == a.group }), i > 0 {
                        shape.folders.insert(shape.folders.remove(at: i), at: 0)
                    }
                }
            } else {
                shape = try galleryShape(q)
            }
            let count = try q.count(database)
            var rows: [(group: String, photo: Photo)] = []
            let wanted = max(limit, 0) + 1
            if limit > 0 {
                if shape.byFolder {
                    let s = try q.prepare(
                        database,
                        """
                        SELECT \(Self.columns) FROM photos WHERE folder = ?4 AND (received, id) < (?5, ?6) AND \(q.conditions)
                        ORDER BY received DESC, id DESC LIMIT ?7
                        """)
                    for f in shape.folders where rows.count < wanted {
                        let from = f.folder == after?.group ? after.map { ($0.received, $0.id) } : nil
                        q.bind(s, f.folder, from?.0 ?? .max, from?.1 ?? .max, wanted - rows.count)
                        while try s.step() { rows.append((f.folder, Self.photo(from: s))) }
                    }
                } else {
                    let s = try q.prepare(
                        database,
                        """
                        SELECT \(Self.columns), day FROM photos WHERE \(after == nil ? "" : "(day, received, id) < (?4, ?5, ?6) AND ")\(q.conditions)
                        ORDER BY day DESC, received DESC, id DESC LIMIT ?7
                        """)
                    q.bind(s, after?.group ?? "", after?.received ?? 0, after?.id ?? 0, wanted)
                    let last = Self.columnCount
                    while try s.step() { rows.append((s.text(last) ?? "", Self.photo(from: s))) }
                }
            }
            var next: GalleryCursor? = nil
            if rows.count == wanted {
                rows.removeLast()
                let last = rows[rows.count - 1].photo
                let group = rows[rows.count - 1].group
                let folderNewest = shape.folders.first { $0.folder == group }.map { ($0.received, $0.id) } ?? (0, 0)
                next =
                    GalleryKey(
                        byFolder: shape.byFolder, bound: q.bound, received: last.received.milliseconds, id: last.id,
                        group: group, folderReceived: folderNewest.0, folderID: folderNewest.1
                    ).cursor
            }
            var sections: [(title: String, photos: [Photo])] = []
            var lastGroup: String? = nil
            for (group, photo) in rows {
                if group == lastGroup {
                    sections[sections.count - 1].photos.append(photo)
                    continue
                }
                lastGroup = group
                sections.append((shape.title(group), [photo]))
            }
            let firstContinues = after != nil && rows.first?.group == after?.group
            return GalleryPage(
                sections: sections, firstContinues: firstContinues, next: next, matching: count, total: total,
                senders: senders)
        }
    }

    /// The photos before and after photo `id` in the gallery's order under `filter` (both nil
    /// when the filter leaves the photo out): a query of one row each way, and in a library of
    /// folders, the folders' order when the photo is at either end of its folder.
    public func neighbours(of id: Int64, _ filter: GalleryFilter) throws(LibraryError) -> (
        previous: Photo?, next: Photo?
    ) {
        try database.readTransaction { () throws(LibraryError) -> (previous: Photo?, next: Photo?) in
            let q = GalleryQuery(filter: filter, bound: .max)
            let found = try q.prepare(
                database, "SELECT folder, day, received FROM photos WHERE id = ?4 AND \(q.conditions)")
            q.bind(found, id)
            guard try found.step(), let folder = found.text(0), let day = found.text(1), let received = found.int(2)
            else { return (nil, nil) }
            let shape = try galleryShape(q)
            if !shape.byFolder {
                let s = { (newer: Bool) throws(LibraryError) -> Photo? in
                    let (op, order) = newer ? (">", "ASC") : ("<", "DESC")
                    let s = try q.prepare(
                        self.database,
                        """
                        SELECT \(Self.columns) FROM photos WHERE (day, received, id) \(op) (?4, ?5, ?6) AND \(q.conditions)
                        ORDER BY day \(order), received \(order), id \(order) LIMIT 1
                        """)
                    q.bind(s, day, received, id)
                    return try s.step() ? Self.photo(from: s) : nil
                }
                return (try s(true), try s(false))
            }
            // Within its folder, else the end of the folder before or after it.
            let within = { (folder: String, newer: Bool, received: Int64, id: Int64) throws(LibraryError) -> Photo? in
                let (op, order) = newer ? (">", "ASC") : ("<", "DESC")
                let s = try q.prepare(
                    self.database,
                    """
                    SELECT \(Self.columns) FROM photos WHERE folder = ?4 AND (received, id) \(op) (?5, ?6) AND \(q.conditions)
                    ORDER BY received \(order), id \(order) LIMIT 1
                    """)
                q.bind(s, folder, received, id)
                return try s.step() ? Self.photo(from: s) : nil
            }
            let i = shape.folders.firstIndex { $0.folder == folder }
            var previous = try within(folder, true, received, id)
            if previous == nil, let i, i > 0 { previous = try within(shape.folders[i - 1].folder, true, .min, .min) }
            var next = try within(folder, false, received, id)
            if next == nil, let i, i + 1 < shape.folders.count {
                next = try within(shape.folders[i + 1].folder, false, .max, .max)
            }
            return (previous, next)
        }
    }

    /// Every sender's HELLO name, sorted: one index seek per sender (photos_gallery_sender_day).
    private func gallerySenders() throws(LibraryError) -> [String] {
        let first = try database.prepare("SELECT min(sender_name) FROM photos").bind()
        guard try first.step(), var name = first.text(0) else { return [] }
        var names = [name]
        let s = try database.prepare("SELECT min(sender_name) FROM photos WHERE sender_name > ?")
        while try s.bind(name).step(), let after = s.text(0) {
            names.append(after)
            name = after
        }
        return Array(Set(names)).sorted()
    }

    /// How the photos `q` matches are sectioned: by folder when one is in a folder (the folders
    /// with a match, the one with the newest first), else by day, titled only when there are
    /// two days or more.
    private func galleryShape(_ q: GalleryQuery) throws(LibraryError) -> GalleryShape {
        var folders: [(folder: String, received: Int64, id: Int64)] = []
        let nextFolder = try database.prepare("SELECT folder FROM photos WHERE folder > ? ORDER BY folder LIMIT 1")
        let newest = try q.prepare(
            database,
            "SELECT received, id FROM photos WHERE folder = ?4 AND \(q.conditions) ORDER BY received DESC, id DESC LIMIT 1"
        )
        // The folders one seek each ("" first, at the top, if any photo is there).
        var candidate: String? = nil
        let top = try database.prepare("SELECT 1 FROM photos WHERE folder = '' LIMIT 1").bind()
        if try top.step() { candidate = "" } else if try nextFolder.bind("").step() { candidate = nextFolder.text(0) }
        while let folder = candidate {
            q.bind(newest, folder)
            if try newest.step(), let received = newest.int(0), let id = newest.int(1) {
                folders.append((folder, received, id))
            }
            candidate = try nextFolder.bind(folder).step() ? nextFolder.text(0) : nil
        }
        guard folders.contains(where: { !$0.folder.isEmpty }) else {
            let days = try q.prepare(database, "SELECT day FROM photos WHERE \(q.conditions) ORDER BY day DESC LIMIT 1")
            q.bind(days)
            guard try days.step(), let newestDay = days.text(0) else {
                return GalleryShape(byFolder: false, titled: false, folders: [])
            }
            let older = try q.prepare(database, "SELECT 1 FROM photos WHERE day < ?4 AND \(q.conditions) LIMIT 1")
            q.bind(older, newestDay)
            return GalleryShape(byFolder: false, titled: try older.step(), folders: [])
        }
        folders.sort { ($0.received, $0.id) > ($1.received, $1.id) }
        return GalleryShape(byFolder: true, titled: true, folders: folders)
    }
}

/// How the gallery's matching photos are sectioned (`galleryShape`).
private struct GalleryShape {
    var byFolder: Bool
    /// By day: there are two days or more, so sections have titles.
    var titled: Bool
    /// By folder: the folders that have a match, the one with the newest first, with its newest.
    var folders: [(folder: String, received: Int64, id: Int64)]

    /// A section's title, as `WebPhoto.grouped` gives it.
    func title(_ group: String) -> String {
        if byFolder { return group.isEmpty ? "(top folder)" : group }
        return titled ? group : ""
    }
}

/// The conditions of a gallery query: the filter's, and the bound (the highest id a page
/// shows). Parameters are numbered: ?1 the sender, ?2 the least rating, ?3 the bound; a query
/// numbers its own from ?4 on.
private struct GalleryQuery {
    var filter: GalleryFilter
    var bound: Int64

    /// The filter's conditions and the bound. The bound is written `+id`, so that SQLite never
    /// picks the rowid for it (it leaves out only photos newer than the first page, few or none)
    /// over an index in the gallery's order.
    /// So is the rating (`+rating`): sorting every photo of a rating in the gallery's order
    /// costs more than passing over those of other ratings in that order.
    /// A video shown as a Live Photo's motion is not an item of its own (`LivePhotos.notMotion`).
    var conditions: String {
        (["+id <= ?3"] + filterConditions(counting: false) + [LivePhotos.notMotion]).joined(separator: " AND ")
    }

    /// The filter's conditions alone; a photo never rated counts as 0. `counting`: for a count,
    /// which the index of ratings serves.
    func filterConditions(counting: Bool = true) -> [String] {
        var c: [String] = []
        if filter.sender != nil { c.append("sender_name = ?1") }
        if let least = filter.minRating, least > 0 { c.append(counting ? "rating >= ?2" : "+rating >= ?2") }
        return c
    }

    /// How many photos match, up to the bound: all that match (by the smallest index), less those
    /// above the bound (by the rowid, few): never a walk through the table.
    func count(_ database: Database) throws(LibraryError) -> Int {
        let conditions = filterConditions()
        let all = try prepare(
            database,
            "SELECT count(*) FROM photos"
                + (conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND ")))
        let newer = try prepare(
            database, "SELECT count(*) FROM photos WHERE " + (["id > ?3"] + conditions).joined(separator: " AND "))
        // Live Photos' motions are not items: counted by the index of the videos, then subtracted.
        let motions = try prepare(
            database,
            "SELECT count(*) FROM photos WHERE "
                + (["live_role = 2", "id <= ?3"] + conditions + ["NOT \(LivePhotos.notMotion)"]).joined(
                    separator: " AND "))
        return Int(try all.step() ? all.int(0) ?? 0 : 0) - Int(try newer.step() ? newer.int(0) ?? 0 : 0)
            - Int(try motions.step() ? motions.int(0) ?? 0 : 0)
    }

    func prepare(_ database: Database, _ sql: String) throws(LibraryError) -> Statement {
        let s = try database.prepare(sql)
        bind(s)
        return s
    }

    /// Binds the filter and the bound, then `more` from ?4 on (Int64, Int or String).
    func bind(_ s: Statement, _ more: Any...) {
        var values: [Any?] = [filter.sender, filter.minRating.map { Int64($0) }, bound]
        values += more.map { $0 as Any? }
        switch values.count {
        case 3: s.bind(values[0], values[1], values[2])
        case 4: s.bind(values[0], values[1], values[2], values[3])
        case 5: s.bind(values[0], values[1], values[2], values[3], values[4])
        case 6: s.bind(values[0], values[1], values[2], values[3], values[4], values[5])
        default: s.bind(values[0], values[1], values[2], values[3], values[4], values[5], values[6])
        }
    }
}

/// What a gallery cursor says: how the library was sectioned (by folder or by day), the
/// highest id of the first page's moment, and the last photo's whole place in the order: its
/// received time and id, and its day, or its folder and that folder's newest photo (received
/// time and id), so that paging goes on from there even when the photo has since been deleted,
/// moved or retaken (keyset paging: nothing is read back from its row).
/// Text, dot-separated: "d", the bound, received, id and the day
/// ("d.1042.1764658503000.1037.2025-12-02"); or "f", the bound, received, id, the folder's newest
/// received and id, and the folder in base64url without padding ("" for the top folder)
/// ("f.1042.1764658503000.1037.1764658509000.1040.MjAyNS8").
/// A folder cursor whose folder is gone (or has no match now) goes on with the first folder, in
/// the current order, whose newest photo sorts after the kept newest of the cursor's folder:
/// where the cursor's folder would have been. A folder path too long for the token's 2,000
/// bytes (over some 1,450 bytes) gives no cursor: its page is the last.
struct GalleryKey: Equatable {
    var byFolder: Bool
    var bound: Int64
    var received: Int64
    var id: Int64
    /// The day ("YYYY-MM-DD") or the folder.
    var group: String
    /// By folder: the cursor folder's newest photo when the cursor was made.
    var folderReceived: Int64
    var folderID: Int64

    init(
        byFolder: Bool, bound: Int64, received: Int64, id: Int64, group: String, folderReceived: Int64 = 0,
        folderID: Int64 = 0
    ) {
        self.byFolder = byFolder
        self.bound = bound
        self.received = received
        self.id = id
        self.group = group
        self.folderReceived = folderReceived
        self.folderID = folderID
    }

    init?(token: String) {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count >= 5, let bound = Int64(parts[1]), let received = Int64(parts[2]), let id = Int64(parts[3])
        else { return nil }
        if parts[0] == "d", parts.count == 5, Self.isDay(parts[4]) {
            self.init(byFolder: false, bound: bound, received: received, id: id, group: String(parts[4]))
        } else if parts[0] == "f", parts.count == 7, let fr = Int64(parts[4]), let fid = Int64(parts[5]),
            let bytes = Base64URL.decode(parts[6]), let folder = String(validating: bytes, as: UTF8.self)
        {
            self.init(
                byFolder: true, bound: bound, received: received, id: id, group: folder, folderReceived: fr,
                folderID: fid)
        } else {
            return nil
        }
    }

    var token: String {
        byFolder
            ? "f.\(bound).\(received).\(id).\(folderReceived).\(folderID).\(Base64URL.encode(Array(group.utf8)))"
            : "d.\(bound).\(received).\(id).\(group)"
    }
    var cursor: GalleryCursor? { GalleryCursor(token: token) }

    /// "YYYY-MM-DD": ten characters, digits but for the two dashes ("" too: a photo of no day).
    private static func isDay(_ s: Substring) -> Bool {
        let u = Array(s.utf8)
        return u.isEmpty
            || u.count == 10
                && u.enumerated().allSatisfy { i, c in i == 4 || i == 7 ? c == 0x2D : (c >= 0x30 && c <= 0x39) }
    }
}

/// Base64url (RFC 4648 section 5) without padding, for a cursor's folder.
enum Base64URL {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    static func encode(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        var i = 0
        while i < bytes.count {
            let n = min(3, bytes.count - i)
            var v = UInt32(bytes[i]) << 16
            if n > 1 { v |= UInt32(bytes[i + 1]) << 8 }
            if n > 2 { v |= UInt32(bytes[i + 2]) }
            for k in 0...n { out.append(alphabet[Int((v >> UInt32(18 - 6 * k)) & 63)]) }
            i += 3
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Nil unless `text` is canonical base64url without padding.
    static func decode(_ text: Substring) -> [UInt8]? {
        var values: [UInt32] = []
        for c in text.utf8 {
            guard let v = alphabet.firstIndex(of: c) else { return nil }
            values.append(UInt32(v))
        }
        guard values.count % 4 != 1 else { return nil }
        var out: [UInt8] = []
        var i = 0
        while i < values.count {
            let n = min(4, values.count - i)
            var v: UInt32 = 0
            for k in 0..<4 { v = v << 6 | (k < n ? values[i + k] : 0) }
            out.append(UInt8(v >> 16 & 0xFF))
            if n > 2 { out.append(UInt8(v >> 8 & 0xFF)) }
            if n > 3 { out.append(UInt8(v & 0xFF)) }
            i += 4
        }
        return encode(out) == String(text) ? out : nil
    }
}
