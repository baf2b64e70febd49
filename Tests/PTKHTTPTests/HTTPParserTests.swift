import PTKTestTags
import PTKVocabulary
import Testing

@testable import PTKHTTP

/// What a parser run produced: heads, bodies (one per message) and completions, in order.
struct Parsed: Equatable {
    var heads: [HTTPHead] = []
    var bodies: [[UInt8]] = []
    var completed = 0
}

/// Feeds `input` in pieces of `piece` bytes (0: all at once), resuming after each stop as a
/// server does.
func parseAll(_ input: [UInt8], piece: Int, kind: HTTPParser.Kind = .request, eof: Bool = false) throws(HTTPParseError)
    -> Parsed
{
    let (parsed, error) = parseUntilError(input, piece: piece, kind: kind, eof: eof)
    if let error { throw error }
    return parsed
}

/// As `parseAll`, and what was parsed before an error (a server answers the requests before it).
func parseUntilError(_ input: [UInt8], piece: Int, kind: HTTPParser.Kind = .request, eof: Bool = false) -> (
    Parsed, HTTPParseError?
) {
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
    do throws(HTTPParseError) {
        while start < input.count {
            let end = min(start + step, input.count)
            var rest = Array(input[start..<end])[...]
            while !rest.isEmpty {
                let piece = Array(rest)
                let (used, stop) = try piece.withUnsafeBytes { b in
                    Result { () throws(HTTPParseError) in
                        try parser.parse(b) {
                            body.append(contentsOf: $0)
                            return true
                        }
                    }
                }.get()
                rest = rest.dropFirst(used)
                handle(stop)
                if stop == nil && used == 0 { break }
            }
            start = end
        }
        if eof { handle(try parser.finish()) }
    } catch {
        return (out, error)
    }
    return (out, nil)
}

@Suite(.tags(.unit)) struct HTTPParserTests {
    let upload = Array(
        "POST /api/localsend/v2/upload?sessionId=s1&fileId=f%201&token=t+x HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nContent-Type: image/png\r\n\r\nhello"
            .utf8)

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
        let input = Array(
            "POST /u HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\nGET /api/localsend/v2/info HTTP/1.1\r\nContent-Length: 2\r\n\r\n{}POST /c HTTP/1.1\r\nConnection: close\r\n\r\n"
                .utf8)
        let p = try parseAll(input, piece: piece)
        #expect(p.heads.map(\.method) == ["POST", "GET", "POST"])
        #expect(p.heads[0].chunked)
        #expect(p.heads[0].contentLength == nil)
        #expect(p.bodies == [Array("abcde".utf8), Array("{}".utf8), []])
        #expect(p.heads[2].keepAlive == false)
        #expect(p.completed == 3)
    }

    @Test func requestWithoutLengthOrChunkingHasAnEmptyBody() throws {
        let p = try parseAll(
            Array("POST /api/localsend/v2/cancel?sessionId=x HTTP/1.1\r\nHost: h\r\n\r\n".utf8), piece: 1)
        #expect(p.completed == 1)
        #expect(p.bodies == [[]])
        #expect(p.heads[0].query["sessionId"] == "x")
    }

    @Test func http10ClosesUnlessKeepAlive() throws {
        let p = try parseAll(
            Array("GET / HTTP/1.0\r\n\r\nGET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n".utf8), piece: 0)
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

    @Test(
        "a target with bytes that are not printable ASCII is malformed (found by the http fuzz target: as text it grew past the limit)",
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

    @Test(arguments: [
        "\u{16}\u{03}\u{01}\u{02}\u{00}", "HELLO\r\n\r\n", "GET / HTTP/1.1\r\nContent-Length: x\r\n\r\n",
        "GET / HTTP/9.9\r\n\r\n",
    ])
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
            guard case .head = stop else {
                Issue.record("no head")
                return
            }
            let rest = UnsafeRawBufferPointer(rebasing: b[used...])
            #expect(throws: HTTPParseError.bodyRefused) { try parser.parse(rest) { _ in false } }
        }
    }

    @Test(arguments: [0, 1])
    func responseWithBodyToEndOfConnection(piece: Int) throws {
        let p = try parseAll(
            Array("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n{\"a\":1}".utf8), piece: piece,
            kind: .response, eof: true)
        #expect(p.heads.first?.status == 200)
        #expect(p.bodies == [Array("{\"a\":1}".utf8)])
    }

    @Test func responseWithLengthCompletesWithoutEOF() throws {
        let p = try parseAll(
            Array("HTTP/1.1 204 No Content\r\n\r\nHTTP/1.1 403 Forbidden\r\nContent-Length: 3\r\n\r\nno!".utf8),
            piece: 1, kind: .response)
        #expect(p.heads.map(\.status) == [204, 403])
        #expect(p.bodies == [[], Array("no!".utf8)])
    }

    // RFC 9112: what http-parser (built lenient) let through, each refused with its reason.
    static let whitespaceBeforeColon = HTTPParseError.malformed("whitespace between a header name and its colon")
    static let obsFold = HTTPParseError.malformed("a header line folded onto the previous one (obs-fold)")
    static let bareLF = HTTPParseError.malformed("a line of the head ends in a bare LF, not CRLF")
    static let lonelyCR = HTTPParseError.malformed("a CR not followed by LF in the head")
    static let codings = HTTPParseError.malformed("Transfer-Encoding other than a single chunked")

    static let hostileHeads: [(HTTPParser.Kind, String, HTTPParseError)] = [
        // §5.1: http-parser took the first as chunked, the second as a length of 3.
        (
            .request, "POST / HTTP/1.1\r\nTransfer-Encoding : chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
            whitespaceBeforeColon
        ),
        (.request, "POST / HTTP/1.1\r\nContent-Length : 3\r\n\r\nabc", whitespaceBeforeColon),
        (.request, "POST / HTTP/1.1\r\nTransfer-Encoding\t: chunked\r\n\r\n0\r\n\r\n", whitespaceBeforeColon),
        // §5.2: obs-fold, after a field and before the first.
        (.request, "GET / HTTP/1.1\r\nX-A: a\r\n b\r\n\r\n", obsFold),
        (.request, "GET / HTTP/1.1\r\nX-A: a\r\n\tb\r\n\r\n", obsFold),
        (.request, "POST / HTTP/1.1\r\nTransfer-Encoding:\r\n chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n", obsFold),
        (.request, "GET / HTTP/1.1\r\n X: a\r\n\r\n", obsFold),
        // §2.2: bare LF anywhere in the head, and CR without its LF (http-parser ate any byte after the last CR).
        (.request, "GET / HTTP/1.1\nHost: a\n\n", bareLF),
        (.request, "GET / HTTP/1.1\r\nHost: a\n\r\n", bareLF),
        (.request, "GET / HTTP/1.1\r\nHost: a\r\n\n", bareLF),
        (.request, "\nGET / HTTP/1.1\r\n\r\n", bareLF),
        (.request, "GET / HTTP/1.1\r\nHost: a\r\n\rXGET / HTTP/1.1\r\n\r\n", lonelyCR),
        (.request, "GET / HTTP/1.1\r\nX: a\rb\r\n\r\n", lonelyCR),
        (.request, "GET / HTTP/1.1\rX: a\r\n\r\n", lonelyCR),
        // §6.1: http-parser reads the last coding; chunked twice or under another coding is refused.
        (
            .request, "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
            codings
        ),
        (.request, "POST / HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n", codings),
        // Responses (the register client's) are held to the same rules.
        (.response, "HTTP/1.1 200 OK\nContent-Length: 0\n\n", bareLF),
        (.response, "HTTP/1.1 200 OK\r\nContent-Length : 2\r\n\r\n{}", whitespaceBeforeColon),
        (.response, "HTTP/1.1 200 OK\r\nX: a\r\n b\r\nContent-Length: 0\r\n\r\n", obsFold),
    ]

    @Test(
        "heads RFC 9112 says to reject are malformed with the reason, whole or a byte at a time",
        arguments: hostileHeads.indices, [0, 1])
    func hostileHeadIsRefused(index: Int, piece: Int) {
        let (kind, input, expected) = Self.hostileHeads[index]
        let (parsed, error) = parseUntilError(Array(input.utf8), piece: piece, kind: kind)
        #expect(error == expected, "\(input.debugDescription)")
        #expect(parsed.heads.isEmpty)
    }

    @Test(
        "what http-parser already refuses: a length beside chunked, lengths repeated, NUL in a value",
        arguments: [
            "POST / HTTP/1.1\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
            "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
            "POST / HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 5\r\n\r\nabc",
            "POST / HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\nabc",
            "POST / HTTP/1.1\r\nContent-Length: 3, 3\r\n\r\nabc",
            "GET / HTTP/1.1\r\nX: a\u{0}b\r\n\r\n",
            "GET / HTTP/1.1\r\n: a\r\n\r\n",
        ], [0, 1])
    func smugglingShapesAreRefused(input: String, piece: Int) {
        let (parsed, error) = parseUntilError(Array(input.utf8), piece: piece)
        guard case .malformed = error else {
            Issue.record("\(input.debugDescription): \(String(describing: error))")
            return
        }
        #expect(parsed.heads.isEmpty)
    }

    @Test(
        "strict heads still parse: no space after the colon, tabs and obs-text in values, an empty line before, pipelined",
        arguments: [0, 1, 2, 5])
    func strictHeadsStillParse(piece: Int) throws {
        let input: [UInt8] =
            Array("\r\nGET /a HTTP/1.1\r\nX:a\r\nV: a\tb c\t\r\nTransfer-Encoding: Chunked\r\n\r\n0\r\n\r\n".utf8)
            + Array("POST /b HTTP/1.1\r\nO: ".utf8) + [0xE9, 0xFF, 0x80] + Array("\r\nContent-Length: 9\r\n\r\n".utf8)
            + Array("x\n y : z\n".utf8)  // a body is not a head: its bytes are not checked
            + Array("GET /c HTTP/1.1\r\n\r\n".utf8)
        let p = try parseAll(input, piece: piece)
        #expect(p.heads.map(\.target) == ["/a", "/b", "/c"])
        #expect(p.heads[0].header("x") == "a")
        #expect(p.heads[0].header("v") == "a\tb c\t")
        #expect(p.heads[0].chunked)
        #expect(p.heads[1].header("o") == String(decoding: [0xE9, 0xFF, 0x80] as [UInt8], as: UTF8.self))
        #expect(p.bodies == [[], Array("x\n y : z\n".utf8), []])
        #expect(p.completed == 3)
    }

    @Test("a hostile request after a good one: the good one is parsed whole, then the error", arguments: [0, 1])
    func hostileRequestAfterAGoodOne(piece: Int) {
        let input = Array(
            "POST /a HTTP/1.1\r\nContent-Length: 3\r\n\r\na\nbGET /b HTTP/1.1\r\nX-A: a\r\n b\r\n\r\n".utf8)
        let (p, error) = parseUntilError(input, piece: piece)
        #expect(p.heads.map(\.target) == ["/a"])
        #expect(p.bodies == [Array("a\nb".utf8)])
        #expect(error == Self.obsFold)
    }

    @Test("a chunked body's data is not checked as a head", arguments: [0, 1])
    func chunkedDataIsNotChecked(piece: Int) throws {
        let p = try parseAll(
            Array("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n4\r\n\n \r:\r\n0\r\n\r\n".utf8), piece: piece)
        #expect(p.bodies == [Array("\n \r:".utf8)])
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

/// Requests http-parser ends at their head and hands the rest over as another protocol's bytes
/// (second attack on issue 43, F4): what follows them must never be read as a request.
@Suite("CONNECT and protocol upgrades", .tags(.unit))
struct UpgradeRefusalTests {
    @Test("CONNECT with a body that holds a request is refused at its head, one byte at a time too", arguments: [0, 1])
    func connect(piece: Int) {
        let text =
            "CONNECT localhost:443 HTTP/1.1\r\nHost: x\r\nContent-Length: 38\r\n\r\nGET /static/app.css HTTP/1.1\r\nHost: x\r\n\r\n"
        let (parsed, error) = parseUntilError(Array(text.utf8), piece: piece)
        #expect(parsed.heads.isEmpty)
        #expect(error == .malformed("CONNECT is not served here"))
    }

    @Test(
        "a GET asking to upgrade (Upgrade and Connection: upgrade) is refused; an Upgrade header alone is only information"
    )
    func upgrade() throws {
        let asks =
            "GET /chat HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\nGET /x HTTP/1.1\r\n\r\n"
        let (parsed, error) = parseUntilError(Array(asks.utf8), piece: 0)
        #expect(parsed.heads.isEmpty && error == .malformed("a protocol upgrade is not served here"))
        let mentions = try parseAll(Array("GET /chat HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\n\r\n".utf8), piece: 0)
        #expect(mentions.heads.map(\.target) == ["/chat"] && mentions.completed == 1)
    }
}
