import PTKDAV
import PTKDigest
import PTKSystem
import PTKTestSupport
import PTKTestTags
import Testing

@testable import PTKDAVDoor
@testable import PTKWebDoor

/// What the attack on the WebDAV door (issue 44) and the second read found, each pinned: a
/// name is the file it was given for, a shared name is the client's only, two spellings are two
/// names, an upload password's locks block no one else, a MOVE onto a held name shows what moved,
/// a sidecar's long name is kept, and a removed password's state goes at the next start.
@Suite("WebDAV door: the attack's findings, mended", .tags(.unit))
struct DAVFindingsTests {
    @Test(
        "a name whose photo was moved away names nothing: another device's photo at that path is not readable, and the client may PUT again"
    )
    func staleName() throws {
        let f = try DoorFixture()
        let phone = try f.appPassword("phone", .upload)
        let other = try f.appPassword("other", .upload)
        let desk = try f.appPassword("desk", .full)
        let mine = makePNG(size: 900, seed: 71)
        let theirs = makePNG(size: 950, seed: 72)
        #expect(f.dav(dav("PUT", "/dav/IMG_1.png", phone, body: mine)).first.status == 201)
        let moved = f.dav(
            dav("MKCOL", "/dav/2025", desk),
            dav("MOVE", "/dav/IMG_1.png", desk, [("Destination", "/dav/2025/IMG_1.png")]))
        #expect(moved.responses.map(\.status) == [201, 201])
        #expect(f.dav(dav("PUT", "/dav/IMG_1.png", other, body: theirs)).first.status == 201)
        #expect(readFile(f.photos + "/IMG_1.png") == theirs)
        let after = f.dav(
            dav("GET", "/dav/IMG_1.png", phone), propfind("/dav/", phone),
            dav("PUT", "/dav/IMG_1.png", phone, body: mine))
        #expect(after.responses.map(\.status) == [404, 207, 201], "\(after.responses.map(\.status))")
        #expect(listedNames(after.responses[1]) == [])
        #expect(f.dav(dav("GET", "/dav/IMG_1.png", phone)).first.body == mine)
    }

    @Test(
        "a PUT of bytes kept already is the client's own name: DELETE and MOVE of it never touch the kept photo, which stays listed"
    )
    func sharedName() throws {
        let f = try DoorFixture()
        let a = try f.appPassword("a", .full)
        let b = try f.appPassword("b", .full)
        let png = makePNG(size: 800, seed: 73)
        #expect(f.dav(dav("PUT", "/dav/holiday.png", b, body: png)).first.status == 201)
        let e = f.dav(
            dav("MKCOL", "/dav/album", a), dav("PUT", "/dav/album/copy.png", a, body: png), propfind("/dav/", a),
            dav("MOVE", "/dav/album/copy.png", a, [("Destination", "/dav/album/copy2.png")]),
            dav("DELETE", "/dav/album/copy2.png", a))
        #expect(e.responses.map(\.status) == [201, 201, 207, 201, 204], "\(e.responses.map(\.status))")
        #expect(listedNames(e.responses[2])?.contains("holiday.png") == true)
        #expect(readFile(f.photos + "/holiday.png") == png)
        #expect(f.kept() == ["holiday.png"], "\(f.everything())")
        #expect(f.dav(dav("GET", "/dav/holiday.png", b)).first.body == png)
    }

    @Test("two spellings of one name (NFC, NFD) are two names: each GET and DELETE reaches its own file")
    func twoSpellings() throws {
        let f = try DoorFixture()
        let a = try f.appPassword("a", .full)
        let nfc = "caf\u{E9}.png"
        let nfd = "cafe\u{301}.png"
        let one = makePNG(size: 700, seed: 74)
        let two = makePNG(size: 710, seed: 75)
        let e = f.dav(
            dav("PUT", "/dav/" + percentEncodedSegment(nfc), a, body: one),
            dav("PUT", "/dav/" + percentEncodedSegment(nfd), a, body: two),
            propfind("/dav/", a), dav("GET", "/dav/" + percentEncodedSegment(nfd), a),
            dav("DELETE", "/dav/" + percentEncodedSegment(nfd), a))
        #expect(e.responses.map(\.status) == [201, 201, 207, 200, 204], "\(e.responses.map(\.status))")
        #expect(listedNames(e.responses[2])?.count == 2)
        #expect(e.responses[3].body == two)
        #expect(readFile(f.photos + "/" + nfc) == one)
        #expect(readFile(f.photos + "/" + nfd) == nil)
    }

    @Test(
        "an upload password's LOCK of /dav/ blocks no one else; another password's token submits nothing and cannot unlock"
    )
    func locksAreTheirPasswords() throws {
        let f = try DoorFixture()
        let phone = try f.appPassword("phone", .upload)
        let desk = try f.appPassword("desk", .full)
        let laptop = try f.appPassword("laptop", .full)
        let root = f.dav(dav("LOCK", "/dav/", phone, [("Depth", "infinity")], body: lockInfo()))
        #expect(root.first.status == 200)
        #expect(f.dav(dav("PUT", "/dav/free.png", desk, body: makePNG(size: 600, seed: 76))).first.status == 201)
        let held = f.dav(dav("LOCK", "/dav/free.png", desk, body: lockInfo()))
        let token = try #require(held.first.header("lock-token"))
        let theirs = f.dav(
            dav("DELETE", "/dav/free.png", laptop, [("If", "(\(token))")]),
            dav("UNLOCK", "/dav/free.png", laptop, [("Lock-Token", token)]))
        #expect(theirs.responses.map(\.status) == [423, 403], "\(theirs.responses.map(\.status))")
        #expect(f.dav(dav("DELETE", "/dav/free.png", desk, [("If", "(\(token))")])).first.status == 204)
    }

    @Test("a MOVE onto a held (empty) name shows the photo that moved there, not an empty file")
    func moveOntoPlaceholder() throws {
        let f = try DoorFixture()
        let desk = try f.appPassword("desk", .full)
        let png = makePNG(size: 650, seed: 77)
        let e = f.dav(
            dav("PUT", "/dav/d.png", desk), dav("PUT", "/dav/c.png", desk, body: png),
            dav("MOVE", "/dav/c.png", desk, [("Destination", "/dav/d.png")]), dav("GET", "/dav/d.png", desk))
        #expect(e.responses.map(\.status) == [201, 201, 204, 200], "\(e.responses.map(\.status))")
        #expect(e.responses[3].body == png)
    }

    @Test("a file of the directory at a name's very path wins over the name (for a full view): nothing real is hidden")
    func realFileWins() throws {
        let f = try DoorFixture()
        let a = try f.appPassword("a", .full)
        let b = try f.appPassword("b", .full)
        let jpeg = makeJPEG(width: 20, height: 20, seed: 80)
        let png = makePNG(size: 640, seed: 81)
        // a's JPEG PUT as x.png is kept as x.jpg, shown to a as x.png.
        #expect(f.dav(dav("PUT", "/dav/x.png", a, body: jpeg)).first.status == 201)
        #expect(f.dav(dav("GET", "/dav/x.png", a)).first.body == jpeg)
        // Then a real x.png arrives (b's PNG): a now finds that file at x.png.
        #expect(f.dav(dav("PUT", "/dav/x.png", b, body: png)).first.status == 201)
        #expect(readFile(f.photos + "/x.png") == png && readFile(f.photos + "/x.jpg") == jpeg)
        let e = f.dav(dav("GET", "/dav/x.png", a), propfind("/dav/", a))
        #expect(e.responses[0].body == png)
        #expect(listedNames(e.responses[1])?.contains("x.png") == true)
    }

    @Test("a sidecar with a long non-ASCII name in deep folders is kept (its file is named by the path's SHA-256)")
    func longSidecar() throws {
        let f = try DoorFixture()
        let desk = try f.appPassword("desk", .full)
        let name = "._" + String(repeating: "写真", count: 30) + ".jpg"
        let folders = ["a" + String(repeating: "é", count: 60), "b" + String(repeating: "ü", count: 60)]
        var requests = [dav("MKCOL", "/dav/" + percentEncodedSegment(folders[0]), desk)]
        requests.append(dav("MKCOL", "/dav/" + folders.map(percentEncodedSegment).joined(separator: "/"), desk))
        let path = "/dav/" + (folders + [name]).map(percentEncodedSegment).joined(separator: "/")
        requests.append(dav("PUT", path, desk, body: [1, 2, 3]))
        requests.append(dav("GET", path, desk))
        let e = f.web(requests)
        #expect(
            e.responses.map(\.status) == [201, 201, 201, 200],
            "\(e.responses.map(\.status)) \(String(decoding: e.responses.last?.body ?? [], as: UTF8.self))")
        #expect(e.responses.last?.body == [1, 2, 3])
    }

    @Test("a removed password's names and sidecars are removed at the next start; a kept password's stay")
    func forgottenAtStart() throws {
        let f = try DoorFixture()
        let gone = try f.appPassword("gone", .upload)
        let kept = try f.appPassword("kept", .upload)
        for account in [gone, kept] {
            let e = f.dav(
                dav("PUT", "/dav/p.png", account, body: makePNG(size: 500, seed: account.name == "gone" ? 78 : 79)),
                dav("PUT", "/dav/.DS_Store", account, body: [1]))
            #expect(e.responses.map(\.status) == [201, 201])
        }
        #expect(try f.appPasswords.remove(name: "gone"))
        // The door as ptkd makes it at its next start, over the same state.
        _ = try DAVEndpoint(
            configuration: f.web.dav.configuration, store: f.web.store, arrivals: f.web.arrivals,
            throttle: f.web.throttle,
            guesses: f.web.guesses, shutdown: f.web.shutdown)
        let left = listDirectory(f.davState)
        #expect(!left.contains { $0.hasPrefix(gone.id) }, "\(left)")
        #expect(left.contains(kept.id + ".names") && left.contains(kept.id + ".sidecars"), "\(left)")
    }
}

/// A path segment percent-encoded byte by byte (unreserved bytes as they are).
func percentEncodedSegment(_ text: String) -> String {
    var out = ""
    for b in text.utf8 {
        if (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || b == 0x2D || b == 0x2E
            || b == 0x5F || b == 0x7E
        {
            out.append(Character(Unicode.Scalar(b)))
        } else {
            let hex = Array("0123456789ABCDEF")
            out += "%" + String(hex[Int(b >> 4)]) + String(hex[Int(b & 15)])
        }
    }
    return out
}
