import Foundation
import PTKTestSupport
import PTKTestTags
import Testing

// A Finder-shaped session: what macOS's WebDAVFS sends when a user connects to the door
// ("Connect to Server") and drags a folder of photos onto it, scripted request by request.
// Sources, from the search of public material (the test follows their common shape):
// - sabre.io/dav/clients/finder (sabre-io docs): the mount-time OPTIONS and PROPFINDs of the
//   root, a separate quota PROPFIND (quota-available-bytes, quota-used-bytes, quota, quotaused),
//   the probes of ._., .DS_Store, mach_kernel, .Spotlight-V100, Backups.backupdb,
//   .metadata_never_index and Contents; properties getlastmodified, getcontentlength,
//   resourcetype; PUT bodies chunked; read-only without locking.
// - The LOCK body with owner <D:href>http://www.apple.com/webdav_fs/</D:href>, quoted in
//   several servers' code comments (the code corpus).
// - pydio/pydio-core#581 (WebDAVFS/3.0.1 log): PUT of ._NAME, LOCK of a not-yet-existing ._NAME
//   answered 201, UNLOCK 204, GET/PROPFIND of ._NAME, a chunked PUT a server refused (411) and
//   a PUT without the token answered 423.
// - couling/WebDAV-Daemon#18 and #21 (WebDAVFS/3.0.0 Darwin/19.6.0): LOCK, then PUT, then a
//   PROPFIND of the new file; Finder reads (GET, PROPFIND) a file it locked without sending
//   the token, so those must not wait on the lock.
// - mar10/wsgidav#15: Finder locks both NAME and ._NAME while it copies.
// - erlyaws/yaws#125: Finder spells it "Transfer-Encoding: Chunked".
// - miquels/webdav-handler-rs#18, ESP32Async/ESPAsyncWebServer#375, cs3org/reva
//   (sufferMacOSFinder): Finder's chunked PUT announces its length in X-Expected-Entity-Length.
// - A 0-byte PUT first (Finder creates the file, then writes it): cloudreve and nginx threads;
//   the door holds it as a placeholder, never a file among the photos.
// The sequence, for each file F copied into the folder Holiday:
//   PROPFIND F (404), PUT F with 0 bytes (201), LOCK F (200 or 201, a token), PROPFIND F
//   (207, length 0), PROPFIND ._F (404), LOCK ._F (201: a lock-null resource), PUT ._F chunked
//   with If: (<token>) (2xx), PUT F chunked with X-Expected-Entity-Length and If: (<token>)
//   (2xx), PROPFIND F (207, its length), UNLOCK ._F and F (204); and .DS_Store at the end.

let finderAgent = "WebDAVFS/3.0.0 (03008000) Darwin/22.1.0 (x86_64)"

/// An AppleDouble file as Finder writes beside each file it copies (`._NAME`): the header
/// (magic 0x00051607, version 2, "Mac OS X" filler, two entries) padded to 4096 bytes.
func appleDouble(_ seed: UInt8) -> [UInt8] {
    var bytes: [UInt8] =
        [0x00, 0x05, 0x16, 0x07, 0x00, 0x02, 0x00, 0x00] + Array("Mac OS X        ".utf8) + [0x00, 0x02]
    bytes += [0, 0, 0, 9, 0, 0, 0, 0x32, 0, 0, 0x0E, 0xB0]  // Finder info at 50, 3760 bytes
    bytes += [0, 0, 0, 2, 0, 0, 0x0E, 0xE2, 0, 0, 0x01, 0x1E]  // resource fork at 3810, 286 bytes
    bytes += Array(repeating: seed, count: 4096 - bytes.count)
    return bytes
}

@Suite("End to end: a Finder-shaped WebDAV session (issue 44)", .serialized, .tags(.endToEnd))
struct DAVFinderSessionTests {
    @Test(
        "mount, then a folder of PNG, JPEG and HEIC copied in as WebDAVFS copies it (0-byte create, locks, chunked PUTs with If:, ._ files, .DS_Store): every answer is what Finder needs, the photos are byte-identical and alone in the photos directory"
    )
    func finderCopiesAFolder() throws {
        let d = try DaemonProcess.withDAV()
        let pw = try d.appPassword("MacBook", access: "upload")
        let finder = try DAVSession(port: d.webPort, userAgent: finderAgent, authorization: nil)
        func expectStatus(
            _ r: DAVResponse, _ allowed: Set<Int>, _ what: String, sourceLocation: SourceLocation = #_sourceLocation
        ) {
            #expect(
                allowed.contains(r.status), "\(what): \(r)\n\(finder.transcript.joined(separator: "\n"))",
                sourceLocation: sourceLocation)
        }

        // Connecting: the first OPTIONS has no credentials, and must get the challenge.
        let challenge = try finder.send("OPTIONS", "/dav/")
        expectStatus(challenge, [401], "OPTIONS without credentials")
        #expect(challenge.header("www-authenticate").map(isPTKChallenge) == true, "\(challenge)")
        finder.authorization = pw.basic
        let options = try finder.send("OPTIONS", "/dav/")
        expectStatus(options, [200], "OPTIONS")
        // Without class 2 Finder mounts read-only.
        #expect(
            options.header("dav")?.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.contains("2")
                == true, "\(options)")
        let root = try finder.send(
            "PROPFIND", "/dav/", headers: [("Depth", "0"), ("Content-Type", "text/xml")], body: finderPropfind)
        expectStatus(root, [207], "PROPFIND of the share")
        #expect(multistatus(root.text).first?.isCollection == true, "\(root)")
        let quota = try finder.send(
            "PROPFIND", "/dav/", headers: [("Depth", "0"), ("Content-Type", "text/xml")],
            body: Array(
                """
                <?xml version="1.0" encoding="utf-8"?>
                <D:propfind xmlns:D="DAV:">
                <D:prop>
                <D:quota-available-bytes/>
                <D:quota-used-bytes/>
                <D:quota/>
                <D:quotaused/>
                </D:prop>
                </D:propfind>

                """.utf8))
        expectStatus(quota, [207], "the quota PROPFIND")
        for probe in [
            "._.", ".DS_Store", "mach_kernel", ".Spotlight-V100", "Backups.backupdb", ".metadata_never_index",
            "Contents", "._.DS_Store",
        ] {
            expectStatus(
                try finder.send("PROPFIND", "/dav/" + probe, headers: [("Depth", "0")], body: finderPropfind), [404],
                "probe \(probe)")
        }
        let listing = try finder.send("PROPFIND", "/dav/", headers: [("Depth", "1")], body: finderPropfind)
        expectStatus(listing, [207], "PROPFIND Depth 1 of the share")
        #expect(
            listedNames(listing.text, in: "/dav/").isEmpty, "an upload password sees only what it sent: \(listing.text)"
        )

        // The folder.
        expectStatus(
            try finder.send("PROPFIND", "/dav/Holiday", headers: [("Depth", "0")], body: finderPropfind), [404],
            "PROPFIND of the new folder")
        expectStatus(try finder.send("MKCOL", "/dav/Holiday/"), [201], "MKCOL")
        let empty = try finder.send("PROPFIND", "/dav/Holiday/", headers: [("Depth", "1")], body: finderPropfind)
        expectStatus(empty, [207], "PROPFIND Depth 1 of the new folder")

        let photos: [(String, [UInt8])] = [
            ("IMG_0001.png", makePNG(size: 40_000, seed: 71)),
            ("IMG_0002.jpg", makeJPEG(width: 160, height: 120, seed: 72)),
            ("IMG_0003.HEIC", readFile(fixturePath("heif/display-p3-icc.heic")) ?? []),
        ]
        for (index, (name, bytes)) in photos.enumerated() {
            let path = "/dav/Holiday/" + name
            let fork = "/dav/Holiday/._" + name
            expectStatus(
                try finder.send("PROPFIND", path, headers: [("Depth", "0")], body: finderPropfind), [404],
                "PROPFIND \(name) before the copy")
            // Finder creates the file empty, then locks it.
            expectStatus(
                try finder.send("PUT", path, headers: [("Content-Type", "application/octet-stream")]), [201],
                "the 0-byte create of \(name)")
            #expect(d.photoFiles["Holiday/" + name] == nil, "the 0-byte placeholder is never a file among the photos")
            let lock = try finder.send(
                "LOCK", path,
                headers: [("Depth", "0"), ("Timeout", "Second-600"), ("Content-Type", "text/xml; charset=\"utf-8\"")],
                body: lockInfo(owner: "http://www.apple.com/webdav_fs/"))
            expectStatus(lock, [200, 201], "LOCK \(name)")
            let token = try #require(lockToken(lock), "LOCK \(name) gave no Lock-Token: \(lock)")
            #expect(lock.text.contains(token), "the lockdiscovery names the token: \(lock.text)")
            let created = try finder.send("PROPFIND", path, headers: [("Depth", "0")], body: finderPropfind)
            expectStatus(created, [207], "PROPFIND of the created \(name)")
            #expect(multistatus(created.text).first?.length == 0, "\(created.text)")
            // The AppleDouble file: a lock-null resource first, then its bytes.
            expectStatus(
                try finder.send("PROPFIND", fork, headers: [("Depth", "0")], body: finderPropfind), [404],
                "PROPFIND ._\(name)")
            let forkLock = try finder.send(
                "LOCK", fork,
                headers: [("Depth", "0"), ("Timeout", "Second-600"), ("Content-Type", "text/xml; charset=\"utf-8\"")],
                body: lockInfo(owner: "http://www.apple.com/webdav_fs/"))
            expectStatus(forkLock, [201], "LOCK of the unmapped ._\(name) (a lock-null resource)")
            let forkToken = try #require(lockToken(forkLock), "\(forkLock)")
            let header = appleDouble(UInt8(index + 1))
            expectStatus(
                try finder.send(
                    "PUT", fork,
                    headers: [("If", "(<\(forkToken)>)"), ("X-Expected-Entity-Length", "\(header.count)")],
                    body: header, chunked: 1024, chunkedSpelling: "Chunked"), [200, 201, 204], "PUT ._\(name)")
            // Another writer without the token is kept out.
            expectStatus(
                try finder.send("PUT", path, body: bytes), [423], "PUT of the locked \(name) without its token")
            // The bytes, chunked, with the token and the length announced.
            expectStatus(
                try finder.send(
                    "PUT", path, headers: [("If", "(<\(token)>)"), ("X-Expected-Entity-Length", "\(bytes.count)")],
                    body: bytes, chunked: 32 << 10, chunkedSpelling: "Chunked"), [200, 201, 204], "PUT \(name)")
            #expect(
                d.photoFiles["Holiday/" + name] == bytes, "\(name) is in the photos directory once its PUT is answered")
            // Finder reads it back while still holding the lock, without the token.
            let written = try finder.send("PROPFIND", path, headers: [("Depth", "0")], body: finderPropfind)
            expectStatus(written, [207], "PROPFIND of the written \(name)")
            #expect(multistatus(written.text).first?.length == bytes.count, "\(written.text)")
            expectStatus(
                try finder.send("UNLOCK", fork, headers: [("Lock-Token", "<\(forkToken)>")]), [204], "UNLOCK ._\(name)")
            expectStatus(
                try finder.send("UNLOCK", path, headers: [("Lock-Token", "<\(token)>")]), [204], "UNLOCK \(name)")
        }
        // The folder's .DS_Store, last, the same way.
        let store = Array("Bud1".utf8) + Array(repeating: 0, count: 6140)
        let storeLock = try finder.send(
            "LOCK", "/dav/Holiday/.DS_Store", headers: [("Depth", "0"), ("Timeout", "Second-600")],
            body: lockInfo(owner: "http://www.apple.com/webdav_fs/"))
        expectStatus(storeLock, [201], "LOCK of the unmapped .DS_Store")
        let storeToken = try #require(lockToken(storeLock), "\(storeLock)")
        expectStatus(
            try finder.send(
                "PUT", "/dav/Holiday/.DS_Store",
                headers: [("If", "(<\(storeToken)>)"), ("X-Expected-Entity-Length", "\(store.count)")],
                body: store, chunked: 4096, chunkedSpelling: "Chunked"), [200, 201, 204], "PUT .DS_Store")
        expectStatus(
            try finder.send("UNLOCK", "/dav/Holiday/.DS_Store", headers: [("Lock-Token", "<\(storeToken)>")]), [204],
            "UNLOCK .DS_Store")

        // What Finder then shows: everything it wrote, litter included, with the right sizes.
        let folder = try finder.send("PROPFIND", "/dav/Holiday/", headers: [("Depth", "1")], body: finderPropfind)
        expectStatus(folder, [207], "PROPFIND Depth 1 of the folder")
        var expectedNames: Set<String> = [".DS_Store"]
        for (name, _) in photos { expectedNames.formUnion([name, "._" + name]) }
        #expect(listedNames(folder.text, in: "/dav/Holiday/") == expectedNames, "\(folder.text)")
        let lengths = Dictionary(
            multistatus(folder.text).map { ($0.href.split(separator: "/").last.map(String.init) ?? "", $0.length) }
        ) { a, _ in a }
        for (index, (name, bytes)) in photos.enumerated() {
            #expect(lengths[name] == bytes.count && lengths["._" + name] == 4096, "\(name): \(lengths)")
            let get = try finder.send("GET", "/dav/Holiday/" + name)
            #expect(get.status == 200 && get.body == bytes, "GET \(name): \(get.status)")
            let fork = try finder.send("GET", "/dav/Holiday/._" + name)
            #expect(fork.status == 200 && fork.body == appleDouble(UInt8(index + 1)), "GET ._\(name): \(fork.status)")
        }
        let share = try finder.send("PROPFIND", "/dav/", headers: [("Depth", "1")], body: finderPropfind)
        #expect(listedNames(share.text, in: "/dav/") == ["Holiday/"], "\(share.text)")
        // The photos directory: the three photos, byte-identical, and nothing else.
        var expected: [String: [UInt8]] = [:]
        for (name, bytes) in photos { expected["Holiday/" + name] = bytes }
        #expect(d.photoFiles == expected, "\(d.photoFiles.keys.sorted())")
        finder.close()
        #expect(d.stop() == 0)
    }
}
