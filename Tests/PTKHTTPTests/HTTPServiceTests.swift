import PTKHTTP
import PTKTestSupport
import PTKTestTags
import Testing

/// A middleware step that notes its way in and out, or answers by itself (403) without `next`.
struct Step: HTTPMiddleware {
    typealias Context = Notes
    let name: String
    var answers = false

    func respond(to request: HTTPRequest<Notes>, next: HTTPHandler<Notes>) throws(HTTPError) -> Bool {
        request.context.add("\(name) in")
        if answers {
            try request.http.respond(403, Array("\(name) says no\n".utf8), contentType: "text/plain", deadline: soon())
            return true
        }
        let keepOpen = try next(request)
        request.context.add("\(name) out")
        return keepOpen
    }
}

/// A handler that notes what it was given (target, parameters, traits), answers 200 and, when
/// `closeFirst`, answers with `Connection: close` to see whether the request was still being read.
func recording(_ name: String, readBody: Bool = false, closing: Bool = false) -> HTTPHandler<Notes> {
    { (r: HTTPRequest<Notes>) throws(HTTPError) -> Bool in
        var line = "\(name) \(r.head.method) \(r.head.target)"
        if readBody { line += " body=" + String(decoding: try r.http.readBody(limit: 1 << 20, deadline: { soon() }), as: UTF8.self) }
        if !r.parameters.values.isEmpty { line += " " + r.parameters.values.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ",") }
        r.context.add(line)
        try r.http.respond(200, Array("ok".utf8), contentType: "text/plain", close: closing, headOnly: r.headOnly, deadline: soon())
        if closing { r.context.add("refusedMidRequest=\(r.http.refusedMidRequest)") }
        return !closing
    }
}

func serviceRouter() -> Router<Notes> {
    var r = Router<Notes>()
    r.add(["GET", "HEAD"], "/photos", recording("photos"))
    r.add(["POST"], "/photos", traits: [.change], recording("post"))
    r.add(["POST"], "/close", traits: [.change], recording("close", closing: true))
    r.add(["PUT"], "/upload", traits: [.body], recording("upload", readBody: true))
    r.add(["PUT"], "/upload-close", traits: [.body], recording("upload-close", closing: true))
    r.add(["POST"], "/form", traits: [.change, .form], recording("form", readBody: true))
    r.add(["GET"], "/photo/{id}/original", captures: ["id": .id], traits: [.open], recording("original"))
    r.add(["GET"], "/bye", recording("bye", closing: true))
    return r
}

@Suite("HTTPService: middleware, routes, refusals and bodies on one connection", .tags(.unit))
struct HTTPServiceTests {
    @Test("middleware runs in its order around the handler, each step seeing what the inner ones did")
    func middlewareOrder() {
        let notes = Notes(), ctx = Notes()
        let (stream, http) = connection("GET /photos HTTP/1.1\r\nHost: h\r\n\r\n")
        let s = service(serviceRouter(), [Step(name: "A"), Step(name: "B"), Step(name: "C")], notes: notes)
        #expect(serve(s, http, context: ctx) == "client closed")
        #expect(ctx.items == ["A in", "B in", "C in", "photos GET /photos", "C out", "B out", "A out"])
        #expect(stream.responses.map(\.status) == [200])
    }

    @Test("a middleware that answers without calling next stops the chain: no later step, no handler")
    func middlewareAnswers() {
        let notes = Notes(), ctx = Notes()
        let (stream, http) = connection("GET /photos HTTP/1.1\r\nHost: h\r\n\r\nGET /nope HTTP/1.1\r\nHost: h\r\n\r\n")
        let s = service(serviceRouter(), [Step(name: "A"), Step(name: "B", answers: true), Step(name: "C")], notes: notes)
        serve(s, http, context: ctx)
        #expect(ctx.items == ["A in", "B in", "A out", "A in", "B in", "A out"])
        #expect(stream.responses.map(\.status) == [403, 403])
        #expect(notes.items.isEmpty)
    }

    @Test("an unknown path reaches refuse as 404 through the middleware, its body read and dropped, and the next pipelined request is read right")
    func notFoundDropsBody() {
        let notes = Notes(), ctx = Notes()
        let (stream, http) = connection("POST /nope HTTP/1.1\r\nHost: h\r\nContent-Length: 11\r\n\r\nGET /x HTTPGET /photos HTTP/1.1\r\nHost: h\r\n\r\n")
        let s = service(serviceRouter(), [Step(name: "A")], notes: notes)
        #expect(serve(s, http, context: ctx) == "client closed")
        #expect(notes.items == ["refuse 404"])
        #expect(ctx.items == ["A in", "A out", "A in", "photos GET /photos", "A out"])
        #expect(stream.responses.map(\.status) == [404, 200])
    }

    @Test("a path without the method reaches refuse as 405 with the Allow of its routes; a chunked body fed a byte at a time is dropped first")
    func methodNotAllowedDropsChunkedBody() {
        let notes = Notes(), ctx = Notes()
        let (stream, http) = connection("DELETE /photos HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n3;x=y\r\nabc\r\n4\r\nGET \r\n0\r\n\r\n"
                                        + "GET /photos HTTP/1.1\r\nHost: h\r\n\r\n", readSize: 1)
        #expect(serve(service(serviceRouter(), notes: notes), http, context: ctx) == "client closed")
        #expect(notes.items == ["refuse 405 GET, HEAD, POST"])
        #expect(ctx.items == ["photos GET /photos"])
        let responses = stream.responses
        #expect(responses.map(\.status) == [405, 200])
        #expect(responses.first?.header("allow") == "GET, HEAD, POST")
    }

    @Test("refuse runs only after the refused request's body was read: its Connection: close is no refusal mid-request")
    func refuseAfterBody() {
        let notes = Notes()
        for (text, status) in [("POST /nope HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello", 404),
                               ("DELETE /photos HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n", 405)] {
            let (stream, http) = connection(text, readSize: 1)
            let s = HTTPService<Notes>(kind: "web", router: serviceRouter(), middleware: [], idle: .seconds(30), log: { _ in },
                                       refuse: { (r: HTTPRequest<Notes>, status: Int, _: String?) throws(HTTPError) -> Void in
                                           try r.http.respond(status, close: true, deadline: soon())
                                           notes.add("\(status) refusedMidRequest=\(r.http.refusedMidRequest)")
                                       })
            #expect(serve(s, http, context: Notes()) == "client closed")
            #expect(stream.responses.map(\.status) == [status])
        }
        #expect(notes.items == ["404 refusedMidRequest=false", "405 refusedMidRequest=false"])
    }

    @Test("a refused request's body over the ignored-body limit is 413, and refuse is not called")
    func refusedBodyTooLarge() {
        let notes = Notes()
        let big = String(repeating: "x", count: HTTPService<Notes>.ignoredBodyLimit + 1)
        let (stream, http) = connection("POST /nope HTTP/1.1\r\nHost: h\r\nContent-Length: \(big.utf8.count)\r\n\r\n" + big)
        #expect(serve(service(serviceRouter(), notes: notes), http, context: Notes()) == "refused 413")
        #expect(notes.items.isEmpty)
        #expect(stream.written.isEmpty)
    }

    @Test("a route without .body or .form gets its body read and dropped before its handler runs")
    func bodyDroppedBeforeHandler() {
        let ctx = Notes()
        // The handler answers with Connection: close: that notes a refusal mid-request only when
        // the request's body was still unread.
        let (stream, http) = connection("POST /close HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\nhello")
        #expect(serve(service(serviceRouter(), notes: Notes()), http, context: ctx) == "closed by handler")
        #expect(ctx.items == ["close POST /close", "refusedMidRequest=false"])
        #expect(stream.responses.map(\.status) == [200])
    }

    @Test("a GET or a change without .body has its body dropped, and the requests pipelined after it are read right")
    func droppedBodiesKeepPipelining() {
        let ctx = Notes()
        let (stream, http) = connection("GET /photos HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\nGETPOST /photos HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"
                                        + "5\r\nPOST \r\n0\r\n\r\nGET /photos?n=3 HTTP/1.1\r\nHost: h\r\n\r\n")
        #expect(serve(service(serviceRouter(), notes: Notes()), http, context: ctx) == "client closed")
        #expect(ctx.items == ["photos GET /photos", "post POST /photos", "photos GET /photos?n=3"])
        #expect(stream.responses.map(\.status) == [200, 200, 200])
    }

    @Test("a .body route's handler gets the body unread, and reads it itself")
    func bodyRouteReadsItself() {
        let ctx = Notes()
        let (stream, http) = connection("PUT /upload HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\nhelloGET /photos HTTP/1.1\r\n\r\n", readSize: 1)
        #expect(serve(service(serviceRouter(), notes: Notes()), http, context: ctx) == "client closed")
        #expect(ctx.items == ["upload PUT /upload body=hello", "photos GET /photos"])
        #expect(stream.responses.map(\.status) == [200, 200])
        let (_, closing) = connection("PUT /upload-close HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\nhello")
        let ctx2 = Notes()
        serve(service(serviceRouter(), notes: Notes()), closing, context: ctx2)
        #expect(ctx2.items == ["upload-close PUT /upload-close", "refusedMidRequest=true"])
    }

    @Test("a .form route's handler gets the body unread too (the form reader takes it)")
    func formRouteBodyUnread() {
        let ctx = Notes()
        let (_, http) = connection("POST /form HTTP/1.1\r\nHost: h\r\nContent-Length: 9\r\n\r\na=1&b=two")
        #expect(serve(service(serviceRouter(), notes: Notes()), http, context: ctx) == "client closed")
        #expect(ctx.items == ["form POST /form body=a=1&b=two"])
    }

    @Test("the handler is given the route's captures and traits; HEAD is headOnly; a handler's false ends the connection")
    func parametersTraitsAndClose() {
        let ctx = Notes()
        var r = serviceRouter()
        r.add(["HEAD"], "/probe/{id}", captures: ["id": .id], traits: [.open, .body]) { (req: HTTPRequest<Notes>) throws(HTTPError) -> Bool in
            req.context.add("probe id=\(req.parameters.int64("id") ?? -1) traits=\(req.traits.rawValue) headOnly=\(req.headOnly) address=\(req.address)")
            try req.http.respond(200, Array("12345".utf8), headOnly: req.headOnly, deadline: soon())
            return true
        }
        let (stream, http) = connection("HEAD /probe/31 HTTP/1.1\r\n\r\nGET /photo/8/original HTTP/1.1\r\n\r\nGET /bye HTTP/1.1\r\n\r\nGET /photos HTTP/1.1\r\n\r\n")
        #expect(serve(service(r, notes: Notes()), http, context: ctx) == "closed by handler")
        #expect(ctx.items == ["probe id=31 traits=9 headOnly=true address=192.0.2.7", "original GET /photo/8/original id=8",
                              "bye GET /bye", "refusedMidRequest=false"])
        let text = writtenText(stream)
        #expect(text.components(separatedBy: "HTTP/1.1 200 OK\r\n").count - 1 == 3)
        #expect(text.hasPrefix("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n"))
        #expect(!text.contains("12345"))
    }

    @Test("a request's log line names the door, connection, peer and subject, and marks the request logged")
    func requestLogLine() {
        let log = Notes(), ctx = Notes()
        var r = Router<Notes>()
        r.add(["GET"], "/x") { (req: HTTPRequest<Notes>) throws(HTTPError) -> Bool in
            req.context.add("logged before: \(req.logged)")
            req.logSubject = "alice"
            req.log("did a thing")
            req.context.add("logged after: \(req.logged)")
            return true
        }
        let (_, http) = connection("GET /x HTTP/1.1\r\n\r\n")
        serve(service(r, notes: Notes(), log: log), http, context: ctx)
        #expect(log.items == ["web 7 from 192.0.2.7:40000 alice: did a thing"])
        #expect(ctx.items == ["logged before: false", "logged after: true"])
    }
}
