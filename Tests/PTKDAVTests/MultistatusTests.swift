import PTKDAV
import PTKTestTags
import Testing

@Suite("Multistatus and error bodies", .tags(.unit))
struct MultistatusTests {
    @Test("a response with a 200 and a 404 propstat parses back with the right values")
    func propstats() throws {
        let href = DAVPath(["<&> \"q\" 'é'", "x.jpg"]).href(prefix: "/dav", collection: false)
        let body =
            Multistatus.head
            + Multistatus.response(
                href: href,
                propstats: [
                    (
                        status: 200,
                        properties: [
                            (.dav("displayname"), Multistatus.escape("a <b> & \"c\" 'd' é\r\n")),
                            (.dav("resourcetype"), ""),
                            (.dav("getcontentlength"), "1234"),
                            (XMLName("urn:schemas-microsoft-com:", "Win32FileAttributes"), "00000020"),
                            (XMLName("", "bare"), "v"),
                        ]
                    ),
                    (status: 404, properties: [(XMLName("http://owncloud.org/ns", "checksums"), "")]),
                    (status: 403, properties: []),
                ])
            + Multistatus.tail
        let root = try #require(parsed(body), "\(body)")
        #expect(root.name == .dav("multistatus"))
        let response = try #require(root.child(.dav("response")))
        #expect(response.child(.dav("href"))?.text == href)
        let propstats = response.children(.dav("propstat"))
        #expect(propstats.count == 2, "a status without properties is left out")
        let ok = try #require(propstats.first?.child(.dav("prop")))
        #expect(ok.child(.dav("displayname"))?.text == "a <b> & \"c\" 'd' é\r\n")
        #expect(ok.child(.dav("resourcetype"))?.children.isEmpty == true)
        #expect(ok.child(.dav("getcontentlength"))?.text == "1234")
        #expect(ok.child(XMLName("urn:schemas-microsoft-com:", "Win32FileAttributes"))?.text == "00000020")
        #expect(ok.child(XMLName("", "bare"))?.text == "v")
        #expect(propstats.first?.child(.dav("status"))?.text == "HTTP/1.1 200 OK")
        #expect(propstats.last?.child(.dav("prop"))?.child(XMLName("http://owncloud.org/ns", "checksums")) != nil)
        #expect(propstats.last?.child(.dav("status"))?.text == "HTTP/1.1 404 Not Found")
    }

    @Test("a value that is XML (resourcetype, a dead property) is written as it is")
    func innerXML() throws {
        let dead = try #require(parsed(#"<x:tags xmlns:x="urn:x"><x:t>a&amp;b</x:t></x:tags>"#))
        let body =
            Multistatus.head
            + Multistatus.response(
                href: "/dav/",
                propstats: [
                    (
                        status: 200,
                        properties: [
                            (.dav("resourcetype"), "<D:collection/>"), (dead.name, dead.serializedContent()),
                        ]
                    )
                ]) + Multistatus.tail
        let prop = try #require(parsed(body)?.child(.dav("response"))?.child(.dav("propstat"))?.child(.dav("prop")))
        #expect(prop.child(.dav("resourcetype"))?.child(.dav("collection")) != nil)
        #expect(prop.child(XMLName("urn:x", "tags"))?.child(XMLName("urn:x", "t"))?.text == "a&b")
    }

    @Test("a response with its own status and a precondition")
    func statusResponse() throws {
        let body =
            Multistatus.head
            + Multistatus.response(href: "/dav/a%20b/", status: 423, error: "<D:lock-token-submitted/>")
            + Multistatus.response(href: "/dav/c", status: 424) + Multistatus.tail
        let root = try #require(parsed(body))
        let responses = root.children(.dav("response"))
        #expect(
            responses.map { $0.child(.dav("status"))?.text } == [
                "HTTP/1.1 423 Locked", "HTTP/1.1 424 Failed Dependency",
            ])
        #expect(responses[0].child(.dav("error"))?.child(.dav("lock-token-submitted")) != nil)
        #expect(responses[1].child(.dav("error")) == nil)
    }

    @Test("escaping walks scalars and drops what XML cannot carry")
    func escaping() {
        #expect(Multistatus.escape("<&>\"'") == "&lt;&amp;&gt;&quot;&apos;")
        #expect(Multistatus.escape("<\u{301}") == "&lt;\u{301}")
        #expect(Multistatus.escape("a\u{0}b\u{1B}c\u{FFFE}") == "a\u{FFFD}b\u{FFFD}c\u{FFFD}")
        #expect(Multistatus.escape("\t\n\r") == "\t\n&#13;")
        #expect(parsed("<a>" + Multistatus.escape("x\u{1}y") + "</a>")?.text == "x\u{FFFD}y")
    }

    @Test(
        "status lines",
        arguments: [
            (200, "HTTP/1.1 200 OK"), (201, "HTTP/1.1 201 Created"), (204, "HTTP/1.1 204 No Content"),
            (207, "HTTP/1.1 207 Multi-Status"),
            (400, "HTTP/1.1 400 Bad Request"), (403, "HTTP/1.1 403 Forbidden"), (404, "HTTP/1.1 404 Not Found"),
            (409, "HTTP/1.1 409 Conflict"),
            (412, "HTTP/1.1 412 Precondition Failed"), (415, "HTTP/1.1 415 Unsupported Media Type"),
            (423, "HTTP/1.1 423 Locked"),
            (424, "HTTP/1.1 424 Failed Dependency"), (502, "HTTP/1.1 502 Bad Gateway"),
            (507, "HTTP/1.1 507 Insufficient Storage"),
            (599, "HTTP/1.1 599 Unknown"),
        ])
    func statusLine(status: Int, line: String) {
        #expect(Multistatus.statusLine(status) == line)
    }

    @Test("error bodies from a name or from XML")
    func errorBodies() throws {
        let a = DAVError.body("propfind-finite-depth")
        #expect(
            a
                == "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<D:error xmlns:D=\"DAV:\"><D:propfind-finite-depth/></D:error>\n"
        )
        let b = try #require(
            parsed(DAVError.body("<D:lock-token-submitted><D:href>/dav/a</D:href></D:lock-token-submitted>")))
        #expect(b.child(.dav("lock-token-submitted"))?.child(.dav("href"))?.text == "/dav/a")
    }
}

@Suite("Dates by arithmetic", .tags(.unit))
struct DateTests {
    @Test(
        "known instants",
        arguments: [
            (Int64(0), "Thu, 01 Jan 1970 00:00:00 GMT", "1970-01-01T00:00:00Z"),
            (951_782_400, "Tue, 29 Feb 2000 00:00:00 GMT", "2000-02-29T00:00:00Z"),
            (1_796_119_200, "Tue, 01 Dec 2026 10:00:00 GMT", "2026-12-01T10:00:00Z"),
            (2_147_483_647, "Tue, 19 Jan 2038 03:14:07 GMT", "2038-01-19T03:14:07Z"),
            (2_147_483_648, "Tue, 19 Jan 2038 03:14:08 GMT", "2038-01-19T03:14:08Z"),
            (4_102_444_800, "Fri, 01 Jan 2100 00:00:00 GMT", "2100-01-01T00:00:00Z"),
            (4_107_542_399, "Sun, 28 Feb 2100 23:59:59 GMT", "2100-02-28T23:59:59Z"),
            (4_107_542_400, "Mon, 01 Mar 2100 00:00:00 GMT", "2100-03-01T00:00:00Z"),
            (-1, "Wed, 31 Dec 1969 23:59:59 GMT", "1969-12-31T23:59:59Z"),
            (253_402_300_799, "Fri, 31 Dec 9999 23:59:59 GMT", "9999-12-31T23:59:59Z"),
        ])
    func known(seconds: Int64, http: String, iso: String) {
        #expect(DAVDates.httpDate(seconds) == http)
        #expect(DAVDates.iso8601(seconds) == iso)
    }
}
