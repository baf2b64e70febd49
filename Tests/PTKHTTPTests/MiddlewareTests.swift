import PTKHTTP
import PTKSystem
import PTKTestSupport
import PTKTestTags
import PTKTime
import Testing

// MARK: the request log

func logRoutes() -> RouteTable<Notes> {
    var r = RouteTable<Notes>()
    r.add([.get], "/ok") { _, _ throws(HTTPError) in .bytes(.ok, Array("fine".utf8), type: "text/plain") }
    r.add([.get], "/teapot") { _, _ throws(HTTPError) in
        .bytes(HTTPStatus(418), Array("short and stout".utf8), type: "text/plain")
    }
    r.add([.get], "/logged") { req, _ throws(HTTPError) in
        req.log("the handler's own line")
        return Response(.internalServerError)
    }
    return r
}

/// A door over `logRoutes` with the request log spending `budget`; its lines go to `log`.
func logged(_ log: Notes, budget: LogBudget = LogBudget()) -> HTTPResponder<Notes> {
    testResponder(logRoutes(), log: log, requestLog: budget)
}

@Suite("The request log: one line for each unlogged refusal", .tags(.unit))
struct RequestLogTests {
    @Test("an error answer the handler did not log gets one line naming method, path and status")
    func unloggedError() {
        let log = Notes()
        let (_, http) = connection("GET /teapot HTTP/1.1\r\n\r\nGET /missing%20one?x=1 HTTP/1.1\r\n\r\n")
        serveValues(logged(log), http)
        #expect(
            log.items == [
                "web 7 from 192.0.2.7:40000: GET \"/teapot\": answered 418",
                "web 7 from 192.0.2.7:40000: GET \"/missing%20one\": answered 404",
            ])
    }

    @Test("a 200 adds no line, and neither does an error the handler logged itself")
    func noLine() {
        let log = Notes()
        let (stream, http) = connection("GET /ok HTTP/1.1\r\n\r\nGET /logged HTTP/1.1\r\n\r\n")
        serveValues(logged(log), http)
        #expect(stream.responses.map(\.status) == [200, 500])
        #expect(log.items == ["web 7 from 192.0.2.7:40000: the handler's own line"])
    }

    @Test("the path is logged as sent (printable ASCII, never decoded into controls) and cut after 200 characters")
    func rawPath() throws {
        let log = Notes()
        let long = "/" + String(repeating: "%1B", count: 400)
        let (_, http) = connection("GET /a%1B%5B31mred%22%0A HTTP/1.1\r\n\r\nGET \(long) HTTP/1.1\r\n\r\n")
        serveValues(logged(log), http)
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

    @Test(
        "at most 4096 addresses are remembered: while that many were refused this minute a new one gets no line; a minute later it does"
    )
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
        serveValues(logged(log, budget: LogBudget(perMinute: 2)), http)
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
