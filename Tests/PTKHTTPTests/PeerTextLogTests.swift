import Foundation
import PTKHTTP
import PTKSystem
import PTKTestSupport
import PTKTestTags
import PTKTime
import Testing

@Suite("Log lines that quote a peer: cut, and counted against the address's budget (issue 54)", .tags(.unit))
struct PeerTextLogTests {
    @Test(
        "300 requests with a 12,000-byte Basic user name and a wrong password: at most the budget's lines, each cut, the name at most 64 bytes in each"
    )
    func longUserNames() {
        let door = AuthDoor()
        let name = String(repeating: "U", count: 12_000)
        let header = "Authorization: Basic " + Data("\(name):wrong".utf8).base64EncodedString() + "\r\n"
        let log = Notes()
        let budget = LogBudget(perMinute: 30)
        for _ in 0..<300 {
            let (_, http) = connection("PROPFIND /dav HTTP/1.1\r\n\(header)\r\n")
            _ = serveValues(door.responder(notes: Notes(), kind: "webdav", budget: budget, log: log), http)
        }
        #expect(log.items.count <= 30, "\(log.items.count) lines")
        #expect(log.items.count >= 3)
        #expect(log.items.allSatisfy { $0.utf8.count < 400 }, "\(log.items.map(\.utf8.count).max() ?? 0)")
        #expect(log.items.allSatisfy { !$0.contains(String(repeating: "U", count: 65)) })
        #expect(
            log.items.first?.contains("\"" + String(repeating: "U", count: 64) + "...\"") == true,
            "\(log.items.first ?? "")")
    }

    @Test(
        "a budgeted line past the budget is left out and the next one says how many; a line marked always is written and not counted"
    )
    func budgetNote() {
        let log = Notes()
        let budget = LogBudget(perMinute: 2)
        var routes = RouteTable<Notes>()
        routes.add([.get], "/x") { r, _ throws(HTTPError) in
            r.log("refused " + quotedForLog(r.head.target))
            return Response(.forbidden)
        }
        routes.add([.get], "/saved") { r, _ throws(HTTPError) in
            r.log("saved a photo", always: true)
            return Response(.created)
        }
        let (_, http) = connection(
            String(repeating: "GET /x HTTP/1.1\r\n\r\n", count: 5) + "GET /saved HTTP/1.1\r\n\r\n")
        #expect(serveValues(testResponder(routes, log: log, logBudget: budget), http) == "client closed")
        #expect(
            log.items == [
                "web 7 from 192.0.2.7:40000: refused \"/x\"", "web 7 from 192.0.2.7:40000: refused \"/x\"",
                "web 7 from 192.0.2.7:40000: saved a photo",
            ], "\(log.items)")
        #expect(budget.take(testPeer.host, now: .now + .seconds(61)) == (true, 3))
    }

    @Test(
        "quotedForLog cuts on a scalar's boundary and says so inside the quotes; a line is cut at maxLogLine whatever its caller wrote"
    )
    func cutting() {
        #expect(quotedForLog("abc") == "\"abc\"")
        #expect(quotedForLog(String(repeating: "é", count: 10), limit: 5) == "\"éé...\"")
        #expect(quotedForLog("a\u{1B}[2J" + String(repeating: "x", count: 300)).hasPrefix("\"a\\u{1B}[2J"))
        let log = Notes()
        var routes = RouteTable<Notes>()
        routes.add([.get], "/y") { r, _ throws(HTTPError) in
            r.log(String(repeating: "L", count: 10_000), always: true)
            return Response(.ok)
        }
        let (_, http) = connection("GET /y HTTP/1.1\r\n\r\n")
        #expect(serveValues(testResponder(routes, log: log), http) == "client closed")
        #expect(
            log.items.count == 1 && log.items[0].utf8.count <= maxLogLine + 20 && log.items[0].hasSuffix("... (cut)"))
    }
}
