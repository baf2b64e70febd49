import PTKConfiguration
import PTKDAV
import PTKStore
import PTKTestSupport
import PTKTestTags
import Testing

@testable import PTKDAVDoor

/// An `upload` app password over a scripted connection: its photos land where the layout says,
/// it sees only what it sent under the names it used, and it may add but never take away.
@Suite("WebDAV door: upload access", .tags(.unit))
struct DAVUploadAccessTests {
    /// A fixture filing photos by sender, with upload passwords "phone" and "tablet".
    func fixture() throws -> (DoorFixture, phone: DAVAccount, tablet: DAVAccount) {
        let f = try DoorFixture { $0.layout = try! FolderLayout(parsing: "sender") }
        return (f, try f.appPassword("phone", .upload), try f.appPassword("tablet", .upload))
    }

    @Test(
        "a PUT lands in the layout's folder for \"dav: NAME\"; the password lists only its photo, at its root, under the name it used"
    )
    func landsInLayoutFolder() throws {
        let (f, phone, _) = try fixture()
        let png = makePNG(size: 4000, seed: 70)
        let e = f.dav(
            dav("PUT", "/dav/IMG_1.png", phone, body: png), propfind("/dav/", phone),
            dav("GET", "/dav/IMG_1.png", phone),
            propfind("/dav/IMG_1.png", phone, depth: "0"))
        #expect(e.responses.map(\.status) == [201, 207, 200, 207], "\(e.responses.map(\.status))")
        let folder = PhotoStore.folderName("dav: phone")
        #expect(folder == "dav: phone")
        #expect(f.kept() == [folder + "/IMG_1.png"], "\(f.kept())")
        #expect(digest(readFile(f.photos + "/" + folder + "/IMG_1.png")) == digest(png))
        #expect(listedNames(e[1]) == ["IMG_1.png"], "\(listedNames(e[1]) ?? [])")
        #expect(digest(e[2].body) == digest(png))
        #expect(multistatus(e[3])?.first?.text("getetag") == "\"\(sha256Hex(png))\"")
        // A full password sees the directory as it is.
        let desk = try f.appPassword("desk")
        #expect(listedNames(f.dav(propfind("/dav/", desk)).first) == [folder])
    }

    @Test("another upload password sees none of its photos, and cannot GET them by the name used or the kept path")
    func othersInvisible() throws {
        let (f, phone, tablet) = try fixture()
        let png = makePNG(size: 4000, seed: 71)
        #expect(f.dav(dav("PUT", "/dav/IMG_1.png", phone, body: png)).first.status == 201)
        let e = f.dav(
            propfind("/dav/", tablet), dav("GET", "/dav/IMG_1.png", tablet),
            dav("GET", "/dav/dav%3A%20phone/IMG_1.png", tablet),
            propfind("/dav/dav%3A%20phone/", tablet), dav("GET", "/dav/dav%3A%20phone/IMG_1.png", phone))
        #expect(e.responses.map(\.status) == [207, 404, 404, 404, 404], "\(e.responses.map(\.status))")
        #expect(listedNames(e[0]) == [])
    }

    @Test("a photo someone else already sent is not stored again, and is listed to this client under its own name")
    func duplicateListedUnderClientName() throws {
        let (f, phone, tablet) = try fixture()
        let png = makePNG(size: 4000, seed: 72)
        #expect(f.dav(dav("PUT", "/dav/IMG_1.png", phone, body: png)).first.status == 201)
        let e = f.dav(
            dav("PUT", "/dav/copy%20of%20it.png", tablet, body: png), propfind("/dav/", tablet),
            dav("GET", "/dav/copy%20of%20it.png", tablet),
            dav("PUT", "/dav/copy%20of%20it.png", tablet, body: png))
        #expect(e.responses.map(\.status) == [201, 207, 200, 204], "\(e.responses.map(\.status))")
        #expect(f.kept() == ["dav: phone/IMG_1.png"], "stored once: \(f.kept())")
        #expect(listedNames(e[1]) == ["copy of it.png"])
        #expect(digest(e[2].body) == digest(png))
        #expect(listedNames(f.dav(propfind("/dav/", phone)).first) == ["IMG_1.png"])
    }

    @Test("DELETE and MOVE of its photos and folders are 403, and nothing changes")
    func noTakingAway() throws {
        let (f, phone, _) = try fixture()
        let png = makePNG(size: 4000, seed: 73)
        let e = f.dav(
            dav("MKCOL", "/dav/trip", phone), dav("PUT", "/dav/trip/a.png", phone, body: png),
            dav("DELETE", "/dav/trip/a.png", phone),
            dav("MOVE", "/dav/trip/a.png", phone, [("Destination", "/dav/trip/b.png")]),
            dav("DELETE", "/dav/trip", phone), dav("MOVE", "/dav/trip", phone, [("Destination", "/dav/other")]),
            dav("COPY", "/dav/trip/a.png", phone, [("Destination", "/dav/trip/c.png")]), propfind("/dav/trip/", phone))
        #expect(e.responses.map(\.status) == [201, 201, 403, 403, 403, 403, 403, 207], "\(e.responses.map(\.status))")
        #expect(
            f.kept() == ["dav: phone/trip/a.png"]
                && digest(readFile(f.photos + "/dav: phone/trip/a.png")) == digest(png))
        #expect(listedNames(e[7]) == ["a.png"])
        #expect(listedNames(f.dav(propfind("/dav/", phone)).first) == ["trip"])
    }

    @Test(
        "MKCOL makes a folder in its view alone (no directory until a photo lands); a PUT below it lands below the layout's folder"
    )
    func virtualFolders() throws {
        let (f, phone, tablet) = try fixture()
        let before = f.everything()
        let e = f.dav(
            dav("MKCOL", "/dav/2024", phone), dav("MKCOL", "/dav/2024/summer", phone), propfind("/dav/", phone),
            propfind("/dav/2024/", phone), dav("MKCOL", "/dav/2024", phone), dav("MKCOL", "/dav/none/x", phone))
        #expect(e.responses.map(\.status) == [201, 201, 207, 207, 405, 409], "\(e.responses.map(\.status))")
        #expect(f.everything() == before, "no directory made: \(f.everything())")
        let listed = try #require(multistatus(e[2]))
        #expect(listed.dropFirst().map(\.name) == ["2024"] && listed.dropFirst().allSatisfy(\.isCollection))
        #expect(listedNames(e[3]) == ["summer"])
        #expect(listedNames(f.dav(propfind("/dav/", tablet)).first) == [], "the other password does not see it")
        let png = makePNG(size: 3000, seed: 74)
        let put = f.dav(
            dav("PUT", "/dav/2024/summer/beach.png", phone, body: png), propfind("/dav/2024/summer/", phone))
        #expect(put.responses.map(\.status) == [201, 207], "\(put.responses)")
        #expect(f.kept() == ["dav: phone/2024/summer/beach.png"], "\(f.kept())")
        #expect(listedNames(put[1]) == ["beach.png"])
    }

    @Test("its names survive the door being built again (a restart of ptkd)")
    func namesPersist() throws {
        let root = makeTemporaryDirectory("ptk-davnames")
        defer { removeTree(root) }
        let jpeg = makeJPEG(width: 30, height: 30, seed: 75)
        let configure = { (c: inout DaemonConfiguration) in
            c.directory = root + "/photos"
            c.stateDirectory = root + "/state"
            c.layout = try! FolderLayout(parsing: "sender")
            c.library = false  // the fixture would make one in its own directory
        }
        let phone: DAVAccount
        do {
            let f = try DoorFixture(configure)
            phone = try f.appPassword("phone", .upload)
            let e = f.dav(dav("MKCOL", "/dav/trip", phone), dav("PUT", "/dav/trip/pic.png", phone, body: jpeg))
            #expect(e.responses.map(\.status) == [201, 201])
        }
        let g = try DoorFixture(configure)
        let e = g.dav(propfind("/dav/trip/", phone), dav("GET", "/dav/trip/pic.png", phone))
        #expect(e.responses.map(\.status) == [207, 200], "\(e.responses.map(\.status))")
        #expect(listedNames(e[0]) == ["pic.png"] && digest(e[1].body) == digest(jpeg))
    }
}
