import Testing
@testable import PTKLocalSend

/// What a parser run produced: heads, bodies (one per message) and completions, in order.
struct Parsed: Equatable {
    var heads: [HTTPHead] = []
    var bodies: [[UInt8]] = []
    var completed = 0
}

/// Feeds `input` in pieces of `piece` bytes (0: all at once), resuming after each stop as a
/// server does.
func parseAll(_ input: [UInt8], piece: Int, kind: HTTPParser.Kind = .request, eof: Bool = false) throws(HTTPParseError) -> Parsed {
    let parser = HTTPParser(kind)
    var out = Parsed()
    var start = 0
    let step = piece == 0 ? max(input.count, 1) : piece
    var body: [UInt8] = []
    func handle(_ stop: HTTPParser.Stop?) {
        switch stop {
        case .head(let h): out.heads.append(h)
        case .complete:
            out.bodies.append(body)
            body = []
            out.completed += 1
        case nil: break
        }
    }
    while start < input.count {
        let end = min(start + step, input.count)
        var rest = Array(input[start..<end])[...]
        while !rest.isEmpty {
            let piece = Array(rest)
            let (used, stop) = try piece.withUnsafeBytes { b in
                Result { () throws(HTTPParseError) in try parser.parse(b) { body.append(contentsOf: $0); return true } }
            }.get()
            rest = rest.dropFirst(used)
            handle(stop)
            if stop == nil && used == 0 { break }
        }
        start = end
    }
    if eof { handle(try parser.finish()) }
    return out
}

@Suite struct HTTPParserTests {
    let upload = Array("POST /api/localsend/v2/upload?sessionId=s1&fileId=f%201&token=t+x HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nContent-Type: image/png\r\n\r\nhello".utf8)

    @Test(arguments: [0, 1, 2, 7, 64])
    func requestWithLengthInAnyPieces(piece: Int) throws {
        let p = try parseAll(upload, piece: piece)
        #expect(p.completed == 1)
        #expect(p.bodies == [Array("hello".utf8)])
        let head = try #require(p.heads.first)
        #expect(head.method == "POST")
        #expect(head.path == "/api/localsend/v2/upload")
        #expect(head.query == ["sessionId": "s1", "fileId": "f 1", "token": "t x"])
        #expect(head.contentLength == 5)
        #expect(!head.chunked)
        #expect(head.keepAlive)
        #expect(head.header("content-type") == "image/png")
        #expect(head.header("Host") == "a")
    }

    @Test(arguments: [0, 1, 3])
    func chunkedBodyAndPipelinedRequests(piece: Int) throws {
        let input = Array("POST /u HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\nGET /api/localsend/v2/info HTTP/1.1\r\nContent-Length: 2\r\n\r\n{}POST /c HTTP/1.1\r\nConnection: close\r\n\r\n".utf8)
        let p = try parseAll(input, piece: piece)
        #expect(p.heads.map(\.method) == ["POST", "GET", "POST"])
        #expect(p.heads[0].chunked)
        #expect(p.heads[0].contentLength == nil)
        #expect(p.bodies == [Array("abcde".utf8), Array("{}".utf8), []])
        #expect(p.heads[2].keepAlive == false)
        #expect(p.completed == 3)
    }

    @Test func requestWithoutLengthOrChunkingHasAnEmptyBody() throws {
        let p = try parseAll(Array("POST /api/localsend/v2/cancel?sessionId=x HTTP/1.1\r\nHost: h\r\n\r\n".utf8), piece: 1)
        #expect(p.completed == 1)
        #expect(p.bodies == [[]])
        #expect(p.heads[0].query["sessionId"] == "x")
    }

    @Test func http10ClosesUnlessKeepAlive() throws {
        let p = try parseAll(Array("GET / HTTP/1.0\r\n\r\nGET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n".utf8), piece: 0)
        #expect(p.heads.map(\.keepAlive) == [false, true])
    }

    @Test func repeatedHeadersAreJoined() throws {
        let p = try parseAll(Array("GET / HTTP/1.1\r\nX-A: 1\r\nx-a: 2\r\n\r\n".utf8), piece: 2)
        #expect(p.heads[0].header("x-a") == "1, 2")
    }

    @Test func headOverTheLimitIsRefused() {
        let big = "GET / HTTP/1.1\r\nX: " + String(repeating: "a", count: HTTPParser.maxHeadBytes) + "\r\n\r\n"
        #expect(throws: HTTPParseError.headTooLarge) { try parseAll(Array(big.utf8), piece: 1000) }
    }

    @Test("a target with bytes that are not printable ASCII is malformed (found by the http fuzz target: as text it grew past the limit)",
          arguments: [[0xBB], [0xC3, 0xA9], [0x7F], [0x01]] as [[UInt8]])
    func targetNotASCIIIsRefused(bytes: [UInt8]) {
        let request = Array("GET /a".utf8) + bytes + Array(" HTTP/1.1\r\n\r\n".utf8)
        #expect {
            try parseAll(request, piece: 3)
        } throws: { error in
            // Control bytes are http-parser's "invalid URL" already; the others are ptk's own check.
            guard case .malformed(let why) = error as? HTTPParseError else { return false }
            return bytes[0] < 0x80 || why == "the request target holds bytes that are not printable ASCII"
        }
    }

    @Test func targetOverTheLimitIsRefused() {
        let big = "GET /" + String(repeating: "a", count: HTTPParser.maxTargetBytes) + " HTTP/1.1\r\n\r\n"
        #expect(throws: HTTPParseError.targetTooLong) { try parseAll(Array(big.utf8), piece: 0) }
    }

    @Test(arguments: ["\u{16}\u{03}\u{01}\u{02}\u{00}", "HELLO\r\n\r\n", "GET / HTTP/1.1\r\nContent-Length: x\r\n\r\n", "GET / HTTP/9.9\r\n\r\n"])
    func garbageIsMalformed(input: String) {
        #expect {
            try parseAll(Array(input.utf8), piece: 1)
        } throws: { error in
            if case .malformed = error as? HTTPParseError { return true }
            return false
        }
    }

    @Test func refusedBodyStopsTheParser() throws {
        let parser = HTTPParser(.request)
        try upload.withUnsafeBytes { b in
            let (used, stop) = try parser.parse(b) { _ in true }
            guard case .head = stop else { Issue.record("no head"); return }
            let rest = UnsafeRawBufferPointer(rebasing: b[used...])
            #expect(throws: HTTPParseError.bodyRefused) { try parser.parse(rest) { _ in false } }
        }
    }

    @Test(arguments: [0, 1])
    func responseWithBodyToEndOfConnection(piece: Int) throws {
        let p = try parseAll(Array("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n{\"a\":1}".utf8), piece: piece, kind: .response, eof: true)
        #expect(p.heads.first?.status == 200)
        #expect(p.bodies == [Array("{\"a\":1}".utf8)])
    }

    @Test func responseWithLengthCompletesWithoutEOF() throws {
        let p = try parseAll(Array("HTTP/1.1 204 No Content\r\n\r\nHTTP/1.1 403 Forbidden\r\nContent-Length: 3\r\n\r\nno!".utf8), piece: 1, kind: .response)
        #expect(p.heads.map(\.status) == [204, 403])
        #expect(p.bodies == [[], Array("no!".utf8)])
    }

    @Test func percentDecoding() {
        #expect(percentDecoded("a%2Fb%20c", plusIsSpace: false) == "a/b c")
        #expect(percentDecoded("a+b", plusIsSpace: false) == "a+b")
        #expect(percentDecoded("a+b", plusIsSpace: true) == "a b")
        #expect(percentDecoded("%zz", plusIsSpace: false) == nil)
        #expect(percentDecoded("%4", plusIsSpace: false) == nil)
        #expect(percentDecoded("%ff", plusIsSpace: false) == nil)
        #expect(percentDecoded("%C3%A9", plusIsSpace: false) == "é")
    }
}
