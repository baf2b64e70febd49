import PTKDigest
import PTKHTTP
import PTKStore
import PTKSystem
import PTKTestSupport
import PTKTestTags
import PTKVocabulary
import Testing

/// What the HTTP layer gained for the WebDAV door (issue 44): a route pattern that takes the
/// rest of the path, and `100 Continue`, on the connection and through a door (uploads typed
/// by their bytes: `SniffedUploadTests`).
@Suite("PTKHTTP for WebDAV: rest captures, 100 Continue", .tags(.unit))
struct DAVSupportTests {
    func davRoutes() -> RouteTable<Notes> {
        var r = RouteTable<Notes>()
        r.add(["PROPFIND"], "/dav/{path*}", noop())
        r.add(["GET"], "/dav/{path*}", noop())
        r.add(["GET"], "/other", noop())
        return r
    }

    @Test("{path*} takes zero or more segments as sent, and nothing outside its prefix")
    func restCapture() {
        let r = davRoutes()
        #expect(describe(r.match(method: "PROPFIND", target: "/dav")) == "found /dav/{path*} path=")
        #expect(describe(r.match(method: "PROPFIND", target: "/dav/")) == "found /dav/{path*} path=")
        #expect(
            describe(r.match(method: "PROPFIND", target: "/dav/a/b%2Fc/d.png?x=1"))
                == "found /dav/{path*} path=a/b%2Fc/d.png")
        #expect(describe(r.match(method: "GET", target: "/dav/../etc")) == "found /dav/{path*} path=../etc")
        #expect(describe(r.match(method: "GET", target: "/davx/a")) == "404")
        #expect(describe(r.match(method: "GET", target: "/")) == "404")
        #expect(describe(r.match(method: "PUT", target: "/dav/a")) == "405 GET, PROPFIND")
        #expect(describe(r.match(method: "GET", target: "/other")) == "found /other")
    }

    @Test(
        "Expect: 100-continue is answered when the body is first read, once, and not when the request is refused first")
    func continueOnce() throws {
        let body = Array("hello".utf8)
        let head = Array("PUT /x HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n".utf8)
        let stream = ScriptedHTTPStream([
            head, body, Array("GET /y HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\n\r\n".utf8),
        ])
        let http = HTTPConnection(stream: stream, kind: .request)
        _ = try #require(try http.nextHead(deadline: soon()))
        #expect(stream.written.isEmpty)
        #expect(try http.readBody(limit: 10, deadline: { soon() }) == body)
        #expect(String(decoding: stream.written, as: UTF8.self) == "HTTP/1.1 100 Continue\r\n\r\n")
        try http.respond(201, deadline: soon())
        let answered = stream.written.count
        // The next request asks too, but is answered without its body being read: no 100.
        _ = try #require(try http.nextHead(deadline: soon()))
        try http.respond(417, deadline: soon())
        _ = try http.readBody(limit: 10, deadline: { soon() })
        let rest = String(decoding: stream.written[answered...], as: UTF8.self)
        #expect(rest.hasPrefix("HTTP/1.1 417"), "\(rest)")
        #expect(!rest.contains("100 Continue"), "\(rest)")
    }

    @Test(
        "an HTTP/1.0 request's Expect: 100-continue is ignored (RFC 9110 10.1.1): its body is read with no 100 before the answer"
    )
    func noContinueForHTTP10() throws {
        let body = Array("hello".utf8)
        let head = Array("PUT /x HTTP/1.0\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n".utf8)
        let stream = ScriptedHTTPStream([head, body])
        let http = HTTPConnection(stream: stream, kind: .request)
        let parsed = try #require(try http.nextHead(deadline: soon()))
        #expect(parsed.minorVersion == 0)
        #expect(try http.readBody(limit: 10, deadline: { soon() }) == body)
        #expect(stream.written.isEmpty, "\(String(decoding: stream.written, as: UTF8.self))")
    }

    @Test(
        "through a door: a route reading its body sends 100 Continue first; a middleware refusal before it answers with no 100; HTTP/1.0 never gets one"
    )
    func continueThroughDoor() {
        var routes = RouteTable<Notes>()
        routes.add([.put], "/x", traits: .body) { r, _ throws(HTTPError) in
            .bytes(.created, try r.body.collect(limit: 10), type: "text/plain")
        }
        let check: RouteMiddleware<Notes> = { r, c, next throws(HTTPError) in
            guard r.head.header("authorization") != nil else { throw .status(.unauthorized, "who?") }
            return try next(r, c)
        }
        let put = "PUT /x HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 5\r\n"
        let (read, readHTTP) = connection(put + "Authorization: x\r\n\r\nhello")
        #expect(serveValues(testResponder(routes, [check]), readHTTP) == "client closed")
        #expect(
            writtenText(read).hasPrefix("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\n"), "\(writtenText(read))"
        )
        #expect(writtenText(read).hasSuffix("\r\n\r\nhello"))
        let (refused, refusedHTTP) = connection(put + "\r\nhello")
        #expect(serveValues(testResponder(routes, [check]), refusedHTTP) == "closed after the answer")
        #expect(
            writtenText(refused).hasPrefix("HTTP/1.1 401 ") && !writtenText(refused).contains("100 Continue"),
            "\(writtenText(refused))")
        let (old, oldHTTP) = connection(
            "PUT /x HTTP/1.0\r\nExpect: 100-continue\r\nAuthorization: x\r\nContent-Length: 5\r\n\r\nhello")
        #expect(serveValues(testResponder(routes, [check]), oldHTTP) == "closed after the answer")
        #expect(
            writtenText(old).hasPrefix("HTTP/1.1 201 Created\r\n") && !writtenText(old).contains("100 Continue"),
            "\(writtenText(old))")
    }
}
