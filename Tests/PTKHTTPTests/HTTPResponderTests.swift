import PTKHTTP
import PTKTestSupport
import PTKTestTags
import Testing

/// A middleware step that notes its way in and out (in the request's context, the run's
/// notebook), or answers by itself (403) without `next`.
func step(_ name: String, answers: Bool = false) -> RouteMiddleware<Notes> {
    // Given its type by a typed constant (Swift 6.3's module emission crashes on a closure literal converted in place).
    let step: RouteMiddleware<Notes> = { r, notes, next throws(HTTPError) in
        notes.add("\(name) in")
        if answers { return .bytes(.forbidden, Array("\(name) says no\n".utf8), type: "text/plain") }
        let response = try next(r, notes)
        notes.add("\(name) out")
        return response
    }
    return step
}

/// A handler that notes what it was given (target, parameters, and with `closing` whether the
/// body is still unread), answers 200 and, when `closing`, asks the connection to close.
func recording(_ name: String, readBody: Bool = false, closing: Bool = false) -> RouteHandler<Notes> {
    let handler: RouteHandler<Notes> = { r, notes throws(HTTPError) in
        var line = "\(name) \(r.head.method) \(r.head.target)"
        if readBody { line += " body=" + String(decoding: try r.body.collect(limit: 1 << 20), as: UTF8.self) }
        if !r.parameters.values.isEmpty {
            line +=
                " "
                + r.parameters.values.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ",")
        }
        if closing { line += " pending=\(r.body.isPending)" }
        notes.add(line)
        let response = Response.bytes(.ok, Array("ok".utf8), type: "text/plain")
        return closing ? response.closing() : response
    }
    return handler
}

func serviceRoutes() -> RouteTable<Notes> {
    var r = RouteTable<Notes>()
    r.add([.get, .head], "/photos", recording("photos"))
    r.add([.post], "/photos", traits: [.change], recording("post"))
    r.add([.post], "/close", traits: [.change], recording("close", closing: true))
    r.add([.put], "/upload", traits: [.body], recording("upload", readBody: true))
    r.add([.put], "/upload-close", traits: [.body], recording("upload-close", closing: true))
    r.add([.post], "/form", traits: [.change, .form], recording("form", readBody: true))
    r.add([.get], "/photo/{id}/original", captures: ["id": .id], traits: [.open], recording("original"))
    r.add([.get], "/bye", recording("bye", closing: true))
    return r
}

@Suite("HTTPResponder: middleware, routes, refusals and bodies on one connection", .tags(.unit))
struct HTTPResponderTests {
    @Test("middleware runs in its order around the handler, each step seeing what the inner ones did")
    func middlewareOrder() {
        let ctx = Notes()
        let (stream, http) = connection("GET /photos HTTP/1.1\r\nHost: h\r\n\r\n")
        let door = testResponder(serviceRoutes(), [step("A"), step("B"), step("C")], context: ctx)
        #expect(serveValues(door, http) == "client closed")
        #expect(ctx.items == ["A in", "B in", "C in", "photos GET /photos", "C out", "B out", "A out"])
        #expect(stream.responses.map(\.status) == [200])
    }

    @Test("a middleware that answers without calling next stops the chain: no later step, no handler, no refusal")
    func middlewareAnswers() {
        let refusals = Notes()
        let ctx = Notes()
        let (stream, http) = connection("GET /photos HTTP/1.1\r\nHost: h\r\n\r\nGET /nope HTTP/1.1\r\nHost: h\r\n\r\n")
        let door = testResponder(
            serviceRoutes(), [step("A"), step("B", answers: true), step("C")], context: ctx, refusals: refusals)
        #expect(serveValues(door, http) == "client closed")
        #expect(ctx.items == ["A in", "B in", "A out", "A in", "B in", "A out"])
        #expect(stream.responses.map(\.status) == [403, 403])
        #expect(stream.responses.first?.text == "B says no\n")
        #expect(refusals.items.isEmpty)
    }

    @Test(
        "an unknown path is refused 404 through the middleware (the refusal passing back through it), its body read and dropped, and the next pipelined request is read right"
    )
    func notFoundDropsBody() {
        let refusals = Notes()
        let ctx = Notes()
        let (stream, http) = connection(
            "POST /nope HTTP/1.1\r\nHost: h\r\nContent-Length: 11\r\n\r\nGET /x HTTPGET /photos HTTP/1.1\r\nHost: h\r\n\r\n"
        )
        #expect(
            serveValues(testResponder(serviceRoutes(), [step("A")], context: ctx, refusals: refusals), http)
                == "client closed")
        #expect(refusals.items == ["refuse 404"])
        #expect(ctx.items == ["A in", "A in", "photos GET /photos", "A out"])
        #expect(stream.responses.map(\.status) == [404, 200])
    }

    @Test(
        "a path without the method is refused 405 with the Allow of its routes; a chunked body fed a byte at a time is dropped first"
    )
    func methodNotAllowedDropsChunkedBody() {
        let refusals = Notes()
        let ctx = Notes()
        let (stream, http) = connection(
            "DELETE /photos HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n3;x=y\r\nabc\r\n4\r\nGET \r\n0\r\n\r\n"
                + "GET /photos HTTP/1.1\r\nHost: h\r\n\r\n", readSize: 1)
        #expect(serveValues(testResponder(serviceRoutes(), context: ctx, refusals: refusals), http) == "client closed")
        #expect(refusals.items == ["refuse 405 GET, HEAD, POST"])
        #expect(ctx.items == ["photos GET /photos"])
        let responses = stream.responses
        #expect(responses.map(\.status) == [405, 200])
        #expect(responses.first?.header("allow") == "GET, HEAD, POST")
    }

    @Test(
        "the error middleware runs only after the refused request's body was read: its Connection: close is no refusal mid-request"
    )
    func refuseAfterBody() {
        let notes = Notes()
        for (text, status) in [
            ("POST /nope HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello", 404),
            ("DELETE /photos HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n", 405),
        ] {
            let (stream, http) = connection(text, readSize: 1)
            let door = HTTPResponder(
                routes: serviceRoutes(), kind: "web", log: { _ in }, context: { _ in Notes() },
                renderError: { r, status, _, headers in
                    notes.add("\(status) pending=\(r.body.isPending)")
                    return Response(status, headers: headers).closing()
                })
            #expect(serveValues(door, http) == "closed after the answer")
            #expect(stream.responses.map(\.status) == [status])
            #expect(stream.responses.first?.header("connection") == "close")
            #expect(!http.refusedMidRequest, "\(status)")
        }
        #expect(notes.items == ["404 pending=false", "405 pending=false"])
    }

    @Test("a refused request's body over the ignored-body limit is 413, and the error middleware is not called")
    func refusedBodyTooLarge() {
        let refusals = Notes()
        let big = String(repeating: "x", count: RequestBody.ignoredBodyLimit + 1)
        let (stream, http) = connection(
            "POST /nope HTTP/1.1\r\nHost: h\r\nContent-Length: \(big.utf8.count)\r\n\r\n" + big)
        #expect(serveValues(testResponder(serviceRoutes(), refusals: refusals), http) == "refused 413")
        #expect(refusals.items.isEmpty)
        #expect(stream.written.isEmpty)
    }

    @Test("a route without .body or .form gets its body read and dropped before its handler runs")
    func bodyDroppedBeforeHandler() {
        let ctx = Notes()
        // The handler asks to close: that is a refusal mid-request only when the request's body
        // was still unread.
        let (stream, http) = connection("POST /close HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\nhello")
        #expect(serveValues(testResponder(serviceRoutes(), context: ctx), http) == "closed after the answer")
        #expect(ctx.items == ["close POST /close pending=false"])
        #expect(!http.refusedMidRequest)
        #expect(stream.responses.map(\.status) == [200])
    }

    @Test(
        "a body that stops coming while it is dropped before the route is 408 from the connection, which closes; the handler never runs"
    )
    func silentBodyTimesOut() {
        let ctx = Notes()
        let e = RouteHarness(testResponder(serviceRoutes(), context: ctx))
            .run([Array("POST /photos HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\nhe".utf8)], whenEmpty: .silent)
        #expect(e.statuses == [408], "\(e.text)")
        #expect(e.ending == "request not finished within the timeout; answered 408")
        #expect(e.first.header("connection") == "close")
        #expect(ctx.items.isEmpty)
    }

    @Test("a GET or a change without .body has its body dropped, and the requests pipelined after it are read right")
    func droppedBodiesKeepPipelining() {
        let ctx = Notes()
        let (stream, http) = connection(
            "GET /photos HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\nGETPOST /photos HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"
                + "5\r\nPOST \r\n0\r\n\r\nGET /photos?n=3 HTTP/1.1\r\nHost: h\r\n\r\n")
        #expect(serveValues(testResponder(serviceRoutes(), context: ctx), http) == "client closed")
        #expect(ctx.items == ["photos GET /photos", "post POST /photos", "photos GET /photos?n=3"])
        #expect(stream.responses.map(\.status) == [200, 200, 200])
    }

    @Test(
        "a .body route's handler gets the body unread, and reads it itself; one that leaves it unread closes the connection"
    )
    func bodyRouteReadsItself() {
        let ctx = Notes()
        let (stream, http) = connection(
            "PUT /upload HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\nhelloGET /photos HTTP/1.1\r\n\r\n", readSize: 1
        )
        #expect(serveValues(testResponder(serviceRoutes(), context: ctx), http) == "client closed")
        #expect(ctx.items == ["upload PUT /upload body=hello", "photos GET /photos"])
        #expect(stream.responses.map(\.status) == [200, 200])
        let (closingStream, closing) = connection(
            "PUT /upload-close HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\nhello")
        let ctx2 = Notes()
        #expect(serveValues(testResponder(serviceRoutes(), context: ctx2), closing) == "closed after the answer")
        #expect(ctx2.items == ["upload-close PUT /upload-close pending=true"])
        #expect(closing.refusedMidRequest)
        #expect(closingStream.responses.first?.header("connection") == "close")
    }

    @Test("a .form route's handler gets the body unread too (the form reader takes it)")
    func formRouteBodyUnread() {
        let ctx = Notes()
        let (_, http) = connection("POST /form HTTP/1.1\r\nHost: h\r\nContent-Length: 9\r\n\r\na=1&b=two")
        #expect(serveValues(testResponder(serviceRoutes(), context: ctx), http) == "client closed")
        #expect(ctx.items == ["form POST /form body=a=1&b=two"])
    }

    @Test(
        "the handler is given the route's captures and traits; HEAD is headOnly and gets the head alone; a response asking to close ends the connection"
    )
    func parametersTraitsAndClose() {
        let ctx = Notes()
        var r = serviceRoutes()
        r.add([.head], "/probe/{id}", captures: ["id": .id], traits: [.open, .body]) { req, notes throws(HTTPError) in
            notes.add(
                "probe id=\(req.parameters.int64("id") ?? -1) traits=\(req.traits.rawValue) headOnly=\(req.headOnly) address=\(req.address)"
            )
            return .bytes(.ok, Array("12345".utf8), type: "application/json")
        }
        let (stream, http) = connection(
            "HEAD /probe/31 HTTP/1.1\r\n\r\nGET /photo/8/original HTTP/1.1\r\n\r\nGET /bye HTTP/1.1\r\n\r\nGET /photos HTTP/1.1\r\n\r\n"
        )
        #expect(serveValues(testResponder(r, context: ctx), http) == "closed after the answer")
        #expect(
            ctx.items == [
                "probe id=31 traits=9 headOnly=true address=192.0.2.7", "original GET /photo/8/original id=8",
                "bye GET /bye pending=false",
            ])
        #expect(!http.refusedMidRequest)
        let text = writtenText(stream)
        #expect(text.components(separatedBy: "HTTP/1.1 200 OK\r\n").count - 1 == 3)
        #expect(text.hasPrefix("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n"))
        #expect(!text.contains("12345"))
    }

    @Test("a request's log line names the door, connection, peer and subject, and marks the request logged")
    func requestLogLine() {
        let log = Notes()
        let ctx = Notes()
        var r = RouteTable<Notes>()
        r.add([.get], "/x") { req, notes throws(HTTPError) in
            notes.add("logged before: \(req.logged)")
            req.logSubject = "alice"
            req.log("did a thing")
            notes.add("logged after: \(req.logged)")
            return Response(.ok)
        }
        let (_, http) = connection("GET /x HTTP/1.1\r\n\r\n")
        serveValues(testResponder(r, context: ctx, log: log), http)
        #expect(log.items == ["web 7 from 192.0.2.7:40000 alice: did a thing"])
        #expect(ctx.items == ["logged before: false", "logged after: true"])
    }
}
