import PTKSystem
import PTKTestSupport
import PTKTestTags
import PTKVocabulary
import Testing

@testable import PTKLibrary

/// A deterministic sequence of numbers (an LCG), so that a failing library can be made again.
private struct Numbers {
    var state: UInt64
    mutating func next(_ below: Int) -> Int {
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return Int((state >> 33) % UInt64(below))
    }
}

/// The gallery's order as it was computed before issue 45 (every entry in memory, sectioned as
/// `WebPhoto.grouped` sections, restated here): what the SQL pages must reproduce exactly.
private func referenceOrder(_ library: PhotoLibrary, _ filter: GalleryFilter) throws -> [(title: String, photo: Photo)]
{
    let shown = try library.all(sort: .time).reversed().filter { p in
        (filter.sender == nil || p.senderName == filter.sender)
            && (filter.minRating == nil || (p.rating ?? 0) >= filter.minRating!)
    }
    guard !shown.isEmpty else { return [] }
    let folderOf = { (p: Photo) -> String in splitLastComponent(p.name).folder ?? "" }
    let byFolder = shown.contains(where: { $0.name.containsScalar("/") })
    guard byFolder || Set(shown.map(\.day)).count > 1 else { return shown.map { ("", $0) } }
    var list = Array(shown)
    if !byFolder { list.sort { ($0.day, $0.received) > ($1.day, $1.received) } }
    let grouping: (Photo) -> String = byFolder ? folderOf : { $0.day }
    var order: [String] = []
    var groups: [String: [Photo]] = [:]
    for p in list {
        let f = grouping(p)
        if groups[f] == nil { order.append(f) }
        groups[f, default: []].append(p)
    }
    return order.flatMap { f in groups[f]!.map { (!byFolder ? f : f.isEmpty ? "(top folder)" : f + "/", $0) } }
}

/// Fills `library`'s index with `count` photos (no files: the gallery reads only the index):
/// received times with many ties, three senders and none, ratings, some taken on other days;
/// in folders (and the top folder) when `folders`.
private func fill(_ library: PhotoLibrary, count: Int, folders: Bool, seed: UInt64 = 7, firstID: Int = 0) throws {
    var n = Numbers(state: seed)
    let senders = ["Alice's phone", "Bob", "Carol's tablet"]
    var arrivals: [Arrival] = []
    var names: [String] = []
    for i in firstID..<firstID + count {
        let folder = folders ? ["", "a/", "a/b/", "zeta/", "Émile/"][n.next(5)] : ""
        let received = WallTime(milliseconds: 1_764_000_000_000 + Int64(n.next(400)) * 1_800_000)
        names.append("\(folder)p\(i).png")
        arrivals.append(
            Arrival(
                name: names.last!, size: 100, sha256: String(repeating: "0", count: 64), received: received,
                senderName: senders[n.next(3)], senderAddress: "192.0.2.7:4000", senderID: nil))
    }
    try library.record(arrivals)
    try library.database.writeTransaction { () throws(LibraryError) in
        for name in names {
            switch n.next(6) {
            case 0: try library.database.prepare("UPDATE photos SET sender_name = NULL WHERE name = ?").bind(name).run()
            case 1:
                try library.database.prepare("UPDATE photos SET taken = ? WHERE name = ?").bind(
                    "2025-0\(1 + n.next(9))-1\(n.next(10))T10:00:00", name
                ).run()
            default: break
            }
            let rating = n.next(7)
            if rating < 6 {
                try library.database.prepare("UPDATE photos SET rating = ? WHERE name = ?").bind(rating, name).run()
            }
        }
    }
}

/// Every page of `filter` from the first, by `limit`.
private func pages(_ library: PhotoLibrary, _ filter: GalleryFilter, limit: Int) throws -> [GalleryPage] {
    var result: [GalleryPage] = []
    var cursor: GalleryCursor? = nil
    repeat {
        let page = try library.galleryPage(filter, after: cursor, limit: limit)
        result.append(page)
        cursor = page.next
        if result.count > 10_000 {
            Issue.record("paging does not end")
            break
        }
    } while cursor != nil
    return result
}

/// Checks that the pages of `filter` together are the reference order, with its sections'
/// titles and `firstContinues` where a section goes on from the page before.
private func checkPaging(_ library: PhotoLibrary, _ filter: GalleryFilter, limit: Int) throws {
    let reference = try referenceOrder(library, filter)
    let all = try pages(library, filter, limit: limit)
    var seen: [(title: String, id: Int64)] = []
    for (number, page) in all.enumerated() {
        let start = seen.count
        let expectedContinues =
            start > 0 && start < reference.count && reference[start - 1].title == reference[start].title
        #expect(page.firstContinues == expectedContinues, "page \(number) of \(filter) by \(limit)")
        #expect(page.matching == reference.count)
        for section in page.sections { for p in section.photos { seen.append((section.title, p.id)) } }
        #expect(seen.count - start <= limit)
        #expect((page.next == nil) == (number == all.count - 1))
        // Sections within a page never repeat a title next to each other.
        for (a, b) in zip(page.sections, page.sections.dropFirst()) { #expect(a.title != b.title) }
    }
    #expect(seen.map(\.id) == reference.map(\.photo.id), "order of \(filter) by \(limit)")
    #expect(seen.map(\.title) == reference.map(\.title), "titles of \(filter) by \(limit)")
    #expect(Set(seen.map(\.id)).count == seen.count, "no repeats")
}

@Suite("The gallery's pages and neighbours from the index (issue 45)", .tags(.unit))
struct GalleryPagingTests {
    @Test(
        "1,200 photos by day: every filter's pages together are the whole order, sections and their continuation intact",
        .tags(.slow))
    func pagesByDay() throws {
        let f = Fixture()
        try fill(f.library, count: 1200, folders: false)
        let filters = [
            GalleryFilter(), GalleryFilter(sender: "Bob"), GalleryFilter(minRating: 3),
            GalleryFilter(sender: "Carol's tablet", minRating: 4),
            GalleryFilter(minRating: 0), GalleryFilter(sender: "nobody"),
        ]
        for filter in filters {
            for limit in [1, 37, 500, 5000] { try checkPaging(f.library, filter, limit: limit) }
        }
        let first = try f.library.galleryPage(GalleryFilter(), after: nil, limit: 10)
        #expect(first.total == 1200)
        #expect(first.senders == ["Alice's phone", "Bob", "Carol's tablet"])
        #expect(first.sections.allSatisfy { $0.title.utf8.count == 10 }, "titled by day")
    }

    @Test("1,100 photos in folders and the top folder: pages by folder, the folder with the newest photo first")
    func pagesByFolder() throws {
        let f = Fixture()
        try fill(f.library, count: 1100, folders: true)
        for filter in [
            GalleryFilter(), GalleryFilter(sender: "Alice's phone"), GalleryFilter(minRating: 5),
            GalleryFilter(sender: "Bob", minRating: 2),
        ] {
            for limit in [1, 64, 333, 2000] { try checkPaging(f.library, filter, limit: limit) }
        }
        let titles = try f.library.galleryPage(GalleryFilter(), after: nil, limit: 2000).sections.map(\.title)
        #expect(Set(titles) == ["(top folder)", "a/", "a/b/", "zeta/", "Émile/"])
    }

    @Test("one day only: one untitled section; a photo in a folder turns the sections into folders")
    func oneDayAndFirstFolder() throws {
        let f = Fixture()
        let day = WallTime(milliseconds: 1_764_000_000_000)
        try f.library.record(
            (0..<5).map {
                Arrival(
                    name: "p\($0).png", size: 1, sha256: "",
                    received: WallTime(milliseconds: day.milliseconds + Int64($0)),
                    senderName: "Bob", senderAddress: "x", senderID: nil)
            })
        let page = try f.library.galleryPage(GalleryFilter(), after: nil, limit: 3)
        #expect(page.sections.map(\.title) == [""])
        #expect(page.sections[0].photos.map(\.name) == ["p4.png", "p3.png", "p2.png"])
        let second = try f.library.galleryPage(GalleryFilter(), after: page.next, limit: 3)
        #expect(second.firstContinues && second.sections.map(\.title) == [""] && second.next == nil)
        #expect(second.sections[0].photos.map(\.name) == ["p1.png", "p0.png"])
        try f.library.record([
            Arrival(
                name: "x/q.png", size: 1, sha256: "", received: day, senderName: "Bob", senderAddress: "x",
                senderID: nil)
        ])
        let folders = try f.library.galleryPage(GalleryFilter(), after: nil, limit: 10)
        #expect(folders.sections.map(\.title) == ["(top folder)", "x/"])
        // A filter that leaves out the photo in a folder sections by day again.
        try f.library.database.execute("UPDATE photos SET rating = 4 WHERE folder = ''")
        #expect(
            try f.library.galleryPage(GalleryFilter(minRating: 4), after: nil, limit: 10).sections.map(\.title) == [""])
        let empty = try f.library.galleryPage(GalleryFilter(sender: "nobody"), after: nil, limit: 10)
        #expect(empty.sections.isEmpty && empty.next == nil && empty.matching == 0 && empty.total == 6)
    }

    @Test("a garbage, hostile or stale cursor gives the first page, never an error")
    func badCursorsGivePageOne() throws {
        let f = Fixture()
        try fill(f.library, count: 300, folders: true)
        let first = try f.library.galleryPage(GalleryFilter(), after: nil, limit: 20)
        let firstIDs = first.sections.flatMap { $0.photos.map(\.id) }
        let maxID = try f.library.lastID()
        for token in [
            "x", "0", "d", "f.1", "d.1.2.3.4", "d.a.b.c", "f..1.2", "f.\(maxID).0.999999", "d.\(maxID).0.5", "f.-5.0.5",
            "f.99999999999999999999.0.1", "z.\(maxID).0.1", "f.3.0.7", String(repeating: "9", count: 200),
            // The whole key: a day where the library has folders, a bad day, bad base64url,
            // a folder not UTF-8, an id above the bound, parts too many or too few.
            "d.\(maxID).0.5.2025-01-01", "d.\(maxID).0.5.2025-1-01", "d.\(maxID).0.5.2025x01-01",
            "f.\(maxID).0.5.0.0.A",
            "f.\(maxID).0.5.0.0.YR", "f.\(maxID).0.5.0.0._w", "f.\(maxID).0.5.0.0", "f.\(maxID).0.5.0.0.YS8.x",
            "f.5.0.6.0.0.YS8",
            String(repeating: "9", count: 2_000),
        ] {
            let cursor = try #require(GalleryCursor(token: token), "\(token) is URL-safe")
            let page = try f.library.galleryPage(GalleryFilter(), after: cursor, limit: 20)
            #expect(page.sections.flatMap { $0.photos.map(\.id) } == firstIDs, "\(token)")
            #expect(!page.firstContinues)
        }
        #expect(GalleryCursor(token: String(repeating: "9", count: 2_001)) == nil)
        // A folder cursor where no folder remains, the library sectioned by day now: page one.
        let next = try #require(first.next)
        try f.library.database.execute("UPDATE photos SET name = replace(name, '/', '_')")
        let byDay = try f.library.galleryPage(GalleryFilter(), after: nil, limit: 20)
        let after = try f.library.galleryPage(GalleryFilter(), after: next, limit: 20)
        #expect(
            after.sections.flatMap { $0.photos.map(\.id) } == byDay.sections.flatMap { $0.photos.map(\.id) }
                && !after.firstContinues)
        #expect(GalleryCursor(token: "a/b") == nil && GalleryCursor(token: "") == nil)
        #expect(try f.library.galleryPage(GalleryFilter(), after: nil, limit: 0).sections.isEmpty)
    }

    @Test(
        "the cursor's photo deleted, moved or retaken between pages (or its whole folder deleted): no repeats, no gaps")
    func cursorPhotoChangedBetweenPages() throws {
        for folders in [false, true] {
            for change in ["delete", "move", "folder"] where folders || change != "folder" {
                let f = Fixture()
                try fill(f.library, count: 300, folders: folders)
                let reference = try referenceOrder(f.library, GalleryFilter())
                let before = reference.map(\.photo.id)
                var shown: [Int64] = []
                var moved: Set<Int64> = []
                var gone: Set<Int64> = []
                var cursor: GalleryCursor? = nil
                var round = 0
                repeat {
                    let page = try f.library.galleryPage(GalleryFilter(), after: cursor, limit: 23)
                    let ids = page.sections.flatMap { $0.photos.map(\.id) }
                    // A page that starts in the section the last one ended in says so.
                    if let last = shown.last, let firstID = ids.first, !moved.contains(last), !moved.contains(firstID),
                        !gone.contains(firstID)
                    {
                        let title = { (id: Int64) in reference.first { $0.photo.id == id }?.title }
                        #expect(
                            page.firstContinues == (title(last) == title(firstID)),
                            "\(change) folders: \(folders) round \(round)")
                    }
                    shown += ids
                    cursor = page.next
                    round += 1
                    guard let last = ids.last, round < 100 else { break }
                    switch change {
                    case "delete":
                        try f.library.database.execute("DELETE FROM photos WHERE id = \(last)")
                        gone.insert(last)
                    case "move" where folders:
                        // To a folder of its own, or to another folder already there.
                        let to = round % 2 == 0 ? "moved\(last)/" : "zeta/"
                        try f.library.database.execute(
                            "UPDATE photos SET name = '\(to)m\(last).png' WHERE id = \(last)")
                        moved.insert(last)
                    case "move":
                        // Taken on a day long before, or long after.
                        let day = round % 2 == 0 ? "2020-01-01" : "2030-01-01"
                        try f.library.database.execute("UPDATE photos SET taken = '\(day)T10:00:00' WHERE id = \(last)")
                        moved.insert(last)
                    default:
                        // The whole folder of the cursor's photo, shown or not.
                        let folder = try #require(
                            try f.library.database.firstText("SELECT folder FROM photos WHERE id = \(last)"))
                        let s = try f.library.database.prepare("SELECT id FROM photos WHERE folder = ?").bind(folder)
                        while try s.step() { gone.insert(s.int(0)!) }
                        try f.library.database.prepare("DELETE FROM photos WHERE folder = ?").bind(folder).run()
                    }
                } while cursor != nil
                let unshownGone = gone.subtracting(shown)
                #expect(
                    shown.filter { !moved.contains($0) }
                        == before.filter { !moved.contains($0) && !unshownGone.contains($0) },
                    "\(change) folders: \(folders)")
                #expect(Set(shown).count == shown.count || !moved.isEmpty, "\(change) folders: \(folders)")
            }
        }
    }

    @Test("photos that arrive between pages repeat none already shown and leave none out")
    func arrivalsBetweenPages() throws {
        for folders in [false, true] {
            let f = Fixture()
            try fill(f.library, count: 400, folders: folders)
            let before = try referenceOrder(f.library, GalleryFilter()).map(\.photo.id)
            var shown: [Int64] = []
            var cursor: GalleryCursor? = nil
            var round = 0
            repeat {
                let page = try f.library.galleryPage(GalleryFilter(), after: cursor, limit: 45)
                shown += page.sections.flatMap { $0.photos.map(\.id) }
                cursor = page.next
                // Newer and older photos, in the folders there are and in a new one.
                round += 1
                try fill(f.library, count: 6, folders: folders, seed: UInt64(round), firstID: 10_000 + round * 10)
                try f.library.record([
                    Arrival(
                        name: "new\(round)/n.png", size: 1, sha256: "",
                        received: WallTime(milliseconds: 1_900_000_000_000),
                        senderName: "Bob", senderAddress: "x", senderID: nil)
                ])
            } while cursor != nil
            #expect(shown == before, "folders: \(folders)")
        }
    }

    @Test(
        "neighbours: the photos before and after in the gallery's order, at the ends and in the middle, under filters")
    func neighbours() throws {
        for folders in [false, true] {
            let f = Fixture()
            try fill(f.library, count: 250, folders: folders, seed: 3)
            for filter in [GalleryFilter(), GalleryFilter(sender: "Bob"), GalleryFilter(minRating: 3)] {
                let order = try referenceOrder(f.library, filter).map(\.photo)
                for i in order.indices {
                    let (previous, next) = try f.library.neighbours(of: order[i].id, filter)
                    #expect(
                        previous?.id == (i > 0 ? order[i - 1].id : nil),
                        "\(filter) at \(i) of \(order.count), folders: \(folders)")
                    #expect(
                        next?.id == (i + 1 < order.count ? order[i + 1].id : nil),
                        "\(filter) at \(i) of \(order.count), folders: \(folders)")
                }
                let shown = Set(order.map(\.id))
                if let left = try f.library.all().first(where: { !shown.contains($0.id) }) {
                    let none = try f.library.neighbours(of: left.id, filter)
                    #expect(none.previous == nil && none.next == nil, "a photo the filter leaves out has no neighbours")
                }
            }
            let unknown = try f.library.neighbours(of: 999_999, GalleryFilter())
            #expect(unknown.previous == nil && unknown.next == nil)
        }
    }

    @Test(
        "a library of schema 4 gets the gallery's columns and indices when opened; one set back to 4 after keeps them")
    func migrationFromSchema4() throws {
        let f = Fixture()
        try fill(f.library, count: 40, folders: true)
        try f.library.database.execute(
            """
            DROP INDEX photos_gallery_day; DROP INDEX photos_gallery_folder; DROP INDEX photos_gallery_sender_day;
            DROP INDEX photos_gallery_sender_folder; DROP INDEX photos_rating;
            ALTER TABLE photos DROP COLUMN day; ALTER TABLE photos DROP COLUMN folder; PRAGMA user_version = 4;
            """)
        for _ in 0..<2 {
            let reopened = try PhotoLibrary(directory: f.directory, create: false)
            #expect(try reopened.database.firstInt("PRAGMA user_version") == PhotoLibrary.schemaVersion)
            #expect(
                try reopened.database.firstInt(
                    "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name LIKE 'photos_gallery_%'") == 4)
            try checkPaging(reopened, GalleryFilter(), limit: 7)
            try reopened.database.execute("PRAGMA user_version = 4")
        }
    }
}
