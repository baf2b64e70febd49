import PTKDAV
import PTKLibrary
import PTKSystem
import PTKTestSupport
import PTKTestTags
import Testing

@testable import PTKDAVDoor
@testable import PTKWebDoor

/// A `full` app password over a scripted connection: MKCOL, MOVE and DELETE on the real
/// directory and library (as `ptk rename` and `ptk rm`), and what is refused.
@Suite("WebDAV door: full access", .tags(.unit))
struct DAVFullAccessTests {
    /// A fixture with `a.png`, `sub/b.png` and `sub/deep/c.png`, reconciled into the library, and a full password.
    func fixture() throws -> (DoorFixture, DAVAccount, [String: [UInt8]]) {
        let f = try DoorFixture()
        var files: [String: [UInt8]] = [:]
        for (i, name) in ["a.png", "sub/b.png", "sub/deep/c.png"].enumerated() {
            files[name] = makePNG(size: 2000 + 500 * i, seed: UInt64(80 + i))
            writeFile(in: f.photos, name, files[name]!)
        }
        try f.reconcile()
        #expect(try f.libraryNames() == ["a.png", "sub/b.png", "sub/deep/c.png"])
        return (f, try f.appPassword("desk"), files)
    }

    @Test(
        "MKCOL: 201 and a directory; 405 when it exists; 409 without its parent; 415 with a body; 405 on the root; dotted names 403 or 404"
    )
    func mkcol() throws {
        let (f, desk, _) = try fixture()
        let e = f.dav(
            dav("MKCOL", "/dav/new", desk), dav("MKCOL", "/dav/new/inner/", desk), dav("MKCOL", "/dav/new", desk),
            dav("MKCOL", "/dav/sub", desk), dav("MKCOL", "/dav/a.png", desk), dav("MKCOL", "/dav/no/such", desk),
            dav("MKCOL", "/dav/withbody", desk, [("Content-Type", "application/xml")], body: Array("<x/>".utf8)),
            dav("MKCOL", "/dav/", desk), dav("MKCOL", "/dav/.git", desk), dav("MKCOL", "/dav/.DS_Store", desk))
        #expect(
            e.responses.map(\.status) == [201, 201, 405, 405, 405, 409, 415, 405, 404, 403],
            "\(e.responses.map(\.status))")
        #expect(
            isDirectory(f.photos + "/new/inner") && !isDirectory(f.photos + "/withbody")
                && !isDirectory(f.photos + "/no"))
        #expect(!f.everything().contains(".git/") && !f.everything().contains(".DS_Store/"))
        #expect(listedNames(f.dav(propfind("/dav/new/", desk)).first) == ["inner"])
    }

    @Test(
        "a MKCOL behind another request writing its name waits for it and is answered 405 once the folder is made, not 423 (rclone makes a file's folder from several transfers at once); one held past the wait is 423 with the reason; the name freed, it is 201"
    )
    func mkcolWaitsForTheName() throws {
        let (f, desk, _) = try fixture()
        let camera = DAVPath(["camera"])
        #expect(f.web.dav.claim(desk.id, camera))
        nonisolated(unsafe) let fixture = f
        let id = desk.id
        // The other request makes the folder and lets go of the name 300 ms later.
        let started = Instant.now
        try startThread(name: "other MKCOL") {
            sleep(for: .milliseconds(300))
            try? makeDirectories(fixture.photos + "/camera")  // checked below: the MKCOL finds it
            fixture.web.dav.release(id, camera)
        }
        let behind = f.dav(dav("MKCOL", "/dav/camera", desk))
        let waited = Instant.now - started
        #expect(behind.first.status == 405, "\(behind.first)")
        #expect(behind.first.text.contains("exists"), "\(behind.first.text)")
        #expect(waited >= .milliseconds(300) && waited < DAVEndpoint.mkcolWait, "\(waited)")
        #expect(isDirectory(f.photos + "/camera"))

        let held = DAVPath(["held"])
        #expect(f.web.dav.claim(desk.id, held))
        let before = Instant.now
        let refused = f.dav(dav("MKCOL", "/dav/held", desk))
        #expect(Instant.now - before >= DAVEndpoint.mkcolWait)
        #expect(refused.first.status == 423, "\(refused.first)")
        #expect(refused.first.text.contains(DAVEndpoint.writingReason), "\(refused.first.text)")
        #expect(!isDirectory(f.photos + "/held"))
        f.web.dav.release(desk.id, held)
        #expect(f.dav(dav("MKCOL", "/dav/held", desk)).first.status == 201)
        #expect(isDirectory(f.photos + "/held"))
    }

    @Test(
        "MOVE of a photo renames it as ptk rename does: the file and the library entry follow; the name is free again")
    func movePhoto() throws {
        let (f, desk, files) = try fixture()
        let e = f.dav(
            dav("MOVE", "/dav/a.png", desk, [("Destination", "http://ptk.test/dav/sub/renamed.png")]),
            dav("GET", "/dav/sub/renamed.png", desk), dav("GET", "/dav/a.png", desk))
        #expect(e.responses.map(\.status) == [201, 200, 404], "\(e.responses.map(\.status))")
        #expect(digest(e[1].body) == digest(files["a.png"]))
        #expect(f.kept() == ["sub/b.png", "sub/deep/c.png", "sub/renamed.png"])
        #expect(try f.libraryNames() == ["sub/b.png", "sub/deep/c.png", "sub/renamed.png"])
        let library = try PhotoLibrary(directory: f.photos, create: false)
        #expect(try library.sha256(exactly: "sub/renamed.png") == sha256Hex(files["a.png"]!))
    }

    @Test("MOVE of a folder moves everything in it, library entries included")
    func moveFolder() throws {
        let (f, desk, files) = try fixture()
        let e = f.dav(
            dav("MOVE", "/dav/sub/", desk, [("Destination", "/dav/moved/")]), propfind("/dav/moved/deep/", desk))
        #expect(e.responses.map(\.status) == [201, 207], "\(e.responses.map(\.status))")
        #expect(f.kept() == ["a.png", "moved/b.png", "moved/deep/c.png"])
        #expect(try f.libraryNames() == ["a.png", "moved/b.png", "moved/deep/c.png"])
        #expect(digest(readFile(f.photos + "/moved/deep/c.png")) == digest(files["sub/deep/c.png"]))
        #expect(listedNames(e[1]) == ["c.png"])
    }

    @Test("MOVE onto what exists: Overwrite F is 412, T onto a photo or folder 403; nothing changes")
    func moveOntoExisting() throws {
        let (f, desk, files) = try fixture()
        let e = f.dav(
            dav("MOVE", "/dav/a.png", desk, [("Destination", "/dav/sub/b.png"), ("Overwrite", "F")]),
            dav("MOVE", "/dav/a.png", desk, [("Destination", "/dav/sub/b.png"), ("Overwrite", "T")]),
            dav("MOVE", "/dav/a.png", desk, [("Destination", "/dav/sub/b.png")]),
            dav("MOVE", "/dav/a.png", desk, [("Destination", "/dav/sub/deep"), ("Overwrite", "T")]),
            dav("MOVE", "/dav/sub/deep", desk, [("Destination", "/dav/a.png"), ("Overwrite", "F")]),
            dav("MOVE", "/dav/a.png", desk, [("Destination", "/dav/z.png"), ("Overwrite", "maybe")]))
        #expect(e.responses.map(\.status) == [412, 403, 403, 403, 412, 400], "\(e.responses.map(\.status))")
        #expect(f.kept() == ["a.png", "sub/b.png", "sub/deep/c.png"])
        for (name, bytes) in files { #expect(digest(readFile(f.photos + "/" + name)) == digest(bytes), "\(name)") }
        #expect(try f.libraryNames() == ["a.png", "sub/b.png", "sub/deep/c.png"])
    }

    @Test(
        "MOVE refusals: no Destination 400, another host 502, dot segments 400, into itself 403, the root 403, a missing source 404, no parent 409"
    )
    func moveRefusals() throws {
        let (f, desk, _) = try fixture()
        let cases: [(String, String?, Int)] = [
            ("/dav/a.png", nil, 400), ("/dav/a.png", "http://other.example/dav/x.png", 502),
            ("/dav/a.png", "/dav/sub/../x.png", 400),
            ("/dav/a.png", "/dav/%2e%2e/x.png", 400), ("/dav/a.png", "/dav/sub%2fx.png", 400),
            ("/dav/sub", "/dav/sub/deep/sub", 403),
            ("/dav/sub", "/dav/sub", 403), ("/dav/a.png", "/dav/a.png", 403), ("/dav/", "/dav/x", 403),
            ("/dav/sub", "/dav/", 403),
            ("/dav/gone.png", "/dav/x.png", 404), ("/dav/a.png", "/dav/nowhere/x.png", 409),
        ]
        for (source, destination, status) in cases {
            let e = f.dav(dav("MOVE", source, desk, destination.map { [("Destination", $0)] } ?? []))
            #expect(e.first.status == status, "MOVE \(source) → \(destination ?? "-"): \(e.first)")
        }
        #expect(f.kept() == ["a.png", "sub/b.png", "sub/deep/c.png"])
    }

    @Test(
        "DELETE of a photo removes the file and its library entry; of a folder, everything below it; the root 403; a missing name 404"
    )
    func delete() throws {
        let (f, desk, _) = try fixture()
        let e = f.dav(
            dav("DELETE", "/dav/a.png", desk), dav("GET", "/dav/a.png", desk), dav("DELETE", "/dav/a.png", desk))
        #expect(e.responses.map(\.status) == [204, 404, 404], "\(e.responses.map(\.status))")
        #expect(f.kept() == ["sub/b.png", "sub/deep/c.png"])
        #expect(try f.libraryNames() == ["sub/b.png", "sub/deep/c.png"])
        let tree = f.dav(dav("DELETE", "/dav/sub/", desk), propfind("/dav/", desk), dav("DELETE", "/dav/", desk))
        #expect(tree.responses.map(\.status) == [204, 207, 403], "\(tree.responses.map(\.status))")
        #expect(f.kept().isEmpty && !isDirectory(f.photos + "/sub"), "\(f.everything())")
        #expect(try f.libraryNames() == [])
        #expect(listedNames(tree[1]) == [])
        #expect(isDirectory(f.photos + "/.ptk"), "the receiver's own folder stays")
    }

    @Test("DELETE of a folder holding a symlink removes the link, never what it points to")
    func deleteSymlinkInFolder() throws {
        let (f, desk, _) = try fixture()
        let outside = makeTemporaryDirectory("ptk-outside")
        defer { removeTree(outside) }
        let keep = makePNG(size: 900, seed: 89)
        writeFile(outside + "/keep.png", keep)
        try createSymbolicLink(outside, at: f.photos + "/sub/link")
        try createSymbolicLink(outside + "/keep.png", at: f.photos + "/sub/keep.png")
        let e = f.dav(dav("DELETE", "/dav/sub", desk))
        #expect(e.first.status == 204, "\(e.first)")
        #expect(
            !isDirectory(f.photos + "/sub") && digest(readFile(outside + "/keep.png")) == digest(keep)
                && listDirectory(outside) == ["keep.png"])
    }

    @Test("COPY is 403 for every password and target, and stores nothing")
    func copy() throws {
        let (f, desk, _) = try fixture()
        let e = f.dav(
            dav("COPY", "/dav/a.png", desk, [("Destination", "/dav/copy.png")]),
            dav("COPY", "/dav/sub", desk, [("Destination", "/dav/sub2")]))
        #expect(e.responses.map(\.status) == [403, 403], "\(e.responses.map(\.status))")
        #expect(e.first.text.contains("COPY"))
        #expect(f.kept() == ["a.png", "sub/b.png", "sub/deep/c.png"])
    }

    @Test(
        "a MOVE to a name of another type keeps the photo's type: the client's name is listed, the kept file has a fitting ending"
    )
    func moveToOtherEnding() throws {
        let (f, desk, files) = try fixture()
        let e = f.dav(
            dav("MOVE", "/dav/a.png", desk, [("Destination", "/dav/a.jpg")]), propfind("/dav/", desk),
            dav("GET", "/dav/a.jpg", desk))
        #expect(e.responses.map(\.status) == [201, 207, 200], "\(e.responses.map(\.status))")
        #expect(
            !f.kept().contains("a.jpg") && f.kept().contains { $0.hasPrefix("a") && $0.hasSuffix(".png") },
            "\(f.kept())")
        #expect(listedNames(e[1]) == ["a.jpg", "sub"], "\(listedNames(e[1]) ?? [])")
        #expect(digest(e[2].body) == digest(files["a.png"]) && e[2].header("content-type") == "image/png")
    }
}
