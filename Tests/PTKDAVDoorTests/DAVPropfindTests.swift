import PTKDAV
import PTKLibrary
import PTKSystem
import PTKTestSupport
import PTKTestTags
import Testing

@testable import PTKDAVDoor

/// PROPFIND over a scripted connection: depths, the three kinds of body, the live properties
/// and quota, what is never listed, names that must survive the href, and hostile XML bodies.
@Suite("WebDAV door: PROPFIND", .tags(.unit))
struct DAVPropfindTests {
    /// A fixture with a full password, `a.png` and `sub/b.png` in the photos directory, and the library reconciled.
    func photos() throws -> (DoorFixture, DAVAccount, a: [UInt8], b: [UInt8]) {
        let f = try DoorFixture()
        let a = makePNG(size: 3000, seed: 11)
        let b = makePNG(size: 5000, seed: 12)
        writeFile(f.photos + "/a.png", a)
        writeFile(in: f.photos, "sub/b.png", b)
        try f.reconcile()
        return (f, try f.appPassword("desk"), a, b)
    }

    @Test(
        "Depth 0 answers the resource alone, Depth 1 its members too; Depth infinity or none is 403 propfind-finite-depth; Depth 2 is 400"
    )
    func depths() throws {
        let (f, desk, _, _) = try photos()
        let e = f.dav(
            propfind("/dav/", desk, depth: "0"), propfind("/dav/", desk, depth: "1"),
            propfind("/dav/sub", desk, depth: "1"),
            propfind("/dav/", desk, depth: nil), propfind("/dav/", desk, depth: "infinity"),
            propfind("/dav/", desk, depth: "Infinity"),
            propfind("/dav/", desk, depth: "2"), propfind("/dav/nothing", desk, depth: "0"))
        #expect(e.responses.map(\.status) == [207, 207, 207, 403, 403, 403, 400, 404], "\(e.responses.map(\.status))")
        let zero = try #require(multistatus(e[0]))
        #expect(zero.map(\.href) == ["/dav/"] && zero[0].isCollection)
        let one = try #require(multistatus(e[1]))
        #expect(one.map(\.href) == ["/dav/", "/dav/a.png", "/dav/sub/"], "\(one.map(\.href))")
        #expect(one.map(\.isCollection) == [true, false, true])
        let sub = try #require(multistatus(e[2]))
        #expect(sub.map(\.href) == ["/dav/sub/", "/dav/sub/b.png"], "\(sub.map(\.href))")
        for r in e.responses.dropFirst(3).prefix(3) {
            let error = try #require(xml(r), "\(r)")
            #expect(error.name == .dav("error") && error.child(.dav("propfind-finite-depth")) != nil, "\(r)")
            #expect(r.header("content-type")?.hasPrefix("application/xml") == true)
        }
    }

    @Test(
        "allprop (an empty body, or <allprop/>): every live property of a photo and a folder; ETag is the photo's SHA-256"
    )
    func allprop() throws {
        let (f, desk, a, _) = try photos()
        let allprop = Array("<?xml version=\"1.0\"?><propfind xmlns=\"DAV:\"><allprop/></propfind>".utf8)
        let e = f.dav(
            propfind("/dav/a.png", desk, depth: "0"),
            dav("PROPFIND", "/dav/a.png", desk, [("Depth", "0")], body: allprop),
            propfind("/dav/sub/", desk, depth: "0"))
        #expect(e.responses.map(\.status) == [207, 207, 207], "\(e.responses)")
        for r in e.responses.prefix(2) {
            let photo = try #require(multistatus(r)?.first)
            #expect(photo.href == "/dav/a.png" && !photo.isCollection)
            #expect(photo.text("getcontentlength") == "\(a.count)")
            #expect(photo.text("getcontenttype") == "image/png")
            #expect(photo.text("getetag") == "\"\(sha256Hex(a))\"")
            #expect(photo.text("displayname") == "a.png")
            #expect(photo.text("getlastmodified")?.hasSuffix(" GMT") == true)
            #expect(photo.text("creationdate")?.hasSuffix("Z") == true)
            #expect(photo.properties[.dav("supportedlock")]?.element.children(.dav("lockentry")).count == 2)
            #expect(photo.properties[.dav("lockdiscovery")] != nil)
            #expect(
                photo.properties.values.allSatisfy { $0.status == 200 }, "allprop leaves out what a resource has not")
            #expect(photo.status("quota-available-bytes") == nil, "quota only when asked (RFC 4331 3)")
        }
        let folder = try #require(multistatus(e[2])?.first)
        #expect(
            folder.isCollection && folder.status("getcontentlength") == nil && folder.status("getcontenttype") == nil)
        #expect(folder.text("displayname") == "sub")
    }

    @Test("propname lists the names without values; named properties answer 200 for those it has and 404 for the rest")
    func propnameAndNamed() throws {
        let (f, desk, a, _) = try photos()
        let propname = Array("<D:propfind xmlns:D=\"DAV:\"><D:propname/></D:propfind>".utf8)
        let named = Array(
            ("<D:propfind xmlns:D=\"DAV:\" xmlns:Z=\"urn:example\"><D:prop><D:getcontentlength/><D:getetag/>"
                + "<Z:colour/><D:nonesuch/></D:prop></D:propfind>").utf8)
        let e = f.dav(
            dav("PROPFIND", "/dav/a.png", desk, [("Depth", "0")], body: propname),
            dav("PROPFIND", "/dav/a.png", desk, [("Depth", "0")], body: named))
        #expect(e.responses.map(\.status) == [207, 207], "\(e.responses)")
        let names = try #require(multistatus(e[0])?.first)
        #expect(
            Set(names.properties.keys.filter { $0.namespace == "DAV:" }.map(\.local)).isSuperset(of: [
                "resourcetype", "getcontentlength", "getetag", "getlastmodified", "quota-available-bytes",
            ]))
        #expect(
            names.properties.values.allSatisfy {
                $0.status == 200 && $0.element.text.isEmpty && $0.element.children.isEmpty
            })
        let entry = try #require(multistatus(e[1])?.first)
        #expect(entry.status("getcontentlength") == 200 && entry.text("getcontentlength") == "\(a.count)")
        #expect(entry.status("getetag") == 200)
        #expect(entry.properties[XMLName("urn:example", "colour")]?.status == 404)
        #expect(entry.status("nonesuch") == 404)
        #expect(entry.properties.count == 4)
    }

    @Test("quota-available-bytes and quota-used-bytes are numbers on the root")
    func quota() throws {
        let (f, desk, _, _) = try photos()
        let e = f.dav(propfind("/dav/", desk, depth: "0", props: ["quota-available-bytes", "quota-used-bytes"]))
        let root = try #require(multistatus(e.first)?.first, "\(e.first)")
        #expect(root.status("quota-available-bytes") == 200 && root.status("quota-used-bytes") == 200)
        #expect(
            Int64(root.text("quota-available-bytes") ?? "x") != nil
                && (Int64(root.text("quota-used-bytes") ?? "x") ?? -1) > 0)
    }

    @Test(".ptk, .incoming and other dotted names are never listed; a symlink is neither listed nor followed")
    func hidden() throws {
        let (f, desk, _, _) = try photos()
        writeFile(f.photos + "/.secret", Array("secret".utf8))
        writeFile(in: f.photos, ".hidden/c.png", makePNG(size: 900, seed: 13))
        let outside = makeTemporaryDirectory("ptk-outside")
        defer { removeTree(outside) }
        writeFile(outside + "/o.png", makePNG(size: 900, seed: 14))
        try createSymbolicLink(outside + "/o.png", at: f.photos + "/link.png")
        try createSymbolicLink(outside, at: f.photos + "/linkdir")
        try createSymbolicLink(outside, at: f.photos + "/sub/up")
        #expect(f.everything().contains(".ptk/") && f.everything().contains("link.png@"), "\(f.everything())")
        let e = f.dav(
            propfind("/dav/", desk), propfind("/dav/sub/", desk), dav("GET", "/dav/link.png", desk),
            propfind("/dav/linkdir/", desk),
            dav("GET", "/dav/linkdir/o.png", desk), dav("GET", "/dav/sub/up/o.png", desk),
            propfind("/dav/.hidden/", desk))
        #expect(e.responses.map(\.status) == [207, 207, 404, 404, 404, 404, 404], "\(e.responses.map(\.status))")
        #expect(listedNames(e[0]) == ["a.png", "sub"], "\(listedNames(e[0]) ?? [])")
        #expect(listedNames(e[1]) == ["b.png"], "\(listedNames(e[1]) ?? [])")
    }

    @Test("names with spaces, %, #, ?, non-ASCII and combining marks come back in hrefs that name them exactly")
    func namesRoundTrip() throws {
        let f = try DoorFixture()
        let desk = try f.appPassword("desk")
        let names = ["a b.png", "100%.png", "#1.png", "q?.png", "é.png", "e\u{301}.png", "日本.png", "+&;'.png"]
        for (i, name) in names.enumerated() {
            writeFile(f.photos + "/" + name, makePNG(size: 800 + i, seed: UInt64(20 + i)))
        }
        try f.reconcile()
        let indexed = Set(try f.libraryNames().map { Array($0.utf8) })
        // BUG: `PhotoLibrary.reconcile` keys files by String, so of "é.png" and "e\u{301}.png" (two files on
        // Linux) only one gets an entry; the other has no SHA-256 and its ETag falls back to size and time.
        withKnownIssue("the library collapses canonically equivalent names") {
            #expect(indexed == Set(names.map { Array($0.utf8) }))
        }
        let listing = f.dav(propfind("/dav/", desk))
        let entries = try #require(multistatus(listing.first), "\(listing.first)")
        let listed = entries.dropFirst().map(\.path)
        #expect(Set(listed.map { Array($0.utf8) }) == Set(names.map { Array(("/dav/" + $0).utf8) }), "\(listed)")
        for entry in entries.dropFirst() {
            #expect(
                !entry.href.contains(" ") && !entry.href.contains("#") && !entry.href.contains("?"), "\(entry.href)")
            let got = f.dav(dav("GET", entry.href, desk))
            let name = String(entry.path.dropFirst(5))
            #expect(
                got.first.status == 200 && digest(got.first.body) == digest(readFile(f.photos + "/" + name)),
                "\(entry.href)")
            #expect(entry.text("displayname").map { Array($0.utf8) } == Array(name.utf8))
            // Its own SHA-256 when the library has it, else size and time: never another file's.
            let own = indexed.contains(Array(name.utf8)) ? "\"" + digest(readFile(f.photos + "/" + name)) + "\"" : nil
            #expect(
                own.map { entry.text("getetag") == $0 }
                    ?? (entry.text("getetag")?.hasPrefix("\"\(readFile(f.photos + "/" + name)?.count ?? 0)-") == true),
                "\(entry.href): \(entry.text("getetag") ?? "-")")
        }
    }

    @Test("a PUT under a name with spaces and marks is listed under exactly that name")
    func putNameRoundTrip() throws {
        let f = try DoorFixture()
        let desk = try f.appPassword("desk")
        let png = makePNG(size: 1500, seed: 30)
        let put = f.dav(dav("PUT", "/dav/caf%C3%A9%20e%CC%81%20100%25.png", desk, body: png))
        #expect(put.first.status == 201, "\(put.first)")
        let listed = try #require(multistatus(f.dav(propfind("/dav/", desk)).first))
        #expect(
            listed.dropFirst().map { Array($0.path.utf8) } == [Array("/dav/café e\u{301} 100%.png".utf8)],
            "\(listed.map(\.path))")
        #expect(digest(readFile(f.photos + "/café e\u{301} 100%.png")) == digest(png))
    }

    // MARK: Hostile bodies

    static let billionLaughs = """
        <?xml version="1.0"?>
        <!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
        <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
        <!ENTITY lol4 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">
        <!ENTITY lol5 "&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;">]>
        <D:propfind xmlns:D="DAV:"><D:prop><D:displayname>&lol5;</D:displayname></D:prop></D:propfind>
        """
    static let externalEntity = """
        <?xml version="1.0"?>
        <!DOCTYPE p [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>
        <D:propfind xmlns:D="DAV:"><D:prop><D:displayname>&xxe;</D:displayname></D:prop></D:propfind>
        """
    static let externalDTD = """
        <?xml version="1.0"?>
        <!DOCTYPE p SYSTEM "file:///etc/passwd">
        <D:propfind xmlns:D="DAV:"><D:allprop/></D:propfind>
        """

    @Test(
        "billion laughs, an external entity or DTD naming /etc/passwd, 10,000 nested elements: 400, nothing of the file in any answer"
    )
    func hostileXML() throws {
        let (f, desk, _, _) = try photos()
        // 10,000 nested elements, opened (30 KB: closing them all would pass 64 KiB, which `oversized` covers).
        let nested = Array(("<D:propfind xmlns:D=\"DAV:\">" + String(repeating: "<p>", count: 10_000)).utf8)
        let passwd = readFile("/etc/passwd").map { String(decoding: $0, as: UTF8.self) } ?? "root:x:0:0"
        let firstLine = String(passwd.split(separator: "\n").first ?? "root:x:0:0")
        // And 2,000 nested, closed: deeper than the parser's 32 levels, well-formed, in 14 KB.
        let closed = Array(
            ("<D:propfind xmlns:D=\"DAV:\">" + String(repeating: "<p>", count: 2_000)
                + String(repeating: "</p>", count: 2_000)
                + "</D:propfind>").utf8)
        let bodies = [
            Array(Self.billionLaughs.utf8), Array(Self.externalEntity.utf8), Array(Self.externalDTD.utf8), nested,
            closed,
        ]
        for body in bodies {
            for method in ["PROPFIND", "PROPPATCH", "LOCK"] {
                let e = f.dav(
                    dav(method, "/dav/a.png", desk, [("Depth", "0")], body: body), dav("OPTIONS", "/dav/", desk))
                #expect(
                    e.responses.map(\.status) == [400, 200],
                    "\(method) \(body.prefix(60)): \(e.responses.map(\.status))")
                #expect(
                    !String(decoding: e.raw, as: UTF8.self).contains(firstLine)
                        && !String(decoding: e.raw, as: UTF8.self).contains("lollol"))
            }
        }
        #expect(f.dav(dav("OPTIONS", "/dav/", desk)).first.status == 200)
    }

    @Test(
        "an XML body over 64 KiB is 413 (by Content-Length before it is read, chunked once it passes), and the door answers the next connection"
    )
    func oversized() throws {
        let (f, desk, _, _) = try photos()
        let padding = String(repeating: " ", count: 70_000)
        let body = Array(("<D:propfind xmlns:D=\"DAV:\"><D:allprop/>" + padding + "</D:propfind>").utf8)
        for method in ["PROPFIND", "PROPPATCH", "LOCK"] {
            let e = f.dav(dav(method, "/dav/a.png", desk, [("Depth", "0")], body: body), dav("OPTIONS", "/dav/", desk))
            #expect(e.responses.map(\.status) == [413], "\(method): \(e.responses)")
            #expect(e.first.header("connection") == "close")
            let chunked = f.dav(
                dav(method, "/dav/a.png", desk, [("Depth", "0")], body: body, chunked: [30_000, 30_000]),
                dav("OPTIONS", "/dav/", desk))
            #expect(chunked.responses.map(\.status) == [413], "\(method) chunked: \(chunked.responses)")
        }
        #expect(f.dav(dav("OPTIONS", "/dav/", desk), propfind("/dav/", desk)).responses.map(\.status) == [200, 207])
    }

    @Test("a body that is not a propfind, or names none or two of prop, allprop and propname, is 400")
    func wrongBodies() throws {
        let (f, desk, _, _) = try photos()
        for body in [
            "<x/>", "<D:lockinfo xmlns:D=\"DAV:\"/>", "<D:propfind xmlns:D=\"DAV:\"/>",
            "<D:propfind xmlns:D=\"DAV:\"><D:prop/><D:allprop/></D:propfind>", "<D:propfind xmlns:D=\"DAV:\">",
            "not xml",
        ] {
            let e = f.dav(dav("PROPFIND", "/dav/", desk, [("Depth", "0")], body: Array(body.utf8)))
            #expect(e.first.status == 400, "\(body): \(e.first)")
        }
    }
}
