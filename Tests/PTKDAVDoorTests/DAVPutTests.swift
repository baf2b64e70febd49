import PTKDAV
import PTKDigest
import PTKTestSupport
import PTKTestTags
import Testing

@testable import PTKDAVDoor
@testable import PTKWebDoor

/// PUT over a scripted connection: bodies of every framing into the real store, what is refused
/// and when (before or after the body), names kept otherwise, the same photo again, placeholders
/// and the files operating systems write beside photos.
@Suite("WebDAV door: PUT", .tags(.unit))
struct DAVPutTests {
    @Test(
        "a PNG and a JPEG with Content-Length are 201 with the SHA-256 as ETag, kept byte for byte, nothing left in .incoming"
    )
    func plain() throws {
        let f = try DoorFixture()
        let desk = try f.appPassword("desk")
        let png = makePNG(size: 6000, seed: 50)
        let jpeg = makeJPEG(width: 40, height: 30, seed: 51)
        let e = f.dav(
            dav("PUT", "/dav/a.png", desk, body: png), dav("PUT", "/dav/b.jpg", desk, body: jpeg),
            propfind("/dav/", desk))
        #expect(e.responses.map(\.status) == [201, 201, 207], "\(e.responses.map(\.status))")
        #expect(e[0].header("etag") == "\"\(sha256Hex(png))\"" && e[1].header("etag") == "\"\(sha256Hex(jpeg))\"")
        #expect(f.kept() == ["a.png", "b.jpg"])
        #expect(
            digest(readFile(f.photos + "/a.png")) == digest(png)
                && digest(readFile(f.photos + "/b.jpg")) == digest(jpeg))
        #expect(f.incoming().isEmpty)
        #expect(listedNames(e[2]) == ["a.png", "b.jpg"])
    }

    @Test(
        "chunked with X-Expected-Entity-Length is kept, fed one byte at a time too; chunked without it is kept as well (issue 55), the connection going on"
    )
    func chunked() throws {
        let f = try DoorFixture()
        let desk = try f.appPassword("desk")
        let a = makePNG(size: 9000, seed: 52)
        let b = makePNG(size: 3000, seed: 53)
        let e = f.dav(dav("PUT", "/dav/a.png", desk, body: a, chunked: [1, 100, 4000], expectedLength: true))
        #expect(e.first.status == 201, "\(e.first)")
        let slow = f.dav(
            dav("PUT", "/dav/b.png", desk, body: b, chunked: [7, 1000], expectedLength: true),
            dav("OPTIONS", "/dav/", desk), readSize: 1)
        #expect(slow.responses.map(\.status) == [201, 200], "\(slow.responses)")
        let plainSlow = f.dav(dav("PUT", "/dav/c.png", desk, body: makePNG(size: 2000, seed: 54)), readSize: 1)
        #expect(plainSlow.first.status == 201, "\(plainSlow.first)")
        #expect(
            digest(readFile(f.photos + "/a.png")) == digest(a) && digest(readFile(f.photos + "/b.png")) == digest(b))
        let d = makePNG(size: 2000, seed: 55)
        let unsized = f.dav(dav("PUT", "/dav/d.png", desk, body: d, chunked: [500]), dav("OPTIONS", "/dav/", desk))
        #expect(
            unsized.responses.map(\.status) == [201, 200] && unsized.first.header("connection") == "keep-alive",
            "\(unsized.responses)")
        #expect(f.kept() == ["a.png", "b.png", "c.png", "d.png"] && f.incoming().isEmpty)
        #expect(digest(readFile(f.photos + "/d.png")) == digest(d))
    }

    @Test(
        "text is 415 naming the kept types; nothing in the directory or .incoming afterwards, and the connection goes on"
    )
    func notAPhoto() throws {
        let f = try DoorFixture()
        let desk = try f.appPassword("desk")
        let text = Array(String(repeating: "hello, not a photo\n", count: 100).utf8)
        let e = f.dav(dav("PUT", "/dav/a.png", desk, body: text), dav("PUT", "/dav/notes.txt", desk, body: text))
        #expect(e.first.status == 415, "\(e.first)")
        for kind in ["PNG", "JPEG", "HEIC", "HEIF"] { #expect(e.first.text.contains(kind), "\(e.first.text)") }
        #expect(f.kept().isEmpty && f.incoming().isEmpty, "\(f.everything())")
    }

    @Test("over max-file-size is 413 before the body is read (the connection closes); at the limit it is kept")
    func tooLarge() throws {
        let png = makePNG(size: 20_000, seed: 56)
        let f = try DoorFixture { $0.maxFileSize = Int64(png.count - 1) }
        let desk = try f.appPassword("desk")
        let e = f.dav(dav("PUT", "/dav/a.png", desk, body: png), dav("OPTIONS", "/dav/", desk))
        #expect(e.responses.map(\.status) == [413] && e.first.header("connection") == "close", "\(e.responses)")
        let chunked = f.dav(
            dav("PUT", "/dav/a.png", desk, body: png, chunked: [5000], expectedLength: true),
            dav("OPTIONS", "/dav/", desk))
        #expect(chunked.responses.map(\.status) == [413], "\(chunked.responses)")
        #expect(f.kept().isEmpty && f.incoming().isEmpty)
        let g = try DoorFixture { $0.maxFileSize = Int64(png.count) }
        #expect(g.dav(dav("PUT", "/dav/a.png", try g.appPassword("desk"), body: png)).first.status == 201)
    }

    @Test("a JPEG PUT as x.png is kept as x.jpg but listed, GETtable and found again as x.png")
    func keptUnderAnotherName() throws {
        let f = try DoorFixture()
        let desk = try f.appPassword("desk")
        let jpeg = makeJPEG(width: 50, height: 20, seed: 57)
        let e = f.dav(
            dav("PUT", "/dav/x.png", desk, body: jpeg), propfind("/dav/", desk), dav("GET", "/dav/x.png", desk),
            propfind("/dav/x.png", desk, depth: "0"), dav("GET", "/dav/x.jpg", desk))
        // A full password reaches the directory as it is, so the kept name answers too (it is not listed twice).
        #expect(e.responses.map(\.status) == [201, 207, 200, 207, 200], "\(e.responses.map(\.status))")
        #expect(f.kept() == ["x.jpg"] && digest(readFile(f.photos + "/x.jpg")) == digest(jpeg))
        #expect(listedNames(e[1]) == ["x.png"], "\(listedNames(e[1]) ?? [])")
        #expect(digest(e[2].body) == digest(jpeg) && e[2].header("content-type") == "image/jpeg")
        let entry = try #require(multistatus(e[3])?.first)
        #expect(entry.text("getcontentlength") == "\(jpeg.count)" && entry.text("getetag") == "\"\(sha256Hex(jpeg))\"")
        // Another password sees the directory as it is.
        let other = try f.appPassword("laptop")
        #expect(listedNames(f.dav(propfind("/dav/", other)).first) == ["x.jpg"])
    }

    @Test(
        "the same bytes again are 204 and stored once; other bytes of the same or another size are 409 and the kept photo is unchanged"
    )
    func again() throws {
        let f = try DoorFixture()
        let desk = try f.appPassword("desk")
        let png = makePNG(size: 5000, seed: 58)
        var same = png
        same[same.count - 20] ^= 0xFF
        let e = f.dav(
            dav("PUT", "/dav/a.png", desk, body: png), dav("PUT", "/dav/a.png", desk, body: png),
            dav("PUT", "/dav/a.png", desk, body: same), dav("OPTIONS", "/dav/", desk))
        #expect(e.responses.map(\.status) == [201, 204, 409, 200], "\(e.responses.map(\.status))")
        #expect(e[1].header("etag") == "\"\(sha256Hex(png))\"")
        let bigger = f.dav(
            dav("PUT", "/dav/a.png", desk, body: makePNG(size: 7000, seed: 59)), dav("OPTIONS", "/dav/", desk))
        #expect(
            bigger.responses.map(\.status) == [409] && bigger.first.header("connection") == "close",
            "\(bigger.responses)")
        #expect(f.kept() == ["a.png"] && digest(readFile(f.photos + "/a.png")) == digest(png) && f.incoming().isEmpty)
        // The same for a photo the door did not receive (hashed from its file) and chunked.
        let other = makePNG(size: 3000, seed: 60)
        writeFile(f.photos + "/b.png", other)
        let c = f.dav(dav("PUT", "/dav/b.png", desk, body: other, chunked: [1000], expectedLength: true))
        #expect(c.first.status == 204, "\(c.first)")
        #expect(f.kept() == ["a.png", "b.png"])
    }

    @Test("a 0-byte PUT is 201, listed as empty, never a file; a photo PUT onto it then keeps it")
    func empty() throws {
        let f = try DoorFixture()
        let desk = try f.appPassword("desk")
        let png = makePNG(size: 2000, seed: 61)
        let e = f.dav(
            dav("PUT", "/dav/new.png", desk), propfind("/dav/new.png", desk, depth: "0"), propfind("/dav/", desk),
            dav("PUT", "/dav/new.png", desk))
        #expect(e.responses.map(\.status) == [201, 207, 207, 204], "\(e.responses.map(\.status))")
        let entry = try #require(multistatus(e[1])?.first)
        #expect(entry.text("getcontentlength") == "0" && !entry.isCollection)
        #expect(listedNames(e[2]) == ["new.png"])
        #expect(f.everything().filter { !$0.hasPrefix(".") }.isEmpty && f.incoming().isEmpty, "\(f.everything())")
        let put = f.dav(dav("PUT", "/dav/new.png", desk, body: png), dav("PUT", "/dav/new.png", desk))
        #expect(
            put.responses.map(\.status) == [201, 409],
            "an empty PUT never empties a photo: \(put.responses.map(\.status))")
        #expect(f.kept() == ["new.png"] && digest(readFile(f.photos + "/new.png")) == digest(png))
        // Another password does not see this one's placeholder.
        let other = try f.appPassword("laptop")
        f.dav(dav("PUT", "/dav/held.png", desk)).responses.forEach { #expect($0.status == 201) }
        #expect(listedNames(f.dav(propfind("/dav/", other)).first) == ["new.png"])
    }

    @Test(
        "sidecars (._a.png, .DS_Store, Thumbs.db, desktop.ini) are 201, kept under web/dav outside the photos, listed to their password only"
    )
    func sidecars() throws {
        let f = try DoorFixture()
        let desk = try f.appPassword("desk")
        let other = try f.appPassword("laptop")
        writeFile(in: f.photos, "sub/x.png", makePNG(size: 900, seed: 62))
        let names = ["._a.png", ".DS_Store", "Thumbs.db", "desktop.ini", "sub/.DS_Store"]
        var requests: [[UInt8]] = []
        for (i, name) in names.enumerated() {
            requests.append(dav("PUT", "/dav/" + name, desk, body: Array(repeating: UInt8(i + 1), count: 100 + i)))
        }
        let e = f.web(
            requests + [
                propfind("/dav/", desk), propfind("/dav/sub/", desk), dav("PUT", "/dav/.DS_Store", desk, body: [9, 9]),
            ])
        #expect(e.responses.map(\.status) == [201, 201, 201, 201, 201, 207, 207, 204], "\(e.responses.map(\.status))")
        #expect(
            listedNames(e[5]) == ["._a.png", ".DS_Store", "Thumbs.db", "desktop.ini", "sub"].sorted(),
            "\(listedNames(e[5]) ?? [])")
        #expect(listedNames(e[6]) == [".DS_Store", "x.png"])
        #expect(f.kept() == ["sub/x.png"], "\(f.everything())")
        #expect(
            !f.everything().contains {
                $0.hasSuffix(".DS_Store") || $0.contains("._a.png") || $0.hasSuffix("Thumbs.db")
                    || $0.hasSuffix("desktop.ini")
            })
        let kept = listDirectory(f.davState + "/" + desk.id + ".sidecars")
        // Each is its bytes and its path, under the SHA-256 of the path.
        #expect(kept.count == 10, "\(kept)")
        let stored = f.davState + "/" + desk.id + ".sidecars/" + SHA256.hex(of: Array(".DS_Store".utf8))
        #expect(readFile(stored) == [9, 9])
        #expect(readFile(stored + ".path") == Array(".DS_Store".utf8))
        let theirs = f.dav(propfind("/dav/", other), dav("GET", "/dav/.DS_Store", other), propfind("/dav/sub/", other))
        #expect(listedNames(theirs[0]) == ["sub"] && theirs[1].status == 404 && listedNames(theirs[2]) == ["x.png"])
    }

    @Test("a sidecar over 1 MiB is 413 before the body is read")
    func bigSidecar() throws {
        let f = try DoorFixture()
        let desk = try f.appPassword("desk")
        let e = f.dav(
            dav("PUT", "/dav/._big.png", desk, body: Array(repeating: 7, count: (1 << 20) + 1)),
            dav("OPTIONS", "/dav/", desk))
        #expect(e.responses.map(\.status) == [413] && e.first.header("connection") == "close", "\(e.responses)")
        #expect(
            !isDirectory(f.davState + "/" + desk.id + ".sidecars")
                || listDirectory(f.davState + "/" + desk.id + ".sidecars").isEmpty)
        #expect(f.dav(dav("PUT", "/dav/._ok.png", desk, body: Array(repeating: 7, count: 1 << 20))).first.status == 201)
    }

    @Test("a PUT into a folder that does not exist is 409, on the root or a folder 405, all before the body")
    func wrongPlaces() throws {
        let f = try DoorFixture()
        let desk = try f.appPassword("desk")
        writeFile(in: f.photos, "sub/x.png", makePNG(size: 900, seed: 63))
        let png = makePNG(size: 2000, seed: 64)
        for (target, status) in [
            ("/dav/nowhere/a.png", 409), ("/dav/sub/deeper/a.png", 409), ("/dav/", 405), ("/dav", 405),
            ("/dav/sub", 405),
            ("/dav/sub/x.png/a.png", 409),
        ] {
            let e = f.dav(dav("PUT", target, desk, body: png), dav("OPTIONS", "/dav/", desk))
            #expect(
                e.responses.map(\.status) == [status] && e.first.header("connection") == "close",
                "\(target): \(e.responses)")
        }
        #expect(f.kept() == ["sub/x.png"] && f.incoming().isEmpty)
    }
}
