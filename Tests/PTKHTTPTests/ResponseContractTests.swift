import PTKHTTP
import PTKSystem
import PTKTestSupport
import PTKTestTags
import Testing

/// The door contract (issue 55): handlers return `Response` values and the connection writes
/// them and decides keep-alive; typed captures; route groups with a narrower context; the
/// door's error middleware; driven through `RouteHarness` (no daemon, socket or TLS).
@Suite("Responses are values: route tables through the harness", .tags(.unit))
struct ResponseContractTests {
    /// A door's context: who the request says it is (nil: no one).
    struct Door { var user: String? }

    /// The test door's table: open routes, a typed capture, a group that needs a user.
    static let routes: RouteTable<Door> = {
        var routes = RouteTable<Door>()
        routes.add([.get], "/hello") { _, _ throws(HTTPError) in .bytes(.ok, Array("hi".utf8), type: "text/plain") }
        routes.add([.get, .post], "/photo/{id}", captures: ["id": .id]) { r, _ throws(HTTPError) in
            let id = try r.parameters.require("id", as: Int64.self)
            return .bytes(.ok, Array("photo \(id + 1)".utf8), type: "text/plain")
        }
        routes.add([.get], "/wrong/{name}", captures: ["name": .oneOf(["x"])]) { r, _ throws(HTTPError) in
            _ = try r.parameters.require("other", as: String.self)
            return Response(.ok)
        }
        routes.add([.put], "/unread", traits: .body) { _, _ throws(HTTPError) in Response(.created) }
        routes.add([.put], "/read", traits: .body) { r, _ throws(HTTPError) in
            let body = try r.body.collect(limit: 100)
            return .bytes(.created, body, type: "application/octet-stream")
        }
        routes.add([.get], "/bye") { _, _ throws(HTTPError) in Response(.ok).closing() }
        routes.add([.get], "/stream") { _, _ throws(HTTPError) in
            Response(
                .ok,
                body: .stream(contentType: "text/plain") { (w: ChunkedBody) throws(HTTPError) in
                    try w.write(Array("one ".utf8))
                    try w.write([])
                    try w.write(Array("two".utf8))
                })
        }
        routes.add([.get], "/cut") { _, _ throws(HTTPError) in
            Response(
                .ok,
                body: .stream(contentType: "text/plain") { (w: ChunkedBody) throws(HTTPError) in
                    try w.write(Array("part".utf8))
                    throw .status(.internalServerError, "gave up midway")
                })
        }
        routes.add([.get], "/cut-timeout") { _, _ throws(HTTPError) in
            Response(
                .ok,
                body: .stream(contentType: "text/plain") { (w: ChunkedBody) throws(HTTPError) in
                    try w.write(Array("part".utf8))
                    throw .timedOut(partial: true)
                })
        }
        routes.add([.get], "/cut-stop") { _, _ throws(HTTPError) in
            Response(
                .ok,
                body: .stream(contentType: "text/plain") { (w: ChunkedBody) throws(HTTPError) in
                    try w.write(Array("part".utf8))
                    throw .interrupted
                })
        }
        routes.add([.get], "/header") { r, _ throws(HTTPError) in
            Response(.noContent, headers: ["X-Echo": r.query["v"] ?? ""])
        }
        routes.group({ (_: Request, door: Door) throws(HTTPError) -> String in
            guard let user = door.user else {
                throw .status(.unauthorized, "who are you?", headers: ["WWW-Authenticate": "Test"])
            }
            return user
        }) { group in
            group.add([.get], "/me") { r, user throws(HTTPError) in
                r.log("asked who they are")
                return .bytes(.ok, Array(user.utf8), type: "text/plain")
            }
        }
        return routes
    }()

    /// Renders refusals as "status: message" in text.
    func harness(user: String? = nil, log: Notes? = nil) -> RouteHarness<Door> {
        let responder = HTTPResponder(
            routes: Self.routes, kind: "test", requestLog: LogBudget(), log: { log?.add($0) },
            context: { _ in Door(user: user) },
            renderError: { _, status, text, headers in
                .bytes(status, Array("\(status): \(text)".utf8), type: "text/plain", headers: headers)
            })
        return RouteHarness(responder)
    }

    func get(_ target: String, _ headers: [(String, String)] = []) -> [UInt8] {
        RouteHarness<Door>.request("GET", target, headers)
    }

    @Test(
        "typed captures; 404 and 405 (with Allow) through the door's error middleware; a capture the table does not give is 404"
    )
    func capturesAndRefusals() {
        let e = harness().run([
            get("/photo/41"), get("/photo/041"), RouteHarness<Door>.request("PUT", "/photo/1", body: [1]), get("/nope"),
            get("/wrong/x"), get("/hello"),
        ])
        #expect(e.statuses == [200, 404, 405, 404, 404, 200], "\(e.responses)")
        #expect(e.responses[0].text == "photo 42")
        #expect(e.responses[1].text == "404: no such route")
        #expect(e.responses[2].header("allow") == "GET, POST" && e.responses[2].text == "405: PUT is not allowed here")
    }

    @Test(
        "a group's handlers get its non-optional context; without it the group's refusal is rendered, headers and all")
    func groups() {
        let none = harness().run([get("/me"), get("/hello")])
        #expect(none.statuses == [401, 200])
        #expect(none.first.header("www-authenticate") == "Test" && none.first.text == "401: who are you?")
        let ann = harness(user: "ann").run([get("/me")])
        #expect(ann.first.status == 200 && ann.first.text == "ann")
    }

    @Test(
        "the connection decides keep-alive: an unread body closes, a read one keeps; a response may ask to close; so may the client"
    )
    func keepAlive() {
        let unread = harness().run([
            RouteHarness<Door>.request("PUT", "/unread", body: Array(repeating: 7, count: 50)), get("/hello"),
        ])
        #expect(unread.statuses == [201] && unread.first.header("connection") == "close", "\(unread.text)")
        let read = harness().run([RouteHarness<Door>.request("PUT", "/read", body: Array("abc".utf8)), get("/hello")])
        #expect(
            read.statuses == [201, 200] && read.first.text == "abc" && read.first.header("connection") == "keep-alive")
        let chunked = harness().run([
            RouteHarness<Door>.request("PUT", "/read", body: Array("abcdef".utf8), chunked: [2]), get("/hello"),
        ])
        #expect(chunked.statuses == [201, 200] && chunked.first.text == "abcdef")
        let bye = harness().run([get("/bye"), get("/hello")])
        #expect(bye.statuses == [200] && bye.first.header("connection") == "close")
        let client = harness().run([get("/hello", [("Connection", "close")]), get("/hello")])
        #expect(client.statuses == [200] && client.first.header("connection") == "close")
        // A route that takes no body: a small one is read and dropped, and the connection goes on.
        let small = harness().run([RouteHarness<Door>.request("GET", "/hello", body: [1, 2, 3]), get("/hello")])
        #expect(small.statuses == [200, 200])
        // One over the limit is the connection's refusal (413), and it closes.
        let large = harness().run([
            RouteHarness<Door>.request("GET", "/hello", body: [UInt8](repeating: 1, count: 70 << 10)), get("/hello"),
        ])
        #expect(large.statuses == [413] && large.ending?.contains("answered 413") == true, "\(large.ending ?? "")")
    }

    @Test(
        "HEAD gets the head alone with the body's length; a streamed body goes out chunked (no empty chunk mid-body), and not at all for HEAD"
    )
    func headAndStream() {
        let head = harness().run([RouteHarness<Door>.request("HEAD", "/photo/1"), get("/hello")], headOnly: true)
        #expect(head.text.hasPrefix("HTTP/1.1 405"), "\(head.text)")
        #expect(
            head.text.contains("Content-Length: \("405: HEAD is not allowed here".utf8.count)\r\n")
                && !head.text.contains("not allowed here\r\n\r\nHTTP"))
        #expect(
            head.text.hasSuffix(
                "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Type: text/plain\r\nConnection: keep-alive\r\n\r\nhi"),
            "\(head.text)")
        let stream = harness().run([get("/stream"), get("/hello")])
        #expect(
            stream.statuses == [200, 200] && stream.first.text == "one two"
                && stream.first.header("transfer-encoding") == "chunked")
        #expect(stream.text.contains("4\r\none \r\n3\r\ntwo\r\n0\r\n\r\n"), "\(stream.text)")
        // A producer that fails after the head: no second answer, no last chunk; the connection ends.
        let cut = harness().run([get("/cut"), get("/hello")])
        #expect(cut.responses.isEmpty && cut.ending == nil && cut.text.hasSuffix("4\r\npart\r\n"), "\(cut.text)")
        #expect(cut.text.components(separatedBy: "HTTP/1.1 ").count == 2)
        // Whatever the producer's error (a timeout, the stop), nothing is written after the head
        // but the body so far: a 408 or 503 there would land inside the chunked body.
        for path in ["/cut-timeout", "/cut-stop"] {
            let cut = harness().run([get(path), get("/hello")])
            #expect(cut.responses.isEmpty && cut.text.hasSuffix("4\r\npart\r\n"), "\(path): \(cut.text)")
            #expect(cut.text.components(separatedBy: "HTTP/1.1 ").count == 2, "\(path): \(cut.text)")
        }
    }

    @Test("a header value with CR or LF cannot add a header or end the head")
    func headerValues() {
        var fields = HTTPFields()
        fields.append("X-A", "one\r\nX-Injected: yes")
        #expect(fields["x-a"] == "one  X-Injected: yes")
        let e = harness().run([get("/header?v=a%0D%0ASet-Cookie:%20x=1")])
        #expect(
            e.first.status == 204 && e.first.header("set-cookie") == nil
                && e.first.header("x-echo") == "a  Set-Cookie: x=1", "\(e.text)")
    }

    @Test("a file body: the whole file, one range (206), a range past the end (416)")
    func files() throws {
        let dir = makeTemporaryDirectory("ptk-response-file")
        defer { removeTree(dir) }
        writeFile(dir + "/f", Array("0123456789".utf8))
        let (fd, _) = try FileDescriptor.openRegularFile(dir + "/f")
        defer { fd.close() }
        var failures = 0
        let whole = Response.file(fd, size: 10, type: "text/plain", range: nil) { _, _ in failures += 1 }
        let part = Response.file(fd, size: 10, type: "text/plain", range: "bytes=2-4") { _, _ in failures += 1 }
        let past = Response.file(fd, size: 10, type: "text/plain", range: "bytes=10-") { _, _ in failures += 1 }
        #expect(whole.status == .ok && part.status == .partialContent && past.status == .rangeNotSatisfiable)
        #expect(part.headers["content-range"] == "bytes 2-4/10" && past.headers["content-range"] == "bytes */10")
        var routes = RouteTable<Door>()
        routes.add([.get], "/part") { _, _ throws(HTTPError) in
            Response.file(fd, size: 10, type: "text/plain", range: "bytes=2-4") { _, _ in }
        }
        routes.add([.get], "/whole") { _, _ throws(HTTPError) in
            Response.file(fd, size: 10, type: "text/plain", range: nil) { _, _ in }
        }
        let responder = HTTPResponder(
            routes: routes, kind: "test", log: { _ in }, context: { _ in Door() },
            renderError: { _, status, _, _ in Response(status) })
        let e = RouteHarness(responder).run([get("/part"), get("/whole")])
        #expect(e.statuses == [206, 200] && e.responses[0].text == "234" && e.responses[1].text == "0123456789")
        #expect(e.responses[0].header("accept-ranges") == "bytes" && failures == 0)
    }

    @Test("the request log: an error no handler logged gets one line; a logged request and a success none")
    func requestLog() {
        let log = Notes()
        _ = harness(log: log).run([get("/nope"), get("/hello"), get("/me")])
        #expect(log.items.count == 2, "\(log.items)")
        #expect(log.items.first?.contains("GET \"/nope\": answered 404") == true, "\(log.items)")
        let logged = Notes()
        _ = harness(user: "ann", log: logged).run([get("/me")])
        #expect(logged.items == ["test 1 from 192.0.2.7:40000: asked who they are"], "\(logged.items)")
    }

    /// What happened, in order, from handlers that may run on any thread.
    final class Events: @unchecked Sendable {
        // `items` is guarded by `lock`.
        private let lock = Lock()
        private var list: [String] = []
        func add(_ item: String) { lock.withLock { list.append(item) } }
        var items: [String] { lock.withLock { list } }
    }

    @Test("a response's whenDone runs once, after the connection wrote it (its body; a HEAD's head alone)")
    func whenDone() {
        let events = Events()
        var routes = RouteTable<Door>()
        routes.add([.get, .head], "/f") { r, _ throws(HTTPError) in
            var response = Response(
                .ok,
                body: .stream(contentType: "text/plain") { (w: ChunkedBody) throws(HTTPError) in
                    events.add("body")
                    try w.write(Array("x".utf8))
                })
            let method = r.head.method
            response.whenDone = { events.add("done " + method) }
            return response
        }
        let responder = HTTPResponder(
            routes: routes, kind: "test", log: { _ in }, context: { _ in Door() },
            renderError: { _, status, _, _ in Response(status) })
        let e = RouteHarness(responder).run([get("/f"), get("/nope")])
        #expect(e.statuses == [200, 404] && e.first.text == "x", "\(e.text)")
        #expect(events.items == ["body", "done GET"])
        let head = RouteHarness(responder).run([RouteHarness<Door>.request("HEAD", "/f")], headOnly: true)
        #expect(head.statuses == [200] && head.text.hasSuffix("\r\n\r\n"), "\(head.text)")
        #expect(events.items == ["body", "done GET", "body", "done HEAD"])
    }
}
