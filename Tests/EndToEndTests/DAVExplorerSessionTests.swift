import Foundation
import PTKTestSupport
import PTKTestTags
import Testing

// An Explorer-shaped session: what Windows' WebDAV mini-redirector sends when a user maps the
// door as a drive and copies a folder of photos onto it, scripted request by request.
// Sources, from the search of public material (the test follows their common shape):
// - The ILIAS README (shared notes): Basic only over HTTPS; the first OPTIONS, sent without
//   credentials, must be answered 401, else Explorer fails with 0x80070043.
// - chrisroberts/dav4rack#63: the mini-redirector's PROPFIND has an empty body (all properties).
// - vaggeliskls/webdav-server#27, internxt/cli#49: it names folders without a trailing slash
//   ("PROPFIND /folder") and mishandles a redirect to "/folder/"; it writes desktop.ini and
//   Thumbs.db.
// - mar10/wsgidav#112 (Explorer drag and drop): PROPFIND of the new file (404), PUT of 0 bytes
//   (201), LOCK (200), PROPPATCH of Win32CreationTime/LastAccessTime/LastModifiedTime/
//   FileAttributes (a 403 there broke it), HEAD, PUT of the bytes, PROPPATCH of the times
//   again, UNLOCK.
// - 9001/copyparty#910: the PROPPATCH body, urn:schemas-microsoft-com: as Z, HTTP dates,
//   Win32FileAttributes as 8 hex digits; messense/dav-server-rs#70: a 200 per property keeps
//   Explorer working.
// - swisspol/GCDWebServer#319 (MiniRedir capture): LOCK with no Depth header, Timeout:
//   Second-3600, translate: f, Cache-Control and Pragma no-cache, Content-Type text/xml;
//   charset="utf-8", owner an href; cs3org/reva#4928: the token rides in If: on PROPPATCH.
// - "New folder" then rename: MKCOL of "New folder", then MOVE with Destination and
//   Overwrite: F (full access only).
// The sequence, for each file F copied into the folder Camera:
//   PROPFIND F (404), PUT F 0 bytes (201), LOCK F (200 or 201, a token), PROPPATCH F with
//   If: (<token>) (207, each property 200), HEAD F (200), PUT F with Content-Length and
//   If: (<token>) (2xx), PROPPATCH F (207), UNLOCK F (204).

let explorerAgent = "Microsoft-WebDAV-MiniRedir/10.0.19043"

/// The PROPPATCH Explorer sends after it creates or writes a file (copyparty#910's capture).
func win32Times(_ date: String, attributes: String, all: Bool = true) -> [UInt8] {
    Array(
        """
        <?xml version="1.0" encoding="utf-8" ?><D:propertyupdate xmlns:D="DAV:" xmlns:Z="urn:schemas-microsoft-com:"><D:set><D:prop>\
        \(all ? "<Z:Win32CreationTime>\(date)</Z:Win32CreationTime><Z:Win32LastAccessTime>\(date)</Z:Win32LastAccessTime>" : "")\
        <Z:Win32LastModifiedTime>\(date)</Z:Win32LastModifiedTime><Z:Win32FileAttributes>\(attributes)</Z:Win32FileAttributes>\
        </D:prop></D:set></D:propertyupdate>
        """.utf8)
}

@Suite("End to end: an Explorer-shaped WebDAV session (issue 44)", .serialized, .tags(.endToEnd))
struct DAVExplorerSessionTests {
    @Test(
        "map a drive, make a folder and rename it, copy photos in as the mini-redirector does (0-byte create, LOCK, PROPPATCH of Win32 times, HEAD, PUT with If:, UNLOCK), Thumbs.db and desktop.ini beside: every answer is what Explorer needs, the photos are byte-identical and alone"
    )
    func explorerCopiesPhotos() throws {
        let d = try DaemonProcess.withDAV()
        let pw = try d.appPassword("Windows-desktop", access: "full")
        let explorer = try DAVSession(port: d.webPort, userAgent: explorerAgent, authorization: nil)
        func expectStatus(
            _ r: DAVResponse, _ allowed: Set<Int>, _ what: String, sourceLocation: SourceLocation = #_sourceLocation
        ) {
            #expect(
                allowed.contains(r.status), "\(what): \(r)\n\(explorer.transcript.joined(separator: "\n"))",
                sourceLocation: sourceLocation)
        }
        let common: [(String, String)] = [("translate", "f"), ("Connection", "Keep-Alive")]
        let xml: [(String, String)] = common + [("Content-Type", "text/xml; charset=\"utf-8\"")]
        let emptyBody: [(String, String)] = common

        // Mapping the drive: 401 first, then the same OPTIONS with credentials.
        let challenge = try explorer.send("OPTIONS", "/dav/", headers: common)
        expectStatus(challenge, [401], "OPTIONS without credentials (else 0x80070043)")
        #expect(challenge.header("www-authenticate").map(isPTKChallenge) == true, "\(challenge)")
        explorer.authorization = pw.basic
        let options = try explorer.send("OPTIONS", "/dav/", headers: common)
        expectStatus(options, [200], "OPTIONS")
        #expect(options.header("ms-author-via") == "DAV", "\(options)")
        #expect(
            options.header("dav")?.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.contains("2")
                == true, "\(options)")
        // The share's root, as the redirector names it: without the trailing slash, empty bodies.
        let root = try explorer.send("PROPFIND", "/dav", headers: emptyBody + [("Depth", "0")])
        expectStatus(root, [207], "PROPFIND /dav (no slash, empty body)")
        #expect(multistatus(root.text).first?.isCollection == true, "\(root)")
        let quota = try explorer.send(
            "PROPFIND", "/dav", headers: xml + [("Depth", "0")],
            body: Array(
                """
                <?xml version="1.0" encoding="utf-8" ?><D:propfind xmlns:D="DAV:"><D:prop><D:quota-available-bytes/><D:quota-used-bytes/></D:prop></D:propfind>
                """.utf8))
        expectStatus(quota, [207], "the free-space PROPFIND")
        expectStatus(
            try explorer.send("PROPFIND", "/dav", headers: emptyBody + [("Depth", "1")]), [207],
            "PROPFIND Depth 1 of the share")
        expectStatus(
            try explorer.send("PROPFIND", "/dav/desktop.ini", headers: emptyBody + [("Depth", "0")]), [404],
            "PROPFIND desktop.ini")

        // "New folder", renamed to Camera.
        expectStatus(
            try explorer.send("PROPFIND", "/dav/New%20folder", headers: emptyBody + [("Depth", "0")]), [404],
            "PROPFIND New folder")
        expectStatus(try explorer.send("MKCOL", "/dav/New%20folder", headers: common), [201], "MKCOL New folder")
        expectStatus(
            try explorer.send(
                "PROPPATCH", "/dav/New%20folder", headers: xml,
                body: win32Times("Tue, 02 Jan 2024 11:30:00 GMT", attributes: "00000010")), [207],
            "PROPPATCH of the folder")
        expectStatus(
            try explorer.send(
                "MOVE", "/dav/New%20folder",
                headers: common + [("Destination", "https://127.0.0.1:\(d.webPort)/dav/Camera"), ("Overwrite", "F")]),
            [201], "MOVE New folder -> Camera")
        expectStatus(
            try explorer.send("PROPFIND", "/dav/New%20folder", headers: emptyBody + [("Depth", "0")]), [404],
            "New folder after the MOVE")
        let camera = try explorer.send("PROPFIND", "/dav/Camera", headers: emptyBody + [("Depth", "1")])
        expectStatus(camera, [207], "PROPFIND /dav/Camera (no slash)")
        #expect(listedNames(camera.text, in: "/dav/Camera").isEmpty, "\(camera.text)")

        let files: [(String, [UInt8])] = [
            ("IMG_20240102_113000.jpg", makeJPEG(width: 200, height: 150, seed: 81)),
            ("Screenshot 2024-01-02.png", makePNG(size: 50_000, seed: 82)),
            ("IMG_0042.heic", readFile(fixturePath("heif/rotated.heic")) ?? []),
            ("Thumbs.db", Array(repeating: 0xD0, count: 2_048)),
            ("desktop.ini", Array("[.ShellClassInfo]\r\nIconResource=C:\\Windows\\System32\\imageres.dll,-3\r\n".utf8)),
        ]
        for (name, bytes) in files {
            let path = "/dav/Camera/" + davEscape(name)
            expectStatus(
                try explorer.send("PROPFIND", path, headers: emptyBody + [("Depth", "0")]), [404],
                "PROPFIND \(name) before the copy")
            expectStatus(try explorer.send("PUT", path, headers: common), [201], "the 0-byte create of \(name)")
            #expect(d.photoFiles["Camera/" + name] == nil, "the 0-byte placeholder is never a file among the photos")
            let lock = try explorer.send(
                "LOCK", path,
                headers: xml + [("Timeout", "Second-3600"), ("Cache-Control", "no-cache"), ("Pragma", "no-cache")],
                body: lockInfo(owner: pw.user))
            expectStatus(lock, [200, 201], "LOCK \(name)")
            let token = try #require(lockToken(lock), "LOCK \(name) gave no Lock-Token: \(lock)")
            let created = try explorer.send(
                "PROPPATCH", path, headers: xml + [("If", "(<\(token)>)")],
                body: win32Times("Tue, 02 Jan 2024 11:30:00 GMT", attributes: "00000020"))
            expectStatus(created, [207], "PROPPATCH of the created \(name)")
            #expect(
                !multistatus(created.text).isEmpty
                    && multistatus(created.text).allSatisfy { $0.statuses.allSatisfy { $0 == 200 } },
                "each Win32 property answered 200: \(created.text)")
            let head = try explorer.head(path, headers: common)
            #expect(head.status == 200 && head.headers["content-length"] == "0", "HEAD \(name): \(head)")
            expectStatus(
                try explorer.send("PUT", path, headers: common + [("If", "(<\(token)>)")], body: bytes),
                [200, 201, 204], "PUT \(name)")
            let written = try explorer.send(
                "PROPPATCH", path, headers: xml + [("If", "(<\(token)>)")],
                body: win32Times("Tue, 02 Jan 2024 11:30:05 GMT", attributes: "00000020", all: false))
            expectStatus(written, [207], "PROPPATCH of the written \(name)")
            expectStatus(
                try explorer.send("UNLOCK", path, headers: common + [("Lock-Token", "<\(token)>")]), [204],
                "UNLOCK \(name)")
            let after = try explorer.head(path, headers: common)
            #expect(
                after.status == 200 && after.headers["content-length"] == "\(bytes.count)",
                "HEAD \(name) after the copy: \(after)")
        }

        // What Explorer shows, sizes included, and reads back.
        let listing = try explorer.send("PROPFIND", "/dav/Camera", headers: emptyBody + [("Depth", "1")])
        expectStatus(listing, [207], "PROPFIND Depth 1 of Camera")
        #expect(listedNames(listing.text, in: "/dav/Camera") == Set(files.map(\.0)), "\(listing.text)")
        let lengths = Dictionary(
            multistatus(listing.text).map { ($0.href.split(separator: "/").last.map(String.init) ?? "", $0.length) }
        ) { a, _ in a }
        for (name, bytes) in files {
            #expect(lengths[name] == bytes.count, "\(name): \(lengths)")
            let get = try explorer.send("GET", "/dav/Camera/" + davEscape(name), headers: common)
            #expect(get.status == 200 && get.body == bytes, "GET \(name): \(get.status)")
        }
        // The photos directory: the three photos, byte-identical; Thumbs.db and desktop.ini apart.
        var expected: [String: [UInt8]] = [:]
        for (name, bytes) in files where !isClientLitter(name) { expected["Camera/" + name] = bytes }
        #expect(d.photoFiles == expected, "\(d.photoFiles.keys.sorted())")
        #expect(eventually(30) { (try? listed(d))?.count == 3 }, "the library indexes the three photos")
        explorer.close()
        #expect(d.stop() == 0)
    }
}
