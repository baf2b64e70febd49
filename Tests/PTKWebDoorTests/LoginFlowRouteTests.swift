import Foundation
import PTKDigest
import PTKSystem
import PTKTestSupport
import PTKTestTags
import PTKTrust
import PTKVocabulary
import Testing

@testable import PTKHTTP
@testable import PTKWebDoor

/// A device's login flow (Nextcloud's login flow v2) through the web door's routes, on a
/// scripted connection: starting, polling, the approval page behind the session (and the login
/// that comes back to it), approving and denying with the CSRF token, and the hostile cases.
@Suite("Web door: a device's login flow over a scripted connection", .tags(.unit))
struct LoginFlowRouteTests {
    let form = ("Content-Type", "application/x-www-form-urlencoded")
    let agent = ("User-Agent", "Mozilla/5.0 (Android) Nextcloud-android/3.30.0")

    /// Starts a flow from `from` (the fixture's peer unless given); its JSON answer's poll
    /// token and the flow's path (from its login address).
    func start(_ f: WebFixture, from: SocketAddress? = nil) throws -> (
        token: String, path: String, answer: [String: Any]
    ) {
        let e = f.run([request("POST", "/index.php/login/v2", [agent])], from: from)
        #expect(e.first.status == 200, "\(e.first)")
        let answer = try #require(try JSONSerialization.jsonObject(with: Data(e.first.body)) as? [String: Any])
        let poll = try #require(answer["poll"] as? [String: Any])
        let token = try #require(poll["token"] as? String)
        let login = try #require(answer["login"] as? String)
        #expect(login.hasPrefix("https://ptk.test/index.php/login/v2/flow/"))
        return (token, String(login.dropFirst("https://ptk.test".count)), answer)
    }

    func poll(_ f: WebFixture, _ token: String) -> ParsedResponse {
        f.run([request("POST", "/index.php/login/v2/poll", [form], body: Array("token=\(token)".utf8))]).first
    }

    func decide(
        _ f: WebFixture, _ path: String, _ fields: String, cookie: String, extra: [(String, String)] = []
    ) -> ParsedResponse {
        f.run([request("POST", path, [form, ("Cookie", cookie)] + extra, body: Array(fields.utf8))]).first
    }

    @Test("the routes: start and poll are POST and open; the flow's page and form need a 64-hex-digit secret")
    func routes() {
        let secret = String(repeating: "ab", count: 32)
        func found(_ method: String, _ target: String) -> String {
            switch WebDoor.routes.match(method: method, target: target) {
            case .found(let route, _): return route.path.text
            case .notFound: return "404"
            case .methodNotAllowed(let allow): return "405 " + allow
            }
        }
        #expect(found("POST", "/index.php/login/v2") == "/index.php/login/v2")
        #expect(found("POST", "/index.php/login/v2/poll") == "/index.php/login/v2/poll")
        #expect(found("GET", "/index.php/login/v2/flow/" + secret) == "/index.php/login/v2/flow/{secret}")
        #expect(found("POST", "/index.php/login/v2/flow/" + secret) == "/index.php/login/v2/flow/{secret}")
        #expect(found("GET", "/index.php/login/v2") == "405 POST")
        for target in [
            "/index.php/login/v2/flow/" + secret.uppercased(), "/index.php/login/v2/flow/" + secret.dropLast(),
            "/index.php/login/v2/flow/" + secret + "0", "/index.php/login/v2/flow/", "/index.php/login/v2/flow/..",
            "/index.php/login/v2/flow/" + secret + "/approve", "/index.php/login/v3", "/index.php/login/v2%2fpoll",
        ] {
            #expect(found("GET", target) == "404", "\(target)")
        }
    }

    @Test("start → poll 404 → the page (login first, then back to it) → approve → poll 200 once → replay 404")
    func wholeFlow() throws {
        let f = try WebFixture()
        try f.door.access.setPassword("right horse", cost: Scrypt(n: 1 << 10, r: 8, p: 1))
        let (token, path, answer) = try start(f)
        #expect(
            (answer["poll"] as? [String: Any])?["endpoint"] as? String == "https://ptk.test/index.php/login/v2/poll")
        #expect(token.utf8.count == 128)
        let pending = poll(f, token)
        #expect(pending.status == 404 && pending.text == "[]", "\(pending)")

        // Without a session: the login page, which comes back to the flow once logged in.
        let page = f.run([request("GET", path)]).first
        #expect(page.status == 401 && page.text.contains("<h1>Log in</h1>"))
        #expect(page.text.contains("<input type=\"hidden\" name=\"next\" value=\"\(path)\">"), "\(page)")
        let login = f.run([
            request("POST", "/login", [form], body: Array("name=ann&password=right+horse&next=\(path)".utf8))
        ]).first
        #expect(login.status == 303 && login.header("location") == path, "\(login)")
        let cookie = try #require(login.header("set-cookie")?.parts(separatedBy: ";").first)
        let shown = f.run([request("GET", path, [("Cookie", String(cookie))])]).first
        #expect(shown.status == 200, "\(shown)")
        #expect(shown.text.contains("Mozilla/5.0 (Android) Nextcloud-android/3.30.0"))
        #expect(shown.text.contains("192.0.2.7 (this browser's address too)"))
        #expect(shown.text.contains("value=\"Nextcloud-android\""))
        let csrf = try #require(f.door.access.sessions().first?.csrf)

        let approved = decide(f, path, "csrf=\(csrf)&decision=approve&name=annas-phone", cookie: String(cookie))
        #expect(approved.status == 200 && approved.text.contains("annas-phone"), "\(approved)")
        let collected = poll(f, token)
        #expect(collected.status == 200, "\(collected)")
        let credentials = try #require(
            try JSONSerialization.jsonObject(with: Data(collected.body)) as? [String: String])
        #expect(credentials["server"] == "https://ptk.test" && credentials["loginName"] == "annas-phone")
        let password = try #require(credentials["appPassword"])
        #expect(!approved.text.contains(password))
        let stored = try #require(f.door.appPasswords.verify(name: "annas-phone", password: password))
        #expect(stored.access == .upload)
        #expect(poll(f, token).status == 404)
        // The page and the form of a flow that ended say so (404), and make nothing.
        #expect(f.run([request("GET", path, [("Cookie", String(cookie))])]).first.status == 404)
        let again = decide(f, path, "csrf=\(csrf)&decision=approve&name=other", cookie: String(cookie))
        #expect(again.status == 404 && again.text.contains("This login has ended"))
        #expect(try f.door.appPasswords.list().map(\.name) == ["annas-phone"])
        #expect(f.door.loginFlows.count == 0)
    }

    @Test("deny ends the flow; approving needs the CSRF token and this site; a bad or taken name keeps it pending")
    func denyAndRefusals() throws {
        let f = try WebFixture()
        let (cookie, csrf) = try f.login()
        let (token, path, _) = try start(f)
        #expect(decide(f, path, "decision=approve&name=x", cookie: cookie).status == 403)
        #expect(decide(f, path, "csrf=wrong&decision=approve&name=x", cookie: cookie).status == 403)
        let other = decide(
            f, path, "csrf=\(csrf)&decision=approve&name=x", cookie: cookie,
            extra: [("Origin", "https://evil.example")])
        #expect(other.status == 403)
        let bad = decide(f, path, "csrf=\(csrf)&decision=approve&name=.hidden", cookie: cookie)
        #expect(bad.status == 400 && bad.text.contains("1 to 64 of"), "\(bad)")
        _ = try f.door.appPasswords.add(name: "taken", access: .full, now: 1_800_000_000)
        let taken = decide(f, path, "csrf=\(csrf)&decision=approve&name=taken", cookie: cookie)
        #expect(taken.status == 409 && taken.text.contains("exists already"), "\(taken)")
        #expect(decide(f, path, "csrf=\(csrf)&decision=maybe", cookie: cookie).status == 400)
        #expect(poll(f, token).status == 404 && f.door.loginFlows.count == 1)
        #expect(try f.door.appPasswords.list().map(\.name) == ["taken"])
        let denied = decide(f, path, "csrf=\(csrf)&decision=deny", cookie: cookie)
        #expect(denied.status == 200 && denied.text.contains("Denied"))
        #expect(poll(f, token).status == 404 && f.door.loginFlows.count == 0)
        #expect(decide(f, path, "csrf=\(csrf)&decision=approve&name=late", cookie: cookie).status == 404)
        #expect(try f.door.appPasswords.list().map(\.name) == ["taken"])
    }

    @Test("guessed secrets and tokens find nothing, and leave the real flow pending; a flow from elsewhere is flagged")
    func guessed() throws {
        let f = try WebFixture()
        let (cookie, csrf) = try f.login()
        let (token, path, _) = try start(f, from: SocketAddress(numericHost: "198.51.100.9", port: 1)!)
        for guess in [String(repeating: "0", count: 64), String(repeating: "f", count: 64)] {
            let target = "/index.php/login/v2/flow/" + guess
            #expect(f.run([request("GET", target, [("Cookie", cookie)])]).first.status == 404)
            #expect(decide(f, target, "csrf=\(csrf)&decision=approve&name=thief", cookie: cookie).status == 404)
            #expect(decide(f, target, "csrf=\(csrf)&decision=deny", cookie: cookie).status == 404)
        }
        for guess in ["", "0", String(repeating: "0", count: 128), token.uppercased(), token + "0"] {
            #expect(poll(f, guess).status == 404)
        }
        let page = f.run([request("GET", path, [("Cookie", cookie)])]).first
        #expect(page.status == 200 && page.text.contains("did not come from this browser"), "\(page)")
        #expect(try f.door.appPasswords.list().isEmpty)
        // A poll form over its limit is refused unread.
        let big = f.run([
            request(
                "POST", "/index.php/login/v2/poll", [form],
                body: [UInt8](repeating: 0x61, count: WebDoor.pollFormLimit + 1))
        ]).first
        #expect(big.status == 413)
    }

    @Test(
        "bounds: the 9th flow from one address is refused 429, the 65th in all only when no address waits twice; a start from another site 403"
    )
    func bounds() throws {
        let f = try WebFixture()
        for _ in 0..<8 { _ = try start(f) }
        let ninth = f.run([request("POST", "/index.php/login/v2", [agent])]).first
        #expect(ninth.status == 429 && ninth.text.contains("192.0.2.7"), "\(ninth)")
        for a in 1...7 {
            for _ in 0..<8 { _ = try start(f, from: SocketAddress(numericHost: "198.51.100.\(a)", port: 1)!) }
        }
        #expect(f.door.loginFlows.count == 64)
        // Full of a few addresses' flows: another address still starts one (the busiest's oldest goes).
        let phone = f.run(
            [request("POST", "/index.php/login/v2", [agent])], from: SocketAddress(numericHost: "203.0.113.1", port: 1)!
        ).first
        #expect(phone.status == 200, "\(phone)")
        #expect(f.door.loginFlows.count == 64)
        // Full of 64 addresses waiting once each: refused.
        let g = try WebFixture()
        for a in 1...64 { _ = try start(g, from: SocketAddress(numericHost: "198.51.100.\(a)", port: 1)!) }
        let full = g.run(
            [request("POST", "/index.php/login/v2", [agent])], from: SocketAddress(numericHost: "203.0.113.1", port: 1)!
        ).first
        #expect(full.status == 429 && full.text.contains("64 logins"), "\(full)")
        // An IPv6 /64 is one address (a host owns the whole /64).
        let f6 = try WebFixture()
        for i in 1...8 { _ = try start(f6, from: SocketAddress(numericHost: "2001:db8:1:2::\(i)", port: 1)!) }
        let sixth = f6.run(
            [request("POST", "/index.php/login/v2", [agent])],
            from: SocketAddress(numericHost: "2001:db8:1:2::99", port: 1)!
        ).first
        #expect(sixth.status == 429, "\(sixth)")
        _ = try start(f6, from: SocketAddress(numericHost: "2001:db8:1:3::1", port: 1)!)
        let cross = f.run([request("POST", "/index.php/login/v2", [agent, ("Sec-Fetch-Site", "cross-site")])]).first
        #expect(cross.status == 403)
    }

    @Test("the Host header: the address the device used, lower-cased; anything else is 400")
    func hosts() throws {
        let good: [(String, String)] = [
            ("ptk.test", "https://ptk.test"), ("192.168.1.5:8443", "https://192.168.1.5:8443"),
            ("[::1]:8443", "https://[::1]:8443"), ("[FE80::1]", "https://[fe80::1]"),
            ("PTK-Box.Local:65535", "https://ptk-box.local:65535"), ("a", "https://a"),
        ]
        for (host, server) in good { #expect(WebDoor.serverAddress(host: host) == server, "\(host)") }
        let bad = [
            "", "evil.com/x", "evil.com:8443/", "a b", "user@evil.com", "evil.com:80@x", "[::1", "[::1]x",
            "[fe80::1%25eth0]:8443", "[::1]:", "host:", "host:0", "host:65536", "host:08443", "host:-1", "host:1:2",
            "a..b", ".a", "a.", "-a.com", "a-.com", String(repeating: "x", count: 64) + ".com", "ho\"st", "host\\x",
            "host<script>", "évil.com", "[1.2.3.4]", "host?x", "host#x", "%65vil.com",
            String(repeating: "a.", count: 150),
        ]
        for host in bad { #expect(WebDoor.serverAddress(host: host) == nil, "\(host)") }
        #expect(WebDoor.serverAddress(host: nil) == nil)
        let f = try WebFixture()
        for host in ["evil.com/x?", "a b", "x\"}"] {
            let raw = Array("POST /index.php/login/v2 HTTP/1.1\r\nHost: \(host)\r\nContent-Length: 0\r\n\r\n".utf8)
            let e = f.run([raw])
            #expect(e.first.status == 400, "\(host): \(e.first)")
        }
        let none = f.run([Array("POST /index.php/login/v2 HTTP/1.0\r\nContent-Length: 0\r\n\r\n".utf8)])
        #expect(none.first.status == 400, "\(none.first)")
        #expect(f.door.loginFlows.count == 0)
    }

    @Test("the login form's return path: kept on a wrong password's page; another site's is the gallery")
    func loginReturn() throws {
        let f = try WebFixture()
        try f.door.access.setPassword("right horse", cost: Scrypt(n: 1 << 10, r: 8, p: 1))
        let flow = "/index.php/login/v2/flow/" + String(repeating: "c", count: 64)
        let login = { (fields: String) in
            f.run([request("POST", "/login", [form], body: Array(fields.utf8))]).first
        }
        let wrong = login("password=no&next=\(flow)")
        #expect(wrong.status == 401 && wrong.text.contains("name=\"next\" value=\"\(flow)\""), "\(wrong)")
        #expect(login("password=right+horse&next=\(flow)").header("location") == flow)
        for next in ["%2F%2Fevil.example", "https%3A%2F%2Fevil.example", "%2F%5Cevil.example", "%2Fa%3Fb"] {
            let right = login("password=right+horse&next=\(next)")
            #expect(right.status == 303 && right.header("location") == "/", "\(next): \(right)")
        }
        // A page asked for without a session comes back; a POST or the gallery adds no return path.
        #expect(f.run([request("GET", "/photo/7")]).first.text.contains("name=\"next\" value=\"/photo/7\""))
        #expect(!f.run([request("GET", "/?sender=x")]).first.text.contains("name=\"next\""))
        #expect(!f.run([request("POST", "/logout")]).first.text.contains("name=\"next\""))
    }

    @Test("the login's return path: this site's paths only")
    func returnPaths() {
        for path in ["/", "/index.php/login/v2/flow/" + String(repeating: "a", count: 64), "/photo/7"] {
            #expect(WebDoor.returnPath(path) == path)
        }
        for path in [
            nil, "", "//evil.com", "/\\evil.com", "https://evil.com", "evil.com", "/a//b", "/%2f%2fevil.com", "/a?b",
            "/a b", "/a\r\nSet-Cookie: x", String(repeating: "/a", count: 200), "/javascript:alert(1)",
        ] {
            #expect(WebDoor.returnPath(path) == nil, "\(path ?? "nil")")
        }
    }
}
