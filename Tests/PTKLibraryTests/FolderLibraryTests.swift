import Foundation
import Glibc
import PTKDigest
import PTKStore
import PTKSystem
import PTKTestSupport
import PTKTestTags
import Testing

@testable import PTKLibrary

@Suite("The library of a directory with folders (issue 28)", .tags(.unit))
struct FolderLibraryTests {
    @Test(
        "reconcile walks folders up to four deep, skips hidden ones and never follows a symlink; moves by hand are followed across folders"
    )
    func reconcileWalksTheTree() throws {
        let f = Fixture()
        let outside = makeTemporaryDirectory("ptk-outside")
        defer { removeTree(outside) }
        writeFile(outside + "/secret.png", photoBytes(9))
        for (i, path) in [
            "top.png", "a/one.png", "a/b/two.png", "a/b/c/d/four.png", "a/b/c/d/e/five.png", ".hidden/h.png",
            "a/.h/h.png",
        ].enumerated() {
            try makeDirectories(f.directory + "/" + parentDirectory(of: path))
            writeFile(f.directory + "/" + path, photoBytes(i + 1))
        }
        #expect(symlink(outside, f.directory + "/link") == 0)
        #expect(symlink(outside, f.directory + "/a/link") == 0)
        let report = try f.library.reconcile()
        #expect(report.added == 4)
        #expect(try f.library.names() == ["a/b/c/d/four.png", "a/b/two.png", "a/one.png", "top.png"])
        // Moved by hand into another folder: the entry follows it, note kept.
        while let id = try f.library.pending(limit: 1).first { try f.library.index(id: id) }
        _ = try f.library.setNote("two", "kept")
        try makeDirectories(f.directory + "/z")
        #expect(rename(f.directory + "/a/b/two.png", f.directory + "/z/two.png") == 0)
        let again = try f.library.reconcile()
        #expect(again.moved == 1 && again.added == 0 && again.dropped == 0, "\(again)")
        #expect(try f.library.find("z/two.png").note == "kept")
    }

    @Test("a folder that cannot be listed keeps its entries (they are not dropped as gone)")
    func unreadableFolderKeepsEntries() throws {
        let f = Fixture()
        try makeDirectories(f.directory + "/locked")
        writeFile(f.directory + "/locked/p.png", photoBytes(1))
        try f.library.reconcile()
        chmod(f.directory + "/locked", 0)
        defer { chmod(f.directory + "/locked", 0o755) }
        // Root reads any folder: as root, the reconcile runs with the file access of nobody.
        let report = try withFileAccess(giving: f.directory) { try f.library.reconcile() }
        #expect(report.dropped == 0 && report.unreadable["locked/"] != nil, "\(report)")
        #expect(try f.library.names() == ["locked/p.png"])
    }

    @Test("held: a photo is named by its SHA-256 and size only while its file is there with that size")
    func held() throws {
        let f = Fixture()
        let bytes = photoBytes(3)
        try makeDirectories(f.directory + "/alice")
        try f.receive("alice/p.png", bytes)
        let sha = SHA256.hex(of: bytes)
        #expect(try f.library.held(sha256: sha, size: Int64(bytes.count)) == "alice/p.png")
        #expect(try f.library.held(sha256: sha, size: Int64(bytes.count) + 1) == nil)
        #expect(try f.library.held(sha256: String(repeating: "0", count: 64), size: Int64(bytes.count)) == nil)
        writeFile(f.directory + "/alice/p.png", Array(bytes.dropLast()))
        #expect(try f.library.held(sha256: sha, size: Int64(bytes.count)) == nil, "changed on disk")
        unlink(f.directory + "/alice/p.png")
        #expect(try f.library.held(sha256: sha, size: Int64(bytes.count)) == nil, "gone")
        // Through HeldPhotos (ptkd's shared lookup): a photo just saved is found before the index has it.
        writeFile(f.directory + "/new.png", bytes)
        let lookup = HeldPhotos(directory: f.directory)
        #expect(lookup.find(sha256: sha, size: Int64(bytes.count)) == nil)
        lookup.remember(name: "new.png", sha256: sha, size: Int64(bytes.count))
        #expect(lookup.find(sha256: sha, size: Int64(bytes.count)) == "new.png")
        _ = lookup.stop(until: .now)
        #expect(lookup.find(sha256: sha, size: Int64(bytes.count)) == nil, "closed at shutdown")
    }

    @Test("find: a path, or a bare name when one folder has it; a clash lists the paths")
    func findByPathOrBareName() throws {
        let f = Fixture()
        for (i, path) in ["alice/IMG_1.png", "bob/IMG_1.png", "bob/IMG_2.png"].enumerated() {
            try makeDirectories(f.directory + "/" + parentDirectory(of: path))
            try f.receive(path, photoBytes(i + 1))
        }
        #expect(try f.library.find("IMG_2").name == "bob/IMG_2.png")
        #expect(try f.library.find("alice/IMG_1").name == "alice/IMG_1.png")
        do {
            _ = try f.library.find("IMG_1")
            Issue.record("found one of two")
        } catch {
            #expect(error.kind == .refused && error.description.contains("alice/IMG_1.png, bob/IMG_1.png"), "\(error)")
        }
        // rename keeps a photo in its folder unless NEW names one.
        #expect(try f.library.rename("IMG_2", to: "second").name == "bob/second.png")
        #expect(try f.library.rename("bob/second", to: "carol/x/second").name == "carol/x/second.png")
        #expect(readFile(f.directory + "/carol/x/second.png") == photoBytes(3))
        // A folder alone keeps the name; "/" moves it to the top.
        #expect(try f.library.rename("carol/x/second", to: "dave/").name == "dave/second.png")
        #expect(try f.library.rename("dave/second", to: "/").name == "second.png")
        #expect(readFile(f.directory + "/second.png") == photoBytes(3))
    }
}
