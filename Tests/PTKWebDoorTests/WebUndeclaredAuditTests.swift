import PTKTestSupport
import PTKTestTags
import Testing

@testable import PTKWebDoor

/// Probes of the web upload's bodies of undeclared length from the security review of issue 55 (attack-55).
@Suite("Web door: an upload of undeclared length, audited", .tags(.unit))
struct WebUndeclaredAuditTests {
    @Test(
        "a chunked upload of undeclared length is checked as any other: no token 403, no session 401, a token of another session 403; each closes unread, nothing spooled or kept"
    )
    func undeclaredChecked() throws {
        let f = try WebFixture()
        let (cookie, csrf) = try f.login()
        let png = makePNG(size: 20_000, seed: 5505)
        func post(_ headers: [(String, String)]) -> RouteHarness<WebContext>.Exchange {
            f.run([
                request(
                    "POST", "/upload?name=a.png", headers + [("Content-Type", "image/png")], body: png, chunked: [1000])
            ])
        }
        let cases: [(RouteHarness<WebContext>.Exchange, Int)] = [
            (post([("Cookie", cookie)]), 403),
            (post([("Cookie", "x=y"), ("X-CSRF-Token", csrf)]), 401),
            (post([("Cookie", cookie), ("X-CSRF-Token", String(csrf.reversed()))]), 403),
        ]
        for (e, status) in cases {
            #expect(e.first.status == status, "\(e.first)")
            #expect(e.first.header("connection") == "close")
        }
        #expect(f.kept().isEmpty && f.incoming().isEmpty)
        let kept = post([("Cookie", cookie), ("X-CSRF-Token", csrf)])
        #expect(kept.first.status == 200, "\(kept.first)")
    }
}
