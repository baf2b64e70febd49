import PTKHTTP
import PTKSystem
import PTKTestSupport
import PTKTestTags
import PTKTime
import Testing

/// Reads the next head, failing the test when the client closed instead.
func head(_ http: HTTPConnection) throws -> HTTPHead {
    try #require(try http.nextHead(deadline: soon()))
}

/// The body as text, read with `limit`.
func bodyText(_ http: HTTPConnection, limit: Int = 1 << 20, deadline: Duration = .seconds(30)) throws(HTTPError)
    -> String
{
    String(decoding: try http.readBody(limit: limit, deadline: { .now + deadline }), as: UTF8.self)
}

@Suite("HTTPConnection: reading requests and their bodies", .tags(.unit))
struct HTTPConnectionReadTests {
    @Test("a Content-Length body is read whole, in one piece or a byte at a time", arguments: [1, 3, 1 << 20])
    func contentLength(readSize: Int) throws {
        let (_, http) = connection(
            "PUT /p HTTP/1.1\r\nHost: h\r\nContent-Length: 11\r\n\r\nhello world", readSize: readSize)
        let h = try head(http)
        #expect(h.method == "PUT")
        #expect(h.contentLength == 11)
        #expect(try bodyText(http) == "hello world")
        #expect(try http.nextHead(deadline: soon()) == nil)
    }

    @Test(
        "a chunked body of several chunks with extensions is joined, fed a byte at a time or whole",
        arguments: [1, 2, 1 << 20])
    func chunked(readSize: Int) throws {
        let (_, http) = connection(
            "POST /p HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"
                + "5;name=value\r\nhello\r\n1;a\r\n \r\nA\r\nwonderful \r\n5\r\nworld\r\n0\r\n\r\n", readSize: readSize)
        let h = try head(http)
        #expect(h.chunked)
        #expect(h.contentLength == nil)
        #expect(try bodyText(http) == "hello wonderful world")
        #expect(try http.nextHead(deadline: soon()) == nil)
    }

    @Test(
        "a chunk size in upper-case hex ends the body where it should; a trailer after the last chunk is refused 400 (its lines pass no check)"
    )
    func chunkedTrailer() throws {
        let body = String(repeating: "z", count: 0x1A)
        let (_, http) = connection(
            "POST /p HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n1A\r\n\(body)\r\n0\r\n\r\n"
                + "GET /next HTTP/1.1\r\n\r\n", readSize: 1)
        _ = try head(http)
        #expect(try bodyText(http) == body)
        #expect(try head(http).target == "/next")
        for trailer in ["X-Checksum: 1\r\n", "X-A: 1\n", "X-A: 1\r\n folded\r\n"] {
            let (_, withTrailer) = connection(
                "POST /p HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n1A\r\n\(body)\r\n0\r\n\(trailer)\r\n",
                readSize: 1)
            _ = try head(withTrailer)
            #expect(failure { () throws(HTTPError) in try bodyText(withTrailer) } == "refused 400", "\(trailer)")
        }
    }

    @Test("a chunked body cut short by a close is .gone, as is one cut by a reset")
    func chunkedCutShort() throws {
        for end in [ScriptedStream.WhenEmpty.close, .reset] {
            let (_, http) = connection(
                "POST /p HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n5\r\nwor", readSize: 1,
                whenEmpty: end)
            _ = try head(http)
            #expect(failure { () throws(HTTPError) in try bodyText(http) } == "gone", "\(end)")
        }
        let (_, atBoundary) = connection("POST /p HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n")
        _ = try head(atBoundary)
        #expect(failure { () throws(HTTPError) in try bodyText(atBoundary) } == "gone")
    }

    @Test("a Content-Length body cut short is .gone")
    func lengthCutShort() throws {
        let (_, http) = connection("PUT /p HTTP/1.1\r\nContent-Length: 10\r\n\r\nhello")
        _ = try head(http)
        #expect(failure { () throws(HTTPError) in try bodyText(http) } == "gone")
    }

    @Test("a client silent mid-body is refused 408 by the minimum rate when the idle deadline is further away")
    func silentMidBodyRate() throws {
        let (_, http) = connection("PUT /p HTTP/1.1\r\nContent-Length: 10\r\n\r\nhello", whenEmpty: .silent)
        _ = try head(http)
        #expect(failure { () throws(HTTPError) in try bodyText(http, deadline: .seconds(3600)) } == "refused 408")
    }

    @Test("a client silent mid-body times out as partial when the idle deadline comes before the rate's")
    func silentMidBodyIdle() throws {
        let (_, http) = connection("POST /p HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhel", whenEmpty: .silent)
        _ = try head(http)
        #expect(
            failure { () throws(HTTPError) in try bodyText(http, deadline: .seconds(1)) } == "timedOut(partial: true)")
    }

    @Test("a silent client between requests times out as not partial; one silent mid-head as partial")
    func silentHeads() {
        let (_, idle) = connection("", whenEmpty: .silent)
        #expect(failure { () throws(HTTPError) in try idle.nextHead(deadline: soon()) } == "timedOut(partial: false)")
        let (_, midHead) = connection("GET / HTTP/1.1\r\nHo", whenEmpty: .silent)
        #expect(failure { () throws(HTTPError) in try midHead.nextHead(deadline: soon()) } == "timedOut(partial: true)")
    }

    @Test("a close between requests is nil; a close mid-head is 400; a reset is .gone")
    func closes() throws {
        let (_, empty) = connection("")
        #expect(try empty.nextHead(deadline: soon()) == nil)
        let (_, midHead) = connection("GET / HTTP/1.1\r\nHost: h\r\n")
        #expect(failure { () throws(HTTPError) in try midHead.nextHead(deadline: soon()) } == "refused 400")
        let (_, reset) = connection("GET / HT", whenEmpty: .reset)
        #expect(failure { () throws(HTTPError) in try reset.nextHead(deadline: soon()) } == "gone")
    }

    @Test("readBody(limit:) refuses a body over the limit with 413, whether announced or chunked")
    func overLimit() throws {
        let (_, http) = connection("PUT /p HTTP/1.1\r\nContent-Length: 6\r\n\r\nhello!")
        _ = try head(http)
        #expect(failure { () throws(HTTPError) in try bodyText(http, limit: 5) } == "refused 413")
        let (_, chunked) = connection(
            "POST /p HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n3\r\ndef\r\n0\r\n\r\n", readSize: 1)
        _ = try head(chunked)
        #expect(failure { () throws(HTTPError) in try bodyText(chunked, limit: 5) } == "refused 413")
        let (_, exact) = connection("PUT /p HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello")
        _ = try head(exact)
        #expect(try bodyText(exact, limit: 5) == "hello")
    }

    @Test("a sink that says no ends the body with the refusal it gives")
    func sinkRefusal() throws {
        let (_, http) = connection("PUT /p HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello")
        _ = try head(http)
        var seen = 0
        let label = failure { () throws(HTTPError) in
            try http.readBody(
                deadline: { soon() },
                sink: { piece in
                    seen += piece.count
                    return false
                }, refusal: { (415, "not that") })
        }
        #expect(label == "refused 415")
        #expect(seen == 5)
    }

    @Test("pipelined requests sent in one piece are read one after the other, bodies and all")
    func pipelined() throws {
        let (_, http) = connection(
            "POST /a HTTP/1.1\r\nContent-Length: 3\r\n\r\nabcGET /b HTTP/1.1\r\n\r\nPOST /c HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nde\r\n0\r\n\r\n"
                + "GET /d HTTP/1.1\r\nConnection: close\r\n\r\n")
        var seen: [String] = []
        while let h = try http.nextHead(deadline: soon()) {
            seen.append("\(h.method) \(h.target) \(try bodyText(http)) \(h.keepAlive)")
        }
        #expect(seen == ["POST /a abc true", "GET /b  true", "POST /c de true", "GET /d  false"])
    }

    @Test("a head over the size limit is 431, also fed a byte at a time")
    func headTooLarge() {
        let text = "GET / HTTP/1.1\r\nX-Big: " + String(repeating: "a", count: HTTPParser.maxHeadBytes) + "\r\n\r\n"
        for readSize in [1, 1 << 20] {
            let (_, http) = connection(text, readSize: readSize)
            #expect(failure { () throws(HTTPError) in try http.nextHead(deadline: soon()) } == "refused 431")
        }
        let (_, many) = connection("GET / HTTP/1.1\r\n" + String(repeating: "X-A: 12345678\r\n", count: 2000) + "\r\n")
        #expect(failure { () throws(HTTPError) in try many.nextHead(deadline: soon()) } == "refused 431")
    }

    @Test("a target over the length limit is 414")
    func targetTooLong() throws {
        let (_, http) = connection(
            "GET /" + String(repeating: "a", count: HTTPParser.maxTargetBytes) + " HTTP/1.1\r\n\r\n")
        #expect(failure { () throws(HTTPError) in try http.nextHead(deadline: soon()) } == "refused 414")
        let (_, fits) = connection(
            "GET /" + String(repeating: "a", count: HTTPParser.maxTargetBytes - 1) + " HTTP/1.1\r\n\r\n")
        #expect(try head(fits).target.utf8.count == HTTPParser.maxTargetBytes)
    }

    @Test(
        "bare LF, obs-fold, space before a colon, HTTP/2 and a coding list are each 400",
        arguments: [
            "GET / HTTP/1.1\nHost: h\n\n",
            "GET / HTTP/1.1\r\nHost: h\nX: 1\r\n\r\n",
            "GET / HTTP/1.1\r\nX-A: 1\r\n folded\r\n\r\n",
            "GET / HTTP/1.1\r\nX-A: 1\r\n\tfolded\r\n\r\n",
            "POST / HTTP/1.1\r\nTransfer-Encoding : chunked\r\n\r\n0\r\n\r\n",
            "POST / HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n",
            "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
            "POST / HTTP/1.1\r\nTransfer-Encoding: gzip\r\nContent-Length: 1\r\n\r\nx",
            "GET / HTTP/2.0\r\n\r\n",
            "GET /\u{E9} HTTP/1.1\r\n\r\n",
        ])
    func malformed(text: String) {
        for readSize in [1, 1 << 20] {
            let (stream, http) = connection(text, readSize: readSize)
            #expect(
                failure { () throws(HTTPError) in try http.nextHead(deadline: soon()) } == "refused 400", "\(readSize)")
            #expect(stream.written.isEmpty)
        }
    }

    @Test("drain reads and drops what the client still sends, up to its limit or the client's close")
    func drain() throws {
        let (stream, http) = connection("PUT /p HTTP/1.1\r\nContent-Length: 100\r\n\r\nabcdef", readSize: 1)
        _ = try head(http)
        http.drain(until: soon(), limit: 2)
        var next: [UInt8] = [0]
        #expect(
            try next.withUnsafeMutableBytes { try stream.read(into: $0, deadline: soon(), interruptible: false) } == 1)
        #expect(next == Array("c".utf8))
        http.drain(until: soon(), limit: 1 << 20)
        #expect(
            try next.withUnsafeMutableBytes { try stream.read(into: $0, deadline: soon(), interruptible: false) } == 0)
    }

    @Test("a request whose empty body nobody read is followed by the next pipelined request")
    func unreadEmptyBodyThenPipelined() throws {
        let (_, http) = connection("GET /a HTTP/1.1\r\n\r\nGET /b HTTP/1.1\r\n\r\n")
        #expect(try head(http).target == "/a")
        #expect(try head(http).target == "/b")
    }

    @Test("a request whose empty body nobody read, then a close between requests: nextHead is nil, not 400")
    func unreadEmptyBodyThenClose() throws {
        let (_, http) = connection("GET /a HTTP/1.1\r\n\r\n")
        #expect(try head(http).target == "/a")
        #expect(failure { () throws(HTTPError) in try http.nextHead(deadline: soon()) } == nil)
        let (_, silent) = connection("GET /a HTTP/1.1\r\n\r\n", whenEmpty: .silent)
        #expect(try head(silent).target == "/a")
        #expect(failure { () throws(HTTPError) in try silent.nextHead(deadline: soon()) } == "timedOut(partial: false)")
    }
}

@Suite("HTTPConnection: writing responses", .tags(.unit))
struct HTTPConnectionWriteTests {
    @Test(
        "respond writes the status line, length, type, extra headers, the fixed headers and keep-alive, then the body")
    func respondExact() throws {
        let (stream, http) = connection("")
        http.fixedHeaders = "X-Frame-Options: DENY\r\n"
        try http.respond(
            201, Array("hi".utf8), contentType: "text/plain", headers: [("Location", "/p/1")], deadline: soon())
        #expect(
            writtenText(stream)
                == "HTTP/1.1 201 Created\r\nContent-Length: 2\r\nContent-Type: text/plain\r\nLocation: /p/1\r\n"
                + "X-Frame-Options: DENY\r\nConnection: keep-alive\r\n\r\nhi")
    }

    @Test("an empty body has Content-Length 0 and no type; close says Connection: close")
    func emptyAndClose() throws {
        let (stream, http) = connection("")
        try http.respond(204, close: true, deadline: soon())
        #expect(writtenText(stream) == "HTTP/1.1 204 No Content\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
    }

    @Test("a HEAD answer (headOnly) is the head alone, with the Content-Length of the body it stands for")
    func headOnly() throws {
        let (stream, http) = connection("")
        try http.respond(200, Array("twelve bytes".utf8), contentType: "text/plain", headOnly: true, deadline: soon())
        let text = writtenText(stream)
        #expect(text.hasSuffix("\r\n\r\n"))
        #expect(!text.contains("twelve"))
        let parsed = ParsedResponse.all(in: stream.written, headOnly: true)
        #expect(parsed.count == 1)
        #expect(parsed.first?.header("content-length") == "12")
        #expect(parsed.first?.header("content-type") == "text/plain")
    }

    @Test("the fixed headers are on every response, plain, chunked and refused")
    func fixedHeadersEverywhere() throws {
        let (stream, http) = connection("")
        http.fixedHeaders = "X-A: 1\r\nX-B: two\r\n"
        try http.respond(200, Array("x".utf8), deadline: soon())
        #expect(try http.send(Response(.ok, body: .stream(contentType: "text/html") { _ in }), headOnly: false))
        try http.respond(404, close: true, deadline: soon())
        let responses = stream.responses
        #expect(responses.count == 3)
        for r in responses {
            #expect(r.header("x-a") == "1")
            #expect(r.header("x-b") == "two")
        }
        #expect(responses.map { $0.header("connection") ?? "" } == ["keep-alive", "keep-alive", "close"])
    }

    @Test(
        "a request that asks to close (Connection: close, HTTP/1.0) is answered Connection: close; the next one on a kept connection keep-alive"
    )
    func answersSayClose() throws {
        let (stream, http) = connection("GET /a HTTP/1.1\r\n\r\nGET /b HTTP/1.1\r\nConnection: close\r\n\r\n")
        for _ in 0..<2 {
            _ = try #require(try http.nextHead(deadline: soon()))
            try http.respond(200, Array("x".utf8), deadline: soon())
        }
        let (old, http10) = connection("GET /c HTTP/1.0\r\n\r\n")
        _ = try #require(try http10.nextHead(deadline: soon()))
        try http10.respond(200, deadline: soon())
        #expect(stream.responses.map { $0.header("connection") ?? "" } == ["keep-alive", "close"])
        #expect(old.responses.map { $0.header("connection") ?? "" } == ["close"])
    }

    @Test(
        "a streamed body and its ChunkedBody write a valid chunked body: hex sizes, an empty write sends nothing, the last chunk ends it"
    )
    func chunkedResponse() throws {
        let (stream, http) = connection("")
        var emptyWrote = -1
        let response = Response(
            .ok, headers: ["ETag": "\"e\""],
            body: .stream(contentType: "text/plain") { (body: ChunkedBody) throws(HTTPError) in
                try body.write(Array("hello".utf8), deadline: soon())
                let before = stream.written.count
                try body.write([], deadline: soon())
                emptyWrote = stream.written.count - before
                let long = [UInt8](repeating: UInt8(ascii: "q"), count: 26)
                try body.write(long, deadline: soon())
            })
        #expect(try http.send(response, headOnly: false))
        #expect(emptyWrote == 0)
        let text = writtenText(stream)
        let parts = text.components(separatedBy: "\r\n\r\n")
        #expect(
            parts.first
                == "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Type: text/plain\r\nETag: \"e\"\r\nConnection: keep-alive"
        )
        #expect(text.hasSuffix("\r\n\r\n5\r\nhello\r\n1a\r\n" + String(repeating: "q", count: 26) + "\r\n0\r\n\r\n"))
        let parsed = stream.responses
        #expect(parsed.count == 1)
        #expect(parsed.first?.text == "hello" + String(repeating: "q", count: 26))
        #expect(parsed.first?.header("transfer-encoding") == "chunked")
        #expect(parsed.first?.header("content-length") == nil)
    }

    @Test("a HEAD answer in chunks is the head alone: writes and the last chunk send nothing")
    func chunkedHead() throws {
        let (stream, http) = connection("")
        var head: [UInt8] = []
        let response = Response(
            .ok,
            body: .stream(contentType: "text/plain") { (body: ChunkedBody) throws(HTTPError) in
                head = stream.written
                try body.write(Array("hello".utf8), deadline: soon())
                try body.finish(deadline: soon())
            })
        #expect(try http.send(response, headOnly: true))
        #expect(!head.isEmpty && stream.written == head)
        #expect(
            writtenText(stream).hasSuffix(
                "Transfer-Encoding: chunked\r\nContent-Type: text/plain\r\nConnection: keep-alive\r\n\r\n"))
    }

    @Test("Connection: close before the request is read to its end is remembered as refusedMidRequest")
    func refusedMidRequest() throws {
        let (_, http) = connection("PUT /p HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello")
        _ = try head(http)
        try http.respond(200, deadline: soon())
        #expect(!http.refusedMidRequest)
        try http.respond(413, close: true, deadline: soon())
        #expect(http.refusedMidRequest)
        let (_, read) = connection("PUT /p HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello")
        _ = try head(read)
        _ = try bodyText(read)
        try read.respond(200, close: true, deadline: soon())
        #expect(!read.refusedMidRequest)
    }

    @Test("status lines carry the reason phrase; an unknown status a generic one by its class")
    func reasons() {
        #expect(HTTPConnection.reason(200) == "OK")
        #expect(HTTPConnection.reason(404) == "Not Found")
        #expect(HTTPConnection.reason(413) == "Content Too Large")
        #expect(HTTPConnection.reason(507) == "Insufficient Storage")
        #expect(HTTPConnection.reason(418) == "Client Error")
        #expect(HTTPConnection.reason(599) == "Internal Server Error")
        let (_, http) = connection("")
        #expect(
            String(decoding: http.responseHead(431, contentLength: 0, contentType: nil, close: true), as: UTF8.self)
                .hasPrefix("HTTP/1.1 431 Request Header Fields Too Large\r\n"))
    }

    @Test("a response to a peer that has gone is .gone")
    func writeToClosed() {
        let (stream, http) = connection("")
        stream.close()
        #expect(failure { () throws(HTTPError) in try http.respond(200, deadline: soon()) } == "gone")
        #expect(
            failure { () throws(HTTPError) in
                try http.send(Response(.ok, body: .stream(contentType: "text/plain") { _ in }), headOnly: false)
            } == "gone")
    }
}
