import PTKHTTP
import PTKSystem
import PTKTestSupport
import PTKTestTags
import PTKTime
import Testing

/// Wrong guesses counted per address; locked at `tries`.
struct TestLimiter: FailureLimiter {
    var tries = 3
    var wrong: [String: Int] = [:]
    var expiries = 0

    func isLockedOut(_ address: String, now: Instant) -> Bool { (wrong[address] ?? 0) >= tries }
    mutating func failed(_ address: String, now: Instant) -> Bool {
        wrong[address, default: 0] += 1
        return wrong[address, default: 0] >= tries
    }
    mutating func succeeded(_ address: String) { wrong[address] = nil }
    mutating func expire(now: Instant) { expiries += 1 }
}

/// The password check, counting its calls.
final class Verifier {
    var calls = 0
    func verify(_ name: String, _ password: String) -> String? {
        calls += 1
        return name == "alice" && password == "s3cret:pass" ? "alice" : nil
    }
}

let rightAuth = "Authorization: Basic " + "YWxpY2U6czNjcmV0OnBhc3M=" + "\r\n"  // alice:s3cret:pass
let wrongAuth = "Authorization: Basic YWxpY2U6c2VjcmV0\r\n"  // alice:secret

/// What the test door's handlers see: the door, the run's notes and, past the password check,
/// the account.
struct AuthContext {
    let door: AuthDoor
    let notes: Notes
    var account: String? = nil
}

/// A door with Basic auth over one throttle and verifier, on the value contract: a middleware
/// that runs `authenticate` for every route but `.open` ones, refusals as plain text (429
/// closing, as the WebDAV door renders it), serving connections from any peer.
final class AuthDoor {
    let throttle = FailureThrottle(TestLimiter())
    let verifier = Verifier()
    let log = Notes()
    var stages: [ConnectionStage] = []
    /// The receiver's budget of guesses: the addresses told of wrong ones, and whether it is spent.
    let guesses = Notes()
    var spent = false

    var auth: BasicAuth<String, TestLimiter> {
        let verifier = self.verifier
        let guesses = self.guesses
        return BasicAuth(
            realm: "ptk photos", throttle: throttle, verify: { verifier.verify($0, $1) },
            failed: { guesses.add("wrong from \($0)") }, spent: { [unowned self] in self.spent })
    }

    static let routes: RouteTable<AuthContext> = {
        var r = RouteTable<AuthContext>()
        r.add([.get, .head, .options, "PROPFIND"], "/dav") { r, c throws(HTTPError) in
            c.notes.add("dav \(r.head.method) \(r.head.target)")
            return .bytes(.ok, Array("ok".utf8), type: "text/plain")
        }
        r.add([.put], "/dav/{name}", captures: ["name": PathCapture { _ in true }], traits: .body) {
            r, c throws(HTTPError) in
            let body = try r.body.collect(limit: 1 << 20)
            c.notes.add("put \(r.head.method) \(r.head.target) body=\(String(decoding: body, as: UTF8.self))")
            return .bytes(.ok, Array("ok".utf8), type: "text/plain")
        }
        r.add([.get], "/status", traits: .open) { r, c throws(HTTPError) in
            c.notes.add("status \(r.head.method) \(r.head.target)")
            return .bytes(.ok, Array("ok".utf8), type: "text/plain")
        }
        return r
    }()

    static let middleware: [RouteMiddleware<AuthContext>] = {
        // Given its type by a typed constant (Swift 6.3's module emission crashes on a closure literal converted in place).
        let check: RouteMiddleware<AuthContext> = { r, c, next throws(HTTPError) in
            guard !r.traits.contains(.open) else { return try next(r, c) }
            let account = try c.door.auth.authenticate(r)
            c.notes.add("keep \(account)")
            r.logSubject = account
            var inner = c
            inner.account = account
            return try next(r, inner)
        }
        return [check]
    }()

    /// The door's responder; `budget` bounds its lines and adds the request log's.
    func responder(notes: Notes, kind: String = "web", budget: LogBudget? = nil, log: Notes? = nil) -> HTTPResponder<
        AuthContext
    > {
        let lines = log ?? self.log
        return HTTPResponder(
            routes: Self.routes, middleware: Self.middleware, kind: kind, logBudget: budget, requestLog: budget,
            log: { lines.add($0) }, context: { _ in AuthContext(door: self, notes: notes) },
            renderError: { _, status, message, headers in
                let response = Response.bytes(
                    status, Array((message + "\n").utf8), type: "text/plain; charset=utf-8", headers: headers)
                return status == .tooManyRequests ? response.closing() : response
            })
    }

    /// Serves `text`; what the context noted, the responses, how it ended, the connection.
    func run(_ text: String, peer: SocketAddress = testPeer) -> (
        notes: [String], responses: [ParsedResponse], end: String, http: HTTPConnection,
        stream: ScriptedHTTPStream
    ) {
        let ctx = Notes()
        let (stream, http) = connection(text)
        http.onStage = { [unowned self] stage in self.stages.append(stage) }
        let end = serveValues(responder(notes: ctx), http, peer: peer)
        return (ctx.items, stream.responses, end, http, stream)
    }

    var wrongCount: Int? { throttle.withLimiter { $0.wrong[testPeer.host] } }
}

@Suite("BasicAuth: HTTP Basic credentials, counted per address", .tags(.unit))
struct BasicAuthTests {
    @Test(
        "no Authorization is 401 with the Basic challenge, for OPTIONS and PROPFIND too; nothing is counted",
        arguments: ["GET", "OPTIONS", "PROPFIND"])
    func challenge(method: String) throws {
        let door = AuthDoor()
        let run = door.run("\(method) /dav HTTP/1.1\r\nHost: h\r\n\r\nGET /status HTTP/1.1\r\n\r\n")
        #expect(run.responses.map(\.status) == [401, 200])
        let r = try #require(run.responses.first)
        #expect(r.status == 401)
        #expect(r.header("www-authenticate") == "Basic realm=\"ptk photos\", charset=\"UTF-8\"")
        #expect(r.header("connection") == "keep-alive")
        #expect(run.notes == ["status GET /status"])
        #expect(door.verifier.calls == 0)
        #expect(door.wrongCount == nil)
    }

    @Test("a 401 without a body keeps the connection: the client closing after it ends it cleanly, not with a 400")
    func challengeThenClose() {
        let door = AuthDoor()
        #expect(door.run("GET /dav HTTP/1.1\r\nHost: h\r\n\r\n").end == "client closed")
    }

    @Test("a 401 to a HEAD request is the head alone")
    func headChallenge() {
        let door = AuthDoor()
        let run = door.run("HEAD /dav HTTP/1.1\r\nHost: h\r\n\r\n")
        let text = writtenText(run.stream)
        #expect(text.hasPrefix("HTTP/1.1 401 Unauthorized\r\n"))
        #expect(text.hasSuffix("\r\n\r\n"))
        #expect(text.contains("WWW-Authenticate: Basic realm=\"ptk photos\""))
        #expect(!text.contains("user name"))
    }

    @Test(
        "credentials that are not credentials are 401 without a check or a count",
        arguments: [
            "Basic !!!!", "Basic YWxpY2VzZWNyZXQ=", "Basic /zph", "Basic YTr/", "Bearer YWxpY2U6czNjcmV0OnBhc3M=",
            "Basic", "Basic YWxpY2U6czNjcmV0OnBhc3M",
            "YWxpY2U6czNjcmV0OnBhc3M=", "Basic YWxpY2U6czNjcmV0OnBhc3M= extra",
        ])
    func malformed(header: String) {
        let door = AuthDoor()
        let run = door.run("GET /dav HTTP/1.1\r\nAuthorization: \(header)\r\n\r\n")
        #expect(run.responses.map(\.status) == [401])
        #expect(run.notes.isEmpty)
        #expect(door.verifier.calls == 0)
        #expect(door.wrongCount == nil)
    }

    @Test(
        "while the receiver's budget of guesses is spent a wrong password is 429 and not counted; a right one passes and is not told"
    )
    func spentBudget() {
        let door = AuthDoor()
        #expect(door.run("GET /dav HTTP/1.1\r\n\(rightAuth)\r\n").responses.map(\.status) == [200])
        #expect(door.guesses.items.isEmpty)
        door.spent = true
        let wrong = door.run("GET /dav HTTP/1.1\r\n\(wrongAuth)\r\n")
        #expect(wrong.responses.map(\.status) == [429])
        #expect(door.wrongCount == nil)
        #expect(door.guesses.items.isEmpty)
        let right = door.run("GET /dav HTTP/1.1\r\n\(rightAuth)\r\n")
        #expect(right.responses.map(\.status) == [200])
        #expect(right.notes == ["keep alice", "dav GET /dav"])
    }

    @Test("a wrong password is 401, checked once, counted, and logged once by name")
    func wrongPassword() {
        let door = AuthDoor()
        let run = door.run("GET /dav HTTP/1.1\r\n\(wrongAuth)\r\n")
        #expect(door.guesses.items == ["wrong from 192.0.2.7"])
        #expect(run.responses.map(\.status) == [401])
        #expect(run.notes.isEmpty)
        #expect(door.verifier.calls == 1)
        #expect(door.wrongCount == 1)
        #expect(door.log.items == ["web 7 from 192.0.2.7:40000: wrong password for \"alice\"; answered 401"])
    }

    @Test(
        "the third wrong password locks the address: the next request, even with the right password, is 429 and not checked"
    )
    func lockout() throws {
        let door = AuthDoor()
        for _ in 0..<3 { _ = door.run("GET /dav HTTP/1.1\r\n\(wrongAuth)\r\n") }
        #expect(door.verifier.calls == 3)
        #expect(
            door.log.items.last
                == "web 7 from 192.0.2.7:40000: wrong password for \"alice\"; 192.0.2.7 must wait; answered 401")
        let run = door.run("GET /dav HTTP/1.1\r\n\(rightAuth)\r\nGET /status HTTP/1.1\r\n\r\n")
        let r = try #require(run.responses.first)
        #expect(r.status == 429)
        #expect(r.header("connection") == "close")
        #expect(run.responses.count == 1)
        #expect(run.end == "closed after the answer")
        #expect(run.notes.isEmpty)
        #expect(door.verifier.calls == 3)
        #expect(door.stages.isEmpty)
        let other = door.run(
            "GET /dav HTTP/1.1\r\n\(rightAuth)\r\n", peer: SocketAddress(numericHost: "192.0.2.8", port: 1)!)
        #expect(other.responses.map(\.status) == [200])
    }

    @Test("the right password keeps the account, proves the connection, runs the handler, and clears the wrong count")
    func rightPassword() {
        let door = AuthDoor()
        _ = door.run("GET /dav HTTP/1.1\r\n\(wrongAuth)\r\nGET /dav HTTP/1.1\r\n\(wrongAuth)\r\n")
        #expect(door.wrongCount == 2)
        let run = door.run("GET /dav HTTP/1.1\r\n\(rightAuth)\r\n")
        #expect(run.notes == ["keep alice", "dav GET /dav"])
        #expect(run.responses.map(\.status) == [200])
        #expect(door.stages == [.working])
        #expect(door.wrongCount == nil)
        #expect(door.verifier.calls == 3)
    }

    @Test(
        "the scheme is case-insensitive and spaces around the credentials are ignored",
        arguments: [
            "Basic YWxpY2U6czNjcmV0OnBhc3M=", "basic YWxpY2U6czNjcmV0OnBhc3M=", "BASIC YWxpY2U6czNjcmV0OnBhc3M=",
            "Basic    YWxpY2U6czNjcmV0OnBhc3M=   ",
        ])
    func schemeAndSpaces(header: String) {
        let door = AuthDoor()
        #expect(
            door.run("GET /dav HTTP/1.1\r\nAuthorization: \(header)\r\n\r\n").notes == ["keep alice", "dav GET /dav"])
    }

    @Test("a 401 to a request with a body closes the connection (the body is not read); without one it keeps it")
    func closesWithBody() {
        let door = AuthDoor()
        let withBody = door.run("PUT /dav/a.png HTTP/1.1\r\nContent-Length: 5\r\n\r\nhelloGET /status HTTP/1.1\r\n\r\n")
        #expect(withBody.responses.map(\.status) == [401])
        #expect(withBody.responses.first?.header("connection") == "close")
        #expect(withBody.end == "closed after the answer")
        #expect(withBody.http.refusedMidRequest)
        let chunked = door.run("PUT /dav/a.png HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n")
        #expect(chunked.responses.first?.header("connection") == "close")
        #expect(chunked.end == "closed after the answer")
        let empty = door.run("PUT /dav/a.png HTTP/1.1\r\nContent-Length: 0\r\n\r\nGET /status HTTP/1.1\r\n\r\n")
        #expect(empty.responses.map(\.status) == [401, 200])
        #expect(empty.responses.first?.header("connection") == "keep-alive")
        let wrong = door.run("PUT /dav/a.png HTTP/1.1\r\n\(wrongAuth)Content-Length: 5\r\n\r\nhello")
        #expect(wrong.responses.first?.header("connection") == "close")
        #expect(wrong.end == "closed after the answer")
    }

    @Test("an open route passes without credentials, and wrong ones there are neither checked nor counted")
    func openRoute() {
        let door = AuthDoor()
        let run = door.run("GET /status HTTP/1.1\r\n\r\nGET /status HTTP/1.1\r\n\(wrongAuth)\r\n")
        #expect(run.notes == ["status GET /status", "status GET /status"])
        #expect(door.verifier.calls == 0)
        #expect(door.wrongCount == nil)
    }

    @Test("credentials parses Basic in any case, extra spaces, colons in the password, UTF-8; refuses the rest")
    func credentials() {
        typealias Auth = BasicAuth<String, TestLimiter>
        func pair(_ header: String?) -> String? { Auth.credentials(header).map { "\($0.name)|\($0.password)" } }
        #expect(pair("Basic YWxpY2U6c2VjcmV0") == "alice|secret")
        #expect(pair("basic YWxpY2U6c2VjcmV0") == "alice|secret")
        #expect(pair("Basic   YWxpY2U6c2VjcmV0  ") == "alice|secret")
        #expect(pair("Basic\tYWxpY2U6c2VjcmV0") == nil)
        #expect(pair("Basic YWxpY2U6c2U6Y3JldA==") == "alice|se:cret")
        #expect(pair("Basic YWxpY2U6") == "alice|")
        #expect(pair("Basic Ojo=") == "|:")
        #expect(pair("Basic w6ltaWxlOnDDpHNz") == "\u{E9}mile|p\u{E4}ss")
        for bad: String? in [
            nil, "", "Basic", "Basic ", "Bearer YWxpY2U6c2VjcmV0", "Basic YWxpY2VzZWNyZXQ=", "Basic /zph", "Basic YTr/",
            "Basic YWxpY2U6c2VjcmV0=", "Basic YWxp Y2U6c2VjcmV0", "BasicYWxpY2U6c2VjcmV0", "Basic ====",
            "Digest YWxpY2U6c2VjcmV0",
        ] {
            #expect(pair(bad) == nil, "\(bad ?? "nil")")
        }
    }

    @Test("the throttle expires old entries each time it is used, and says whether an address is locked")
    func throttle() {
        let throttle = FailureThrottle(TestLimiter())
        #expect(!throttle.isLockedOut("192.0.2.9"))
        let locked = throttle.withLimiter { limiter in
            _ = limiter.failed("192.0.2.9", now: .now)
            _ = limiter.failed("192.0.2.9", now: .now)
            return limiter.failed("192.0.2.9", now: .now)
        }
        #expect(locked)
        #expect(throttle.isLockedOut("192.0.2.9"))
        #expect(!throttle.isLockedOut("192.0.2.10"))
        #expect(throttle.withLimiter { $0.expiries } == 5)
    }
}
