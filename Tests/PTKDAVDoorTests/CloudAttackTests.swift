import Foundation
import PTKTestSupport
import PTKTestTags
import Testing

@testable import PTKDAVDoor
@testable import PTKWebDoor

/// What an independent audit of the Nextcloud-compatible door (issue 57) found an upload
/// password could make the receiver do with small requests, each checked to stay bounded.
@Suite("WebDAV door: the Nextcloud-compatible door under attack", .tags(.unit))
struct CloudAttackTests {
    static let uploads = "/remote.php/dav/uploads/phone"
    static let files = "/remote.php/dav/files/phone"

    @Test(
        "a MOVE of .file whose chunks were read and refused counts: past 3, a MOVE reads nothing (409, DELETE it) and the folder can still be deleted; a MOVE refused before it reads counts for nothing"
    )
    func reassemblyIsBounded() throws {
        let f = try DoorFixture()
        let phone = try f.appPassword("phone", .upload)
        // Two photos of one size: the chunks are read whole (hashed) before the 409.
        let kept = makePNG(size: 6_000, seed: 801)
        let other = makePNG(size: 6_000, seed: 802)
        let folder = Self.uploads + "/again"
        let destination = ("Destination", Self.files + "/x.png")
        let move = dav("MOVE", folder + "/.file", phone, [destination])
        let early = dav("MOVE", folder + "/.file", phone, [destination, ("If-Match", "\"not-its-tag\"")])
        let e = DAVChunkedUploadTests.each(
            f, dav("PUT", Self.files + "/x.png", phone, body: kept), dav("MKCOL", folder, phone),
            dav("PUT", folder + "/1", phone, body: other), early, early, early, early, move, move, move, move,
            dav("DELETE", folder, phone))
        #expect(e.map(\.status) == [201, 201, 201, 412, 412, 412, 412, 409, 409, 409, 409, 204], "\(e.map(\.status))")
        #expect(!e[9].text.contains("DELETE it"), "\(e[9].text)")
        #expect(e[10].text.contains("DELETE it and upload again"), "\(e[10].text)")
        #expect(f.kept().count == 1 && f.incoming().isEmpty, "\(f.everything())")
    }

    @Test(
        "an upload folder left untouched past its age goes at the next request of any kind, not only at the next request below the upload folders"
    )
    func staleFolderGoesWithoutUploads() throws {
        let f = try DoorFixture()
        let phone = try f.appPassword("phone", .upload)
        let door = try #require(f.web.dav)
        // A folder a phone left two days ago, found as at a start: its time is its directory's.
        let folder = door.uploads.directory + "/" + phone.id + "/left"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        writeFile(folder + "/1", [1, 2, 3])
        try FileManager.default.setAttributes(
            [.modificationDate: Date(timeIntervalSinceNow: -2 * 86_400)], ofItemAtPath: folder)
        // Read at a start long enough ago that the next sweep is due.
        door.uploads = DAVUploads(directory: door.uploads.directory, limits: door.uploads.limits, keep: nil, now: 0)
        #expect(door.uploads.folder(phone.id, "left") != nil)
        // The phone only lists its files (a sync client's poll), and never uploads again.
        let e = f.dav(propfind(Self.files + "/", phone, depth: "0"))
        #expect(e.responses.map(\.status) == [207], "\(e.responses)")
        #expect(door.uploads.folder(phone.id, "left") == nil)
        #expect(!FileManager.default.fileExists(atPath: folder))
    }
}
