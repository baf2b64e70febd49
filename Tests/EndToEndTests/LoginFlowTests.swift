import Foundation
import PTKSystem
import PTKTestSupport
import PTKTestTags
import Testing

/// A phone app's login as the Nextcloud Android app does it (login flow v2), over TLS against
/// the real ptkd, by Python's http.client (the certificate trusted as a file, the name checked):
/// the app's requests, a person's browser logging in and approving, the app's WebDAV upload
/// with what it was given; and the hostile requests beside them. One JSON object of results out.
private let flowDriver = #"""
    import base64, http.client, json, re, ssl, sys, urllib.parse
    port, cafile, web_password, photo = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
    ctx = ssl.create_default_context(cafile=cafile)
    UA = "Mozilla/5.0 (Android) Nextcloud-android/3.30.0"
    FORM = {"Content-Type": "application/x-www-form-urlencoded"}
    out = {}

    def req(method, path, body=b"", headers=None):
        c = http.client.HTTPSConnection("127.0.0.1", port, context=ctx, timeout=20)
        h = {"User-Agent": UA}
        h.update(headers or {})
        c.request(method, path, body=body, headers=h)
        r = c.getresponse()
        data = r.read()
        c.close()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, data

    def poll(path, token):
        return req("POST", path, b"token=" + token.encode(), FORM)

    # The app: start a flow (an empty form, as the app posts it).
    s, h, d = req("POST", "/index.php/login/v2", b"", FORM)
    out["start"] = s
    start = json.loads(d)
    token, endpoint, login = start["poll"]["token"], start["poll"]["endpoint"], start["login"]
    out["endpoint"], out["login"], out["token"] = endpoint, login, token
    poll_path, flow_path = urllib.parse.urlparse(endpoint).path, urllib.parse.urlparse(login).path
    out["poll_pending"] = poll(poll_path, token)[0]

    # The browser the app opens: the login page, which comes back to the flow.
    s, h, d = req("GET", flow_path)
    out["page_without_session"] = s
    out["login_page_returns"] = ('name="next" value="%s"' % flow_path) in d.decode()
    body = urllib.parse.urlencode({"name": "Anna's phone", "password": web_password, "next": flow_path}).encode()
    s, h, d = req("POST", "/login", body, FORM)
    out["password_login"], out["login_location"] = s, h.get("location")
    cookie = {"Cookie": h["set-cookie"].split(";")[0]}
    s, h, d = req("GET", h["location"], headers=cookie)
    page = d.decode()
    out["page"], out["page_shows_device"] = s, UA in page
    csrf = re.search(r'name="csrf-token" content="([0-9a-f]+)"', page).group(1)
    origin = {"Origin": "https://127.0.0.1:%d" % port}

    # Hostile: another flow's secret guessed, a form without the token, a form from elsewhere.
    approve = lambda name: urllib.parse.urlencode({"csrf": csrf, "decision": "approve", "name": name}).encode()
    out["guessed_approve"] = req("POST", "/index.php/login/v2/flow/" + "0" * 64, approve("thief"), {**FORM, **cookie, **origin})[0]
    out["approve_without_token"] = req("POST", flow_path, b"decision=approve&name=thief", {**FORM, **cookie, **origin})[0]
    out["approve_from_elsewhere"] = req("POST", flow_path, approve("thief"), {**FORM, **cookie, "Origin": "https://evil.example"})[0]
    out["guessed_poll"] = poll(poll_path, "0" * 128)[0]
    out["still_pending"] = poll(poll_path, token)[0]

    # Approve; the app's next poll gets the password, once.
    s, h, d = req("POST", flow_path, approve("annas-phone"), {**FORM, **cookie, **origin})
    out["approve"], approved_page = s, d.decode()
    s, h, d = poll(poll_path, token)
    out["collect"] = s
    credentials = json.loads(d)
    out["credentials"] = credentials
    out["password_on_approved_page"] = credentials["appPassword"] in approved_page
    out["replay"] = poll(poll_path, token)[0]
    out["page_after"] = req("GET", flow_path, headers=cookie)[0]

    # The app uploads with what it was given.
    basic = base64.b64encode(("%s:%s" % (credentials["loginName"], credentials["appPassword"])).encode()).decode()
    with open(photo, "rb") as f:
        out["put"] = req("PUT", "/dav/flow.png", f.read(), {"Authorization": "Basic " + basic, "Content-Type": "image/png"})[0]

    # Hostile: Host headers that are no host; then the bound of 8 flows from one address.
    hosts = ["evil.com/x?", "a b", "127.0.0.1:0", "127.0.0.1:99999", "[::1", "x\"}", "evil.com@127.0.0.1", ""]
    out["tricky_hosts"] = [req("POST", "/index.php/login/v2", b"", {**FORM, "Host": host})[0] for host in hosts]
    out["ten_starts"] = [req("POST", "/index.php/login/v2", b"", FORM)[0] for _ in range(10)]
    print(json.dumps(out))
    """#

@Suite("End to end: a phone app's login flow (issue 57)", .serialized, .tags(.endToEnd))
struct LoginFlowTests {
    @Test(
        "start, poll 404, log in (back to the flow), approve with the token, poll 200 once then 404, upload with the password; hostile requests refused; no secret in the log"
    )
    func phoneLogsIn() throws {
        let d = try DaemonProcess.withWeb()
        #expect(eventually { fileExists(d.stateDir + "/listening") })
        try d.setWebPassword("right horse battery")
        let work = makeTemporaryDirectory("ptk-login-flow")
        defer { removeTree(work) }
        writeFile(work + "/driver.py", Array(flowDriver.utf8))
        let png = makePNG(size: 4000, seed: 57)
        writeFile(work + "/flow.png", png)
        let python = try #require(findProgram("python3"), "the login flow's driver needs python3")
        let r = try run(
            python,
            [
                work + "/driver.py", String(d.webPort), d.stateDir + "/web/tls/cert.pem", "right horse battery",
                work + "/flow.png",
            ],
            timeout: 120, absolute: true)
        #expect(r.status == 0, "\(r.stdout) \(r.stderr)")
        let out = try #require(
            try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any], "\(r.stdout) \(r.stderr)")
        func status(_ key: String) -> Int? { out[key] as? Int }
        let base = "https://127.0.0.1:\(d.webPort)"
        #expect(status("start") == 200 && out["endpoint"] as? String == base + "/index.php/login/v2/poll")
        let login = try #require(out["login"] as? String)
        #expect(
            login.range(of: "^" + base + "/index.php/login/v2/flow/[0-9a-f]{64}$", options: .regularExpression) != nil)
        let token = try #require(out["token"] as? String)
        #expect(token.range(of: "^[0-9a-f]{128}$", options: .regularExpression) != nil)
        #expect(status("poll_pending") == 404)
        #expect(status("page_without_session") == 401 && out["login_page_returns"] as? Bool == true)
        #expect(
            status("password_login") == 303 && out["login_location"] as? String == String(login.dropFirst(base.count)))
        #expect(status("page") == 200 && out["page_shows_device"] as? Bool == true)
        #expect(status("guessed_approve") == 404)
        #expect(status("approve_without_token") == 403 && status("approve_from_elsewhere") == 403)
        #expect(status("guessed_poll") == 404 && status("still_pending") == 404)
        #expect(status("approve") == 200 && status("collect") == 200)
        let credentials = try #require(out["credentials"] as? [String: String])
        #expect(credentials["server"] == base && credentials["loginName"] == "annas-phone")
        let password = try #require(credentials["appPassword"])
        #expect(password.range(of: AppPasswordTests.passwordShape, options: .regularExpression) != nil)
        #expect(out["password_on_approved_page"] as? Bool == false)
        #expect(status("replay") == 404 && status("page_after") == 404)
        #expect(status("put") == 201, "\(out)")
        #expect(eventually { d.photoFiles.values.contains(png) })
        #expect(out["tricky_hosts"] as? [Int] == [Int](repeating: 400, count: 8), "\(out)")
        #expect(out["ten_starts"] as? [Int] == [Int](repeating: 200, count: 8) + [429, 429], "\(out)")

        // The password made is an upload password, listed by ptk.
        let list = try library(d, ["app-password", "list", "--json"])
        #expect(list.stdout.contains("\"name\": \"annas-phone\", \"access\": \"upload\""), "\(list.stdout)")
        d.stop()
        let log = d.log
        #expect(log.contains("approved the login flow of"), "\(log)")
        #expect(log.contains("handed the app password \"annas-phone\""), "\(log)")
        let secret = String(login.suffix(64))
        for (what, text) in [("the app password", password), ("the poll token", token), ("the login secret", secret)] {
            #expect(!log.contains(text), "\(what) is in ptkd's log")
        }
    }

    @Test(
        "ptk app-password add --qr: the password as without it, then the nc://login link a phone app scans and its QR code; --json adds the link"
    )
    func qrLink() throws {
        let d = try DaemonProcess.withWeb()
        #expect(eventually { fileExists(d.stateDir + "/listening") })
        let r = try library(d, ["app-password", "add", "annas-tablet", "--host", "192.0.2.7", "--qr"])
        #expect(r.status == 0, "\(r.stderr)")
        let lines = r.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines.count > 10 && lines[0] == "url: https://192.0.2.7:\(d.webPort)/dav/", "\(r.stdout)")
        let password = String(lines[2].dropFirst("password: ".count))
        #expect(lines[1] == "user: annas-tablet" && lines[3].hasPrefix("certificate SHA-256: "))
        #expect(
            lines[4] == "link: nc://login/user:annas-tablet&password:\(password)&server:https://192.0.2.7:\(d.webPort)",
            "\(r.stdout)")
        #expect(lines[5].isEmpty)
        // The code: rows of half blocks, as wide as each other, square in modules (two rows a line).
        let code = lines.dropFirst(6).filter { !$0.isEmpty }
        let width = code.first?.count ?? 0
        #expect(code.count >= 10 && code.allSatisfy { $0.count == width } && abs(width - 2 * code.count) <= 2)
        #expect(code.joined().contains("█") && code.joined().allSatisfy { " █▀▄".contains($0) })
        #expect(!d.log.contains(password))

        let j = try library(d, ["app-password", "add", "annas-watch", "--host", "::1", "--qr", "--json"])
        #expect(j.status == 0, "\(j.stderr)")
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(j.stdout.utf8)) as? [String: Any], "\(j.stdout)")
        let second = try #require(object["password"] as? String)
        #expect(
            object["link"] as? String
                == "nc://login/user:annas-watch&password:\(second)&server:https://[::1]:\(d.webPort)")
        // Without --qr, no link.
        let plain = try library(d, ["app-password", "add", "annas-laptop", "--json"])
        #expect(plain.status == 0 && !plain.stdout.contains("link"), "\(plain.stdout)")
    }

    @Test(
        "the QR code ptk app-password add --qr draws decodes to the link it prints",
        .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/zbarimg"), "needs zbarimg (zbar-tools)"))
    func qrDecodes() throws {
        let d = try DaemonProcess.withWeb()
        #expect(eventually { fileExists(d.stateDir + "/listening") })
        let r = try library(d, ["app-password", "add", "annas-phone", "--host", "192.0.2.7", "--qr"])
        #expect(r.status == 0, "\(r.stderr)")
        let lines = r.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let link = try #require(lines.first { $0.hasPrefix("link: ") }).dropFirst("link: ".count)
        // The code's lines, back to modules (dark = true), then a greyscale image, 4 pixels a module.
        let code = lines.dropFirst(6).filter { !$0.isEmpty }
        var rows: [[Bool]] = []
        for line in code {
            rows.append(line.map { $0 == "█" || $0 == "▀" })
            rows.append(line.map { $0 == "█" || $0 == "▄" })
        }
        let scale = 4
        var pixels: [UInt8] = []
        for row in rows {
            for _ in 0..<scale { for dark in row { pixels += [UInt8](repeating: dark ? 0 : 255, count: scale) } }
        }
        let pgm = d.root + "/code.pgm"
        writeFile(pgm, Array("P5\n\(rows[0].count * scale) \(rows.count * scale)\n255\n".utf8) + pixels)
        let decoded = try run("/usr/bin/zbarimg", ["--raw", "-q", pgm], absolute: true)
        #expect(
            decoded.status == 0 && decoded.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == String(link),
            "\(decoded.stdout) \(decoded.stderr)")
    }
}
