import PTKDAV
import PTKTestSupport
import PTKTestTags
import Testing

@testable import PTKDAVDoor
@testable import PTKWebDoor

/// LOCK, UNLOCK, the If header on every write, and PROPPATCH, over a scripted connection.
@Suite("WebDAV door: locks and PROPPATCH", .tags(.unit))
struct DAVLockTests {
    /// A fixture with `a.png` and `sub/b.png` and two full passwords.
    func fixture() throws -> (DoorFixture, desk: DAVAccount, laptop: DAVAccount, a: [UInt8]) {
        let f = try DoorFixture()
        let a = makePNG(size: 3000, seed: 90)
        writeFile(f.photos + "/a.png", a)
        writeFile(in: f.photos, "sub/b.png", makePNG(size: 2000, seed: 91))
        return (f, try f.appPassword("desk"), try f.appPassword("laptop"), a)
    }

    func lock(
        _ f: DoorFixture, _ path: String, _ account: DAVAccount, scope: String = "exclusive", depth: String? = nil,
        timeout: String = "Second-600"
    ) -> ParsedResponse {
        f.dav(
            dav(
                "LOCK", path, account, [("Timeout", timeout)] + (depth.map { [("Depth", $0)] } ?? []),
                body: lockInfo(scope))
        ).first
    }

    /// The `D:error` condition of a 4xx answer's body ("lock-token-submitted"), and the href inside it if any.
    func condition(_ r: ParsedResponse) -> (String, String?)? {
        guard let root = xml(r), root.name == .dav("error"), let c = root.children.first else { return nil }
        return (c.name.local, c.child(.dav("href"))?.text)
    }

    @Test(
        "LOCK of a photo is 200 with Lock-Token and a lockdiscovery naming it, its scope, depth, owner and timeout; PROPFIND shows it"
    )
    func lockAPhoto() throws {
        let (f, desk, _, _) = try fixture()
        let r = lock(f, "/dav/a.png", desk)
        #expect(r.status == 200, "\(r)")
        let token = try #require(lockToken(r), "\(r)")
        #expect(token.hasPrefix("urn:uuid:") && token.utf8.count == 45)
        let root = try #require(xml(r))
        let active = try #require(root.child(.dav("lockdiscovery"))?.child(.dav("activelock")), "\(r.text)")
        #expect(active.child(.dav("locktoken"))?.child(.dav("href"))?.text == token)
        #expect(active.child(.dav("lockscope"))?.child(.dav("exclusive")) != nil)
        #expect(active.child(.dav("locktype"))?.child(.dav("write")) != nil)
        #expect(active.child(.dav("depth"))?.text == "0")
        #expect(active.child(.dav("timeout"))?.text == "Second-600")
        #expect(active.child(.dav("owner"))?.child(.dav("href"))?.text == "mailto:ann@example.org")
        #expect(active.child(.dav("lockroot"))?.child(.dav("href"))?.text == "/dav/a.png")
        let found = try #require(
            multistatus(f.dav(propfind("/dav/a.png", desk, depth: "0", props: ["lockdiscovery"])).first)?.first)
        #expect(
            found.properties[.dav("lockdiscovery")]?.element.child(.dav("activelock"))?.child(.dav("locktoken"))?.child(
                .dav("href"))?.text == token)
    }

    @Test("LOCK of a missing name is 201 and holds it as an empty placeholder, never a file; UNLOCK lets it go")
    func lockMissing() throws {
        let (f, desk, _, _) = try fixture()
        let r = lock(f, "/dav/new.png", desk)
        #expect(r.status == 201 && lockToken(r) != nil, "\(r)")
        let token = lockToken(r) ?? ""
        let e = f.dav(propfind("/dav/new.png", desk, depth: "0"), dav("GET", "/dav/new.png", desk))
        #expect(e.responses.map(\.status) == [207, 200])
        #expect(multistatus(e.first)?.first?.text("getcontentlength") == "0")
        #expect(f.kept() == ["a.png", "sub/b.png"] && f.incoming().isEmpty)
        let missingParent = lock(f, "/dav/none/new.png", desk)
        #expect(missingParent.status == 409, "\(missingParent)")
        let u = f.dav(
            dav("UNLOCK", "/dav/new.png", desk, [("Lock-Token", "<\(token)>")]),
            propfind("/dav/new.png", desk, depth: "0"),
            propfind("/dav/", desk))
        #expect(u.responses.map(\.status) == [204, 404, 207], "\(u.responses.map(\.status))")
        #expect(listedNames(u[2]) == ["a.png", "sub"])
    }

    @Test(
        "PUT, DELETE, MOVE and PROPPATCH of a locked photo without the token are 423 with lock-token-submitted; nothing changes"
    )
    func lockedWithoutToken() throws {
        let (f, desk, laptop, a) = try fixture()
        #expect(lock(f, "/dav/a.png", desk).status == 200)
        let patch = Array(
            "<D:propertyupdate xmlns:D=\"DAV:\" xmlns:Z=\"urn:x\"><D:set><D:prop><Z:a>1</Z:a></D:prop></D:set></D:propertyupdate>"
                .utf8)
        for account in [desk, laptop] {
            let e = f.dav(
                dav("DELETE", "/dav/a.png", account),
                dav("MOVE", "/dav/a.png", account, [("Destination", "/dav/z.png")]),
                dav("PROPPATCH", "/dav/a.png", account, body: patch), dav("PUT", "/dav/a.png", account, body: a))
            #expect(e.responses.map(\.status) == [423, 423, 423, 423], "\(e.responses.map(\.status))")
            for r in e.responses {
                let c = condition(r)
                #expect(c?.0 == "lock-token-submitted" && c?.1 == "/dav/a.png", "\(r)")
            }
            #expect(e[3].header("connection") == "close", "a PUT refused before its body closes")
        }
        #expect(f.kept() == ["a.png", "sub/b.png"] && digest(readFile(f.photos + "/a.png")) == digest(a))
        // A locked placeholder as a MOVE's Destination (which may be replaced) needs its token too.
        let held = try #require(lockToken(lock(f, "/dav/held.png", desk)))
        let move = f.dav(
            dav("MOVE", "/dav/sub/b.png", desk, [("Destination", "/dav/held.png")]),
            dav(
                "MOVE", "/dav/sub/b.png", desk,
                [("Destination", "/dav/held.png"), ("If", "</dav/held.png> (<\(held)>)")]))
        #expect(move.responses.map(\.status) == [423, 204], "\(move.responses.map(\.status))")
        #expect(condition(move[0])?.1 == "/dav/held.png")
        #expect(f.kept() == ["a.png", "held.png"], "\(f.kept())")
    }

    @Test(
        "a lock is its creator's (RFC 4918 6.4): another password giving its token (seen in lockdiscovery) cannot write, refresh or unlock"
    )
    func tokenIsTheCreators() throws {
        let (f, desk, laptop, a) = try fixture()
        let token = try #require(lockToken(lock(f, "/dav/a.png", desk)))
        let seen = try #require(
            multistatus(f.dav(propfind("/dav/a.png", laptop, depth: "0", props: ["lockdiscovery"])).first)?.first)
        #expect(
            seen.properties[.dav("lockdiscovery")]?.element.child(.dav("activelock"))?.child(.dav("locktoken"))?.child(
                .dav("href"))?.text == token)
        let e = f.dav(
            dav("PROPPATCH", "/dav/a.png", laptop, [("If", "(<\(token)>)")], body: win32Times),
            dav("DELETE", "/dav/a.png", laptop, [("If", "(<\(token)>)")]),
            dav("LOCK", "/dav/a.png", laptop, [("If", "(<\(token)>)")]),
            dav("UNLOCK", "/dav/a.png", laptop, [("Lock-Token", "<\(token)>")]),
            dav("PUT", "/dav/a.png", laptop, [("If", "(<\(token)>)")], body: a))
        #expect(e.responses.map(\.status) == [423, 423, 412, 403, 423], "\(e.responses.map(\.status))")
        #expect(f.kept() == ["a.png", "sub/b.png"])
        let own = f.dav(
            dav("PROPPATCH", "/dav/a.png", desk, [("If", "(<\(token)>)")], body: win32Times),
            dav("UNLOCK", "/dav/a.png", desk, [("Lock-Token", "<\(token)>")]))
        #expect(own.responses.map(\.status) == [207, 204], "\(own.responses.map(\.status))")
    }

    @Test(
        "the lock holder's writes with its token: PUT onto a placeholder, DELETE, MOVE; with a Not-list but no token still 423"
    )
    func withTokenOwnWrites() throws {
        let (f, desk, _, a) = try fixture()
        let png = makePNG(size: 2500, seed: 93)
        let held = try #require(lockToken(lock(f, "/dav/new.png", desk)))
        let onA = try #require(lockToken(lock(f, "/dav/a.png", desk)))
        let not = f.dav(
            dav("PUT", "/dav/a.png", desk, [("If", "(Not <urn:uuid:00000000-0000-4000-8000-000000000000>)")], body: a))
        #expect(not.first.status == 423, "a true If without the token submits nothing: \(not.first)")
        let e = f.dav(
            dav("PUT", "/dav/new.png", desk, [("If", "(<\(held)>)")], body: png),
            dav("PUT", "/dav/a.png", desk, [("If", "(<\(onA)>)")], body: a),
            dav("MOVE", "/dav/a.png", desk, [("Destination", "/dav/sub/a2.png"), ("If", "(<\(onA)>)")]),
            dav("DELETE", "/dav/new.png", desk, [("If", "(<\(held)>)")]))
        #expect(e.responses.map(\.status) == [201, 204, 201, 204], "\(e.responses.map(\.status))")
        #expect(f.kept() == ["sub/a2.png", "sub/b.png"], "\(f.kept())")
        #expect(digest(readFile(f.photos + "/sub/a2.png")) == digest(a))
    }

    @Test(
        "tagged If lists: a tag naming the resource holds; one naming another resource does not (412); a wrong token is 412"
    )
    func taggedAndWrong() throws {
        let (f, desk, _, a) = try fixture()
        let token = try #require(lockToken(lock(f, "/dav/a.png", desk)))
        let wrong = "urn:uuid:00000000-0000-4000-8000-000000000000"
        let e = f.dav(
            dav("PUT", "/dav/a.png", desk, [("If", "<http://ptk.test/dav/a.png> (<\(token)>)")], body: a),
            dav("PUT", "/dav/a.png", desk, [("If", "</dav/a.png> (<\(token)>)")], body: a),
            dav("PROPPATCH", "/dav/a.png", desk, [("If", "</dav/sub/b.png> (<\(token)>)")], body: win32Times),
            dav(
                "PROPPATCH", "/dav/a.png", desk, [("If", "<http://elsewhere.example/dav/a.png> (<\(token)>)")],
                body: win32Times),
            dav("PROPPATCH", "/dav/a.png", desk, [("If", "(<\(wrong)>)")], body: win32Times),
            dav("PROPPATCH", "/dav/a.png", desk, [("If", "(<\(wrong)>) (<\(token)>)")], body: win32Times),
            dav("PROPPATCH", "/dav/a.png", desk, [("If", "(<\(token)> [\"not-the-etag\"])")], body: win32Times),
            dav("PROPPATCH", "/dav/a.png", desk, [("If", "((<\(token)>")], body: win32Times))
        #expect(e.responses.map(\.status) == [204, 204, 412, 412, 412, 207, 412, 400], "\(e.responses.map(\.status))")
        #expect(f.kept() == ["a.png", "sub/b.png"] && digest(readFile(f.photos + "/a.png")) == digest(a))
    }

    @Test(
        "a second exclusive LOCK is 423 no-conflicting-lock, whoever asks; shared locks share, and keep an exclusive one out"
    )
    func conflicts() throws {
        let (f, desk, laptop, _) = try fixture()
        #expect(lock(f, "/dav/a.png", desk).status == 200)
        for account in [laptop, desk] {
            let r = lock(f, "/dav/a.png", account)
            #expect(r.status == 423 && condition(r)?.0 == "no-conflicting-lock" && lockToken(r) == nil, "\(r)")
            #expect(lock(f, "/dav/a.png", account, scope: "shared").status == 423)
        }
        let one = lock(f, "/dav/sub/b.png", desk, scope: "shared")
        let two = lock(f, "/dav/sub/b.png", laptop, scope: "shared")
        #expect(one.status == 200 && two.status == 200 && lockToken(one) != lockToken(two), "\(one) \(two)")
        #expect(lock(f, "/dav/sub/b.png", laptop).status == 423)
        #expect(
            lock(f, "/dav/sub/", desk, depth: "infinity").status == 423, "a depth-infinity lock over a locked member")
        let listed = try #require(
            multistatus(f.dav(propfind("/dav/sub/b.png", desk, depth: "0", props: ["lockdiscovery"])).first)?.first)
        #expect(listed.properties[.dav("lockdiscovery")]?.element.children(.dav("activelock")).count == 2)
        // Each shared holder writes under its own token.
        let t = try #require(lockToken(two))
        #expect(
            f.dav(dav("PROPPATCH", "/dav/sub/b.png", laptop, [("If", "(<\(t)>)")], body: win32Times)).first.status
                == 207)
    }

    @Test("a refresh (LOCK without a body, the token in If) is 200 with the new timeout; without a right token 412")
    func refresh() throws {
        let (f, desk, _, _) = try fixture()
        let token = try #require(lockToken(lock(f, "/dav/a.png", desk, timeout: "Second-60")))
        let e = f.dav(
            dav("LOCK", "/dav/a.png", desk, [("If", "(<\(token)>)"), ("Timeout", "Second-1800")]),
            dav("LOCK", "/dav/a.png", desk, [("If", "(<urn:uuid:00000000-0000-4000-8000-000000000000>)")]),
            dav("LOCK", "/dav/a.png", desk), dav("LOCK", "/dav/sub/b.png", desk, [("If", "(<\(token)>)")]),
            dav("LOCK", "/dav/a.png", desk, [("If", "(<\(token)>)"), ("Timeout", "Infinite")]))
        #expect(e.responses.map(\.status) == [200, 412, 412, 412, 200], "\(e.responses.map(\.status))")
        let active = xml(e.first)?.child(.dav("lockdiscovery"))?.child(.dav("activelock"))
        #expect(active?.child(.dav("timeout"))?.text == "Second-1800" && lockToken(e.first) == token, "\(e.first.text)")
        #expect(
            xml(e[4])?.child(.dav("lockdiscovery"))?.child(.dav("activelock"))?.child(.dav("timeout"))?.text
                == "Second-3600",
            "Infinite is held to the hour")
        #expect(condition(e[1])?.0 == "lock-token-matches-request-uri")
    }

    @Test("UNLOCK: a wrong token 409, none 400, the right one 204 (and then 409); the photo is writable again")
    func unlock() throws {
        let (f, desk, _, _) = try fixture()
        let token = try #require(lockToken(lock(f, "/dav/a.png", desk)))
        let e = f.dav(
            dav("UNLOCK", "/dav/a.png", desk, [("Lock-Token", "<urn:uuid:00000000-0000-4000-8000-000000000000>")]),
            dav("UNLOCK", "/dav/a.png", desk), dav("UNLOCK", "/dav/sub/b.png", desk, [("Lock-Token", "<\(token)>")]),
            dav("UNLOCK", "/dav/a.png", desk, [("Lock-Token", "<\(token)>")]),
            dav("UNLOCK", "/dav/a.png", desk, [("Lock-Token", "<\(token)>")]),
            dav("PROPPATCH", "/dav/a.png", desk, body: win32Times))
        #expect(e.responses.map(\.status) == [409, 400, 409, 204, 409, 207], "\(e.responses.map(\.status))")
        #expect(condition(e.first)?.0 == "lock-token-matches-request-uri")
    }

    @Test("a depth-infinity lock on a folder blocks PUT, MKCOL and DELETE inside it until the token is given")
    func folderLock() throws {
        let (f, desk, laptop, _) = try fixture()
        let r = lock(f, "/dav/sub/", desk, depth: "infinity")
        #expect(r.status == 200, "\(r)")
        let token = try #require(lockToken(r))
        #expect(
            xml(r)?.child(.dav("lockdiscovery"))?.child(.dav("activelock"))?.child(.dav("depth"))?.text == "infinity")
        let png = makePNG(size: 2000, seed: 94)
        let e = f.dav(
            dav("MKCOL", "/dav/sub/new", laptop), dav("DELETE", "/dav/sub/b.png", laptop),
            dav("DELETE", "/dav/sub", desk),
            dav("PUT", "/dav/sub/x.png", laptop, body: png))
        #expect(e.responses.map(\.status) == [423, 423, 423, 423], "\(e.responses.map(\.status))")
        #expect(condition(e.first)?.1?.hasPrefix("/dav/sub") == true, "\(e.first)")
        #expect(f.kept() == ["a.png", "sub/b.png"])
        let ok = f.dav(
            dav("PUT", "/dav/sub/x.png", desk, [("If", "(<\(token)>)")], body: png),
            dav("MKCOL", "/dav/sub/new", desk, [("If", "(<\(token)>)")]))
        #expect(ok.responses.map(\.status) == [201, 201], "\(ok.responses.map(\.status))")
        #expect(f.kept() == ["a.png", "sub/b.png", "sub/x.png"] && isDirectory(f.photos + "/sub/new"))
        #expect(
            lock(f, "/dav/sub/b.png", laptop).status == 423, "a member of a locked folder cannot be locked by another")
    }

    @Test("a password holds at most 100 locks: the 101st is refused (503); another password may still lock")
    func perPasswordBound() throws {
        let (f, desk, laptop, _) = try fixture()
        #expect(DAVEndpoint.maxLocksPerPassword == 100)
        let requests = (0..<101).map { dav("LOCK", "/dav/n\($0).png", desk, body: lockInfo()) }
        let e = f.web(requests)
        #expect(e.responses.count == 101)
        #expect(
            e.responses.prefix(100).allSatisfy { $0.status == 201 }, "\(Set(e.responses.prefix(100).map(\.status)))")
        #expect(e.responses.last?.status == 503, "\(e.responses.last.map(\.description) ?? "-")")
        #expect(lock(f, "/dav/other.png", laptop).status == 201)
        #expect(f.kept() == ["a.png", "sub/b.png"], "placeholders are never files")
    }

    // MARK: PROPPATCH

    let win32Times = Array(
        ("<?xml version=\"1.0\" encoding=\"utf-8\" ?><D:propertyupdate xmlns:D=\"DAV:\" xmlns:Z=\"urn:schemas-microsoft-com:\">"
            + "<D:set><D:prop><Z:Win32CreationTime>Mon, 01 Jan 2024 10:00:00 GMT</Z:Win32CreationTime>"
            + "<Z:Win32LastAccessTime>Tue, 02 Jan 2024 10:00:00 GMT</Z:Win32LastAccessTime>"
            + "<Z:Win32LastModifiedTime>Tue, 02 Jan 2024 10:00:00 GMT</Z:Win32LastModifiedTime>"
            + "<Z:Win32FileAttributes>00000020</Z:Win32FileAttributes></D:prop></D:set></D:propertyupdate>").utf8)

    @Test("PROPPATCH of Windows' Win32 times is 207 with each property 200; the photo is unchanged")
    func win32() throws {
        let (f, desk, _, a) = try fixture()
        let e = f.dav(
            dav("PROPPATCH", "/dav/a.png", desk, body: win32Times),
            dav("PROPPATCH", "/dav/sub", desk, body: win32Times),
            dav("PROPPATCH", "/dav/none.png", desk, body: win32Times), dav("PROPPATCH", "/dav/a.png", desk))
        #expect(e.responses.map(\.status) == [207, 207, 404, 400], "\(e.responses.map(\.status))")
        let entry = try #require(multistatus(e.first)?.first)
        #expect(entry.href == "/dav/a.png")
        let ms = "urn:schemas-microsoft-com:"
        for name in ["Win32CreationTime", "Win32LastAccessTime", "Win32LastModifiedTime", "Win32FileAttributes"] {
            #expect(entry.properties[XMLName(ms, name)]?.status == 200, "\(name): \(e.first.text)")
        }
        #expect(entry.properties.count == 4)
        #expect(multistatus(e[1])?.first?.href == "/dav/sub/")
        #expect(digest(readFile(f.photos + "/a.png")) == digest(a))
    }

    @Test("PROPPATCH setting DAV:getetag is 403 for it and 424 for the others (all or nothing)")
    func protected() throws {
        let (f, desk, _, _) = try fixture()
        let body = Array(
            ("<D:propertyupdate xmlns:D=\"DAV:\" xmlns:Z=\"urn:schemas-microsoft-com:\"><D:set><D:prop>"
                + "<Z:Win32CreationTime>Mon, 01 Jan 2024 10:00:00 GMT</Z:Win32CreationTime><D:getetag>\"x\"</D:getetag></D:prop></D:set>"
                + "<D:remove><D:prop><D:getcontentlength/></D:prop></D:remove></D:propertyupdate>").utf8)
        let e = f.dav(dav("PROPPATCH", "/dav/a.png", desk, body: body))
        let entry = try #require(multistatus(e.first)?.first, "\(e.first)")
        #expect(entry.status("getetag") == 403 && entry.status("getcontentlength") == 403, "\(e.first.text)")
        #expect(entry.properties[XMLName("urn:schemas-microsoft-com:", "Win32CreationTime")]?.status == 424)
    }
}
