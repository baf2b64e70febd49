import Foundation
import PTKTestSupport
import PTKTestTags
import Testing

/// Issue 40, finding 7: ptkd refuses what RFC 9112 says a server must reject, on both of its
/// HTTPS doors, with 400 and the connection closed; a good request before it is still served.
@Suite("End to end: heads RFC 9112 rejects are 400 on the LocalSend and web ports (issue 40)", .tags(.endToEnd))
struct StrictHTTPTests {
    /// Hostile heads of a request each port would otherwise answer (200 and 401), and the reason ptkd gives.
    static func hostile(_ target: String) -> [(bytes: String, reason: String)] {
        [
            (
                "GET \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding : chunked\r\n\r\n0\r\n\r\n",
                "whitespace between a header name and its colon"
            ),
            (
                "GET \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Folded: a\r\n b\r\n\r\n",
                "a header line folded onto the previous one (obs-fold)"
            ),
            (
                "GET \(target) HTTP/1.1\nHost: 127.0.0.1\n\n",
                "a line of the head ends in a bare LF, not CRLF"
            ),
        ]
    }

    @Test(
        "Transfer-Encoding with a space before its colon, a folded header and bare LF are each 400 and close the connection, after a good request on it"
    )
    func hostileHeadsAre400() throws {
        let d = try DaemonProcess.withLocalSend(["--web", "on", "--web-port", "0"])
        let app = try LocalSendApp(port: d.localSendPort)
        let browser = try WebBrowser(port: d.webPort)
        let doors: [(name: String, connect: () throws -> AppConnection, target: String, good: Int)] = [
            ("LocalSend", app.connect, "/api/localsend/v2/info", 200),
            ("web", browser.connect, "/", 401),
        ]
        for door in doors {
            for (bytes, reason) in Self.hostile(door.target) {
                let c = try door.connect()
                defer { c.close() }
                // Keep-alive first: a good request on the same connection is answered as before.
                try c.write(Array("GET \(door.target) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8))
                #expect(try c.readResponse().status == door.good, "\(door.name)")
                try c.write(Array(bytes.utf8))
                let r = try c.readResponse()
                #expect(r.status == 400, "\(door.name): \(bytes.debugDescription)")
                #expect(
                    String(decoding: r.body, as: UTF8.self).contains(reason),
                    "\(door.name): \(String(decoding: r.body, as: UTF8.self))")
                #expect(c.lastHead?.keepAlive == false, "\(door.name): the 400 closes the connection")
                #expect(eventually { d.log.contains("malformed HTTP (\(reason)); answered 400") }, "\(d.log)")
            }
        }
        // Still serving.
        #expect(try app.connect().request("GET", "/api/localsend/v2/info").status == 200)
        #expect(d.stop() == 0)
    }
}
