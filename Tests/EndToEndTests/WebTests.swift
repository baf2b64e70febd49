import Foundation
import PTKHTTP
import PTKSystem
import PTKTLS
import PTKTestSupport
import PTKTestTags
import PTKTransport
import Testing

/// A browser as the hostile tests need one: HTTPS requests with cookies and headers, raw bytes.
final class WebBrowser: @unchecked Sendable {
    let port: UInt16
    let context: TLSContext
    /// The session cookie's value, once logged in.
    var cookie: String?

    init(port: UInt16) throws {
        ignoreBrokenPipeSignal()
        self.port = port
        context = try TLSContext(server: false, identity: nil, flavor: .web)
    }

    func connect() throws -> AppConnection {
        let address = SocketAddress(numericHost: "127.0.0.1", port: port)!
        let sock = try Socket.connect(to: address, deadline: .now + .seconds(5))
        return AppConnection(
            stream: try TLSStream(socket: sock, peer: address, context: context, deadline: .now + .seconds(5)))
    }

    /// One request on a new connection: status, body as text, and the response's head.
    func request(
        _ method: String, _ target: String, body: [UInt8] = [], headers: [String: String] = [:], chunked: Int? = nil,
        contentType: String? = "application/x-www-form-urlencoded"
    ) throws -> (status: Int, text: String, head: HTTPHead?, body: [UInt8]) {
        let c = try connect()
        defer { c.close() }
        var extra = cookie.map { "Cookie: __Host-ptk=\($0)\r\n" } ?? ""
        for (k, v) in headers { extra += "\(k): \(v)\r\n" }
        let r = try c.request(
            method, target, body: body, chunked: chunked, contentType: method == "POST" ? contentType : nil,
            extraHeaders: extra)
        return (r.status, String(decoding: r.body, as: UTF8.self), c.lastHead, r.body)
    }

    /// The session's CSRF token, from a page.
    func csrf() throws -> String {
        let page = try request("GET", "/upload").text
        guard let range = page.range(of: #"csrf-token" content="[0-9a-f]+"#, options: .regularExpression) else {
            throw HarnessError("no CSRF token in \(page)")
        }
        return String(page[range].split(separator: "\"").last!)
    }

    /// Logs in with a one-time link `ptk web-link` makes for `daemon`; returns the link's path.
    @discardableResult
    func logIn(_ daemon: DaemonProcess, name: String = "test browser") throws -> String {
        let path = try WebTests.link(daemon, name: name)
        let r = try request("GET", path)
        guard r.status == 303, let setCookie = r.head?.header("set-cookie"),
            let value = setCookie.split(separator: ";").first?.split(separator: "=", maxSplits: 1).last
        else {
            throw HarnessError("login link answered \(r.status): \(r.text)")
        }
        cookie = String(value)
        return path
    }

    /// A HEAD request on a new connection: its status line and headers, as text (no body follows).
    func headRequest(_ target: String) throws -> String {
        let c = try connect()
        defer { c.close() }
        try c.write(Array("HEAD \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8))
        var got: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16 << 10)
        while !String(decoding: got, as: UTF8.self).contains("\r\n\r\n") {
            let n = try buffer.withUnsafeMutableBytes { b in
                Result { () throws(TransportError) in try c.stream.read(into: b, deadline: .now + .seconds(10)) }
            }.get()
            if n == 0 { break }
            got += buffer[..<n]
        }
        return String(decoding: got, as: UTF8.self)
    }
}

extension DaemonProcess {
    /// A ptkd with its web interface on a free port.
    static func withWeb(_ extra: [String] = []) throws -> DaemonProcess {
        try DaemonProcess(["--web", "on", "--web-port", "0"] + extra)
    }

    /// The web interface's port, from ptkd's log.
    var webPort: UInt16 { loggedPort("web interface on port") }

    /// Sets the web interface's password with `ptk web-password` (read from standard input).
    func setWebPassword(_ password: String) throws {
        let set = try run(
            "/bin/sh",
            [
                "-c",
                "printf '%s\\n' \"$3\" | \"$0\" --config /dev/null --dir \"$1\" --state-dir \"$2\" web-password",
                binDirectory + "/ptk", dir, stateDir, password,
            ], absolute: true)
        #expect(set.status == 0, "\(set.stderr)")
    }

    /// A ptkd with its web interface and one photo, sent by ptk-send and indexed: the daemon
    /// and the photo's bytes.
    static func withWeb(photo name: String, size: Int, seed: UInt64) throws -> (DaemonProcess, [UInt8]) {
        let d = try withWeb()
        let bytes = makePNG(size: size, seed: seed)
        writeFile(d.root + "/" + name, bytes)
        #expect(try send(d, [d.root + "/" + name]).status == 0)
        #expect(waitForIndex(d, [name]))
        return (d, bytes)
    }
}

@Suite("Web interface: hostile requests (real ptkd, no browser)", .serialized, .tags(.endToEnd))
struct WebTests {
    /// `ptk web-link` for `daemon`: the link's path (/login/SECRET), checked to be a whole link.
    static func link(_ daemon: DaemonProcess, name: String) throws -> String {
        let r = try library(daemon, ["web-link", "--host", "127.0.0.1", "--name", name])
        guard r.status == 0, let first = r.stdout.split(separator: "\n").first,
            let range = first.range(of: #"^https://127\.0\.0\.1:\d+/login/[0-9a-f]{32}$"#, options: .regularExpression)
        else {
            throw HarnessError("ptk web-link: \(r.status) \(r.stdout) \(r.stderr)")
        }
        return "/login/" + first[range].split(separator: "/").last!
    }

    /// Every route, as a browser without a session would ask for it.
    static let routes: [(String, String)] = [
        ("GET", "/"), ("GET", "/?sender=x"), ("GET", "/upload"), ("POST", "/upload?name=x.png"), ("POST", "/logout"),
        ("GET", "/photo/1"), ("GET", "/photo/1/original"), ("GET", "/photo/1/original?download=1"),
        ("GET", "/photo/1/thumbnail"),
        ("GET", "/photo/1/package"), ("GET", "/photo/1/delete"), ("POST", "/photo/1/delete"),
        ("POST", "/photo/1/rename"),
        ("GET", "/photo/1/thumbnail/180?v=1"), ("GET", "/photo/1/preview"), ("GET", "/view/1?rating=2"),
        ("POST", "/photo/1/note"), ("POST", "/photo/1/rate"), ("GET", "/no/such/page"), ("DELETE", "/photo/1"),
        ("GET", "/photo/../../etc/passwd"),
    ]

    @Test(
        "without a session every route answers the login page (401) and changes nothing; the login page and its files are public"
    )
    func unauthenticated() throws {
        let (d, png) = try DaemonProcess.withWeb(photo: "a.png", size: 3000, seed: 5)
        let b = try WebBrowser(port: d.webPort)
        for (method, target) in Self.routes {
            let r = try b.request(
                method, target, body: method == "POST" ? Array("note=x&name=y.png&rating=5".utf8) : [])
            #expect(r.status == 401, "\(method) \(target): \(r.status)")
            if !target.hasPrefix("/upload?") {
                #expect(r.text.contains("<h1>Log in</h1>"), "\(method) \(target)")
            }
            #expect(!r.body.starts(with: png.prefix(8)), "\(method) \(target) sent the photo")
            #expect(
                r.head?.header("content-security-policy")
                    == "default-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'")
            #expect(r.head?.header("x-frame-options") == "DENY")
            #expect(r.head?.header("referrer-policy") == "no-referrer")
        }
        let list = try listed(d)
        #expect(
            list.count == 1 && list[0]["Name"] as? String == "a.png" && list[0]["Note"] == nil
                && list[0]["Rating"] == nil)
        #expect(try b.request("GET", "/login").status == 200)
        let css = try b.request("GET", "/static/app.css")
        #expect(css.status == 200 && css.head?.header("content-type") == "text/css; charset=utf-8")
        #expect(try b.request("GET", "/static/app.js").status == 200)
        // No password set: the login page offers none, and posting one fails.
        #expect(!(try b.request("GET", "/login").text.contains("type=\"password\"")))
        #expect(try b.request("POST", "/login", body: Array("password=anything".utf8)).status == 401)
    }

    @Test(
        "photos are named by id only: traversal and encoded slashes are 404, and a forged or revoked cookie gets the login page"
    )
    func traversalAndCookies() throws {
        let (d, _) = try DaemonProcess.withWeb(photo: "a.png", size: 2000, seed: 6)
        let b = try WebBrowser(port: d.webPort)
        try b.logIn(d)
        #expect(try b.request("GET", "/photo/1").status == 200)
        for target in [
            "/photo/../../../etc/passwd", "/photo/..%2f..%2f..%2fetc%2fpasswd", "/photo/1%2f..%2f..%2fpasswd",
            "/photo/%2e%2e/original", "/static/..%2f..%2fetc%2fpasswd", "/photo/1/original/../../..", "/photo/2",
            "/photo/01/original", "/%2e%2e/%2e%2e/etc/passwd", "/photo/1/../../state/web/sessions",
            "/.ptk/index.sqlite",
            "/a.png", "/photos/a.png",
        ] {
            let r = try b.request("GET", target)
            #expect(r.status == 404, "\(target): \(r.status)")
            #expect(!r.text.contains("root:") && !r.text.contains("SQLite"), "\(target)")
        }
        #expect(try b.request("DELETE", "/photo/1").status == 405)
        // Hostile or garbage cursors (and filters) through the real door: the gallery's first page
        // (its one photo), never a fault.
        for query in [
            "after=d.9223372036854775807.0.-1", "after=f.1.2", "after=" + String(repeating: "9", count: 2_001),
            "after=a/b", "after=a%2Fb", "after='%20OR%201=1", "after=d.1.0.1.2025-01-01'%20OR%201=1",
            "after=f.1.0.1.0.0.A",
            "after=f.1.0.1.0.0._w", "after=f.-1.0.-1.0.0.YS8", "after=d.0.0.1.2025-01-01", "after=", "after=%00",
            "after=f.9223372036854775807.0.1.0.0.YS8&rating=-3",
        ] {
            let r = try b.request("GET", "/?" + query)
            #expect(r.status == 200, "\(query): \(r.status)")
            #expect(r.text.contains("<figure id=\"p1\""), "\(query)")
        }
        let good = b.cookie!
        // A forged cookie (right length, wrong secret), a damaged one, and none.
        for forged in [
            String(repeating: "a", count: 64), String(good.dropLast()) + (good.last == "0" ? "1" : "0"), "x", "",
        ] {
            b.cookie = forged
            let r = try b.request("GET", "/photo/1")
            #expect(r.status == 401 && r.text.contains("<h1>Log in</h1>"), "cookie \(forged)")
        }
        b.cookie = good
        // Listed by `ptk web-sessions`; revoked, the cookie stops working at once.
        let sessions = try library(d, ["web-sessions"])
        #expect(
            sessions.status == 0 && sessions.stdout.contains("\"test browser\" from 127.0.0.1"), "\(sessions.stdout)")
        let id = String(sessions.stdout.prefix(8))
        #expect(try library(d, ["web-sessions", "revoke", id]).stdout.contains("logged out \(id) \"test browser\""))
        let after = try b.request("GET", "/")
        #expect(after.status == 401 && after.text.contains("Your session has ended"))
        #expect(try library(d, ["web-sessions", "revoke", "ffffffff"]).status == 1)
    }

    @Test(
        "ptk web-link's QR code (half blocks, two rows of modules a line) decodes to the link it prints",
        .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/zbarimg"), "needs zbarimg (zbar-tools)"))
    func qrCode() throws {
        let d = try DaemonProcess.withWeb()
        let r = try library(d, ["web-link", "--host", "192.0.2.7", "--name", "phone"])
        #expect(r.status == 0, "\(r.stderr)")
        let lines = r.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let url = lines[0]
        // The port the running ptkd listens on (STATE/listening), not the configuration's.
        #expect(url.hasPrefix("https://192.0.2.7:\(d.webPort)/login/"), "\(url)")
        #expect(!r.stdout.contains("\u{1B}["), "no colours when standard output is not a terminal")
        // The code's lines: from the line after the blank one to the next blank one.
        let code = Array(lines.dropFirst(2).prefix { !$0.isEmpty })
        #expect(code.count > 10)
        // Back to modules (dark = true), then a greyscale image, 4 pixels a module.
        var rows: [[Bool]] = []
        for line in code {
            let cells = Array(line)
            rows.append(cells.map { $0 == "█" || $0 == "▀" })
            rows.append(cells.map { $0 == "█" || $0 == "▄" })
        }
        let scale = 4
        let width = rows[0].count * scale
        let height = rows.count * scale
        var pixels: [UInt8] = []
        for row in rows {
            for _ in 0..<scale { for dark in row { pixels += [UInt8](repeating: dark ? 0 : 255, count: scale) } }
        }
        let pgm = d.root + "/code.pgm"
        writeFile(pgm, Array("P5\n\(width) \(height)\n255\n".utf8) + pixels)
        let decoded = try run("/usr/bin/zbarimg", ["--raw", "-q", pgm], absolute: true)
        #expect(
            decoded.status == 0 && decoded.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == url,
            "\(decoded.stdout) \(decoded.stderr)")
        // The fingerprint printed is the certificate's, as ptkd logs it.
        let fingerprint = try #require(lines.last { $0.count == 95 && $0.contains(":") })
        #expect(d.log.contains("certificate SHA-256 \(fingerprint)"), "\(fingerprint)")
    }

    @Test("a one-time link works once; an expired session (by its file) is refused")
    func links() throws {
        let d = try DaemonProcess.withWeb()
        let b = try WebBrowser(port: d.webPort)
        let path = try b.logIn(d)
        #expect(try b.request("GET", "/").status == 200)
        let other = try WebBrowser(port: d.webPort)
        // A HEAD of a link (a chat app's link preview) answers like the login page and spends nothing.
        let previewed = try Self.link(d, name: "previewed")
        let preview = try other.headRequest(previewed)
        #expect(preview.hasPrefix("HTTP/1.1 200 ") && !preview.lowercased().contains("set-cookie"), "\(preview)")
        let followed = try other.request("GET", previewed)
        #expect(
            followed.status == 303 && followed.head?.header("set-cookie") != nil, "\(followed.status) \(followed.text)")
        let again = try other.request("GET", path)
        #expect(again.status == 401 && again.text.contains("used already or has expired"), "\(again.status)")
        #expect(again.head?.header("set-cookie") == nil)
        // A link that was never made, of the right shape.
        #expect(try other.request("GET", "/login/" + String(repeating: "0", count: 32)).status == 401)
        // The files hold hashes only, mode 0600.
        let file = d.stateDir + "/web/sessions"
        #expect(try fileStatus(file).permissions & 0o777 == 0o600)
        // The session's end passes (its expiry rewritten into the past): the login page again.
        let text = try String(contentsOfFile: file, encoding: .utf8)
        let rewritten =
            text.split(separator: "\n").map { line -> String in
                guard !line.hasPrefix("#") else { return String(line) }
                var f = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
                f[5] = "1000"
                return f.joined(separator: "\t")
            }.joined(separator: "\n") + "\n"
        try rewritten.write(toFile: file, atomically: true, encoding: .utf8)
        #expect(try b.request("GET", "/").status == 401)
        #expect(!text.contains(b.cookie!))
        #expect(
            !(try String(contentsOfFile: d.stateDir + "/web/links", encoding: .utf8)).contains(
                String(path.dropFirst(7))))
    }

    @Test("a photo name and a browser's name that join < and > to marks stay text in the gallery and the photo page")
    func hostileNames() throws {
        // Searched byte by byte: String.contains would compare Characters, and "\u{600}<" is not "<".
        func has(_ page: String, _ text: String) -> Bool { Array(page.utf8).firstRange(of: Array(text.utf8)) != nil }
        let d = try DaemonProcess.withWeb()
        let b = try WebBrowser(port: d.webPort)
        try b.logIn(d, name: "\u{600}<i id=pwn>\u{301}")
        let token = try b.csrf()
        let name = "x\u{600}<b id=pwn>\u{301}\"\u{301} data-pwn=1.png"
        let query = name.utf8.map { c -> String in
            (0x30...0x39).contains(c) || (0x41...0x5A).contains(c) || (0x61...0x7A).contains(c)
                ? String(UnicodeScalar(c)) : String(format: "%%%02X", c)
        }.joined()
        let upload = try b.request(
            "POST", "/upload?name=" + query, body: makePNG(size: 3000, seed: 41), headers: ["X-CSRF-Token": token],
            contentType: "application/octet-stream")
        #expect(upload.status == 200, "\(upload.status) \(upload.text)")
        #expect(waitForIndex(d, [name]))
        let gallery = try b.request("GET", "/").text
        let id = try #require(
            gallery.range(of: #"<figure id="p[0-9]+""#, options: .regularExpression).map {
                gallery[$0].dropFirst(13).dropLast()
            })
        let photo = try b.request("GET", "/photo/\(id)").text
        let view = try b.request("GET", "/view/\(id)").text
        #expect(has(view, "\u{600}&lt;i id=pwn&gt;\u{301}"))
        for page in [gallery, photo, view] {
            #expect(
                !has(page, "<b id=pwn>") && !has(page, "<i id=pwn>") && !has(page, "\" data-pwn")
                    && !has(page, "\"\u{301} data-pwn"))
        }
        #expect(has(gallery, "x\u{600}&lt;b id=pwn&gt;\u{301}&quot;\u{301} data-pwn=1.png"))
        #expect(has(photo, "\u{600}&lt;i id=pwn&gt;\u{301}"))
    }

    @Test("the password logs in; 1,000 wrong ones cost 3 scrypt checks, then 429 for 5 minutes (the right one too)")
    func passwords() throws {
        let d = try DaemonProcess.withWeb()
        try d.setWebPassword("correct horse")
        #expect(try fileStatus(d.stateDir + "/web/password").permissions & 0o777 == 0o600)
        #expect(!(try String(contentsOfFile: d.stateDir + "/web/password", encoding: .utf8)).contains("correct horse"))
        let short = try run(
            "/bin/sh",
            ["-c", "echo short | '\(binDirectory)/ptk' --config /dev/null --state-dir '\(d.stateDir)' web-password"],
            absolute: true)
        #expect(short.status == 64 && short.stderr.contains("at least 8 characters"))
        let b = try WebBrowser(port: d.webPort)
        #expect(try b.request("GET", "/login").text.contains("type=\"password\""))
        let right = try b.request("POST", "/login", body: Array("name=Anna%27s+laptop&password=correct+horse".utf8))
        #expect(right.status == 303 && right.head?.header("set-cookie")?.contains("HttpOnly; SameSite=Strict") == true)
        #expect(try library(d, ["web-sessions"]).stdout.contains("\"Anna's laptop\""))
        // Another site's page cannot log a browser in.
        #expect(
            try b.request(
                "POST", "/login", body: Array("password=correct+horse".utf8),
                headers: ["Origin": "https://evil.example"]
            ).status == 403)
        #expect(
            try b.request(
                "POST", "/login", body: Array("password=correct+horse".utf8), headers: ["Sec-Fetch-Site": "same-site"]
            ).status == 403)
        var statuses: [Int: Int] = [:]
        let c = try b.connect()
        defer { c.close() }
        for i in 0..<1000 {
            let r = try c.request(
                "POST", "/login", body: Array("password=wrong\(i)".utf8),
                contentType: "application/x-www-form-urlencoded",
                extraHeaders: "")
            statuses[r.status, default: 0] += 1
        }
        #expect(statuses == [401: 2, 429: 998], "\(statuses)")
        #expect(try b.request("POST", "/login", body: Array("password=correct+horse".utf8)).status == 429)
        #expect(d.log.components(separatedBy: "wrong password").count - 1 == 3)
        #expect(try library(d, ["web-password", "--remove"]).stdout.contains("removed the web password"))
    }

    @Test("Range: one range is 206, malformed and several (overlapping) are the whole file, past the end 416")
    func ranges() throws {
        let (d, png) = try DaemonProcess.withWeb(photo: "r.png", size: 50_000, seed: 8)
        let b = try WebBrowser(port: d.webPort)
        try b.logIn(d)
        let n = png.count
        let whole = try b.request("GET", "/photo/1/original")
        #expect(whole.status == 200 && whole.body == png && whole.head?.header("accept-ranges") == "bytes")
        for (range, start, end) in [
            ("bytes=0-99", 0, 99), ("bytes=100-", 100, n - 1), ("bytes=-10", n - 10, n - 1),
            ("bytes=10-999999999", 10, n - 1),
        ] {
            let r = try b.request("GET", "/photo/1/original", headers: ["Range": range])
            #expect(r.status == 206 && r.body == Array(png[start...end]), "\(range)")
            #expect(r.head?.header("content-range") == "bytes \(start)-\(end)/\(n)", "\(range)")
        }
        for range in ["bytes=0-10,5-20", "bytes=0-,0-,0-,0-,0-", "bytes=a-b", "bytes=50-10", "lines=1-2", "bytes=--1"] {
            let r = try b.request("GET", "/photo/1/original", headers: ["Range": range])
            #expect(r.status == 200 && r.body == png, "\(range): \(r.status)")
        }
        // A first position past the end, however many digits it has, is 416 (RFC 9110 14.1.2).
        for range in ["bytes=\(n)-", "bytes=" + String(repeating: "9", count: 40) + "-", "bytes=9223372036854775807-"] {
            let past = try b.request("GET", "/photo/1/original", headers: ["Range": range])
            #expect(
                past.status == 416 && past.head?.header("content-range") == "bytes */\(n)", "\(range): \(past.status)")
        }
        // A last position past the end is the end, however many digits it has.
        let all = try b.request("GET", "/photo/1/original", headers: ["Range": "bytes=0-9223372036854775807"])
        #expect(all.status == 206 && all.body == png && all.head?.header("content-range") == "bytes 0-\(n - 1)/\(n)")
        let download = try b.request("GET", "/photo/1/original?download=1")
        #expect(
            download.head?.header("content-disposition") == "attachment; filename=\"r.png\"; filename*=UTF-8''r.png")
        // The .ptk package, as a zip of NAME.ptk/ that `ptk import` takes once unzipped.
        let zip = try b.request("GET", "/photo/1/package")
        #expect(zip.status == 200 && zip.head?.header("content-type") == "application/zip")
        let out = d.root + "/unzipped"
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        writeFile(out + "/r.zip", zip.body)
        #expect(
            try run(
                "/usr/bin/python3",
                [
                    "-c", "import zipfile,sys; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])", out + "/r.zip",
                    out,
                ], absolute: true
            ).status == 0)
        #expect(readFile(out + "/r.ptk/photo.data") == png)
        #expect(!listDirectory(d.stateDir + "/web").contains { $0.hasPrefix("export-") })
    }

    @Test(
        "uploads: saved with the store's checks (a chunked body too, with or without its length); over max-file-size 413, a type not kept 415, not well formed 400, no token 403; nothing partial left"
    )
    func uploads() throws {
        let d = try DaemonProcess.withWeb(["--max-file-size", "100000", "--types", "image/png,image/jpeg"])
        let b = try WebBrowser(port: d.webPort)
        try b.logIn(d, name: "Guest <phone>")
        let token = try b.csrf()
        let png = makePNG(size: 20_000, seed: 9)
        let ok = try b.request(
            "POST", "/upload?name=guest%20photo.png", body: png, headers: ["X-CSRF-Token": token],
            contentType: "application/octet-stream")
        #expect(ok.status == 200 && ok.text == #"{"duplicate":false,"name":"guest photo.png"}"#, "\(ok.text)")
        #expect(readFile(d.dir + "/guest photo.png") == png)
        let again = try b.request(
            "POST", "/upload?name=again.png", body: png, headers: ["X-CSRF-Token": token],
            contentType: "application/octet-stream")
        #expect(again.text == #"{"duplicate":true,"name":"guest photo.png"}"#, "\(again.text)")
        #expect(waitForIndex(d, ["guest photo.png"]))
        #expect(try listed(d)[0]["SenderName"] as? String == "web: Guest <phone>")
        let refusals: [(String, [UInt8], [String: String], Int, String)] = [
            ("big.png", makePNG(size: 150_000, seed: 1), ["X-CSRF-Token": token], 413, "over this receiver's limit"),
            (
                "photo.heic", [0, 0, 0, 24] + Array("ftypheic".utf8) + [UInt8](repeating: 0, count: 100),
                ["X-CSRF-Token": token], 415, "not a type this receiver keeps (it keeps PNG, JPEG)"
            ),
            ("anim.gif", Array("GIF89a".utf8), ["X-CSRF-Token": token], 415, "not a type"),
            (
                "broken.png", Array(png.prefix(5000)) + [UInt8](repeating: 7, count: 100), ["X-CSRF-Token": token], 400,
                "runs past the end"
            ),
            ("text.png", Array("not a photo at all".utf8), ["X-CSRF-Token": token], 400, "PNG"),
            ("forged.png", png, [:], 403, "token"),
            ("forged2.png", png, ["X-CSRF-Token": String(repeating: "0", count: 32)], 403, "token"),
            ("other-site.png", png, ["X-CSRF-Token": token, "Origin": "https://evil.example"], 403, "another site"),
            ("cross-site.png", png, ["X-CSRF-Token": token, "Sec-Fetch-Site": "cross-site"], 403, "another site"),
        ]
        for (name, body, headers, status, words) in refusals {
            let r = try b.request(
                "POST", "/upload?name=\(name)", body: body, headers: headers, contentType: "application/octet-stream")
            #expect(r.status == status && r.text.contains(words), "\(name): \(r.status) \(r.text)")
        }
        #expect(Set(d.visible) == ["guest photo.png"], "\(d.visible)")
        #expect(d.incoming.isEmpty, "\(d.incoming)")
        // The type the page read from the bytes names the photo; a claim the bytes belie is refused.
        let jpeg = makeJPEG(width: 32, height: 24, seed: 3)
        for (name, body, claim, status, saved) in [
            ("no-ending", makePNG(size: 3000, seed: 31), "image/png", 200, "no-ending.png"),
            ("holiday.png", jpeg, "image/jpeg", 200, "holiday.jpg"),
            ("lie.jpg", makePNG(size: 3000, seed: 32), "image/jpeg", 400, ""),
            ("kept-out.png", makePNG(size: 3000, seed: 33), "image/heic", 415, ""),
        ] {
            let r = try b.request(
                "POST", "/upload?name=\(name)", body: body, headers: ["X-CSRF-Token": token, "X-Photo-Type": claim],
                contentType: "application/octet-stream")
            #expect(r.status == status, "\(name): \(r.status) \(r.text)")
            if status == 200 {
                #expect(r.text.contains("\"name\":\"\(saved)\""), "\(r.text)")
                #expect(readFile(d.dir + "/" + saved) == body)
            }
        }
        #expect(Set(d.visible) == ["guest photo.png", "no-ending.png", "holiday.jpg"], "\(d.visible)")
        #expect(d.incoming.isEmpty, "\(d.incoming)")
        // A change without its token is refused and changes nothing.
        let forged = try b.request("POST", "/photo/1/note", body: Array("note=forged".utf8))
        #expect(forged.status == 403)
        let changed = try b.request("POST", "/photo/1/note", body: Array("note=kept&csrf=\(token)".utf8))
        #expect(changed.status == 303 && changed.head?.header("location") == "/photo/1")
        #expect(try listed(d)[0]["Note"] as? String == "kept")
        // With its token but from another site's page: refused, unchanged.
        let elsewhere = try b.request(
            "POST", "/photo/1/note", body: Array("note=evil&csrf=\(token)".utf8),
            headers: ["Origin": "https://evil.example"])
        #expect(elsewhere.status == 403 && elsewhere.head?.header("connection") == "close")
        #expect(try listed(d)[0]["Note"] as? String == "kept")
        #expect(try b.request("POST", "/photo/1/rate", body: Array("rating=9&csrf=\(token)".utf8)).status == 409)
        #expect(try b.request("POST", "/photo/1/rate", body: Array("rating=5&csrf=\(token)".utf8)).status == 303)
        #expect(
            try b.request("POST", "/photo/1/rename", body: Array("name=..%2F..%2Fescape.png&csrf=\(token)".utf8)).status
                != 303)
        #expect(try listed(d)[0]["Rating"] as? Int == 5)
        #expect(Set(d.visible) == ["guest photo.png", "no-ending.png", "holiday.jpg"])
        // A chunked body (as macOS's WebDAV client sends, with X-Expected-Entity-Length) is taken;
        // one that does not say its length is spooled, checked against the limit as it comes (issue 55).
        let chunkedPNG = makePNG(size: 30_000, seed: 10)
        let chunked = try b.request(
            "POST", "/upload?name=chunked.png", body: chunkedPNG,
            headers: ["X-CSRF-Token": token, "X-Expected-Entity-Length": "\(chunkedPNG.count)"], chunked: 7000,
            contentType: "application/octet-stream")
        #expect(
            chunked.status == 200 && chunked.text == #"{"duplicate":false,"name":"chunked.png"}"#, "\(chunked.text)")
        #expect(readFile(d.dir + "/chunked.png") == chunkedPNG)
        let unsizedPNG = makePNG(size: 30_000, seed: 14)
        let unsized = try b.request(
            "POST", "/upload?name=unsized.png", body: unsizedPNG, headers: ["X-CSRF-Token": token], chunked: 7000,
            contentType: "application/octet-stream")
        #expect(
            unsized.status == 200 && unsized.text == #"{"duplicate":false,"name":"unsized.png"}"#, "\(unsized.text)")
        #expect(readFile(d.dir + "/unsized.png") == unsizedPNG)
        let tooBig = try b.request(
            "POST", "/upload?name=too-big.png", body: makePNG(size: 150_000, seed: 11),
            headers: ["X-CSRF-Token": token],
            chunked: 7000, contentType: "application/octet-stream")
        #expect(tooBig.status == 413 && tooBig.text.contains("over this receiver's limit"), "\(tooBig.text)")
        #expect(!d.visible.contains("too-big.png"))
        #expect(d.incoming.isEmpty, "\(d.incoming)")
    }

    @Test(
        "curl sends the upload page's route a body of undeclared length from a pipe (Transfer-Encoding: chunked, no length): kept byte for byte; over max-file-size 413",
        .enabled(if: haveProgram("curl")))
    func curlUndeclared() throws {
        let d = try DaemonProcess.withWeb(["--max-file-size", "1000000"])
        let b = try WebBrowser(port: d.webPort)
        try b.logIn(d, name: "curl")
        let token = try b.csrf()
        let work = makeTemporaryDirectory("ptk-web-undeclared")
        defer { removeTree(work) }
        let curl = findProgram("curl") ?? "/usr/bin/curl"
        func post(_ name: String, _ bytes: [UInt8]) throws -> (status: Int, body: String) {
            writeFile(work + "/in", bytes)
            // A shell only to give curl the file as its standard input (a pipe: curl cannot know its length).
            let r = try run(
                "/bin/sh",
                [
                    "-c", "cat \"$PTK_STDIN\" | exec \"$0\" \"$@\"", curl, "-sS", "--cacert", d.webCertificate,
                    "-X", "POST", "-T", "-", "-H", "Transfer-Encoding: chunked", "-H",
                    "Cookie: __Host-ptk=\(b.cookie ?? "")",
                    "-H", "X-CSRF-Token: \(token)", "-o", work + "/out", "-w", "%{http_code}",
                    "https://127.0.0.1:\(d.webPort)/upload?name=\(name)",
                ],
                timeout: 60, absolute: true, environment: ["PTK_STDIN": work + "/in"])
            return (Int(r.stdout) ?? 0, String(decoding: readFile(work + "/out") ?? [], as: UTF8.self) + r.stderr)
        }
        let jpeg = makeJPEG(width: 600, height: 400, seed: 12)
        let kept = try post("piped.jpg", jpeg)
        #expect(kept.status == 200 && kept.body == #"{"duplicate":false,"name":"piped.jpg"}"#, "\(kept)")
        #expect(readFile(d.dir + "/piped.jpg") == jpeg)
        let big = try post("big.png", makePNG(size: 1_500_000, seed: 13))
        #expect(big.status == 413, "\(big)")
        #expect(Set(d.visible) == ["piped.jpg"], "\(d.visible)")
        #expect(d.incoming.isEmpty, "\(d.incoming)")
        #expect(d.log.contains("saved \"piped.jpg\""), "\(d.log)")
    }

    @Test(
        "request heads over the limit get 431; a slow head gets 408 at its deadline, holding a session slot until then")
    func heads() throws {
        // The deadline leaves the third request time for its own handshake on a loaded machine:
        // at 2 s, CI's parallel suites once made it land after the slow heads' 408 (200, not 429).
        let d = try DaemonProcess.withWeb(["--handshake-timeout", "8", "--max-sessions-per-address", "2"])
        let b = try WebBrowser(port: d.webPort)
        let big = try b.request("GET", "/", headers: ["X-Filler": String(repeating: "a", count: 100_000)])
        #expect(big.status == 431, "\(big.status)")
        // Two connections that send half a head hold both of this address's slots...
        let slow = try (0..<2).map { _ in try b.connect() }
        for c in slow { try c.write(Array("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ".utf8)) }
        usleep(300_000)
        let third = try b.request("GET", "/login")
        #expect(third.status == 429, "\(third.status)")
        // ... until their deadline: 408, and the slots are free again.
        for c in slow {
            let r = try c.readResponse(timeout: 20)
            #expect(r.status == 408, "\(r.status)")
        }
        #expect(eventually(5) { (try? b.request("GET", "/login").status) == 200 })
        #expect(d.log.contains("request not finished within the timeout; answered 408"))
    }
}
