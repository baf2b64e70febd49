import PTKSystem
import PTKTestSupport
import PTKTestTags
import Testing

@testable import PTKLibrary

/// Live Photos (issue 58): which still and which video the library pairs (`LivePhotos`), as the
/// rows say it, and what pairing does to the gallery's pages and counts. The files' own
/// identifiers are read end to end in LivePhotoEndToEndTests.
@Suite(.tags(.unit)) struct LivePhotoTests {
    /// A row: name ("bob:NAME" for one of bob's), content identifier, taken (ms), modified (ms).
    typealias Row = (name: String, id: String?, taken: Int64?, mtime: Int64?)

    /// A library holding `rows` (index only, no files), ids from 1 in order, each from alice
    /// (her device ID "ALICE"), or from the sender its name starts with ("bob:NAME").
    static func library(_ rows: [Row]) throws -> Fixture {
        let f = Fixture()
        let insert = try f.library.database.prepare(
            """
            INSERT INTO photos(id, name, size, received, indexed, live_id, taken_ms, mtime, sender_name, sender_id)
                VALUES (?, ?, 1, ?, 1, ?, ?, ?, ?, ?)
            """)
        for (i, r) in rows.enumerated() {
            let parts = r.name.split(separator: ":", maxSplits: 1).map(String.init)
            let (from, name) = parts.count == 2 ? (parts[0], parts[1]) : ("alice", r.name)
            try insert.bind(
                Int64(i + 1), name, Int64(1_764_000_000_000 + i), r.id, r.taken, r.mtime, from, from.uppercased()
            ).run()
        }
        return f
    }

    /// name → (its motion's name, its still's name), as the photo SELECT derives them.
    static func pairs(_ f: Fixture) throws -> [String: String] {
        let photos = try f.library.all(sort: .name)
        let names = Dictionary(uniqueKeysWithValues: photos.map { ($0.id, $0.name) })
        var out: [String: String] = [:]
        for p in photos {
            if let m = p.motionID { out[p.name] = "motion " + names[m]! }
            if let s = p.stillID { out[p.name] = "still " + names[s]! }
        }
        return out
    }

    static let uuid = "1F6A2C4E-0B3D-4E5F-8A9B-C0D1E2F3A4B5"
    static let other = "00000000-0000-4000-8000-000000000000"
    static let t: Int64 = 1_714_564_800_000

    @Test(
        "one identifier pairs a HEIC or JPEG with a MOV or MP4, in any folder; the still shows the motion and the motion its still"
    )
    func byIdentifier() throws {
        let f = try Self.library([
            ("IMG_0042.HEIC", Self.uuid, nil, nil), ("a/clip.mov", Self.uuid, nil, nil),
            ("b/IMG_0043.JPG", Self.other, nil, nil), ("b/x.mp4", Self.other, nil, nil),
            ("lone.heic", "FFFF", nil, nil), ("lone.mov", "EEEE", nil, nil),
            ("icon.png", Self.uuid, nil, nil),
        ])
        #expect(
            try Self.pairs(f) == [
                "IMG_0042.HEIC": "motion a/clip.mov", "a/clip.mov": "still IMG_0042.HEIC",
                "b/IMG_0043.JPG": "motion b/x.mp4", "b/x.mp4": "still b/IMG_0043.JPG",
            ])
    }

    @Test(
        "without an identifier: the same name (its stem's case counts) in the same folder (a MOV, not an MP4), both taken within 5 s; a modification time does not pair"
    )
    func byName() throws {
        let t = Self.t
        let f = try Self.library([
            ("a/IMG_1.HEIC", nil, t, nil), ("a/IMG_1.mov", nil, t - 1500, nil),  // taken 1.5 s apart
            ("a/IMG_2.JPEG", nil, nil, t), ("a/IMG_2.MOV", nil, t + 9000, t),  // the same mtime, one taken time
            ("a/IMG_3.HEIC", nil, t, t), ("a/IMG_3.MOV", nil, t + 6000, t),  // 6 s apart: two items
            ("a/IMG_4.HEIC", nil, t, t), ("b/IMG_4.MOV", nil, t, t),  // other folders
            ("a/IMG_5.JPG", nil, t, t), ("a/IMG_5.MP4", nil, t, t),  // an MP4 pairs by identifier only
            ("a/IMG_6.HEIC", nil, nil, t), ("a/IMG_6.MOV", nil, nil, t),  // no time taken to go by
            ("a/IMG_7.HEIC", Self.uuid, t, t), ("a/IMG_7.MOV", nil, t, t),  // one identifier: the name decides
            ("a/IMG_8.HEIC", Self.uuid, t, t), ("a/IMG_8.MOV", Self.other, t, t),  // two that differ: no pair
            ("a/IMG_9.HEIC", nil, t, t), ("a/img_9.MOV", nil, t, t),  // the stem's case differs
        ])
        #expect(
            try Self.pairs(f) == [
                "a/IMG_1.HEIC": "motion a/IMG_1.mov", "a/IMG_1.mov": "still a/IMG_1.HEIC",
                "a/IMG_7.HEIC": "motion a/IMG_7.MOV", "a/IMG_7.MOV": "still a/IMG_7.HEIC",
            ])
    }

    @Test(
        "one sender's files never pair with another's, by identifier or by name: none hides or takes along another's video; each sender's copy of one Live Photo pairs with its own"
    )
    func bySender() throws {
        let t = Self.t
        let f = try Self.library([
            ("alice:IMG_0002.MOV", nil, t, t), ("bob:IMG_0002.jpg", nil, t, t),
            ("alice:alice/IMG_0100.MOV", Self.uuid, nil, nil), ("bob:bob/IMG_0100.MOV", Self.uuid, nil, nil),
            ("bob:bob/IMG_0100.JPG", Self.uuid, nil, nil), ("alice:alice/IMG_0100.JPG", Self.uuid, nil, nil),
        ])
        #expect(
            try Self.pairs(f) == [
                "bob/IMG_0100.JPG": "motion bob/IMG_0100.MOV", "bob/IMG_0100.MOV": "still bob/IMG_0100.JPG",
                "alice/IMG_0100.JPG": "motion alice/IMG_0100.MOV", "alice/IMG_0100.MOV": "still alice/IMG_0100.JPG",
            ])
        let bob = try f.library.galleryPage(GalleryFilter(sender: "bob"), after: nil, limit: 10)
        #expect(Set(bob.sections.flatMap(\.photos).map(\.name)) == ["bob/IMG_0100.JPG", "IMG_0002.jpg"])
        let alice = try f.library.galleryPage(GalleryFilter(sender: "alice"), after: nil, limit: 10)
        #expect(Set(alice.sections.flatMap(\.photos).map(\.name)) == ["alice/IMG_0100.JPG", "IMG_0002.MOV"])
        #expect(alice.matching == 2 && alice.total == 4)
    }

    @Test(
        "every lookup of the pairing is an index probe: the photo SELECT and the gallery's count of motions scan no table and sort nothing"
    )
    func indexProbes() throws {
        let f = try Self.library([("IMG_1.HEIC", Self.uuid, nil, nil), ("IMG_1.MOV", Self.uuid, nil, nil)])
        for sql in [
            "SELECT \(PhotoLibrary.columns) FROM photos WHERE id = 1",
            "SELECT count(*) FROM photos WHERE live_role = 2 AND NOT \(LivePhotos.notMotion)",
        ] {
            let s = try f.library.database.prepare("EXPLAIN QUERY PLAN " + sql).bind()
            var plan: [String] = []
            while try s.step() { plan.append(s.text(3) ?? "") }
            let scans = plan.filter { $0.hasPrefix("SCAN") || $0.contains("TEMP B-TREE") }
            #expect(scans.isEmpty, "\(plan.joined(separator: "\n"))")
            #expect(
                plan.contains { $0.contains("photos_live_id") } && plan.contains { $0.contains("photos_live_name") },
                "\(plan.joined(separator: "\n"))")
        }
    }

    @Test(
        "two videos with one still's identifier: the first is its motion, the second stays an item; two stills share one motion"
    )
    func manyToOne() throws {
        let f = try Self.library([
            ("IMG_1.HEIC", Self.uuid, nil, nil), ("IMG_1.MOV", Self.uuid, nil, nil), ("copy.mp4", Self.uuid, nil, nil),
            ("IMG_2.HEIC", Self.other, nil, nil), ("IMG_2.JPG", Self.other, nil, nil),
            ("IMG_2.MOV", Self.other, nil, nil),
        ])
        #expect(
            try Self.pairs(f) == [
                "IMG_1.HEIC": "motion IMG_1.MOV", "IMG_1.MOV": "still IMG_1.HEIC",
                "IMG_2.HEIC": "motion IMG_2.MOV", "IMG_2.JPG": "motion IMG_2.MOV", "IMG_2.MOV": "still IMG_2.HEIC",
            ])
        let page = try f.library.galleryPage(GalleryFilter(), after: nil, limit: 100)
        #expect(
            Set(page.sections.flatMap(\.photos).map(\.name)) == ["IMG_1.HEIC", "copy.mp4", "IMG_2.HEIC", "IMG_2.JPG"])
        #expect(page.total == 4 && page.matching == 4, "a motion is not counted as an item")
    }

    @Test(
        "the gallery leaves a motion out of its pages, counts and neighbours; renamed or with its still removed, it is an item again"
    )
    func galleryAndEdits() throws {
        let f = Fixture()
        for (i, name) in ["IMG_0042.HEIC", "IMG_0042.MOV", "beach.png"].enumerated() {
            writeFile(f.directory + "/" + name, [UInt8(i)])
        }
        try f.library.database.execute(
            """
            INSERT INTO photos(id, name, size, received, indexed, live_id) VALUES
                (1, 'IMG_0042.HEIC', 1, 1764000000000, 1, '\(Self.uuid)'),
                (2, 'IMG_0042.MOV', 1, 1764000000001, 1, '\(Self.uuid)'),
                (3, 'beach.png', 1, 1764000000002, 1, NULL);
            """)
        var page = try f.library.galleryPage(GalleryFilter(), after: nil, limit: 1)
        #expect(page.sections.flatMap(\.photos).map(\.name) == ["beach.png"])
        page = try f.library.galleryPage(GalleryFilter(), after: page.next, limit: 1)
        #expect(page.sections.flatMap(\.photos).map(\.name) == ["IMG_0042.HEIC"])
        #expect(page.next == nil && page.matching == 2 && page.total == 2)
        #expect(page.sections[0].photos[0].motionID == 2)
        let around = try f.library.neighbours(of: 3, GalleryFilter())
        #expect(around.next?.name == "IMG_0042.HEIC", "the viewer steps over the motion")
        _ = try f.library.rename("IMG_0042.MOV", to: "other.mov")
        #expect(try f.library.galleryPage(GalleryFilter(), after: nil, limit: 10).matching == 2, "by identifier still")
        try f.library.database.execute("UPDATE photos SET live_id = NULL WHERE id = 2")
        #expect(try f.library.galleryPage(GalleryFilter(), after: nil, limit: 10).matching == 3)
        try f.library.database.execute("UPDATE photos SET live_id = '\(Self.uuid)' WHERE id = 2")
        _ = try f.library.remove("IMG_0042.HEIC")
        let last = try f.library.galleryPage(GalleryFilter(), after: nil, limit: 10)
        #expect(Set(last.sections.flatMap(\.photos).map(\.name)) == ["beach.png", "other.mov"])
        #expect(try f.library.find("other.mov").stillID == nil)
    }

    @Test(
        "a still's video that cannot be removed (a folder in its place) is said beside the still removed, not lost in an error; a video shown by another still too stays, and is said to"
    )
    func removals() throws {
        let f = Fixture()
        for name in ["IMG_1.HEIC", "IMG_2.HEIC", "IMG_2.JPG", "IMG_2.MOV"] { writeFile(f.directory + "/" + name, [1]) }
        try makeNewDirectory(f.directory + "/IMG_1.MOV", mode: 0o755)
        try f.library.database.execute(
            """
            INSERT INTO photos(id, name, size, received, indexed, live_id) VALUES
                (1, 'IMG_1.HEIC', 1, 0, 1, '\(Self.uuid)'), (2, 'IMG_1.MOV', 1, 0, 1, '\(Self.uuid)'),
                (3, 'IMG_2.HEIC', 1, 0, 1, '\(Self.other)'), (4, 'IMG_2.JPG', 1, 0, 1, '\(Self.other)'),
                (5, 'IMG_2.MOV', 1, 0, 1, '\(Self.other)');
            """)
        let one = try f.library.removeLivePhoto("IMG_1.HEIC")
        #expect(one.removed.map(\.name) == ["IMG_1.HEIC"])
        #expect(one.motionFailure?.motion.name == "IMG_1.MOV", "\(String(describing: one.motionFailure))")
        #expect(one.motionFailure.map { "\($0.error)".contains("IMG_1.MOV") } == true)
        let two = try f.library.removeLivePhoto("IMG_2.HEIC")
        #expect(two.removed.map(\.name) == ["IMG_2.HEIC"] && two.motionFailure == nil)
        #expect(two.keptMotion?.name == "IMG_2.MOV" && two.keptFor?.name == "IMG_2.JPG")
        let three = try f.library.removeLivePhoto("IMG_2.JPG")
        #expect(three.removed.map(\.name) == ["IMG_2.JPG", "IMG_2.MOV"] && three.keptMotion == nil)
        #expect(listDirectory(f.directory).filter { !$0.hasPrefix(".") }.sorted() == ["IMG_1.MOV"])
    }

    @Test("a content identifier is 1 to 64 letters, digits and dashes, kept in upper case; anything else is none")
    func identifiers() {
        #expect(LivePhotos.contentID("1f6a2c4e-0b3d-4e5f-8a9b-c0d1e2f3a4b5") == "1F6A2C4E-0B3D-4E5F-8A9B-C0D1E2F3A4B5")
        #expect(LivePhotos.contentID(String(repeating: "A", count: 64)) == String(repeating: "A", count: 64))
        for bad in [nil, "", String(repeating: "A", count: 65), "a b", "a'b", "x\u{1B}[31m", "é", "a_b", "a/b", "%"] {
            #expect(LivePhotos.contentID(bad) == nil, "\(String(describing: bad))")
        }
    }

    @Test(
        "schema 10: an index of schema 9 gains the Live Photo keys; its videos and Apple's stills are indexed again, nothing else"
    )
    func migrationFromSchema9() throws {
        let f = Fixture()
        try f.library.database.execute(
            PhotoColumnsTests.dropLive + """
                INSERT INTO photos(id, name, size, received, indexed, camera_make) VALUES
                    (1, 'IMG_1.HEIC', 1, 0, 1, 'Apple'), (2, 'IMG_1.MOV', 1, 0, 1, NULL), (3, 'DSC_1.JPG', 1, 0, 1, 'NIKON'),
                    (4, 'IMG_2.jpeg', 1, 0, 1, 'Apple'), (5, 'shot.png', 1, 0, 1, 'Apple'), (6, 'VID.mp4', 1, 0, 1, NULL),
                    (7, 'IMG_3.HEIC', 1, 0, 0, 'Apple');
                PRAGMA user_version = 9;
                """)
        let reopened = try PhotoLibrary(directory: f.directory, create: false)
        #expect(try PhotoColumnsTests.tableInfo(reopened) == PhotoColumnsTests.schema6)
        #expect(try PhotoColumnsTests.indices(reopened) == PhotoColumnsTests.indices(Fixture().library))
        let indexed = Dictionary(uniqueKeysWithValues: try reopened.all(sort: .name).map { ($0.name, $0.indexed) })
        #expect(
            indexed == [
                "IMG_1.HEIC": false, "IMG_1.MOV": false, "DSC_1.JPG": true, "IMG_2.jpeg": false, "shot.png": true,
                "VID.mp4": false, "IMG_3.HEIC": false,
            ])
        #expect(
            try reopened.database.firstInt(
                "SELECT count(*) FROM photos WHERE live_name = 'IMG_1.' AND live_role IN (1, 2)")
                == 2)
    }
}
