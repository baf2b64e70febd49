import Foundation
import Glibc
import PTKDigest
import PTKStore
import PTKSystem
import PTKTestSupport
import PTKTestTags
import Testing

@testable import PTKLibrary

/// A received-photos directory with a library, removed after the test.
final class Fixture {
    let directory = makeTemporaryDirectory("ptk-library")
    lazy var library = try! PhotoLibrary(directory: directory, create: true)

    deinit { removeTree(directory) }

    /// Puts a photo into the directory as ptkd would (a file, then its arrival) and indexes it.
    @discardableResult
    func receive(_ name: String, _ bytes: [UInt8], from sender: String = "Alice's phone", id: String? = "ABCD-EFGH")
        throws -> Photo
    {
        writeFile(directory + "/" + name, bytes)
        try library.record([
            Arrival(
                name: name, size: Int64(bytes.count), sha256: SHA256.hex(of: bytes),
                received: WallTime(milliseconds: 1_700_000_000_123),
                senderName: sender, senderAddress: "192.0.2.7:40000", senderID: id)
        ])
        while let id = try library.pending(limit: 1).first { try library.index(id: id) }
        return try library.find(name)
    }
}

func photoBytes(_ seed: Int, width: Int = 40, height: Int = 30) -> [UInt8] {
    makeImagePNG(width: width, height: height) { x, y in
        [UInt8(truncatingIfNeeded: x * seed), UInt8(truncatingIfNeeded: y + seed), UInt8(truncatingIfNeeded: seed)]
    }
}

@Suite(.tags(.unit)) struct LibraryTests {
    @Test func aReceivedPhotoIsIndexedWithItsSenderAndThumbnail() throws {
        let f = Fixture()
        let bytes = photoBytes(1, width: 600, height: 300)
        let photo = try f.receive("beach.png", bytes)
        #expect(photo.indexed)
        #expect(photo.size == Int64(bytes.count))
        #expect(photo.sha256 == SHA256.hex(of: bytes))
        #expect([photo.width, photo.height, photo.bitDepth, photo.colorType, photo.interlace] == [600, 300, 8, 2, 0])
        #expect(photo.senderName == "Alice's phone")
        #expect(photo.senderAddress == "192.0.2.7:40000")
        #expect(photo.senderID == "ABCD-EFGH")
        #expect(photo.received == WallTime(milliseconds: 1_700_000_000_123))
        #expect(photo.rating == nil)
        #expect(photo.note == nil)
        #expect(photo.hasThumbnail)
        let thumb = try #require(try f.library.thumbnail(of: photo))
        #expect(renditionSize(thumb) == [360, 180], "the largest gallery side")
        #expect(try f.library.pendingCount() == 0)
    }

    @Test func namesAreFoundWithOrWithoutTheEndingAndMissesSuggestTheClosest() throws {
        let f = Fixture()
        try f.receive("beach.png", photoBytes(1))
        try f.receive("beach (2).png", photoBytes(2))
        try f.receive("mountain.png", photoBytes(3))
        #expect(try f.library.find("beach").name == "beach.png")
        #expect(try f.library.find("beach (2).png").name == "beach (2).png")
        do {
            _ = try f.library.find("bech")
            Issue.record("expected an error")
        } catch {
            let e = error as! LibraryError
            #expect(e.kind == .notFound(suggestions: ["beach.png"]))
            #expect(e.description.contains("no photo named 'bech'"), "\(e.description)")
        }
        do {
            _ = try f.library.find("each")
            Issue.record("expected an error")
        } catch { #expect((error as! LibraryError).kind == .notFound(suggestions: ["beach.png", "beach (2).png"])) }
        do {
            _ = try f.library.find("zzz")
            Issue.record("expected an error")
        } catch { #expect((error as! LibraryError).kind == .notFound(suggestions: [])) }
        // A file the index does not know yet says so.
        writeFile(f.directory + "/new.png", photoBytes(4))
        do {
            _ = try f.library.find("new.png")
            Issue.record("expected an error")
        } catch { #expect("\(error)".contains("not in the library yet"), "\(error)") }
    }

    @Test func renameMovesFileAndEntryTogetherAndNeverReplaces() throws {
        let f = Fixture()
        let a = photoBytes(1)
        let b = photoBytes(2)
        let first = try f.receive("a.png", a)
        try f.receive("b.png", b)
        try f.library.setNote("a", "keep me")
        // A path that would climb out, or hide, is refused; nothing moves.
        for bad in ["../../etc/sunset", "x/../../sunset", ".hidden/sunset", "a//sunset"] {
            do {
                _ = try f.library.rename("a.png", to: bad)
                Issue.record("renamed to \(bad)")
            } catch {
                #expect((error as! LibraryError).kind == .refused, "\(bad): \(error)")
                #expect("\(error)".contains("not a folder"), "\(error)")
            }
        }
        #expect(readFile(f.directory + "/a.png") == a)
        let renamed = try f.library.rename("a.png", to: "sunset\u{1}")
        #expect(renamed.name == "sunset.png", "the naming rules, with the .png ending")
        #expect(readFile(f.directory + "/sunset.png") == a)
        #expect(!(fileExists(f.directory + "/a.png")))
        let after = try f.library.find("sunset.png")
        #expect(after.id == first.id)
        #expect(after.note == "keep me")
        #expect(try f.library.thumbnail(of: after) != nil)
        do {
            _ = try f.library.rename("sunset", to: "b.png")
            Issue.record("expected an error")
        } catch {
            #expect((error as! LibraryError).kind == .refused)
            #expect("\(error)".contains("never replaces"), "\(error)")
        }
        // A file that is in the directory but not (yet) in the index is not replaced either.
        writeFile(f.directory + "/c.png", photoBytes(3))
        do {
            _ = try f.library.rename("sunset", to: "c")
            Issue.record("expected an error")
        } catch { #expect((error as! LibraryError).kind == .refused) }
        #expect(readFile(f.directory + "/b.png") == b)
        #expect(readFile(f.directory + "/c.png") == photoBytes(3))
        #expect(readFile(f.directory + "/sunset.png") == a)
        do {
            _ = try f.library.rename("sunset", to: "sunset.png")
            Issue.record("expected an error")
        } catch { #expect((error as! LibraryError).kind == .refused) }
    }

    @Test func removeDeletesFileEntryAndThumbnail() throws {
        let f = Fixture()
        let photo = try f.receive("gone.png", photoBytes(1))
        let thumbnailPath = f.library.thumbnailFolder + "/" + photo.thumbnailFileName(side: 360)!
        #expect(fileExists(thumbnailPath))
        #expect(try f.library.remove("gone").name == "gone.png")
        #expect(!(fileExists(f.directory + "/gone.png")))
        #expect(!(fileExists(thumbnailPath)))
        do {
            _ = try f.library.find("gone.png")
            Issue.record("expected an error")
        } catch {}
        #expect(try f.library.all().count == 0)
    }

    @Test func notesAndRatingsAreSetAndCleared() throws {
        let f = Fixture()
        try f.receive("p.png", photoBytes(1))
        #expect(try f.library.setNote("p", "Grandma's garden, 1987").note == "Grandma's garden, 1987")
        #expect(try f.library.setRating("p", 5).rating == 5)
        #expect(try f.library.find("p").rating == 5)
        #expect(try f.library.find("p").note == "Grandma's garden, 1987")
        do {
            _ = try f.library.setRating("p", 6)
            Issue.record("expected an error")
        } catch { #expect((error as! LibraryError).kind == .badInput) }
        do {
            _ = try f.library.setRating("p", -1)
            Issue.record("expected an error")
        } catch {}
        #expect(try f.library.setRating("p", nil).rating == nil)
        #expect(try f.library.setNote("p", "").note == nil)
        #expect(try f.library.find("p").note == nil)
        #expect(try f.library.find("p").rating == nil)
    }

    @Test(
        "a photo whose status cannot be read (EIO, EACCES) keeps its entry, note and rating; only a file that is gone drops its entry"
    )
    func reconcileKeepsEntriesItCannotStat() throws {
        let f = Fixture()
        try f.receive("kept.png", photoBytes(1))
        try f.receive("raced.png", photoBytes(2))
        try f.receive("deleted.png", photoBytes(3))
        try f.library.setNote("kept", "Grandma's garden, 1987")
        _ = try f.library.setRating("kept", 5)
        #expect(unlink(f.directory + "/deleted.png") == 0)
        // kept.png cannot be read (a failing disk); raced.png vanishes between listing and stat.
        f.library.statusOf = { dir, name throws(SystemError) in
            switch name {
            case "kept.png": throw SystemError(call: "stat", object: name, errno: EIO)
            case "raced.png": throw SystemError(call: "stat", object: name, errno: ENOENT)
            default: return try dir.status(of: name)
            }
        }
        let report = try f.library.reconcile()
        #expect(report.dropped == 2)
        #expect(Array(report.unreadable.keys) == ["kept.png"])
        #expect(report.unreadable["kept.png"]?.contains("stat") == true)
        let kept = try f.library.find("kept")
        #expect(kept.note == "Grandma's garden, 1987")
        #expect(kept.rating == 5)
        #expect(kept.senderName == "Alice's phone")
        #expect(kept.hasThumbnail)
        // Readable again: the next reconcile finds kept.png as it was, and raced.png anew.
        f.library.statusOf = { dir, name throws(SystemError) in try dir.status(of: name) }
        let again = try f.library.reconcile()
        #expect(again.unreadable.isEmpty)
        #expect(again.added == 1)
        #expect(again.dropped == 0)
        #expect(try f.library.find("kept").note == "Grandma's garden, 1987")
    }

    @Test func reconcileAddsFilesDropsGoneOnesAndFollowsRenamesByHand() throws {
        let f = Fixture()
        try f.receive("kept.png", photoBytes(1))
        try f.receive("moved.png", photoBytes(2))
        try f.receive("deleted.png", photoBytes(3))
        try f.receive("edited.png", photoBytes(4))
        try f.library.setNote("moved", "follows the file")
        let deletedID = try f.library.find("deleted").id
        // By hand, while ptkd is stopped:
        writeFile(f.directory + "/copied in.png", photoBytes(5))
        #expect(Glibc.rename(f.directory + "/moved.png", f.directory + "/renamed by hand.png") == 0)
        #expect(unlink(f.directory + "/deleted.png") == 0)
        writeFile(f.directory + "/edited.png", photoBytes(6, width: 50))
        writeFile(f.directory + "/notes.txt", Array("not a photo".utf8))
        writeFile(f.directory + "/.hidden.png", photoBytes(7))
        let report = try f.library.reconcile()
        #expect(report.added == 1)
        #expect(report.dropped == 1)
        #expect(report.moved == 1)
        #expect(report.changed == 1)
        #expect(!listDirectory(f.library.thumbnailFolder).contains { $0.hasPrefix("\(deletedID)-") })
        while let id = try f.library.pending(limit: 1).first { try f.library.index(id: id) }
        let all = try f.library.all(sort: .name)
        #expect(all.map(\.name) == ["copied in.png", "edited.png", "kept.png", "renamed by hand.png"])
        #expect(try f.library.find("renamed by hand").note == "follows the file")
        #expect(try f.library.find("renamed by hand").senderName == "Alice's phone")
        let copied = try f.library.find("copied in")
        #expect(copied.senderName == nil)
        #expect(copied.sha256 == SHA256.hex(of: photoBytes(5)))
        #expect(copied.hasThumbnail)
        let edited = try f.library.find("edited")
        #expect(edited.sha256 == SHA256.hex(of: photoBytes(6, width: 50)))
        #expect(edited.width == 50)
        // A second reconcile finds nothing to do.
        #expect(try f.library.reconcile() == PhotoLibrary.ReconcileReport())
        // An edit in place that keeps the size (and the inode) is seen by its modification time.
        var same = readFile(f.directory + "/kept.png")!
        same[same.count - 20] ^= 0xFF
        let fd = try FileDescriptor.open(f.directory + "/kept.png", flags: .writeOnly)
        try fd.writeAll(same)
        fd.close()
        var times = [timespec(tv_sec: 1_000_000_000, tv_nsec: 0), timespec(tv_sec: 1_000_000_000, tv_nsec: 0)]
        #expect(utimensat(AT_FDCWD, f.directory + "/kept.png", &times, 0) == 0)
        #expect(try f.library.reconcile().changed == 1)
        while let id = try f.library.pending(limit: 1).first { try f.library.index(id: id) }
        #expect(try f.library.find("kept").sha256 == SHA256.hex(of: same))
    }

    // The sweep of the thumbnails and previews folders: PreviewTests.swift (GalleryThumbnailTests.sweep).

    @Test func aFileThatIsNotADecodablePNGIsIndexedWithTheReason() throws {
        let f = Fixture()
        writeFile(f.directory + "/fake.png", Array("this is not a PNG at all".utf8))
        try f.library.reconcile()
        while let id = try f.library.pending(limit: 1).first { try f.library.index(id: id) }
        let p = try f.library.find("fake")
        #expect(p.indexed)
        #expect(!(p.hasThumbnail))
        #expect(p.problem?.contains("not decodable") == true, "\(p.problem ?? "")")
        #expect(p.width == nil)
        #expect(try f.library.thumbnail(of: p) == nil)
    }

    @Test func anIndexFromANewerPtkIsRefused() throws {
        let f = Fixture()
        try f.library.database.execute("PRAGMA user_version = \(PhotoLibrary.schemaVersion + 1)")
        do {
            _ = try PhotoLibrary(directory: f.directory, create: false)
            Issue.record("expected an error")
        } catch {
            #expect((error as! LibraryError).kind == .refused)
            #expect("\(error)".contains("newer ptk"), "\(error)")
        }
    }

    @Test func withoutCreateAMissingLibraryIsAnError() {
        let dir = makeTemporaryDirectory("ptk-nolib")
        defer { removeTree(dir) }
        do {
            _ = try PhotoLibrary(directory: dir, create: false)
            Issue.record("expected an error")
        } catch { #expect("\(error)".contains("no photo library"), "\(error)") }
        #expect(!(fileExists(dir + "/.ptk")))
    }

    @Test func listSortsAndFiltersBySender() throws {
        let f = Fixture()
        writeFile(f.directory + "/b.png", photoBytes(1, width: 80))
        writeFile(f.directory + "/a.png", photoBytes(2, width: 10))
        writeFile(f.directory + "/C.png", photoBytes(3, width: 40))
        try f.library.record([
            Arrival(
                name: "b.png", size: 300, sha256: "x", received: WallTime(milliseconds: 1000), senderName: "Bob",
                senderAddress: "[2001:db8::1]:5000", senderID: nil),
            Arrival(
                name: "a.png", size: 100, sha256: "y", received: WallTime(milliseconds: 3000), senderName: "Alice",
                senderAddress: "192.0.2.1:4000", senderID: "ABCD-EFGH-IJKL"),
            Arrival(
                name: "C.png", size: 200, sha256: "z", received: WallTime(milliseconds: 2000), senderName: "alice",
                senderAddress: "192.0.2.2:4000", senderID: nil),
        ])
        #expect(try f.library.all(sort: .time).map(\.name) == ["b.png", "C.png", "a.png"])
        #expect(try f.library.all(sort: .name).map(\.name) == ["a.png", "b.png", "C.png"])
        #expect(try f.library.all(sort: .size).map(\.name) == ["a.png", "C.png", "b.png"])
        #expect(try f.library.all(from: "ALICE").map(\.name) == ["C.png", "a.png"])
        #expect(try f.library.all(from: "abcdefgh").map(\.name) == ["a.png"])
        #expect(try f.library.all(from: "2001:db8::1").map(\.name) == ["b.png"])
        #expect(try f.library.all(from: "192.0.2.2").map(\.name) == ["C.png"])
        #expect(try f.library.all(from: "nobody").map(\.name) == [])
    }

    @Test func timesRoundTripThroughISO8601() {
        for ms: Int64 in [
            0, 1, 999, 1_700_000_000_123, 951_782_400_000 /* 2000-02-29 */, -86_400_001, 4_102_444_800_000,
        ] {
            #expect(
                WallTime(iso8601: WallTime(milliseconds: ms).iso8601)?.milliseconds == ms,
                "\(WallTime(milliseconds: ms).iso8601)")
        }
        #expect(WallTime(milliseconds: 1_700_000_000_123).iso8601 == "2023-11-14T22:13:20.123Z")
        #expect(WallTime(iso8601: "2023-11-14T22:13:20Z")?.milliseconds == 1_700_000_000_000)
        #expect(WallTime(iso8601: "2023-11-15T00:13:20.5+02:00")?.milliseconds == 1_700_000_000_500)
        #expect(WallTime(iso8601: "2023-11-14T22:13:20.123456Z")?.milliseconds == 1_700_000_000_123)
        for bad in [
            "", "yesterday", "2023-13-01T00:00:00Z", "2023-11-14 22:13:20", "2023-11-14T22:13:20.Z",
            "2023-11-14T22:13:20Zjunk",
        ] {
            #expect(WallTime(iso8601: bad)?.milliseconds == nil, "\(bad)")
        }
    }

    @Test func suggestionsAreTheClosestNames() {
        let names = ["beach.png", "Beach (2).png", "mountains.png", "IMG_0001.png", "IMG_0002.png", "x.png"]
        #expect(closestNames(to: "bech", in: names) == ["beach.png"])
        #expect(closestNames(to: "beach", in: names) == ["beach.png", "Beach (2).png"])
        #expect(closestNames(to: "IMG_0003.png", in: names) == ["IMG_0001.png", "IMG_0002.png"])
        #expect(closestNames(to: "mountain", in: names) == ["mountains.png"])
        #expect(closestNames(to: "completely different", in: names) == [])
        #expect(closestNames(to: "", in: names) == [])
        #expect(editDistance(Array("kitten"), Array("sitting"), limit: 10) == 3)
        #expect(editDistance(Array("kitten"), Array("sitting"), limit: 1) == 2)
    }
}
