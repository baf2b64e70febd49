import Foundation
import Glibc
import PTKConfiguration
import PTKDAV
import PTKTestSupport
import PTKTestTags
import Testing

@testable import PTKDAVDoor

/// A PROPFIND body naming DAV: and ownCloud properties, as the sync clients send it.
func cloudPropfind(_ path: String, _ account: DAVAccount?, depth: String = "1") -> [UInt8] {
    let body =
        "<?xml version=\"1.0\"?><d:propfind xmlns:d=\"DAV:\" xmlns:oc=\"http://owncloud.org/ns\" xmlns:nc=\"http://nextcloud.org/ns\"><d:prop>"
        + "<d:resourcetype/><d:getlastmodified/><d:getcontentlength/><d:getetag/><oc:size/><oc:id/><oc:fileid/>"
        + "<oc:permissions/><oc:checksums/><oc:data-fingerprint/><nc:has-preview/></d:prop></d:propfind>"
    return dav("PROPFIND", path, account, [("Depth", depth)], body: Array(body.utf8))
}

extension DAVEntry {
    /// An ownCloud property's text (nil when not answered 200).
    func oc(_ local: String) -> String? {
        guard let p = properties[XMLName("http://owncloud.org/ns", local)], p.status == 200 else { return nil }
        return p.element.text
    }
}

/// The WebDAV door at the Nextcloud-compatible paths (issue 57), over a scripted connection:
/// one view per password whichever path it uses, what the sync clients read and send, and
/// nothing of another password's.
@Suite("Nextcloud-compatible WebDAV paths", .tags(.unit))
struct CloudMountTests {
    func fixture() throws -> (DoorFixture, phone: DAVAccount, tablet: DAVAccount) {
        let f = try DoorFixture { $0.layout = try! FolderLayout(parsing: "sender") }
        return (f, try f.appPassword("phone", .upload), try f.appPassword("tablet", .upload))
    }

    @Test(
        "a PUT with X-OC-Mtime: 201 with OC-FileId, OC-ETag and X-OC-MTime, the file's time, and a listing that says the same"
    )
    func putAnswersWhatClientsRead() throws {
        let (f, phone, _) = try fixture()
        let png = makePNG(size: 4000, seed: 80)
        // A PUT into a folder not made yet is 409 (and closes the connection: its body unread).
        #expect(
            f.dav(
                dav(
                    "PUT", "/remote.php/dav/files/phone/Camera/IMG_1.png", phone, [("X-OC-Mtime", "1650000000")],
                    body: png)
            ).first.status == 409)
        let e = f.dav(
            dav("MKCOL", "/remote.php/dav/files/phone/Camera", phone),
            dav(
                "PUT", "/remote.php/dav/files/phone/Camera/IMG_1.png", phone, [("X-OC-Mtime", "1650000000")], body: png),
            cloudPropfind("/remote.php/dav/files/phone/Camera", phone))
        #expect(e.responses.map(\.status) == [201, 201, 207], "\(e.responses.map(\.status))")
        #expect(e[0].header("oc-fileid") != nil)
        let put = e[1]
        let sha = sha256Hex(png)
        #expect(put.header("oc-etag") == "\"\(sha)\"")
        #expect(put.header("etag") == "\"\(sha)\"")
        #expect(put.header("x-oc-mtime") == "accepted")
        #expect(put.header("date")?.hasSuffix(" GMT") == true)
        let kept = f.photos + "/dav: phone/Camera/IMG_1.png"
        var st = stat()
        #expect(stat(kept, &st) == 0 && st.st_mtim.tv_sec == 1_650_000_000)
        guard let entries = multistatus(e[2]), entries.count == 2 else {
            Issue.record("no listing: \(e[2])")
            return
        }
        #expect(entries[0].path == "/remote.php/dav/files/phone/Camera/")
        #expect(entries[0].oc("permissions") == "GCK")
        #expect(entries[0].text("getetag")?.isEmpty == false)
        #expect(entries[0].text("getcontentlength") == "0")
        let photo = entries[1]
        #expect(photo.path == "/remote.php/dav/files/phone/Camera/IMG_1.png")
        #expect(photo.oc("id") == put.header("oc-fileid"))
        #expect(photo.text("getetag") == put.header("etag"))
        #expect(photo.oc("size") == "\(png.count)")
        #expect(photo.oc("permissions") == "G")
        let checksums = photo.properties[XMLName("http://owncloud.org/ns", "checksums")]?.element
        #expect(checksums?.child(XMLName("http://owncloud.org/ns", "checksum"))?.text == "SHA256:" + sha)
        #expect(photo.text("getlastmodified") == "Fri, 15 Apr 2022 05:20:00 GMT")
        // Never a data fingerprint: a client that sees one change takes the server for a restored backup.
        #expect(photo.oc("data-fingerprint") == nil && entries[0].oc("data-fingerprint") == nil)
        // The plain door knows none of the ownCloud properties.
        let plain = f.dav(cloudPropfind("/dav/Camera/IMG_1.png", phone, depth: "0"))
        #expect(multistatus(plain.first)?.first?.oc("id") == nil)
    }

    @Test("one view whichever path: /dav, /remote.php/webdav and /remote.php/dav/files/NAME list the same photo")
    func oneView() throws {
        let (f, phone, _) = try fixture()
        let png = makePNG(size: 4000, seed: 81)
        let e = f.dav(
            dav("PUT", "/remote.php/webdav/a.png", phone, body: png), propfind("/dav/", phone),
            propfind("/remote.php/dav/files/phone/", phone), propfind("/remote.php/dav/files/%70hone/", phone))
        #expect(e.responses.map(\.status) == [201, 207, 207, 207], "\(e.responses.map(\.status))")
        #expect(listedNames(e[1]) == ["a.png"])
        #expect(listedNames(e[2]) == ["a.png"])
        #expect(listedNames(e[3]) == ["a.png"])
        #expect(f.kept() == ["dav: phone/a.png"])
    }

    @Test(
        "another password's name, none, or a path trick under the compatible paths reaches nothing, and stores nothing")
    func othersAndTricks() throws {
        let (f, phone, tablet) = try fixture()
        #expect(
            f.dav(dav("PUT", "/remote.php/dav/files/tablet/t.png", tablet, body: makePNG(size: 3000, seed: 82))).first
                .status == 201)
        let png = makePNG(size: 4000, seed: 83)
        // One connection each: a refused PUT closes its connection, its body unread.
        let requests = [
            propfind("/remote.php/dav/files/tablet/", phone), dav("GET", "/remote.php/dav/files/tablet/t.png", phone),
            dav("PUT", "/remote.php/dav/files/tablet/x.png", phone, body: png),
            propfind("/remote.php/dav/files/", phone), propfind("/remote.php/dav/files", phone),
            dav("PUT", "/remote.php/dav/files/phone/../tablet/y.png", phone, body: png),
            dav("PUT", "/remote.php/dav/files/phone/a%2F..%2F..%2Fy.png", phone, body: png),
            propfind("/remote.php/dav/files/phone/.incoming/", phone),
            dav("PUT", "/remote.php/webdav/..%2Fz.png", phone, body: png),
            propfind("/remote.php/dav/files/PHONE/", phone),
        ]
        let statuses = requests.map { f.dav($0).first.status }
        #expect(statuses == [404, 404, 404, 404, 404, 400, 400, 404, 400, 404], "\(statuses)")
        #expect(f.kept() == ["dav: tablet/t.png"], "\(f.kept())")
        #expect(f.incoming().isEmpty)
    }

    @Test("a folder's ETag changes with what is added below it, and its time is never 1970")
    func folderTags() throws {
        let (f, phone, _) = try fixture()
        let root = "/remote.php/dav/files/phone/"
        let a = f.dav(
            dav("MKCOL", root + "A", phone), dav("MKCOL", root + "A/B", phone), cloudPropfind(root, phone, depth: "0"),
            cloudPropfind(root + "A", phone, depth: "0"))
        #expect(a.responses.map(\.status) == [201, 201, 207, 207])
        let before = (multistatus(a[2])?.first?.text("getetag"), multistatus(a[3])?.first?.text("getetag"))
        let b = f.dav(
            dav(
                "PUT", root + "A/B/deep.png", phone, [("X-OC-Mtime", "1700000000")], body: makePNG(size: 3000, seed: 84)
            ),
            cloudPropfind(root, phone, depth: "0"), cloudPropfind(root + "A", phone, depth: "0"),
            cloudPropfind(root + "A", phone, depth: "0"))
        #expect(b.responses.map(\.status) == [201, 207, 207, 207])
        let after = (multistatus(b[1])?.first?.text("getetag"), multistatus(b[2])?.first?.text("getetag"))
        #expect(before.0 != nil && before.0 != after.0)
        #expect(before.1 != nil && before.1 != after.1)
        // Stable while nothing changes.
        #expect(multistatus(b[3])?.first?.text("getetag") == after.1)
        #expect(multistatus(b[2])?.first?.text("getlastmodified") == "Tue, 14 Nov 2023 22:13:20 GMT")
    }

    @Test(
        "a photo the receiver removed stays listed as sent to the upload password: same ETag, GET 404, same bytes 204, others 409"
    )
    func removedStaysListed() throws {
        let (f, phone, _) = try fixture()
        let png = makePNG(size: 4000, seed: 85)
        let url = "/remote.php/dav/files/phone/IMG_9.png"
        let first = f.dav(dav("PUT", url, phone, body: png), cloudPropfind(url, phone, depth: "0"))
        #expect(first.responses.map(\.status) == [201, 207])
        #expect(unlink(f.photos + "/dav: phone/IMG_9.png") == 0)
        let e = f.dav(
            cloudPropfind(url, phone, depth: "0"), dav("GET", url, phone), dav("PUT", url, phone, body: png),
            dav("DELETE", url, phone))
        #expect(e.responses.map(\.status) == [207, 404, 204, 403], "\(e.responses.map(\.status))")
        #expect(f.dav(dav("PUT", url, phone, body: makePNG(size: 4000, seed: 86))).first.status == 409)
        #expect(multistatus(e[0])?.first?.text("getetag") == multistatus(first[1])?.first?.text("getetag"))
        #expect(multistatus(e[0])?.first?.oc("id") == multistatus(first[1])?.first?.oc("id"))
        #expect(e[2].header("oc-fileid") != nil)
        // Through ptk's own /dav the name is as the door always said: gone with its file.
        #expect(f.dav(propfind("/dav/IMG_9.png", phone, depth: "0")).first.status == 207)
    }

    @Test("a full password: the directory as it is, every right, and a folder ETag new at each look")
    func fullPassword() throws {
        let (f, _, _) = try fixture()
        let desk = try f.appPassword("desk")
        let e = f.dav(
            dav("PUT", "/remote.php/dav/files/desk/a.png", desk, body: makePNG(size: 3000, seed: 87)),
            cloudPropfind("/remote.php/dav/files/desk/", desk), cloudPropfind("/remote.php/dav/files/desk/", desk))
        #expect(e.responses.map(\.status) == [201, 207, 207])
        let entries = multistatus(e[1]) ?? []
        #expect(entries.first?.oc("permissions") == "RGDNVCK")
        #expect(entries.first { $0.name == "a.png" }?.oc("permissions") == "RGDNVW")
        #expect(multistatus(e[2])?.first?.text("getetag") != entries.first?.text("getetag"))
    }

    @Test(
        "what is not a photo is refused 415 in SabreDAV's error body, whose message the apps show; /dav keeps plain text"
    )
    func refusalsTheAppsShow() throws {
        let (f, phone, _) = try fixture()
        let text = Array("not a photo at all\n".utf8)
        let cloud = f.dav(dav("PUT", "/remote.php/dav/files/phone/notes.txt", phone, body: text)).first
        #expect(cloud.status == 415)
        #expect(cloud.header("content-type") == "application/xml; charset=utf-8")
        let body = String(decoding: cloud.body, as: UTF8.self)
        #expect(body.contains("<s:exception>Sabre\\DAV\\Exception\\UnsupportedMediaType</s:exception>"), "\(body)")
        #expect(body.contains("<s:message>not a photo this receiver keeps"), "\(body)")
        #expect(xml(cloud)?.name == .dav("error"))
        let plain = f.dav(dav("PUT", "/dav/notes.txt", phone, body: text)).first
        #expect(plain.status == 415)
        #expect(plain.header("content-type") == "text/plain; charset=utf-8")
        #expect(f.kept().isEmpty && f.incoming().isEmpty)
    }

    @Test("a PUT whose OC-Total-Length is not its body's size is 400, nothing stored")
    func totalLengthHonoured() throws {
        let (f, phone, _) = try fixture()
        let png = makePNG(size: 4000, seed: 88)
        let url = "/remote.php/dav/files/phone/t.png"
        let longer = f.dav(dav("PUT", url, phone, [("OC-Total-Length", "\(png.count + 1000)")], body: png)).first
        let banana = f.dav(dav("PUT", url, phone, [("OC-Total-Length", "banana")], body: png)).first
        #expect(longer.status == 400 && banana.status == 400)
        #expect(String(decoding: longer.body, as: UTF8.self).contains("OC-Total-Length says"))
        #expect(f.kept().isEmpty && f.incoming().isEmpty)
        let right = f.dav(dav("PUT", url, phone, [("OC-Total-Length", "\(png.count)")], body: png)).first
        #expect(right.status == 201)
    }

    @Test(
        "elsewhere below /remote.php: WebDAV's 401 with its challenge, or 404 in SabreDAV's body; never the web pages")
    func restOfRemotePHP() throws {
        let (f, phone, _) = try fixture()
        let anonymous = f.dav(propfind("/remote.php/dav/", nil)).first
        #expect(anonymous.status == 401)
        #expect(anonymous.header("www-authenticate")?.hasPrefix("Basic") == true)
        for path in ["/remote.php/dav/", "/remote.php", "/remote.php/caldav/", "/remote.php/dav/avatars/phone/"] {
            let r = f.dav(propfind(path, phone)).first
            #expect(r.status == 404, "\(path)")
            #expect(r.header("content-type") == "application/xml; charset=utf-8", "\(path)")
        }
    }
}
