import PTKHTTP
import PTKSystem
import PTKTestSupport
import PTKTestTags
import PTKTime
import Testing

// MARK: RequestLog

func logRouter() -> Router<Notes> {
    var r = Router<Notes>()
    r.add(["GET"], "/ok", answer(200, "fine"))
    r.add(["GET"], "/teapot", answer(418, "short and stout"))
    r.add(["GET"], "/logged") { (req: HTTPRequest<Notes>) throws(HTTPError) -> Bool in
        req.log("the handler's own line")
        try req.http.respond(500, deadline: soon())
        return true
    }
    r.add(["GET"], "/quiet", noop())
    return r
}

@Suite("RequestLog: one line for each unlogged refusal", .tags(.unit))
struct RequestLogTests {
    @Test("an error answer the handler did not log gets one line naming method, path and status")
    func unloggedError() {
        let log = Notes()
        let (_, http) = connection("GET /teapot HTTP/1.1\r\n\r\nGET /missing%20one?x=1 HTTP/1.1\r\n\r\n")
        serve(service(logRouter(), [RequestLog(budget: LogBudget())], notes: Notes(), log: log), http, context: Notes())
        #expect(log.items == ["web 7 from 192.0.2.7:40000: GET \"/teapot\": answered 418",
                              "web 7 from 192.0.2.7:40000: GET \"/missing%20one\": answered 404"])
    }

    @Test("a 200 adds no line, and neither does an error the handler logged itself")
    func noLine() {
        let log = Notes()
        let (stream, http) = connection("GET /ok HTTP/1.1\r\n\r\nGET /logged HTTP/1.1\r\n\r\n")
        serve(service(logRouter(), [RequestLog(budget: LogBudget())], notes: Notes(), log: log), http, context: Notes())
        #expect(stream.responses.map(\.status) == [200, 500])
        #expect(log.items == ["web 7 from 192.0.2.7:40000: the handler's own line"])
    }

    @Test("a request answered with nothing adds no line, even after an error on the same connection")
    func nothingAnswered() {
        let log = Notes()
        let (stream, http) = connection("GET /nope HTTP/1.1\r\n\r\nGET /quiet HTTP/1.1\r\n\r\n")
        serve(service(logRouter(), [RequestLog(budget: LogBudget())], notes: Notes(), log: log), http, context: Notes())
        #expect(stream.responses.map(\.status) == [404])
        #expect(log.items.count == 1)
    }

    @Test("the path is logged as sent (printable ASCII, never decoded into controls) and cut after 200 characters")
    func rawPath() throws {
        let log = Notes()
        let long = "/" + String(repeating: "%1B", count: 400)
        let (_, http) = connection("GET /a%1B%5B31mred%22%0A HTTP/1.1\r\n\r\nGET \(long) HTTP/1.1\r\n\r\n")
        serve(service(logRouter(), [RequestLog(budget: LogBudget())], notes: Notes(), log: log), http, context: Notes())
        #expect(log.items.count == 2)
        let line = try #require(log.items.first)
        #expect(line == "web 7 from 192.0.2.7:40000: GET \"/a%1B%5B31mred%22%0A\": answered 404")
        #expect(log.items[1].hasSuffix("...\": answered 404") && log.items[1].utf8.count < 300, "\(log.items[1])")
    }

    @Test("each address has its lines a minute; the first line after a full minute says how many were left out")
    func budget() {
        let budget = LogBudget(perMinute: 3)
        let t0 = Instant.now
        #expect((0..<5).map { _ in budget.take("a", now: t0).allowed } == [true, true, true, false, false])
        #expect(budget.take("b", now: t0) == (true, 0))
        #expect(budget.take("a", now: t0 + .seconds(30)).allowed == false)
        let later = budget.take("a", now: t0 + .seconds(61))
        #expect(later.allowed && later.left == 3)
        #expect(budget.take("a", now: t0 + .seconds(62)) == (true, 0))
    }

    @Test("at most 4096 addresses are remembered: while that many were refused this minute a new one gets no line; a minute later it does")
    func budgetCapacity() {
        let budget = LogBudget(perMinute: 3)
        let t0 = Instant.now
        for i in 0..<4096 { #expect(budget.take("10.0.\(i / 256).\(i % 256)", now: t0).allowed) }
        #expect(budget.take("10.0.0.1", now: t0).allowed, "a remembered address still has its share")
        #expect(budget.take("192.0.2.1", now: t0 + .seconds(10)) == (false, 0))
        #expect(budget.take("192.0.2.1", now: t0 + .seconds(61)) == (true, 0))
    }

    @Test("beyond the budget a refusal adds no line")
    func overBudget() {
        let log = Notes()
        let (stream, http) = connection(String(repeating: "GET /nope HTTP/1.1\r\n\r\n", count: 5))
        serve(service(logRouter(), [RequestLog(budget: LogBudget(perMinute: 2))], notes: Notes(), log: log), http, context: Notes())
        #expect(stream.responses.count == 5)
        #expect(log.items.count == 2)
    }
}

// MARK: otherSite

@Suite("otherSite: where a change says it came from", .tags(.unit))
struct OtherSiteTests {
    @Test("otherSite names what the browser said, and nil when it says this site or nothing")
    func otherSiteFunction() {
        var head = HTTPHead()
        head.headers["host"] = "photos.local"
        #expect(otherSite(head) == nil)
        head.headers["origin"] = "https://photos.local"
        #expect(otherSite(head) == nil)
        head.headers["origin"] = "null"
        #expect(otherSite(head) == nil)
        head.headers["origin"] = "https://evil.example"
        #expect(otherSite(head) == "Origin \"https://evil.example\" is not this site")
        head.headers["origin"] = nil
        head.headers["sec-fetch-site"] = "cross-site"
        #expect(otherSite(head) == "Sec-Fetch-Site is \"cross-site\"")
        var noHost = HTTPHead()
        noHost.headers["origin"] = "https://x"
        #expect(otherSite(noHost) != nil)
    }

    @Test("a form's fields are decoded, the first of a repeated name winning; a field without a name is dropped")
    func formFields() {
        #expect(urlEncodedFields("a=1&a=2&b=%C3%A9+x&=z") == ["a": "1", "b": "\u{E9} x"])
    }
}

// MARK: BasicAuth

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

func authRouter() -> Router<Notes> {
    var r = Router<Notes>()
    r.add(["GET", "HEAD", "OPTIONS", "PROPFIND"], "/dav", recording("dav"))
    r.add(["PUT"], "/dav/{name}", captures: ["name": anyText], traits: [.body], recording("put", readBody: true))
    r.add(["GET"], "/status", traits: [.open], recording("status"))
    return r
}

/// A door with Basic auth over one throttle and verifier, serving connections from any peer.
final class AuthDoor {
    let throttle = FailureThrottle(TestLimiter())
    let verifier = Verifier()
    let log = Notes()
    var stages: [ConnectionStage] = []
    /// The receiver's budget of guesses: the addresses told of wrong ones, and whether it is spent.
    let guesses = Notes()
    var spent = false

    var auth: BasicAuth<Notes, String, TestLimiter> {
        let verifier = self.verifier
        let guesses = self.guesses
        return BasicAuth(realm: "ptk photos", throttle: throttle, idle: .seconds(30), verify: { verifier.verify($0, $1) },
                         failed: { guesses.add("wrong from \($0)") }, spent: { [unowned self] in self.spent },
                         keep: { r, account in
                             r.context.add("keep \(account)")
                             r.logSubject = account
                         })
    }

    /// Serves `text`; what the context noted, the responses, how it ended, the connection.
    func run(_ text: String, peer: SocketAddress = testPeer) -> (notes: [String], responses: [ParsedResponse], end: String, http: HTTPConnection,
                                                                 stream: ScriptedHTTPStream) {
        let ctx = Notes()
        let (stream, http) = connection(text)
        http.onStage = { [unowned self] stage in self.stages.append(stage) }
        let end = serve(service(authRouter(), [RequestLog(budget: LogBudget()), auth], notes: Notes(), log: log), http, context: ctx, peer: peer)
        return (ctx.items, stream.responses, end, http, stream)
    }

    var wrongCount: Int? { throttle.withLimiter { $0.wrong[testPeer.host] } }
}

@Suite("BasicAuth: HTTP Basic credentials, counted per address", .tags(.unit))
struct BasicAuthTests {
    @Test("no Authorization is 401 with the Basic challenge, for OPTIONS and PROPFIND too; nothing is counted", arguments: ["GET", "OPTIONS", "PROPFIND"])
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

    @Test("credentials that are not credentials are 401 without a check or a count", arguments: [
        "Basic !!!!", "Basic YWxpY2VzZWNyZXQ=", "Basic /zph", "Basic YTr/", "Bearer YWxpY2U6czNjcmV0OnBhc3M=", "Basic", "Basic YWxpY2U6czNjcmV0OnBhc3M",
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

    @Test("while the receiver's budget of guesses is spent a wrong password is 429 and not counted; a right one passes and is not told")
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

    @Test("the third wrong password locks the address: the next request, even with the right password, is 429 and not checked")
    func lockout() throws {
        let door = AuthDoor()
        for _ in 0..<3 { _ = door.run("GET /dav HTTP/1.1\r\n\(wrongAuth)\r\n") }
        #expect(door.verifier.calls == 3)
        #expect(door.log.items.last == "web 7 from 192.0.2.7:40000: wrong password for \"alice\"; 192.0.2.7 must wait; answered 401")
        let run = door.run("GET /dav HTTP/1.1\r\n\(rightAuth)\r\nGET /status HTTP/1.1\r\n\r\n")
        let r = try #require(run.responses.first)
        #expect(r.status == 429)
        #expect(r.header("connection") == "close")
        #expect(run.responses.count == 1)
        #expect(run.end == "closed by handler")
        #expect(run.notes.isEmpty)
        #expect(door.verifier.calls == 3)
        #expect(door.stages.isEmpty)
        let other = door.run("GET /dav HTTP/1.1\r\n\(rightAuth)\r\n", peer: SocketAddress(numericHost: "192.0.2.8", port: 1)!)
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

    @Test("the scheme is case-insensitive and spaces around the credentials are ignored", arguments: [
        "Basic YWxpY2U6czNjcmV0OnBhc3M=", "basic YWxpY2U6czNjcmV0OnBhc3M=", "BASIC YWxpY2U6czNjcmV0OnBhc3M=", "Basic    YWxpY2U6czNjcmV0OnBhc3M=   ",
    ])
    func schemeAndSpaces(header: String) {
        let door = AuthDoor()
        #expect(door.run("GET /dav HTTP/1.1\r\nAuthorization: \(header)\r\n\r\n").notes == ["keep alice", "dav GET /dav"])
    }

    @Test("a 401 to a request with a body closes the connection (the body is not read); without one it keeps it")
    func closesWithBody() {
        let door = AuthDoor()
        let withBody = door.run("PUT /dav/a.png HTTP/1.1\r\nContent-Length: 5\r\n\r\nhelloGET /status HTTP/1.1\r\n\r\n")
        #expect(withBody.responses.map(\.status) == [401])
        #expect(withBody.responses.first?.header("connection") == "close")
        #expect(withBody.end == "closed by handler")
        #expect(withBody.http.refusedMidRequest)
        let chunked = door.run("PUT /dav/a.png HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n")
        #expect(chunked.responses.first?.header("connection") == "close")
        #expect(chunked.end == "closed by handler")
        let empty = door.run("PUT /dav/a.png HTTP/1.1\r\nContent-Length: 0\r\n\r\nGET /status HTTP/1.1\r\n\r\n")
        #expect(empty.responses.map(\.status) == [401, 200])
        #expect(empty.responses.first?.header("connection") == "keep-alive")
        let wrong = door.run("PUT /dav/a.png HTTP/1.1\r\n\(wrongAuth)Content-Length: 5\r\n\r\nhello")
        #expect(wrong.responses.first?.header("connection") == "close")
        #expect(wrong.end == "closed by handler")
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
        typealias Auth = BasicAuth<Notes, String, TestLimiter>
        func pair(_ header: String?) -> String? { Auth.credentials(header).map { "\($0.name)|\($0.password)" } }
        #expect(pair("Basic YWxpY2U6c2VjcmV0") == "alice|secret")
        #expect(pair("basic YWxpY2U6c2VjcmV0") == "alice|secret")
        #expect(pair("Basic   YWxpY2U6c2VjcmV0  ") == "alice|secret")
        #expect(pair("Basic\tYWxpY2U6c2VjcmV0") == nil)
        #expect(pair("Basic YWxpY2U6c2U6Y3JldA==") == "alice|se:cret")
        #expect(pair("Basic YWxpY2U6") == "alice|")
        #expect(pair("Basic Ojo=") == "|:")
        #expect(pair("Basic w6ltaWxlOnDDpHNz") == "\u{E9}mile|p\u{E4}ss")
        for bad: String? in [nil, "", "Basic", "Basic ", "Bearer YWxpY2U6c2VjcmV0", "Basic YWxpY2VzZWNyZXQ=", "Basic /zph", "Basic YTr/",
                             "Basic YWxpY2U6c2VjcmV0=", "Basic YWxp Y2U6c2VjcmV0", "BasicYWxpY2U6c2VjcmV0", "Basic ====", "Digest YWxpY2U6c2VjcmV0"] {
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
