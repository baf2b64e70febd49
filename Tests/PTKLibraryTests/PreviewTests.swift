import Foundation
import Glibc
import PTKDigest
import PTKPhotoPages
import PTKSystem
import PTKTestSupport
import PTKTestTags
import PTKVocabulary
import Testing

@testable import PTKLibrary

/// The width and height of a PNG (IHDR) or a JPEG (its first SOF marker); nil for anything else.
func renditionSize(_ bytes: [UInt8]) -> [Int]? {
    if bytes.count >= 24, bytes.starts(with: [0x89, 0x50, 0x4E, 0x47]) {
        return [
            Int(bytes[16]) << 24 | Int(bytes[17]) << 16 | Int(bytes[18]) << 8 | Int(bytes[19]),
            Int(bytes[20]) << 24 | Int(bytes[21]) << 16 | Int(bytes[22]) << 8 | Int(bytes[23]),
        ]
    }
    guard bytes.count > 4, bytes[0] == 0xFF, bytes[1] == 0xD8 else { return nil }
    var i = 2
    while i + 9 < bytes.count {
        guard bytes[i] == 0xFF else { return nil }
        let marker = bytes[i + 1]
        if marker == 0xFF {
            i += 1
            continue
        }
        let length = Int(bytes[i + 2]) << 8 | Int(bytes[i + 3])
        if (0xC0...0xCF).contains(marker) && marker != 0xC4 && marker != 0xC8 && marker != 0xCC {
            return [Int(bytes[i + 7]) << 8 | Int(bytes[i + 8]), Int(bytes[i + 5]) << 8 | Int(bytes[i + 6])]
        }
        i += 2 + length
    }
    return nil
}

/// The format the bytes are in (PNG or JPEG by their signature).
func renditionType(_ bytes: [UInt8]) -> PhotoType? {
    if bytes.starts(with: [0x89, 0x50, 0x4E, 0x47]) { return .png }
    if bytes.starts(with: [0xFF, 0xD8, 0xFF]) { return .jpeg }
    return nil
}

/// Makes an index of `library` look as schema 4 left it (or `version`, with the columns of
/// schema 3 kept): no preview columns (schema 5), no `folder`/`day` columns nor the gallery's
/// and the rating's indices (schema 6), thumbnails recorded as the 256-pixel `<id>.png`
/// (column value 1, a PNG fitted within 256 pixels there, the new ones gone).
func downgradeToSchema4(_ library: PhotoLibrary, version: Int = 4) throws {
    for p in try library.all() where p.hasThumbnail {
        for side in Thumbnailer.gallerySides {
            unlink(library.thumbnailFolder + "/" + p.thumbnailFileName(side: side)!)
        }
        let size = Photo.fitted(p.displayedSize, within: Thumbnailer.maxSide) ?? (40, 30)
        writeFile(
            library.thumbnailFolder + "/\(p.id).png",
            photoBytes(Int(p.id) + 100, width: size.width, height: size.height))
    }
    try library.database.execute(
        """
        DROP INDEX IF EXISTS photos_preview_pending;
        DROP INDEX IF EXISTS photos_gallery_day;
        DROP INDEX IF EXISTS photos_gallery_folder;
        DROP INDEX IF EXISTS photos_gallery_sender_day;
        DROP INDEX IF EXISTS photos_gallery_sender_folder;
        DROP INDEX IF EXISTS photos_rating;
        ALTER TABLE photos DROP COLUMN day;
        ALTER TABLE photos DROP COLUMN folder;
        ALTER TABLE photos DROP COLUMN preview;
        ALTER TABLE photos DROP COLUMN preview_problem;
        UPDATE photos SET thumbnail = 1 WHERE thumbnail <> 0;
        PRAGMA user_version = \(version);
        """)
}

/// One round of previews of the photos waiting for one (a photo that is to be tried later stays waiting).
func makeAllPreviewsOnce(_ library: PhotoLibrary) throws -> [PhotoLibrary.PreviewOutcome] {
    try library.makePreviews(ids: try library.pendingPreviews(limit: 100)).map(\.outcome)
}

/// Makes the previews of every photo waiting for one, as the indexer does.
@discardableResult
func makeAllPreviews(_ library: PhotoLibrary) throws -> [PhotoLibrary.PreviewOutcome] {
    var all: [PhotoLibrary.PreviewOutcome] = []
    while case let ids = try library.pendingPreviews(limit: 2), !ids.isEmpty {
        all += try library.makePreviews(ids: ids).map(\.outcome)
    }
    return all
}

@Suite(.tags(.unit)) struct GalleryThumbnailTests {
    @Test(
        "indexing writes both gallery sides in the format the thumbnailer made, read back through thumbnail(of:side:)")
    func bothSides() throws {
        let f = Fixture()
        let photo = try f.receive("wide.png", photoBytes(1, width: 600, height: 300))
        let type = try #require(photo.thumbnailType)
        #expect(photo.hasThumbnail)
        let ending = type == .png ? "png" : "jpg"
        #expect(
            Set(listDirectory(f.library.thumbnailFolder)) == ["\(photo.id)-180.\(ending)", "\(photo.id)-360.\(ending)"])
        for (side, size) in [(180, [180, 90]), (360, [360, 180])] {
            let r = try #require(try f.library.thumbnail(of: photo, side: side))
            #expect(r.type == type && renditionType(r.bytes) == type, "\(side)")
            #expect(renditionSize(r.bytes) == size, "\(side)")
            #expect([r.width, r.height] == size, "\(side): computed from the photo's size")
            #expect(readFile(f.library.thumbnailFolder + "/\(photo.id)-\(side).\(ending)") == r.bytes)
        }
        #expect(try f.library.thumbnail(of: photo, side: 256) == nil, "no such side")
        #expect(
            try f.library.thumbnail(of: photo) == f.library.thumbnail(of: photo, side: 360)?.bytes,
            "ptk thumbnail gives the largest")
        // The index says the format: read again from the row.
        #expect(try f.library.photo(id: photo.id)?.thumbnailType == type)
    }

    @Test("a photo with transparency gets PNG thumbnails")
    func alphaGetsPNG() throws {
        let f = Fixture()
        let bytes = makeImagePNG(width: 64, height: 48, alpha: true) { x, y in
            [UInt8(x * 3), UInt8(y * 5), 90, UInt8(x * 4)]
        }
        let photo = try f.receive("glass.png", bytes)
        #expect(photo.thumbnailType == .png)
        #expect(photo.hasAlpha == true, "the gallery's checkerboard goes behind it")
        for side in Thumbnailer.gallerySides {
            let r = try #require(try f.library.thumbnail(of: photo, side: side))
            #expect(renditionType(r.bytes) == .png && hasAlpha(r.bytes))
            #expect(fileExists(f.library.thumbnailFolder + "/\(photo.id)-\(side).png"))
        }
    }

    @Test(
        "the index says which photos have transparent pixels: an opaque small PNG has PNG thumbnails and no alpha, a large one JPEG ones (issue 58)"
    )
    func alphaIsRecorded() throws {
        let f = Fixture()
        let icon = try f.receive("icon.png", paletteIconPNG().png)
        #expect(icon.thumbnailType == .png && icon.hasAlpha == false)
        let large = try f.receive("wide.png", photoBytes(1, width: 600, height: 300))
        #expect(large.thumbnailType == .jpeg && large.hasAlpha == false)
        #expect(try f.library.database.firstInt("SELECT count(*) FROM photos WHERE alpha = 0") == 2)
    }

    @Test(
        "the sweep removes old <id>.png thumbnails, renditions and previews without an entry or of another format, and dead writers' files"
    )
    func sweep() throws {
        let f = Fixture()
        let photo = try f.receive("p.png", photoBytes(1))  // small: needs no preview
        #expect(photo.preview == .notNeeded)
        let thumbnails = f.library.thumbnailFolder
        let previews = f.library.previewFolder
        let other = photo.thumbnailType == .png ? "jpg" : "png"
        let kept = Set(listDirectory(thumbnails))
        writeFile(thumbnails + "/\(photo.id).png", [1])  // schema 4's
        writeFile(thumbnails + "/\(photo.id)-360.\(other)", [2])  // another format than the entry's
        writeFile(thumbnails + "/\(photo.id + 7)-180.jpg", [3])  // no entry
        writeFile(thumbnails + "/\(photo.id + 1)-360.jpg.tmp.2147483647", [4])  // a process that cannot exist
        writeFile(thumbnails + "/\(photo.id + 1)-360.jpg.tmp.\(getpid())", [5])  // ours: still being written
        writeFile(thumbnails + "/notes.txt", [6])  // not ours to judge
        writeFile(previews + "/\(photo.id).jpg", [7])  // the entry needs none
        writeFile(previews + "/\(photo.id + 7).jpg", [8])  // no entry
        writeFile(previews + "/\(photo.id + 7).jpg.tmp.2147483647", [9])
        writeFile(previews + "/README", [10])
        #expect(try f.library.sweepThumbnails() == 7)
        #expect(Set(listDirectory(thumbnails)) == kept.union(["\(photo.id + 1)-360.jpg.tmp.\(getpid())", "notes.txt"]))
        #expect(listDirectory(previews) == ["README"])
    }

    @Test(
        "an index of schema 4 keeps showing each photo's old <id>.png for both sides until it is indexed again, which replaces it; notes and ratings kept"
    )
    func migrationFromSchema4() throws {
        let f = Fixture()
        let a = try f.receive("a.png", photoBytes(1, width: 2000, height: 1000))
        // Larger than a thumbnail: JPEG thumbnails (a smaller PNG keeps PNG ones, issue 58).
        let b = try f.receive("b.png", photoBytes(2, width: 400, height: 300))
        try f.library.setNote("a", "kept")
        try f.library.setRating("b", 4)
        try downgradeToSchema4(f.library)
        let folder = f.library.thumbnailFolder
        let oldNames: Set<String> = ["\(a.id).png", "\(b.id).png"]
        #expect(Set(listDirectory(folder)) == oldNames, "as schema 4 left it")
        #expect(
            try f.library.database.firstInt(
                "SELECT count(*) FROM pragma_table_xinfo('photos') WHERE name IN ('preview', 'folder', 'day')") == 0)
        #expect(
            try f.library.database.firstInt(
                "SELECT count(*) FROM sqlite_master WHERE name LIKE 'photos_gallery_%' OR name = 'photos_rating'") == 0)
        let old = [
            a.id: try #require(readFile(folder + "/\(a.id).png")),
            b.id: try #require(readFile(folder + "/\(b.id).png")),
        ]
        #expect(renditionSize(old[a.id]!) == [256, 128])

        let reopened = try PhotoLibrary(directory: f.directory, create: false)
        #expect(try reopened.database.firstInt("PRAGMA user_version") == PhotoLibrary.schemaVersion)
        #expect(try reopened.pendingCount() == 2)
        #expect(Set(listDirectory(folder)) == oldNames, "kept when migrating: the entries still show them")
        for name in ["a", "b"] {
            let p = try reopened.find(name)
            #expect(!p.indexed && p.hasThumbnail && p.hasOldThumbnail && p.thumbnailType == .png, "\(name)")
            for side in Thumbnailer.gallerySides {
                #expect(p.thumbnailFileName(side: side) == "\(p.id).png")
                let r = try #require(try reopened.thumbnail(of: p, side: side), "\(name) \(side)")
                #expect(r.type == .png && r.bytes == old[p.id], "\(name) \(side): the old thumbnail")
            }
            #expect(try reopened.thumbnail(of: p) == old[p.id], "ptk thumbnail gives the old one")
            #expect(p.thumbnailPath == PhotoLibrary.folderName + "/thumbnails/\(p.id).png")
            let shown = p.details(thumbnailFolder: folder).first { $0.0 == "thumbnail" }?.1
            #expect(
                shown == .text("\(folder)/\(p.id).png (the old thumbnail, at most 256 pixels: being made again)"),
                "ptk show: \(String(describing: shown))")
        }
        #expect(
            try reopened.thumbnail(of: reopened.find("a"), side: 360).map { [$0.width, $0.height] } == [256, 128],
            "the old file's size")

        // ptk gallery shows the old thumbnails, and copies them beside a page outside the library.
        let (page, _) = try reopened.gallery()
        let html = String(decoding: try #require(readFile(page)), as: UTF8.self)
        #expect(
            html.contains("src=\"../thumbnails/\(a.id).png\"") && html.contains("src=\"../thumbnails/\(b.id).png\""))
        let out = f.directory + "-site"
        defer { removeTree(out) }
        _ = try reopened.gallery(to: out)
        #expect(readFile(out + "/thumbnails/\(a.id).png") == old[a.id])
        #expect(
            String(decoding: try #require(readFile(out + "/index.html")), as: UTF8.self).contains(
                "src=\"thumbnails/\(a.id).png\""))

        // A sweep at start leaves the old thumbnail of a photo not indexed again alone.
        #expect(try reopened.sweepThumbnails() == 0)
        #expect(Set(listDirectory(folder)) == oldNames)

        // Indexing writes the new thumbnails, records them, then removes the old one.
        try reopened.index(id: a.id)
        let after = try reopened.find("a")
        #expect(after.indexed && after.hasThumbnail && !after.hasOldThumbnail && after.thumbnailType == .jpeg)
        #expect(after.note == "kept" && after.preview == .pending)
        #expect(try reopened.database.firstInt("SELECT thumbnail FROM photos WHERE id = \(a.id)") == 2)
        #expect(
            Set(listDirectory(folder)) == ["\(a.id)-180.jpg", "\(a.id)-360.jpg", "\(b.id).png"],
            "a's old one gone, b's still shown")
        #expect(try reopened.thumbnail(of: after, side: 180).flatMap { renditionSize($0.bytes) } == [180, 90])
        #expect(try reopened.thumbnail(of: after, side: 360).flatMap { renditionSize($0.bytes) } == [360, 180])
        #expect(try reopened.sweepThumbnails() == 0, "b's old thumbnail is still its entry's")
        #expect(try reopened.thumbnail(of: reopened.find("b"), side: 180)?.bytes == old[b.id])

        try reopened.index(id: b.id)
        let bAfter = try reopened.find("b")
        #expect(bAfter.rating == 4 && bAfter.preview == .notNeeded && !bAfter.hasOldThumbnail)
        #expect(try reopened.database.firstInt("SELECT thumbnail FROM photos WHERE id = \(b.id)") == 2)
        #expect(
            !fileExists(folder + "/\(b.id).png") && fileExists(folder + "/\(b.id)-180.jpg")
                && fileExists(folder + "/\(b.id)-360.jpg"))
        #expect(try reopened.pendingCount() == 0)
        try makeAllPreviews(reopened)
        #expect(try reopened.find("a").preview == .made)
    }

    @Test("the sweep keeps an old <id>.png while its entry says 1, and removes it once the entry says otherwise")
    func sweepKeepsOldThumbnailsStillShown() throws {
        let f = Fixture()
        let photo = try f.receive("p.png", photoBytes(1, width: 400, height: 300))
        let folder = f.library.thumbnailFolder
        writeFile(folder + "/\(photo.id).png", [1])
        try f.library.database.execute("UPDATE photos SET thumbnail = 1 WHERE id = \(photo.id)")
        let new = Set(listDirectory(folder)).subtracting(["\(photo.id).png"])
        #expect(new == ["\(photo.id)-180.jpg", "\(photo.id)-360.jpg"])
        #expect(
            try f.library.sweepThumbnails() == 0,
            "the old one is still shown; new ones are left to the indexing that writes them")
        #expect(Set(listDirectory(folder)) == new.union(["\(photo.id).png"]))
        try f.library.database.execute("UPDATE photos SET thumbnail = 2 WHERE id = \(photo.id)")
        #expect(try f.library.sweepThumbnails() == 1)
        #expect(Set(listDirectory(folder)) == new)
    }
}

@Suite(.tags(.unit)) struct PreviewTests {
    @Test("a small PNG or JPEG needs no preview, decided when it is indexed")
    func smallNeedsNone() throws {
        let f = Fixture()
        let png = try f.receive("small.png", photoBytes(1, width: 1440, height: 900))
        let jpeg = try f.receive("small.jpg", makeJPEG(width: 1000, height: 1440))
        for p in [png, jpeg] {
            #expect(p.preview == .notNeeded, "\(p.name)")
            #expect(try f.library.preview(of: p) == nil)
            #expect(PhotoMetadata(p).preview == nil && PhotoMetadata(p).thumbnail != nil)
        }
        #expect(try f.library.pendingPreviews(limit: 10).isEmpty)
        #expect(listDirectory(f.library.previewFolder).isEmpty)
    }

    @Test("a photo larger than 1440 pixels and a HEIC get a preview, after their thumbnails")
    func largeAndHEIC() throws {
        let f = Fixture()
        let large = try f.receive("large.png", photoBytes(3, width: 1600, height: 1000))
        let heic = try f.receive("phone.heic", try #require(readFile(fixturePath("heif/portrait-exif.heic"))))
        #expect(large.hasThumbnail && heic.hasThumbnail, "thumbnails first")
        #expect(large.preview == .pending && heic.preview == .pending)
        #expect(try f.library.preview(of: large) == nil)
        #expect(try f.library.pendingPreviews(limit: 10) == [large.id, heic.id])
        #expect(try makeAllPreviews(f.library) == [.made(name: "large.png"), .made(name: "phone.heic")])
        #expect(try f.library.pendingPreviews(limit: 10).isEmpty)
        for name in ["large", "phone"] {
            let p = try f.library.find(name)
            let type = try #require(p.previewType)
            #expect(p.preview == .made)
            let bytes = try #require(try f.library.preview(of: p))
            #expect(renditionType(bytes) == type)
            let size = try #require(renditionSize(bytes))
            #expect(size.max()! <= Thumbnailer.previewSide)
            if name == "large" { #expect(size == [1440, 900]) }
            #expect(readFile(f.library.previewFolder + "/\(p.id).\(type == .png ? "png" : "jpg")") == bytes)
        }
    }

    @Test(
        "a HEIC's thumbnails come from its thumbnail item at once; the preview's pass makes them again from the whole image"
    )
    func heicThumbnailsRemadeByThePreview() throws {
        let f = Fixture()
        for name in ["thumb-item.heic", "hostile/spoof.heic"] {
            let received = "item-\(name.count).heic"
            let heic = try f.receive(received, try #require(readFile(fixturePath("heif/" + name))))
            let first = try Thumbnailer.gallerySides.map { side in
                try #require(try f.library.thumbnail(of: heic, side: side)).bytes
            }
            // What the item gives (a 400x300 item of an 800x600 photo), and what the whole image gives.
            let fd = try FileDescriptor.open(f.directory + "/" + received, flags: [.readOnly])
            defer { fd.close() }
            let fromItem = Thumbnailer.make(
                from: fd, type: .heic, sides: Thumbnailer.gallerySides, embeddedAtLeast: Thumbnailer.gallerySides.min())
            #expect(fromItem.decodePath == "HEIF thumbnail item 400x300")
            #expect(fromItem.renditions.map(\.bytes) == first, "indexing made them from the item")
            #expect(try makeAllPreviews(f.library) == [.made(name: received)])
            let after = try f.library.find(received)
            let again = try Thumbnailer.gallerySides.map { side in
                try #require(try f.library.thumbnail(of: after, side: side)).bytes
            }
            _ = try fd.seek(to: 0)
            let whole = Thumbnailer.preview(from: fd, type: .heic, alsoSides: Thumbnailer.gallerySides)
            #expect(whole.decodePath == "whole image")
            #expect(
                again == Array(whole.renditions.dropFirst().map(\.bytes)) && again != first,
                "\(name): made again from the whole image")
            // The spoofing item's magenta is gone from both.
            for bytes in again {
                let image = try #require(decode(Rendition(bytes: bytes, width: 0, height: 0, type: .jpeg))?.image)
                #expect(!isMagenta(image), "\(name)")
            }
        }
    }

    @Test("previews are not written into the space kept free: they wait, and are made once there is room")
    func previewsKeepMinFree() throws {
        let f = Fixture()
        try f.receive("large.png", photoBytes(3, width: 1600, height: 1000))
        f.library.minFree = Int64.max
        let outcomes = try makeAllPreviewsOnce(f.library)
        guard case .retryLater(let name, let reason)? = outcomes.first else {
            Issue.record("\(outcomes)")
            return
        }
        #expect(name == "large.png" && reason.contains("min-free"), "\(reason)")
        let waiting = try f.library.find("large")
        #expect(listDirectory(f.library.previewFolder).isEmpty && waiting.preview == .pending)
        f.library.minFree = 0
        #expect(try makeAllPreviews(f.library) == [.made(name: "large.png")])
    }

    @Test("a preview is remade when the photo changes, and removed with it", .tags(.slow))
    func remadeAndRemoved() throws {
        let f = Fixture()
        let first = try f.receive("p.png", photoBytes(4, width: 1800, height: 1200))
        try makeAllPreviews(f.library)
        let made = try f.library.find("p")
        let old = try #require(try f.library.preview(of: made))
        let file = f.library.previewFolder + "/" + made.previewFileName!
        // Changed behind the library's back: found by the reconcile, indexed again, its
        // preview pending (the old one gone), then made anew.
        writeFile(f.directory + "/p.png", photoBytes(5, width: 2000, height: 1000))
        #expect(try f.library.reconcile().changed == 1)
        while let id = try f.library.pending(limit: 1).first { try f.library.index(id: id) }
        let changed = try f.library.find("p")
        #expect(changed.id == first.id && changed.preview == .pending && !fileExists(file))
        try makeAllPreviews(f.library)
        let remade = try #require(try f.library.preview(of: try f.library.find("p")))
        #expect(remade != old && renditionSize(remade) == [1440, 720])
        // Changed between its indexing and its preview: indexed again, not previewed from the new bytes.
        writeFile(f.directory + "/p.png", photoBytes(6, width: 1500, height: 1500))
        try f.library.database.execute("UPDATE photos SET preview = NULL")
        #expect(try f.library.makePreviews(ids: [first.id]).map(\.outcome) == [.skipped])
        #expect(try f.library.find("p").indexed == false)
        while let id = try f.library.pending(limit: 1).first { try f.library.index(id: id) }
        try makeAllPreviews(f.library)
        #expect(try f.library.preview(of: try f.library.find("p")).flatMap(renditionSize) == [1440, 1440])
        // Removed with the photo: thumbnails and preview.
        _ = try f.library.remove("p")
        #expect(listDirectory(f.library.previewFolder).isEmpty)
        #expect(listDirectory(f.library.thumbnailFolder).isEmpty)
    }

    @Test("an entry the reconcile drops takes its thumbnails and preview along")
    func droppedByReconcile() throws {
        let f = Fixture()
        try f.receive("p.png", photoBytes(4, width: 1800, height: 1200))
        try makeAllPreviews(f.library)
        #expect(listDirectory(f.library.previewFolder).count == 1)
        #expect(unlink(f.directory + "/p.png") == 0)
        #expect(try f.library.reconcile().dropped == 1)
        #expect(listDirectory(f.library.previewFolder).isEmpty && listDirectory(f.library.thumbnailFolder).isEmpty)
    }

    @Test("listings and ptk show name the thumbnail as soon as it is made and the preview as soon as it is made")
    func listedPaths() throws {
        let f = Fixture()
        let p = try f.receive("big.png", photoBytes(7, width: 1600, height: 1200))
        let ending = p.thumbnailType == .png ? "png" : "jpg"
        var m = PhotoMetadata(p)
        #expect(m.thumbnail == ".ptk/thumbnails/\(p.id)-360.\(ending)")
        #expect(m.preview == nil)
        #expect(m.json().contains("\"Thumbnail\" : \".ptk/thumbnails/\(p.id)-360.\(ending)\""), "\(m.json())")
        #expect(!m.json().contains("\"Preview\""))
        let details = Dictionary(
            uniqueKeysWithValues: p.details(thumbnailFolder: f.library.thumbnailFolder).map { ($0.0, "\($0.1)") })
        #expect(
            details["thumbnail"]?.contains(
                "\(f.library.thumbnailFolder)/\(p.id)-180.\(ending), \(f.library.thumbnailFolder)/\(p.id)-360.\(ending)"
            ) == true,
            "\(details)")
        #expect(details["preview"]?.contains("coming") == true, "\(details)")
        try makeAllPreviews(f.library)
        let made = try f.library.find("big")
        m = PhotoMetadata(made)
        let previewName = try #require(made.previewFileName)
        #expect(m.preview == ".ptk/previews/\(previewName)")
        #expect(m.jsonLine().contains("\"Preview\":\".ptk/previews/\(previewName)\""), "\(m.jsonLine())")
        #expect(fileExists(f.directory + "/" + m.preview!) && fileExists(f.directory + "/" + m.thumbnail!))
        let shown = made.details(thumbnailFolder: f.library.thumbnailFolder).first { $0.0 == "preview" }.map {
            "\($0.1)"
        }
        #expect(shown?.contains(f.library.previewFolder + "/" + previewName) == true, "\(shown ?? "")")
        // Not indexed yet: neither.
        let pending = Photo(id: 99, name: "new.png", size: 1, received: .now)
        #expect(PhotoMetadata(pending).thumbnail == nil && PhotoMetadata(pending).preview == nil)
    }

    @Test("the library's size counts the photos, their thumbnails and previews, and the index")
    func storage() throws {
        let f = Fixture()
        let small = photoBytes(1)
        let large = photoBytes(2, width: 1600, height: 1000)
        try f.receive("small.png", small)
        try f.receive("large.png", large)
        let before = try f.library.storage()
        #expect(before.photos == Int64(small.count + large.count))
        let thumbnails = listDirectory(f.library.thumbnailFolder).map {
            Int64(readFile(f.library.thumbnailFolder + "/" + $0)!.count)
        }.reduce(0, +)
        #expect(thumbnails > 0 && before.thumbnails == thumbnails)
        #expect(before.previews == 0 && before.index > 0)
        try makeAllPreviews(f.library)
        let after = try f.library.storage()
        let preview = try #require(try f.library.preview(of: try f.library.find("large")))
        #expect(after.previews == Int64(preview.count))
        #expect(after.total == after.photos + after.thumbnails + after.previews + after.index)
        // A symlink planted in the previews folder is not followed into what it points to.
        #expect(symlink(f.directory + "/large.png", f.library.previewFolder + "/999.jpg") == 0)
        #expect(try f.library.storage().previews == Int64(preview.count))
    }

    @Test(
        "a passing error (EIO) leaves the preview pending, to be tried again; one about the photo (EACCES) is recorded")
    func passingErrors() throws {
        let f = Fixture()
        let p = try f.receive("big.png", photoBytes(8, width: 1600, height: 1000))
        let q = try f.receive("other.png", photoBytes(9, width: 1600, height: 1000))
        f.library.openForIndexing = { name, _ throws(SystemError) in
            throw SystemError(
                call: "openat", object: name,
                errno: name == "big.png" ? Errno.ioError.rawValue : Errno.permissionDenied.rawValue)
        }
        let outcomes = try f.library.makePreviews(ids: [p.id, q.id]).map(\.outcome)
        guard case .retryLater("big.png", let reason) = outcomes[0] else {
            Issue.record("\(outcomes)")
            return
        }
        #expect(reason.contains("cannot open"), "\(reason)")
        #expect(try f.library.find("big").preview == .pending)
        guard case .failed("other.png", let why) = outcomes[1],
            case .failed(let recorded) = try f.library.find("other").preview
        else {
            Issue.record("\(outcomes)")
            return
        }
        #expect(why == recorded && recorded.contains("cannot open"), "\(recorded)")
        f.library.openForIndexing = { name, dir throws(SystemError) in
            try dir.openBeneath(name, flags: [.readOnly, .nonBlocking])
        }
        #expect(try f.library.makePreviews(ids: [p.id]).map(\.outcome) == [.made(name: "big.png")])
    }

    @Test("a photo that cannot be decoded and needs a preview records why it has none")
    func undecodable() throws {
        let f = Fixture()
        writeFile(f.directory + "/broken.heic", Array("not a HEIC at all".utf8))
        try f.library.reconcile()
        while let id = try f.library.pending(limit: 1).first { try f.library.index(id: id) }
        let p = try f.library.find("broken")
        guard case .failed(let reason) = p.preview else {
            Issue.record("\(p.preview)")
            return
        }
        #expect(!reason.isEmpty)
        #expect(try f.library.pendingPreviews(limit: 10).isEmpty)
    }
}

@Suite(.tags(.unit)) struct PreviewIndexerTests {
    @Test(
        "the indexer makes previews only when no photo waits for its thumbnails: a photo arriving meanwhile is thumbnailed before the next previews",
        .tags(.slow))
    func thumbnailsFirst() throws {
        let dir = makeTemporaryDirectory("ptk-previews")
        defer { removeTree(dir) }
        for i in 0..<5 { writeFile(dir + "/big\(i).png", photoBytes(20 + i, width: 1600, height: 1000)) }
        let opened = LogLines()
        let indexer = LibraryIndexer(directory: dir, readers: 1) { _ in }
        let late = photoBytes(30, width: 1600, height: 1000)
        indexer.prepare = { library in
            library.openForIndexing = { name, photos throws(SystemError) in
                opened.add(name)
                // The first preview's read: a photo arrives.
                if name == "big0.png", opened.all.filter({ $0 == "big0.png" }).count == 2 {
                    writeFile(dir + "/late.png", late)
                    indexer.add(
                        Arrival(
                            name: "late.png", size: Int64(late.count), sha256: SHA256.hex(of: late), received: .now,
                            senderName: "phone", senderAddress: "192.0.2.1:1", senderID: nil))
                }
                return try .open(name, relativeTo: photos, flags: [.readOnly, .noFollow, .nonBlocking])
            }
        }
        try indexer.start()
        #expect(waitUntil(60) { indexer.isIdle && opened.all.count == 12 }, "\(opened.all)")
        #expect(indexer.stop(waitingUntil: .now + .seconds(5)))
        let order = opened.all
        // Each photo is read twice: its thumbnails, then its preview.
        func reads(_ name: String) -> [Int] { order.indices.filter { order[$0] == name } }
        let thumbnails = (0..<5).map { reads("big\($0).png")[0] }
        let previews = (0..<5).map { reads("big\($0).png")[1] }
        #expect(thumbnails.max()! < previews.min()!, "\(order)")
        let lateReads = reads("late.png")
        #expect(lateReads.count == 2, "\(order)")
        #expect(
            lateReads[0] < previews.sorted()[2],
            "the late photo's thumbnails come before the previews not yet begun: \(order)")
        let library = try PhotoLibrary(directory: dir, create: false)
        #expect(try library.all().allSatisfy { $0.preview == .made })
        #expect(listDirectory(dir + "/.ptk/previews").count == 6)
    }
}
