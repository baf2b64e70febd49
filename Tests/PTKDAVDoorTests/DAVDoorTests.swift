import Foundation
import PTKConfiguration
import PTKDAV
import PTKDoor
import PTKHTTP
import PTKStore
import PTKSystem
import PTKTestSupport
import PTKTestTags
import PTKTrust
import Testing

@testable import PTKDAVDoor

/// The WebDAV door alone, driven through its route table by `RouteHarness`: its state (store,
/// app passwords, names, locks) in a temporary directory; no daemon, no listener, no TLS, no
/// socket.
final class DAVDoorFixture {
    let root = makeTemporaryDirectory("ptk-dav-door")
    let door: DAVEndpoint
    var photos: String { root + "/photos" }
    /// The lines the door logged, in order.
    var log: [String] { lines.lock.withLock { lines.items } }
    private let lines = LogLines()

    /// Lines written from the connection's thread, read from the test's.
    final class LogLines: @unchecked Sendable {
        let lock = Lock()
        var items: [String] = []
    }

    init(_ adjust: (inout DaemonConfiguration) -> Void = { _ in }) throws {
        var c = DaemonConfiguration()
        c.directory = root + "/photos"
        c.stateDirectory = root + "/state"
        c.library = false
        c.idleTimeout = .seconds(5)
        adjust(&c)
        try makeDirectories(c.effectiveStateDirectory, mode: 0o755)
        try makeDirectories(c.webDirectory, mode: 0o700)
        let store = try PhotoStore(settings: StoreSettings(directory: c.effectiveDirectory, minFree: c.minFree))
        let arrivals = Arrivals(
            directory: c.effectiveDirectory, layout: c.layout, trust: TrustStore(directory: c.effectiveStateDirectory),
            library: nil,
            held: nil, hooks: nil)
        door = try DAVEndpoint(
            configuration: WebSettings(c), store: store, arrivals: arrivals, throttle: PasswordThrottle(),
            guesses: Guesses(),
            shutdown: try ShutdownSignal())
    }

    deinit { removeTree(root) }

    /// A new app password named `name`.
    func appPassword(_ name: String, _ access: AppAccess = .full) throws -> DAVAccount {
        let (entry, password) = try AppPasswords(directory: door.configuration.webDirectory).add(
            name: name, access: access, now: 1_700_000_000)
        return DAVAccount(name: name, password: password, id: entry.id)
    }

    /// Plays `pieces` (a client's bytes) to the door on one connection.
    func run(_ pieces: [UInt8]..., readSize: Int = 1 << 20, headOnly: Bool = false) -> RouteHarness<DAVContext>.Exchange
    {
        let connection = WebConnection(
            id: 1, peer: SocketAddress(numericHost: "192.0.2.7", port: 40000)!, directory: photos, library: false)
        var responder = door.responder(connection: connection)
        let lines = self.lines
        responder = HTTPResponder(
            routes: responder.routes, middleware: responder.middleware, kind: "webdav",
            log: { line in lines.lock.withLock { lines.items.append(line) } },
            context: responder.context, renderError: responder.renderError)
        return RouteHarness(responder, idle: door.configuration.idleTimeout).run(
            pieces, readSize: readSize, headOnly: headOnly)
    }

    /// Names of the files in the photos directory (recursively, without hidden folders).
    func kept() -> [String] {
        func walk(_ folder: String, _ prefix: String) -> [String] {
            listDirectory(folder).filter { !$0.hasPrefix(".") }.flatMap { name -> [String] in
                let path = folder + "/" + name
                return isDirectory(path) ? walk(path, prefix + name + "/") : [prefix + name]
            }
        }
        return walk(photos, "").sorted()
    }
}

/// The WebDAV door's route table, every method driven through a scripted connection by
/// `RouteHarness` (no daemon, socket or TLS: `DAVDoorFixture`): the password check in front of
/// every route, OPTIONS, PROPFIND at depth 0 and 1 (whole and streamed), GET and HEAD with
/// Range, PUT, MKCOL, MOVE, COPY, DELETE, LOCK and UNLOCK, PROPPATCH, and the refusals in the
/// door's terms (plain text, DAV:error XML).
@Suite("WebDAV door: routes over a scripted connection", .tags(.unit))
struct DAVDoorTests {
    @Test(
        "every request needs the password, before its route or its body: none is 401 with the challenge (a PUT's body unread closes); a wrong one 401, logged; REPORT 401 before 405"
    )
    func passwordFirst() throws {
        let f = try DAVDoorFixture()
        let desk = try f.appPassword("desk")
        let wrong = DAVAccount(name: "desk", password: "not-it", id: desk.id)
        let e = f.run(
            dav("OPTIONS", "/dav/", nil), dav("REPORT", "/dav/", nil), dav("PROPFIND", "/dav/", wrong),
            dav("REPORT", "/dav/", desk),
            dav("PUT", "/dav/a.png", nil, body: makePNG(size: 900, seed: 1)), dav("OPTIONS", "/dav/", desk))
        #expect(e.statuses == [401, 401, 401, 405, 401], "\(e.statuses)")
        for r in e.responses.prefix(3) + [e.responses[4]] {
            #expect(
                r.header("www-authenticate") == "Basic realm=\"ptk\", charset=\"UTF-8\""
                    && r.text == "a user name and app password are needed\n", "\(r)")
        }
        #expect(e.responses[3].header("allow") == DAVEndpoint.methods.joined(separator: ", "), "\(e.responses[3])")
        #expect(e.responses[3].text == "REPORT is not a WebDAV method this receiver takes\n")
        #expect(e.responses[4].header("connection") == "close" && e.responses[2].header("connection") == "keep-alive")
        #expect(f.log.contains { $0.contains("wrong password for \"desk\"; answered 401") }, "\(f.log)")
        #expect(f.kept().isEmpty)
    }

    @Test(
        "OPTIONS names the classes and the methods; PROPFIND depth 0 of the root and depth 1 list what is there; infinity is 403 with DAV:error XML"
    )
    func optionsAndPropfind() throws {
        let f = try DAVDoorFixture()
        let desk = try f.appPassword("desk")
        let png = makePNG(size: 1200, seed: 2)
        writeFile(in: f.photos, "a.png", png)
        writeFile(in: f.photos, "sub/b.png", makePNG(size: 800, seed: 3))
        let e = f.run(
            dav("OPTIONS", "/dav/", desk), propfind("/dav/", desk, depth: "0"), propfind("/dav/", desk, depth: "1"),
            propfind("/dav/a.png", desk, depth: "0", props: ["getcontentlength", "getcontenttype"]),
            propfind("/dav/", desk, depth: "infinity"),
            propfind("/dav/nothing.png", desk, depth: "0"))
        #expect(e.statuses == [200, 207, 207, 207, 403, 404], "\(e.statuses)")
        #expect(
            e.first.header("dav") == "1, 2" && e.first.header("ms-author-via") == "DAV"
                && e.first.header("allow")?.contains("PROPPATCH") == true)
        #expect(multistatus(e.responses[1])?.count == 1 && multistatus(e.responses[1])?.first?.isCollection == true)
        #expect(listedNames(e.responses[2]) == ["a.png", "sub"], "\(e.responses[2].text)")
        let photo = try #require(multistatus(e.responses[3])?.first)
        #expect(
            photo.text("getcontentlength") == "\(png.count)" && photo.text("getcontenttype") == "image/png",
            "\(e.responses[3].text)")
        #expect(e.responses[4].header("content-type") == "application/xml; charset=utf-8")
        #expect(xml(e.responses[4])?.child(.dav("propfind-finite-depth")) != nil, "\(e.responses[4].text)")
        #expect(e.responses[5].text == "no such WebDAV resource\n")
        #expect(f.log.contains { $0.contains("refused PROPFIND \"/dav/\": PROPFIND with Depth infinity") }, "\(f.log)")
    }

    @Test("a folder answer over 64 KiB is streamed in chunks, every entry in it")
    func propfindStreamed() throws {
        let f = try DAVDoorFixture()
        let desk = try f.appPassword("desk")
        for i in 0..<200 { writeFile(in: f.photos, "photo-\(i).png", makePNG(size: 200, seed: UInt64(i))) }
        let e = f.run(propfind("/dav/", desk, depth: "1"), dav("OPTIONS", "/dav/", desk))
        #expect(e.statuses == [207, 200], "\(e.statuses)")
        #expect(e.text.contains("Transfer-Encoding: chunked"))
        #expect(listedNames(e.first)?.count == 200)
    }

    @Test(
        "PUT keeps a photo (201 with its ETag); GET whole, a Range 206, past the end 416, HEAD the head alone with the length"
    )
    func putAndGet() throws {
        let f = try DAVDoorFixture()
        let desk = try f.appPassword("desk")
        let png = makePNG(size: 3000, seed: 4)
        let put = f.run(dav("PUT", "/dav/a.png", desk, body: png), dav("PUT", "/dav/a.png", desk, body: png))
        #expect(put.statuses == [201, 204], "\(put.responses)")
        #expect(put.first.header("etag") == "\"\(sha256Hex(png))\"")
        #expect(f.kept() == ["a.png"] && digest(readFile(f.photos + "/a.png")) == digest(png))
        let get = f.run(
            dav("GET", "/dav/a.png", desk), dav("GET", "/dav/a.png", desk, [("Range", "bytes=10-19")]),
            dav("GET", "/dav/a.png", desk, [("Range", "bytes=\(png.count)-")]))
        #expect(get.statuses == [200, 206, 416], "\(get.statuses)")
        #expect(
            digest(get.first.body) == digest(png) && get.first.header("accept-ranges") == "bytes"
                && get.first.header("content-type") == "image/png")
        #expect(
            get.responses[1].body == Array(png[10...19])
                && get.responses[1].header("content-range") == "bytes 10-19/\(png.count)")
        #expect(get.responses[2].header("content-range") == "bytes */\(png.count)")
        let head = f.run(dav("HEAD", "/dav/a.png", desk), headOnly: true)
        #expect(
            head.first.status == 200 && head.first.header("content-length") == "\(png.count)"
                && head.text.hasSuffix("\r\n\r\n"), "\(head.text)")
        #expect(f.run(dav("GET", "/dav/b.png", desk)).first.status == 404)
    }

    @Test(
        "PUT refusals: into a folder that is not there 409, over max-file-size 413, text 415, without a length or a chunked body 411; each before or instead of keeping anything"
    )
    func putRefusals() throws {
        let png = makePNG(size: 5000, seed: 5)
        let f = try DAVDoorFixture { $0.maxFileSize = 4000 }
        let desk = try f.appPassword("desk")
        #expect(f.run(dav("PUT", "/dav/nowhere/a.png", desk, body: png)).first.status == 409)
        let big = f.run(dav("PUT", "/dav/a.png", desk, body: png), dav("OPTIONS", "/dav/", desk))
        #expect(big.statuses == [413] && big.first.header("connection") == "close", "\(big.responses)")
        let text = f.run(dav("PUT", "/dav/t.png", desk, body: Array(String(repeating: "not a photo ", count: 50).utf8)))
        #expect(text.first.status == 415 && text.first.text.contains("PNG"), "\(text.first)")
        let unsized = f.run(
            Array(
                "PUT /dav/c.png HTTP/1.1\r\nHost: ptk.test\r\n\(desk.authorization.0): \(desk.authorization.1)\r\n\r\n"
                    .utf8))
        #expect(
            unsized.first.status == 411 && unsized.first.text.hasPrefix("a PUT must give its Content-Length"),
            "\(unsized.first)")
        #expect(f.kept().isEmpty)
    }

    @Test(
        "a chunked PUT that does not say its length (curl -T -, rclone rcat) is kept byte for byte, fed a byte at a time too; nothing is left in .incoming"
    )
    func chunkedUndeclared() throws {
        let f = try DAVDoorFixture()
        let desk = try f.appPassword("desk")
        let a = makePNG(size: 9000, seed: 10)
        let b = makePNG(size: 3000, seed: 11)
        let e = f.run(dav("PUT", "/dav/a.png", desk, body: a, chunked: [1, 100, 4000]), dav("OPTIONS", "/dav/", desk))
        #expect(e.statuses == [201, 200] && e.first.header("etag") == "\"\(sha256Hex(a))\"", "\(e.responses)")
        let slow = f.run(dav("PUT", "/dav/b.png", desk, body: b, chunked: [7, 1000]), readSize: 1)
        #expect(slow.first.status == 201, "\(slow.first)")
        let again = f.run(
            dav("PUT", "/dav/a.png", desk, body: a, chunked: [5000]),
            dav("PUT", "/dav/a.png", desk, body: b, chunked: [5000]))
        #expect(again.statuses == [204, 409], "\(again.statuses)")
        #expect(
            f.kept() == ["a.png", "b.png"] && digest(readFile(f.photos + "/a.png")) == digest(a)
                && digest(readFile(f.photos + "/b.png")) == digest(b))
        #expect(listDirectory(f.photos + "/.incoming").isEmpty, "\(listDirectory(f.photos + "/.incoming"))")
    }

    @Test(
        "a chunked PUT of undeclared length over max-file-size is 413 once it passes the limit, its rest unread (the connection closes); no file is left under any name"
    )
    func chunkedUndeclaredTooLarge() throws {
        let png = makePNG(size: 20_000, seed: 12)
        let f = try DAVDoorFixture { $0.maxFileSize = 10_000 }
        let desk = try f.appPassword("desk")
        let e = f.run(dav("PUT", "/dav/a.png", desk, body: png, chunked: [4000]), dav("OPTIONS", "/dav/", desk))
        #expect(e.statuses == [413] && e.first.header("connection") == "close", "\(e.responses)")
        #expect(e.first.text.contains("over this receiver's limit"), "\(e.first.text)")
        #expect(
            f.kept().isEmpty && listDirectory(f.photos + "/.incoming").isEmpty,
            "\(listDirectory(f.photos + "/.incoming"))")
        #expect(f.log.contains { $0.contains("answered 413") }, "\(f.log)")
        let fits = f.run(
            dav("PUT", "/dav/b.png", desk, body: Array(png.prefix(0)) + makePNG(size: 9000, seed: 13), chunked: [3000]))
        #expect(fits.first.status == 201 && f.kept() == ["b.png"], "\(fits.first)")
    }

    @Test(
        "MKCOL makes a folder (201; again 405; with a body 415); MOVE renames a photo into it (201) and COPY is 403; DELETE removes it (204, then 404)"
    )
    func mkcolMoveCopyDelete() throws {
        let f = try DAVDoorFixture()
        let desk = try f.appPassword("desk")
        writeFile(in: f.photos, "a.png", makePNG(size: 1000, seed: 7))
        let e = f.run(
            dav("MKCOL", "/dav/sub", desk), dav("MKCOL", "/dav/sub", desk),
            dav("MKCOL", "/dav/other", desk, body: Array("x".utf8)),
            dav("MOVE", "/dav/a.png", desk, [("Destination", "/dav/sub/b.png")]),
            dav("COPY", "/dav/sub/b.png", desk, [("Destination", "/dav/c.png")]),
            dav("DELETE", "/dav/sub/b.png", desk), dav("DELETE", "/dav/sub/b.png", desk))
        #expect(e.statuses == [201, 405, 415, 201, 403, 204, 404], "\(e.statuses)")
        #expect(e.responses[4].text.hasPrefix("COPY is not offered"))
        #expect(f.kept().isEmpty && isDirectory(f.photos + "/sub") && !isDirectory(f.photos + "/other"))
        #expect(
            f.log.contains { $0.contains("moved \"a.png\" to \"sub/b.png\"") }
                && f.log.contains { $0.contains("deleted \"sub/b.png\"") }, "\(f.log)")
    }

    @Test(
        "LOCK takes a lock (Lock-Token); a PUT without its token is 423 with lock-token-submitted XML; with it 204; UNLOCK with it 204, a wrong one 409"
    )
    func lockAndUnlock() throws {
        let f = try DAVDoorFixture()
        let desk = try f.appPassword("desk")
        let png = makePNG(size: 1000, seed: 8)
        writeFile(in: f.photos, "a.png", png)
        let locked = f.run(dav("LOCK", "/dav/a.png", desk, [("Timeout", "Second-60")], body: lockInfo()))
        #expect(locked.first.status == 200, "\(locked.first)")
        let token = try #require(lockToken(locked.first))
        #expect(xml(locked.first)?.child(.dav("lockdiscovery")) != nil, "\(locked.first.text)")
        // Refused before its body is read: the connection closes after the answer.
        let refused = f.run(dav("PUT", "/dav/a.png", desk, body: png), dav("OPTIONS", "/dav/", desk))
        #expect(refused.statuses == [423] && refused.first.header("connection") == "close", "\(refused.responses)")
        #expect(refused.first.header("content-type") == "application/xml; charset=utf-8")
        #expect(
            xml(refused.first)?.child(.dav("lock-token-submitted"))?.child(.dav("href"))?.text == "/dav/a.png",
            "\(refused.first.text)")
        let e = f.run(
            dav("PUT", "/dav/a.png", desk, [("If", "(<\(token)>)")], body: png),
            dav("UNLOCK", "/dav/a.png", desk, [("Lock-Token", "<opaquelocktoken:nothing>")]),
            dav("UNLOCK", "/dav/a.png", desk, [("Lock-Token", "<\(token)>")]), dav("PUT", "/dav/a.png", desk, body: png)
        )
        #expect(e.statuses == [204, 409, 204, 204], "\(e.statuses)")
    }

    @Test("PROPPATCH answers each property (200; a live one 403, the others 424); nothing changes")
    func proppatch() throws {
        let f = try DAVDoorFixture()
        let desk = try f.appPassword("desk")
        writeFile(in: f.photos, "a.png", makePNG(size: 1000, seed: 9))
        func patch(_ inner: String) -> [UInt8] {
            Array(
                ("<?xml version=\"1.0\"?><D:propertyupdate xmlns:D=\"DAV:\" xmlns:Z=\"urn:z\"><D:set><D:prop>" + inner
                    + "</D:prop></D:set></D:propertyupdate>").utf8)
        }
        let e = f.run(
            dav("PROPPATCH", "/dav/a.png", desk, body: patch("<Z:Win32LastModifiedTime>x</Z:Win32LastModifiedTime>")),
            dav("PROPPATCH", "/dav/a.png", desk, body: patch("<D:getetag>x</D:getetag><Z:note>y</Z:note>")),
            dav("PROPPATCH", "/dav/none.png", desk, body: patch("<Z:note>y</Z:note>")))
        #expect(e.statuses == [207, 207, 404], "\(e.statuses)")
        #expect(
            multistatus(e.first)?.first?.properties[XMLName("urn:z", "Win32LastModifiedTime")]?.status == 200,
            "\(e.first.text)")
        let mixed = try #require(multistatus(e.responses[1])?.first)
        #expect(
            mixed.status("getetag") == 403 && mixed.properties[XMLName("urn:z", "note")]?.status == 424,
            "\(e.responses[1].text)")
        #expect(f.kept() == ["a.png"])
    }

    @Test("paths the door does not take are refused in plain text: .. and encoded slashes 400, hidden names 404")
    func badPaths() throws {
        let f = try DAVDoorFixture()
        let desk = try f.appPassword("desk")
        let e = f.run(
            dav("GET", "/dav/%2e%2e/x.png", desk), dav("GET", "/dav/a%2fb.png", desk), dav("GET", "/dav/.ptk/x", desk))
        #expect(e.statuses == [400, 400, 404], "\(e.statuses)")
        #expect(
            e.first.header("content-type") == "text/plain; charset=utf-8"
                && e.first.text.hasPrefix("the path is not one this door takes"))
    }
}
