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

// MARK: SecurityHeaders

@Suite("SecurityHeaders: the door's header lines on every response", .tags(.unit))
struct SecurityHeadersTests {
    @Test("the lines are on the handler's response and on a refusal")
    func onEveryResponse() {
        let headers = SecurityHeaders<Notes>([("Content-Security-Policy", "default-src 'self'"), ("X-Frame-Options", "DENY")])
        #expect(headers.lines == "Content-Security-Policy: default-src 'self'\r\nX-Frame-Options: DENY\r\n")
        let (stream, http) = connection("GET /ok HTTP/1.1\r\n\r\nGET /nope HTTP/1.1\r\n\r\n")
        serve(service(logRouter(), [headers], notes: Notes()), http, context: Notes())
        let responses = stream.responses
        #expect(responses.map(\.status) == [200, 404])
        for r in responses {
            #expect(r.header("content-security-policy") == "default-src 'self'")
            #expect(r.header("x-frame-options") == "DENY")
        }
    }

    @Test("without the middleware the response has none of them")
    func absentWithout() {
        let (stream, http) = connection("GET /ok HTTP/1.1\r\n\r\n")
        serve(service(logRouter(), notes: Notes()), http, context: Notes())
        #expect(stream.responses.first?.header("x-frame-options") == nil)
        #expect(stream.responses.first?.status == 200)
    }
}

// MARK: CookieSession

func sessionRouter() -> Router<Notes> {
    var r = Router<Notes>()
    r.add(["GET"], "/private", recording("private"))
    r.add(["GET"], "/login", traits: [.open], recording("login"))
    return r
}

/// Sessions by secret; refusals noted and answered 303 to the login page.
func cookieSession(_ known: [String: String] = ["tok1": "alice"]) -> CookieSession<Notes, String> {
    CookieSession(cookieName: "sid", lookup: { known[$0] }, keep: { r, session in r.context.add("keep \(session)") },
                  refuse: { (r: HTTPRequest<Notes>, hadCookie: Bool) throws(HTTPError) -> Bool in
                      r.context.add("refuse hadCookie=\(hadCookie)")
                      try r.http.respond(303, headers: [("Location", "/login")], deadline: soon())
                      return true
                  })
}

/// Serves `text` through a cookie session; what the context noted, the statuses, the stages.
func sessionRun(_ text: String) -> (notes: [String], statuses: [Int], stages: [ConnectionStage]) {
    let ctx = Notes()
    let (stream, http) = connection(text)
    var stages: [ConnectionStage] = []
    http.onStage = { stages.append($0) }
    serve(service(sessionRouter(), [cookieSession()], notes: Notes()), http, context: ctx)
    return (ctx.items, stream.responses.map(\.status), stages)
}

@Suite("CookieSession: a session named by a cookie", .tags(.unit))
struct CookieSessionTests {
    @Test("a private route without a cookie is refused, told no cookie came; the handler does not run")
    func noCookie() {
        let run = sessionRun("GET /private HTTP/1.1\r\nCookie: other=tok1\r\n\r\n")
        #expect(run.notes == ["refuse hadCookie=false"])
        #expect(run.statuses == [303])
        #expect(run.stages.isEmpty)
    }

    @Test("an unknown session cookie is refused, told a cookie came")
    func unknownCookie() {
        let run = sessionRun("GET /private HTTP/1.1\r\nCookie: sid=expired\r\n\r\n")
        #expect(run.notes == ["refuse hadCookie=true"])
        #expect(run.statuses == [303])
        #expect(run.stages.isEmpty)
    }

    @Test("a good cookie keeps the session, proves the connection working, and runs the handler")
    func goodCookie() {
        let run = sessionRun("GET /private HTTP/1.1\r\nCookie: theme=dark; sid=tok1\r\n\r\n")
        #expect(run.notes == ["keep alice", "private GET /private"])
        #expect(run.statuses == [200])
        #expect(run.stages == [.working])
    }

    @Test("an open route passes without a session, and still keeps one when the cookie is good")
    func openRoute() {
        let without = sessionRun("GET /login HTTP/1.1\r\n\r\nGET /login HTTP/1.1\r\nCookie: sid=bogus\r\n\r\n")
        #expect(without.notes == ["login GET /login", "login GET /login"])
        #expect(without.stages.isEmpty)
        let with = sessionRun("GET /login HTTP/1.1\r\nCookie: sid=tok1\r\n\r\n")
        #expect(with.notes == ["keep alice", "login GET /login"])
        #expect(with.stages == [.working])
    }

    @Test("a quoted cookie value is the value inside the quotes")
    func quoted() {
        let run = sessionRun("GET /private HTTP/1.1\r\nCookie: sid=\"tok1\"\r\n\r\n")
        #expect(run.notes == ["keep alice", "private GET /private"])
    }

    @Test("of a repeated cookie name the first wins")
    func repeated() {
        let first = sessionRun("GET /private HTTP/1.1\r\nCookie: sid=nope; sid=tok1\r\n\r\n")
        #expect(first.notes == ["refuse hadCookie=true"])
        let good = sessionRun("GET /private HTTP/1.1\r\nCookie: sid=tok1; sid=nope\r\n\r\n")
        #expect(good.notes == ["keep alice", "private GET /private"])
    }

    @Test("a cookie name is matched exactly: SID, sid2 or a prefix are not the session's")
    func exactName() {
        for cookie in ["SID=tok1", "sid2=tok1", "xsid=tok1", "si=tok1", "sid"] {
            let run = sessionRun("GET /private HTTP/1.1\r\nCookie: \(cookie)\r\n\r\n")
            #expect(run.notes == ["refuse hadCookie=false"], "\(cookie)")
        }
    }
}

// MARK: CSRFCheck

func csrfRouter() -> Router<Notes> {
    var r = Router<Notes>()
    r.add(["GET"], "/page", recording("page"))
    r.add(["POST"], "/form", traits: [.change, .form]) { (req: HTTPRequest<Notes>) throws(HTTPError) -> Bool in
        req.context.add("form a=\(req.form["a"] ?? "-")")
        try req.http.respond(200, deadline: soon())
        return true
    }
    r.add(["POST"], "/api", traits: [.change], recording("api"))
    r.add(["PUT"], "/upload", traits: [.change, .body], recording("upload", readBody: true))
    return r
}

func refusalName(_ refusal: CSRFCheck<Notes>.Refusal) -> String {
    switch refusal {
    case .otherSite: return "otherSite"
    case .missingToken: return "missingToken"
    }
}

/// A check expecting `token`; refusals noted ("refuse KIND close=BOOL") and answered 403.
func csrfCheck(token: String? = "tok", formLimit: Int = 64) -> CSRFCheck<Notes> {
    CSRFCheck(formLimit: formLimit, idle: .seconds(30), expectedToken: { _ in token },
              refuse: { (r: HTTPRequest<Notes>, refusal: CSRFCheck<Notes>.Refusal, close: Bool) throws(HTTPError) -> Bool in
                  r.context.add("refuse \(refusalName(refusal)) close=\(close)")
                  try r.http.respond(403, close: close, deadline: soon())
                  return !close
              })
}

/// Serves `text` through a CSRF check; what the context noted, the statuses, how it ended, and the connection.
func csrfRun(_ text: String, token: String? = "tok", formLimit: Int = 64) -> (notes: [String], statuses: [Int], end: String, http: HTTPConnection) {
    let ctx = Notes()
    let (stream, http) = connection(text)
    let end = serve(service(csrfRouter(), [csrfCheck(token: token, formLimit: formLimit)], notes: Notes()), http, context: ctx)
    return (ctx.items, stream.responses.map(\.status), end, http)
}

@Suite("CSRFCheck: changes only from this site's pages, with the session's token", .tags(.unit))
struct CSRFCheckTests {
    @Test("a route that changes nothing is untouched, even from another site without a token")
    func nonChange() {
        let run = csrfRun("GET /page HTTP/1.1\r\nHost: photos.local\r\nOrigin: https://evil.example\r\nSec-Fetch-Site: cross-site\r\n\r\n")
        #expect(run.notes == ["page GET /page"])
        #expect(run.statuses == [200])
    }

    @Test("a change with another site's Origin is refused as otherSite, closing, its body unread", arguments: [
        "https://evil.example", "http://photos.local", "https://photos.local.evil.example", "https://photos.local:444", "HTTPS://photos.local", "",
    ])
    func otherOrigin(origin: String) throws {
        for target in ["/api", "/form"] {
            let run = csrfRun("POST \(target) HTTP/1.1\r\nHost: photos.local\r\nOrigin: \(origin)\r\nX-CSRF-Token: tok\r\nContent-Length: 10\r\n\r\ncsrf=tok&a")
            #expect(run.notes == ["refuse otherSite close=true"], "\(target)")
            #expect(run.statuses == [403])
            #expect(run.end == "closed by handler")
            #expect(run.http.refusedMidRequest)
            #expect(try bodyText(run.http) == "csrf=tok&a")
        }
    }

    @Test("Sec-Fetch-Site other than same-origin or none is refused; those two pass", arguments: [
        ("cross-site", false), ("same-site", false), ("Same-Origin", false), ("same-origin", true), ("none", true),
    ])
    func fetchSite(site: String, passes: Bool) {
        let run = csrfRun("POST /api HTTP/1.1\r\nHost: photos.local\r\nSec-Fetch-Site: \(site)\r\nX-CSRF-Token: tok\r\n\r\n")
        #expect(run.notes == (passes ? ["api POST /api"] : ["refuse otherSite close=true"]))
    }

    @Test("Origin null, the same origin, and no Origin at all pass to the token check")
    func sameSite() {
        for origin in ["Origin: null\r\n", "Origin: https://photos.local:8443\r\n", ""] {
            let run = csrfRun("POST /api HTTP/1.1\r\nHost: photos.local:8443\r\n\(origin)Sec-Fetch-Site: same-origin\r\nX-CSRF-Token: tok\r\n\r\n")
            #expect(run.notes == ["api POST /api"], "\(origin)")
        }
    }

    @Test("a .form change has its form read into request.form and passes with the right csrf field")
    func formWithToken() {
        let run = csrfRun("POST /form HTTP/1.1\r\nHost: h\r\nContent-Length: 14\r\n\r\na=x+y&csrf=tok")
        #expect(run.notes == ["form a=x y"])
        #expect(run.statuses == [200])
    }

    @Test("a .form change without the right csrf field is refused as missingToken, the connection kept (the form was read)", arguments: [
        "a=1", "a=1&csrf=", "a=1&csrf=TOK", "a=1&csrf=tok2", "a=1&CSRF=tok", "a=1&csrf=%74%6", "",
    ])
    func formWithoutToken(body: String) {
        let run = csrfRun("POST /form HTTP/1.1\r\nHost: h\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)GET /page HTTP/1.1\r\n\r\n")
        #expect(run.notes == ["refuse missingToken close=false", "page GET /page"])
        #expect(run.statuses == [403, 200])
        #expect(!run.http.refusedMidRequest)
    }

    @Test("a percent-encoded csrf field is decoded before it is compared")
    func encodedToken() {
        let run = csrfRun("POST /form HTTP/1.1\r\nHost: h\r\nContent-Length: 14\r\n\r\ncsrf=%74o%6B&a")
        #expect(run.notes == ["form a="])
    }

    @Test("a form over the limit announced by Content-Length is 413 unread; a chunked one over it is 413 as it comes")
    func formTooLarge() throws {
        let big = "csrf=tok&a=" + String(repeating: "x", count: 60)
        let announced = csrfRun("POST /form HTTP/1.1\r\nHost: h\r\nContent-Length: \(big.utf8.count)\r\n\r\n\(big)")
        #expect(announced.end == "refused 413")
        #expect(announced.notes.isEmpty)
        #expect(try bodyText(announced.http) == big)
        let chunked = csrfRun("POST /form HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"
                              + String(decoding: chunkedBody(Array(big.utf8), size: 16), as: UTF8.self))
        #expect(chunked.end == "refused 413")
        #expect(chunked.notes.isEmpty)
        let fits = "csrf=tok&a=" + String(repeating: "x", count: 64 - 11)
        #expect(csrfRun("POST /form HTTP/1.1\r\nHost: h\r\nContent-Length: 64\r\n\r\n\(fits)").notes == ["form a=" + String(repeating: "x", count: 53)])
    }

    @Test("a change that is not a form must send the token as X-CSRF-Token; without it the refusal closes, the body unread")
    func headerToken() throws {
        #expect(csrfRun("POST /api HTTP/1.1\r\nHost: h\r\nX-CSRF-Token: tok\r\n\r\n").notes == ["api POST /api"])
        for header in ["", "X-CSRF-Token: nope\r\n", "X-CSRF-Token: TOK\r\n", "X-CSRF-Token: tok tok\r\n", "X-CSRF: tok\r\n"] {
            let run = csrfRun("POST /api HTTP/1.1\r\nHost: h\r\n\(header)Content-Length: 8\r\n\r\ncsrf=tok")
            #expect(run.notes == ["refuse missingToken close=true"], "\(header)")
            #expect(run.end == "closed by handler")
            #expect(try bodyText(run.http) == "csrf=tok")
        }
    }

    @Test("a .body change with the header token reaches its handler with the body unread")
    func bodyChange() {
        let run = csrfRun("PUT /upload HTTP/1.1\r\nHost: h\r\nX-CSRF-Token: tok\r\nContent-Length: 5\r\n\r\nhello")
        #expect(run.notes == ["upload PUT /upload body=hello"])
    }

    @Test("a request without a session's token matches no token, not even an empty one")
    func noExpectedToken() {
        #expect(csrfRun("POST /api HTTP/1.1\r\nHost: h\r\nX-CSRF-Token: \r\n\r\n", token: nil).notes == ["refuse missingToken close=true"])
        #expect(csrfRun("POST /form HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\ncsrf=", token: nil).notes == ["refuse missingToken close=false"])
        #expect(csrfRun("POST /form HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\na=1", token: nil).notes == ["refuse missingToken close=false"])
    }

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

    @Test("readForm decodes fields, the first of a repeated name winning, and takes exactly its limit")
    func readFormFunction() throws {
        let (_, http) = connection("POST /f HTTP/1.1\r\nContent-Length: 21\r\n\r\na=1&a=2&b=%C3%A9+x&=z")
        let h = try head(http)
        #expect(try readForm(http, h, limit: 21, idle: .seconds(30)) == ["a": "1", "b": "\u{E9} x"])
        let (_, over) = connection("POST /f HTTP/1.1\r\nContent-Length: 22\r\n\r\na=1&a=2&b=%C3%A9+x&=zz")
        let h2 = try head(over)
        #expect(failure { () throws(HTTPError) in try readForm(over, h2, limit: 21, idle: .seconds(30)) } == "refused 413")
    }
}
