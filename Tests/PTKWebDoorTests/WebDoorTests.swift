import Foundation
import PTKDigest
import PTKDoor
import PTKLibrary
import PTKSystem
import PTKTestSupport
import PTKTestTags
import PTKVocabulary
import PTKWeb
import Testing

@testable import PTKHTTP
@testable import PTKWebDoor

/// The web interface's route table, and every route driven through a scripted connection by
/// `RouteHarness` (no daemon, no socket, no TLS: `WebFixture`): who may ask, what each
/// answers, uploads (Content-Length, chunked, cut short, slow) into the real store.
@Suite("Web door: routes over a scripted connection", .tags(.unit))
struct WebDoorTests {
    // MARK: The route table

    /// The route pattern and method a request finds, or the router's refusal.
    func route(_ method: String, _ target: String) -> String {
        switch WebDoor.routes.match(method: method, target: target) {
        case .found(let route, let parameters):
            return ([route.path.text] + parameters.values.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" })
                .joined(separator: " ")
        case .notFound: return "404"
        case .methodNotAllowed(let allow): return "405 " + allow
        }
    }

    @Test("every page, file and change is found by its method and target, with its captures")
    func routes() throws {
        let secret = "0123456789abcdef0123456789abcdef"
        let cases: [(String, String, String)] = [
            ("GET", "/", "/"), ("HEAD", "/", "/"), ("GET", "/?sender=a&rating=3", "/"),
            ("GET", "/login", "/login"), ("POST", "/login", "/login"),
            ("GET", "/login/" + secret, "/login/{secret} secret=" + secret),
            ("HEAD", "/login/" + secret + "?x=1", "/login/{secret} secret=" + secret),
            ("POST", "/logout", "/logout"), ("GET", "/static/app.css", "/static/{asset} asset=app.css"),
            ("GET", "/static/app.js", "/static/{asset} asset=app.js"), ("GET", "/upload", "/upload"),
            ("POST", "/upload?name=a.png", "/upload"),
            ("GET", "/photo/42", "/photo/{id} id=42"),
            ("GET", "/photo/42/original?download=1", "/photo/{id}/original id=42"),
            ("GET", "/photo/7/thumbnail?v=abc", "/photo/{id}/thumbnail id=7"),
            ("GET", "/photo/7/package", "/photo/{id}/package id=7"),
            ("GET", "/photo/7/delete", "/photo/{id}/delete id=7"),
            ("POST", "/photo/7/delete", "/photo/{id}/delete id=7"),
            ("POST", "/photo/7/rename", "/photo/{id}/rename id=7"), ("POST", "/photo/7/note", "/photo/{id}/note id=7"),
            ("POST", "/photo/7/rate", "/photo/{id}/rate id=7"),
            ("GET", "/photo/7/thumbnail/180?v=abc", "/photo/{id}/thumbnail/{side} id=7 side=180"),
            ("HEAD", "/photo/7/thumbnail/360", "/photo/{id}/thumbnail/{side} id=7 side=360"),
            ("GET", "/photo/7/thumbnail/256", "404"), ("GET", "/photo/7/thumbnail/0180", "404"),
            ("GET", "/photo/7/thumbnail/", "404"),
            ("GET", "/photo/7/preview?v=abc", "/photo/{id}/preview id=7"),
            ("GET", "/view/7?sender=a&rating=3", "/view/{id} id=7"),
            ("GET", "/view/", "404"), ("GET", "/view/x", "404"),
        ]
        for (method, target, expected) in cases {
            #expect(route(method, target) == expected, "\(method) \(target)")
        }
    }

    @Test("traversal, encoded slashes, odd ids and combining marks reach nothing (404)")
    func hostileTargets() throws {
        for target in [
            "/photo/../etc/passwd", "/photo/..%2f..%2fetc%2fpasswd", "/photo/%2e%2e/original", "/photo/1%2foriginal",
            "/photo/01", "/photo/-1", "/photo/+1", "/photo/1.0", "/photo/9999999999999999999", "/photo/1/original/x",
            "/photo//original", "//", "/static/../app.css", "/static/app.css%00", "/static/APP.CSS", "/static/",
            "photo/1",
            "", "*", "/login/0123456789ABCDEF0123456789ABCDEF", "/login/0123", "/login/../..", "/photo/1/rename/..",
            "/%2e%2e/%2e%2e/etc/passwd", "/photo/1/original%2f..%2f..%2fpasswd", "http://evil/photo/1",
            "/\u{301}", "/photo/7/\u{301}", "/\u{600}/photo/7",
        ] {
            #expect(route("GET", target) == "404", "\(target)")
        }
        #expect(route("GET", "/login?\u{301}") == "/login")
        #expect(route("GET", "/photo/7?\u{301}x") == "/photo/{id} id=7")
    }

    @Test("a known path with another method is 405 with the methods it takes; methods are case-sensitive")
    func methods() throws {
        #expect(route("DELETE", "/photo/1") == "405 GET, HEAD")
        #expect(route("GET", "/photo/1/rename") == "405 POST")
        #expect(route("GET", "/logout") == "405 POST")
        #expect(route("PUT", "/upload") == "405 GET, HEAD, POST")
        #expect(route("PUT", "/photo/1/delete") == "405 GET, HEAD, POST")
        #expect(route("POST", "/static/app.js") == "405 GET, HEAD")
        #expect(route("POST", "/login/0123456789abcdef0123456789abcdef") == "405 GET, HEAD")
        #expect(route("get", "/login/0123456789abcdef0123456789abcdef") == "405 GET, HEAD")
    }

    @Test(
        "only the login page, logging in, static files and a device's login flow start and poll are open; every change needs the CSRF token"
    )
    func traits() throws {
        let open = WebDoor.routes.entries.filter { $0.traits.contains(.open) }.map {
            $0.methods.map(\.name).joined(separator: ",") + " " + $0.path.text
        }
        #expect(
            open.sorted()
                == [
                    "GET,HEAD /login", "GET,HEAD /static/{asset}", "GET /login/{secret}", "HEAD /login/{secret}",
                    "POST /login", "POST /index.php/login/v2", "POST /index.php/login/v2/poll",
                ].sorted())
        let changes = WebDoor.routes.entries.filter { $0.traits.contains(.change) }.map(\.path.text)
        #expect(
            changes.sorted() == [
                "/index.php/login/v2/flow/{secret}", "/logout", "/photo/{id}/delete", "/photo/{id}/note",
                "/photo/{id}/rate", "/photo/{id}/rename", "/upload",
            ])
    }

    // MARK: Who may ask

    @Test(
        "without a session every page but the login's is the login page (401), with the security headers; a 404 tells nothing more"
    )
    func loginFirst() throws {
        let f = try WebFixture()
        for target in ["/", "/photo/1", "/nope", "/upload"] {
            let e = f.run([request("GET", target)])
            #expect(e.first.status == 401, "\(target): \(e.first)")
            #expect(e.first.text.contains("<h1>Log in</h1>"), "\(target)")
            #expect(e.first.header("content-security-policy")?.contains("default-src 'self'") == true)
            #expect(e.first.header("x-frame-options") == "DENY")
        }
        let ended = f.run([request("GET", "/", [("Cookie", "\(WebDoor.cookieName)=00000000000000000000000000000000")])])
        #expect(ended.first.status == 401 && ended.first.text.contains("Your session has ended"))
        let css = f.run([request("GET", "/static/app.css")])
        #expect(css.first.status == 200 && css.first.header("content-type") == "text/css; charset=utf-8")
        #expect(css.first.body == WebAsset.css.bytes)
    }

    @Test(
        "with a session: the gallery, the upload page, 404 and 405 from the router in the page's terms, HEAD without a body"
    )
    func pages() throws {
        let f = try WebFixture()
        let (cookie, _) = try f.login()
        let e = f.run([
            request("GET", "/", [("Cookie", cookie)]), request("GET", "/upload", [("Cookie", cookie)]),
            request("GET", "/nope", [("Cookie", cookie)]), request("DELETE", "/photo/1", [("Cookie", cookie)]),
        ])
        #expect(e.responses.map(\.status) == [200, 200, 404, 405], "\(e.responses)")
        #expect(e.responses[1].text.contains("upload"))
        #expect(e.responses[2].text.contains("No such page"))
        #expect(
            e.responses[3].header("allow") == "GET, HEAD" && e.responses[3].text.contains("DELETE is not allowed here"))
        let head = f.run([request("HEAD", "/", [("Cookie", cookie)])], headOnly: true)
        #expect(head.first.status == 200 && head.raw.count < 2000, "\(head.first)")
        #expect(Int(head.first.header("content-length") ?? "") ?? 0 > 100)
    }

    @Test(
        "logging in: a wrong password is 401 and the third from an address 429; the right one a session; a form from another site 403"
    )
    func passwordLogin() throws {
        let f = try WebFixture()
        try f.door.access.setPassword("right horse", cost: Scrypt(n: 1 << 10, r: 8, p: 1))
        let form = { (password: String) in Array("name=ann&password=\(password)".utf8) }
        let login = { (password: String, headers: [(String, String)]) in
            request(
                "POST", "/login", [("Content-Type", "application/x-www-form-urlencoded")] + headers,
                body: form(password))
        }
        let other = f.run([login("right+horse", [("Origin", "https://evil.example")])])
        #expect(other.first.status == 403, "\(other.first)")
        let right = f.run([login("right+horse", [])])
        #expect(right.first.status == 303 && right.first.header("location") == "/", "\(right.first)")
        let cookie = try #require(right.first.header("set-cookie"))
        #expect(
            cookie.hasPrefix(WebDoor.cookieName + "=") && cookie.contains("HttpOnly")
                && cookie.contains("SameSite=Strict"))
        let wrong = f.run([login("no", []), login("no", []), login("no", []), login("right+horse", [])])
        #expect(wrong.responses.map(\.status) == [401, 401, 429, 429], "\(wrong.responses)")
    }

    @Test("a one-time link: HEAD spends nothing, GET logs in once, a second GET is 401")
    func linkLogin() throws {
        let f = try WebFixture()
        let secret = try f.door.access.createLink(name: "bob")
        let head = f.run([request("HEAD", "/login/" + secret)], headOnly: true)
        #expect(head.first.status == 200)
        let get = f.run([request("GET", "/login/" + secret)])
        #expect(get.first.status == 303 && get.first.header("set-cookie") != nil, "\(get.first)")
        let again = f.run([request("GET", "/login/" + secret)])
        #expect(again.first.status == 401 && again.first.text.contains("used already"))
    }

    @Test(
        "changes: from another site 403 unread and closed; without the token 403 and the connection goes on; with it done"
    )
    func logoutAndTokens() throws {
        let f = try WebFixture()
        let (cookie, csrf) = try f.login()
        let form = [("Cookie", cookie), ("Content-Type", "application/x-www-form-urlencoded")]
        let cross = f.run([
            request("POST", "/logout", form + [("Sec-Fetch-Site", "cross-site")], body: Array("csrf=\(csrf)".utf8)),
            request("GET", "/", [("Cookie", cookie)]),
        ])
        #expect(cross.responses.map(\.status) == [403], "\(cross.responses)")
        #expect(cross.first.header("connection") == "close")
        let noToken = f.run([
            request("POST", "/logout", form, body: Array("csrf=wrong".utf8)), request("GET", "/", [("Cookie", cookie)]),
        ])
        #expect(noToken.responses.map(\.status) == [403, 200], "\(noToken.responses)")
        let out = f.run([
            request("POST", "/logout", form + [("Origin", "https://ptk.test")], body: Array("csrf=\(csrf)".utf8)),
            request("GET", "/", [("Cookie", cookie)]),
        ])
        #expect(out.responses.map(\.status) == [303, 401], "\(out.responses)")
        #expect(out.first.header("set-cookie")?.contains("Max-Age=0") == true)
        let big = f.run([request("POST", "/logout", form, body: [UInt8](repeating: 0x61, count: WebDoor.formLimit + 1))]
        )
        #expect(big.first.status == 413 && big.first.header("connection") == "close")
    }

    // MARK: Uploads

    func upload(
        _ f: WebFixture, name: String, body: [UInt8], chunked: [Int]? = nil, expectedLength: Bool = true,
        cookie: String, csrf: String?,
        readSize: Int = 1 << 20, cut: Int? = nil, whenEmpty: ScriptedStream.WhenEmpty = .close
    ) -> RouteHarness<WebContext>.Exchange {
        var headers = [("Cookie", cookie), ("Content-Type", "image/png")]
        if let csrf { headers.append(("X-CSRF-Token", csrf)) }
        var bytes = request(
            "POST", "/upload?name=\(name)", headers, body: body, chunked: chunked, expectedLength: expectedLength)
        if let cut { bytes = Array(bytes.prefix(cut)) }
        return f.run([bytes], readSize: readSize, whenEmpty: whenEmpty)
    }

    @Test(
        "an upload with Content-Length, and a chunked one fed a byte at a time, are kept byte for byte; a second request follows on the connection"
    )
    func uploads() throws {
        let f = try WebFixture()
        let (cookie, csrf) = try f.login()
        let a = makePNG(size: 3000, seed: 1)
        let b = makePNG(size: 5000, seed: 2)
        let plain = upload(f, name: "a.png", body: a, cookie: cookie, csrf: csrf)
        #expect(plain.first.status == 200 && plain.first.text.contains("\"name\":\"a.png\""), "\(plain.first)")
        let chunked = upload(
            f, name: "b.png", body: b, chunked: [1, 700, 3000], cookie: cookie, csrf: csrf, readSize: 1)
        #expect(chunked.first.status == 200 && chunked.first.text.contains("b.png"), "\(chunked.first)")
        let kept = f.kept()
        #expect(kept.count == 2, "\(kept)")
        #expect(kept.compactMap { readFile(f.photos + "/" + $0) }.sorted { $0.count < $1.count } == [a, b])
        #expect(f.incoming().isEmpty)
    }

    @Test(
        "refused uploads: no length and not chunked 411, chunked without a length over the limit 413 as it comes, over the limit 413, a GIF 415, no token 403, no session 401 — each closes unread"
    )
    func refusedUploads() throws {
        let f = try WebFixture { $0.maxFileSize = 4000 }
        let (cookie, csrf) = try f.login()
        let png = makePNG(size: 3000)
        let noLength = f.run([
            Array(
                "POST /upload?name=a.png HTTP/1.1\r\nHost: ptk.test\r\nCookie: \(cookie)\r\nX-CSRF-Token: \(csrf)\r\n\r\n"
                    .utf8)
        ])
        let cases: [(RouteHarness<WebContext>.Exchange, Int)] = [
            (noLength, 411),
            (
                upload(
                    f, name: "a.png", body: makePNG(size: 5000), chunked: [100], expectedLength: false, cookie: cookie,
                    csrf: csrf), 413
            ),
            (upload(f, name: "a.png", body: makePNG(size: 5000), cookie: cookie, csrf: csrf), 413),
            (upload(f, name: "a.gif", body: Array("GIF89a".utf8), cookie: cookie, csrf: csrf), 415),
            (upload(f, name: "a.png", body: png, cookie: cookie, csrf: nil), 403),
            (upload(f, name: "a.png", body: png, cookie: "x=y", csrf: csrf), 401),
        ]
        for (e, status) in cases {
            #expect(e.first.status == status, "\(e.first)")
            #expect(e.first.header("connection") == "close")
            #expect(e.first.text.contains("\"message\""))
        }
        #expect(f.kept().isEmpty && f.incoming().isEmpty)
    }

    @Test(
        "a chunked upload that does not say its length (curl -T -, scripts) is spooled and kept byte for byte, fed a byte at a time too; the connection goes on; not a PNG 400; nothing left in .incoming"
    )
    func undeclaredUploads() throws {
        let f = try WebFixture { $0.maxFileSize = 40_000 }
        let (cookie, csrf) = try f.login()
        let a = makePNG(size: 30_000, seed: 3)
        let b = makePNG(size: 2000, seed: 4)
        let first = upload(
            f, name: "a.png", body: a, chunked: [1000, 7, 20_000], expectedLength: false, cookie: cookie, csrf: csrf)
        #expect(first.first.status == 200 && first.first.text.contains("\"name\":\"a.png\""), "\(first.first)")
        var bytes = request(
            "POST", "/upload?name=b.png", [("Cookie", cookie), ("X-CSRF-Token", csrf)], body: b, chunked: [500])
        bytes += request("GET", "/", [("Cookie", cookie)])
        let slow = f.run([bytes], readSize: 1)
        #expect(slow.responses.map(\.status) == [200, 200], "\(slow.responses)")
        #expect(f.kept().compactMap { readFile(f.photos + "/" + $0) }.sorted { $0.count < $1.count } == [b, a])
        let junk = upload(
            f, name: "j.png", body: [UInt8](repeating: 7, count: 3000), chunked: [1000], expectedLength: false,
            cookie: cookie, csrf: csrf)
        #expect(junk.first.status == 400, "\(junk.first)")
        #expect(f.kept().count == 2 && f.incoming().isEmpty, "\(f.kept()) \(f.incoming())")
    }

    @Test(
        "bytes that are not a PNG are 400 (closing when refused mid-body); a PNG that ends early 400 after its body, and the connection goes on; a body cut short or too slow keeps nothing"
    )
    func badBodies() throws {
        let f = try WebFixture()
        let (cookie, csrf) = try f.login()
        let png = makePNG(size: 4000)
        let junk = f.run([
            request(
                "POST", "/upload?name=x.png", [("Cookie", cookie), ("X-CSRF-Token", csrf)],
                body: [UInt8](repeating: 7, count: 2000))
                + request("GET", "/", [("Cookie", cookie)])
        ])
        #expect(
            junk.responses.map(\.status) == [400] && junk.first.header("connection") == "close", "\(junk.responses)")
        var bytes = request(
            "POST", "/upload?name=x.png", [("Cookie", cookie), ("X-CSRF-Token", csrf)], body: Array(png.dropLast(12)))
        bytes += request("GET", "/", [("Cookie", cookie)])
        let noEnd = f.run([bytes])
        #expect(noEnd.responses.map(\.status) == [400, 200], "\(noEnd.responses)")
        let cut = upload(f, name: "c.png", body: png, cookie: cookie, csrf: csrf, cut: 600)
        #expect(cut.responses.isEmpty, "\(cut.responses)")
        let cutChunked = upload(f, name: "c.png", body: png, chunked: [500], cookie: cookie, csrf: csrf, cut: 900)
        #expect(cutChunked.responses.isEmpty, "\(cutChunked.responses)")
        let slow = upload(f, name: "s.png", body: png, cookie: cookie, csrf: csrf, cut: 700, whenEmpty: .silent)
        #expect(slow.first.status == 408, "\(slow.first)")
        #expect(f.kept().isEmpty && f.incoming().isEmpty, "\(f.kept()) \(f.incoming())")
    }

    // MARK: A photo's routes

    @Test(
        "a photo's page, original (whole and a Range), package, delete page, and rename, note, rate and delete with the form's token"
    )
    func photoRoutes() throws {
        let f = try WebFixture()
        let (cookie, csrf) = try f.login()
        let png = makePNG(size: 3000)
        #expect(upload(f, name: "p.png", body: png, cookie: cookie, csrf: csrf).first.status == 200)
        let library = try PhotoLibrary(directory: f.photos, create: false)
        _ = try library.reconcile()
        let id = try #require(try library.all().first?.id)
        let c = [("Cookie", cookie)]
        let e = f.run([
            request("GET", "/photo/\(id)", c), request("GET", "/photo/\(id)/original", c),
            request("GET", "/photo/\(id)/original?download=1", c + [("Range", "bytes=0-9")]),
            request("GET", "/photo/\(id)/package", c), request("GET", "/photo/\(id)/delete", c),
            request("GET", "/photo/\(id + 1000)", c), request("GET", "/photo/\(id)/thumbnail", c),
        ])
        #expect(e.responses.map(\.status) == [200, 200, 206, 200, 200, 404, 200], "\(e.responses.map(\.status))")
        // The gallery's largest thumbnail: a PNG, the photo (1x1) being no larger than a thumbnail (issue 58).
        #expect(
            e.responses[6].header("content-type") == "image/png"
                && e.responses[6].body.prefix(4) == [0x89, 0x50, 0x4E, 0x47])
        #expect(e.responses[1].body == png && e.responses[1].header("content-type") == "image/png")
        #expect(
            e.responses[2].body == Array(png.prefix(10))
                && e.responses[2].header("content-range") == "bytes 0-9/\(png.count)")
        #expect(e.responses[2].header("content-disposition")?.hasPrefix("attachment; filename=\"p.png\"") == true)
        // Positions past Int64 (RFC 9110 14.1.2): a last position is the end, a first position past it 416.
        let huge = f.run([
            request("GET", "/photo/\(id)/original", c + [("Range", "bytes=0-9223372036854775807")]),
            request("GET", "/photo/\(id)/original", c + [("Range", "bytes=9223372036854775807-")]),
        ])
        #expect(huge.responses.map(\.status) == [206, 416], "\(huge.responses.map(\.status))")
        #expect(
            huge.responses.first?.body == png
                && huge.responses.first?.header("content-range") == "bytes 0-\(png.count - 1)/\(png.count)")
        #expect(
            e.responses[3].header("content-type") == "application/zip" && e.responses[3].body.prefix(2) == [0x50, 0x4B])
        let form = c + [("Content-Type", "application/x-www-form-urlencoded")]
        let changes = f.run([
            request("POST", "/photo/\(id)/note", form, body: Array("csrf=\(csrf)&note=hello".utf8)),
            request("POST", "/photo/\(id)/rate", form, body: Array("csrf=\(csrf)&rating=4".utf8)),
            request("POST", "/photo/\(id)/rate", form, body: Array("csrf=\(csrf)&rating=9".utf8)),
            request("POST", "/photo/\(id)/rename", form, body: Array("csrf=\(csrf)&name=q.png".utf8)),
            request("POST", "/photo/\(id)/rename", form, body: Array("csrf=nope&name=r.png".utf8)),
        ])
        #expect(changes.responses.map(\.status) == [303, 303, 409, 303, 403], "\(changes.responses)")
        #expect(f.kept() == ["q.png"])
        let photo = try #require(try library.photo(id: id))
        #expect(photo.note == "hello" && photo.rating == 4)
        let delete = f.run([request("POST", "/photo/\(id)/delete", form, body: Array("csrf=\(csrf)".utf8))])
        #expect(delete.first.status == 303 && delete.first.header("location") == "/")
        #expect(f.kept().isEmpty)
    }

    /// The fixture's library with every photo the door saved indexed (thumbnails made).
    func indexed(_ f: WebFixture) throws -> PhotoLibrary {
        let library = try PhotoLibrary(directory: f.photos, create: false)
        _ = try library.reconcile()
        _ = try library.index(ids: try library.all().map(\.id))
        return library
    }

    @Test("the pages' image sizes are the thumbnailer's")
    func sides() {
        #expect(WebPages.gallerySides == Thumbnailer.gallerySides)
        #expect(WebPages.previewSide == Thumbnailer.previewSide)
    }

    @Test(
        "thumbnails by side (180 and 360, no other) as the library made them, cacheable with ?v=; a preview 404 until made; the photo page names no host path"
    )
    func images() throws {
        let f = try WebFixture()
        let (cookie, csrf) = try f.login()
        #expect(upload(f, name: "a.png", body: makePNG(size: 3000), cookie: cookie, csrf: csrf).first.status == 200)
        let library = try indexed(f)
        let photo = try #require(try library.all().first)
        let id = photo.id
        let c = [("Cookie", cookie)]
        let e = f.run([
            request("GET", "/photo/\(id)/thumbnail/180?v=abc", c), request("GET", "/photo/\(id)/thumbnail/360", c),
            request("GET", "/photo/\(id)/thumbnail", c), request("GET", "/photo/\(id)/thumbnail/256", c),
            request("GET", "/photo/\(id)/preview?v=abc", c), request("GET", "/photo/\(id + 1000)/thumbnail/180", c),
            request("GET", "/photo/\(id)", c),
        ])
        #expect(e.responses.map(\.status) == [200, 200, 200, 404, 404, 404, 200], "\(e.responses.map(\.status))")
        for (i, side) in [(0, 180), (1, 360), (2, 360)] {
            let made = try #require(try library.thumbnail(of: photo, side: side))
            #expect(
                e.responses[i].body == made.bytes && e.responses[i].header("content-type") == made.type.mediaType,
                "side \(side)")
        }
        #expect(e.responses[0].header("cache-control") == "private, max-age=86400")
        #expect(e.responses[1].header("cache-control") == "no-cache")
        #expect(e.responses[4].text.contains("a.png has no preview"), "\(e.responses[4].text)")
        let page = e.responses[6].text
        #expect(page.contains("<tr><th>thumbnail</th><td>made") && page.contains("<tr><th>preview</th>"), "\(page)")
        #expect(!page.contains(".ptk/thumbnails") && !page.contains(f.photos + "/"))
        #expect(
            page.contains(
                "<tr><th>received</th><td><time datetime=\"\(photo.received.iso8601)\">\(photo.received.description)</time></td></tr>"
            ))
    }

    @Test(
        "the viewer links previous and next in the gallery's order under its filters (none at the ends), and closes to the photo's figure"
    )
    func viewer() throws {
        let f = try WebFixture()
        let (cookie, csrf) = try f.login()
        for (i, name) in ["a.png", "b.png", "c.png"].enumerated() {
            #expect(
                upload(
                    f, name: name, body: makePNG(size: 3000 + i * 100, seed: UInt64(i + 1)), cookie: cookie, csrf: csrf
                ).first.status == 200)
        }
        let library = try indexed(f)
        let order = try library.galleryPage(GalleryFilter(), after: nil, limit: 10).sections.flatMap(\.photos)
        try #require(order.count == 3)
        let (first, middle, last) = (order[0], order[1], order[2])
        _ = try library.setRating(middle.name, 4)
        // A sender no photo has: nothing matches, and the links keep it, encoded.
        let sender = "Anna & \"<co>\""
        let c = [("Cookie", cookie)]
        let e = f.run([
            request("GET", "/view/\(middle.id)", c), request("GET", "/view/\(first.id)", c),
            request("GET", "/view/\(last.id)", c),
            request("GET", "/view/\(middle.id)?rating=4", c),
            request("GET", "/view/\(first.id)?sender=\(percentEncode(sender))&rating=", c),
            request("GET", "/view/\(last.id + 1000)", c),
        ])
        #expect(e.responses.map(\.status) == [200, 200, 200, 200, 200, 404], "\(e.responses.map(\.status))")
        let link = { (which: String, id: Int64, query: String) in
            "<a id=\"\(which)\" class=\"step \(which)\" rel=\"\(which)\" href=\"/view/\(id)\(query)\""
        }
        let inMiddle = e.responses[0].text
        #expect(
            inMiddle.contains(link("prev", first.id, "")) && inMiddle.contains(link("next", last.id, "")), "\(inMiddle)"
        )
        #expect(inMiddle.contains("<a id=\"close\" class=\"close\" href=\"/#p\(middle.id)\""))
        #expect(
            !e.responses[1].text.contains("id=\"prev\"") && e.responses[1].text.contains(link("next", middle.id, "")))
        #expect(
            e.responses[2].text.contains(link("prev", middle.id, "")) && !e.responses[2].text.contains("id=\"next\""))
        // Only the middle photo is rated 4: alone under the filter, which its close link keeps.
        let rated = e.responses[3].text
        #expect(!rated.contains("id=\"prev\"") && !rated.contains("id=\"next\""))
        #expect(rated.contains("<a id=\"close\" class=\"close\" href=\"/?rating=4#p\(middle.id)\""))
        let bySender = e.responses[4].text
        #expect(!bySender.contains("id=\"next\"") && !bySender.contains("id=\"prev\"") && !bySender.contains("<co>"))
        #expect(bySender.contains("href=\"/?sender=Anna%20%26%20%22%3Cco%3E%22#p\(first.id)\""), "\(bySender)")
        // The gallery's figures open the viewer with the filters.
        let gallery = f.run([request("GET", "/?rating=4", c)]).first.text
        #expect(
            gallery.contains(
                "<figure id=\"p\(middle.id)\" class=\"small\" data-w=\"1\" data-h=\"1\"><a href=\"/view/\(middle.id)?rating=4\">"
            ),
            "\(gallery)")
    }

    @Test("a hostile name and sender stay text in the viewer")
    func hostileViewer() throws {
        let f = try WebFixture()
        let (cookie, csrf) = try f.login(name: "<script>alert(1)</script>")
        let name = "%3Cimg%20src%3Dx%20onerror%3Dalert(2)%3E.png"
        #expect(upload(f, name: name, body: makePNG(size: 3000), cookie: cookie, csrf: csrf).first.status == 200)
        let library = try indexed(f)
        let photo = try #require(try library.all().first)
        let sender = "<script>alert(3)</script>"
        let e = f.run([request("GET", "/view/\(photo.id)?sender=\(percentEncode(sender))", [("Cookie", cookie)])])
        #expect(e.first.status == 200)
        #expect(!e.first.text.contains("<script>") && !e.first.text.contains("<img src=x"), "\(e.first.text)")
        #expect(e.first.text.contains("&lt;img src=x onerror=alert(2)&gt;.png"))
        #expect(e.first.text.contains("href=\"/?sender=\(percentEncode(sender))#p\(photo.id)\""))
    }

    // MARK: Hostile heads

    @Test("a head over 16 KiB is 431, a bare LF 400, a request cut in its head 400 — each answered in HTML and closed")
    func hostileHeads() throws {
        let f = try WebFixture()
        let long = f.run([Array("GET / HTTP/1.1\r\nX: \(String(repeating: "a", count: 17 << 10))\r\n\r\n".utf8)])
        #expect(
            long.first.status == 431 && long.first.header("content-type")?.hasPrefix("text/html") == true,
            "\(long.first)")
        let bareLF = f.run([Array("GET / HTTP/1.1\nHost: x\n\n".utf8)])
        #expect(bareLF.first.status == 400)
        let cut = f.run([Array("GET / HTTP/1.1\r\nHost: x\r\n".utf8)])
        #expect(cut.first.status == 400 && cut.first.header("connection") == "close")
        #expect(cut.first.header("content-security-policy") != nil)
    }

    // MARK: Every route, pinned by status, headers and body

    /// The signed-in routes a browser may ask for, each with a method it takes (`ID` for a photo's id).
    static let signedInRoutes: [(String, String)] = [
        ("GET", "/"), ("HEAD", "/"), ("GET", "/upload"), ("POST", "/upload?name=a.png"), ("POST", "/logout"),
        ("GET", "/photo/ID"),
        ("GET", "/photo/ID/original"), ("GET", "/photo/ID/thumbnail"), ("GET", "/photo/ID/thumbnail/180"),
        ("GET", "/photo/ID/preview"),
        ("GET", "/view/ID"), ("GET", "/photo/ID/package"), ("GET", "/photo/ID/delete"), ("POST", "/photo/ID/delete"),
        ("POST", "/photo/ID/rename"), ("POST", "/photo/ID/note"), ("POST", "/photo/ID/rate"),
    ]

    @Test(
        "every signed-in route, and a path that does not exist, answers the login page (401) without a session; a form's body is read and the connection goes on"
    )
    func everyRouteNeedsASession() throws {
        let f = try WebFixture()
        let login = f.door.pages.login(hasPassword: false)
        for (method, target) in Self.signedInRoutes + [("GET", "/nope"), ("DELETE", "/photo/1")] {
            let path = target.replacingOccurrences(of: "ID", with: "1")
            let body: [UInt8] = method == "POST" ? Array("csrf=x&name=y".utf8) : []
            let e = f.run(
                [
                    request(method, path, [("Content-Type", "application/x-www-form-urlencoded")], body: body),
                    request("GET", "/static/app.js"),
                ], headOnly: method == "HEAD")
            if path.hasPrefix("/upload") && method == "POST" {
                // The upload page's script reads JSON; the body, perhaps large, is not read.
                #expect(
                    e.statuses == [401] && e.first.text == "{\"message\":\"log in first\"}",
                    "\(method) \(path): \(e.responses)")
                #expect(e.first.header("content-type") == "application/json" && e.first.header("connection") == "close")
                continue
            }
            if method == "HEAD" {
                #expect(e.statuses == [401, 200], "\(method) \(path): \(e.responses)")
                continue
            }
            #expect(e.statuses == [401, 200], "\(method) \(path): \(e.responses)")
            #expect(e.first.text == login, "\(method) \(path)")
            #expect(
                e.first.header("content-type") == "text/html; charset=utf-8"
                    && e.first.header("cache-control") == "no-store")
            #expect(e.first.header("connection") == "keep-alive" && e.first.header("allow") == nil)
            #expect(e.responses[1].body == WebAsset.js.bytes)
        }
    }

    @Test(
        "the open routes: static files (no-cache, their types, HEAD without a body), the login page; with a session the login page sends you home"
    )
    func openRoutes() throws {
        let f = try WebFixture()
        let e = f.run(
            [
                request("GET", "/static/app.js"), request("HEAD", "/static/app.css"), request("GET", "/login"),
                request("HEAD", "/login"),
            ],
            headOnly: false)
        #expect(
            e.statuses.first == 200 && e.first.body == WebAsset.js.bytes
                && e.first.header("content-type") == WebAsset.js.contentType)
        #expect(e.first.header("cache-control") == "no-cache" && e.first.header("x-content-type-options") == "nosniff")
        // The HEAD's answer is a head alone, its length the file's.
        #expect(
            e.text.contains(
                "HTTP/1.1 200 OK\r\nContent-Length: \(WebAsset.css.bytes.count)\r\nContent-Type: text/css; charset=utf-8\r\n"
            ))
        let (cookie, _) = try f.login()
        let home = f.run(
            [
                request("GET", "/login", [("Cookie", cookie)]),
                request("HEAD", "/login/" + String(repeating: "a", count: 32), [("Cookie", cookie)]),
            ],
            headOnly: true)
        #expect(
            home.statuses == [303, 303]
                && home.responses.allSatisfy { $0.header("location") == "/" && $0.header("content-length") == "0" })
        let page = f.run([request("GET", "/login")])
        #expect(page.first.status == 200 && page.first.text == f.door.pages.login(hasPassword: false))
        #expect(
            page.first.header("content-security-policy") == WebDoor.securityHeaders[0].1
                && page.first.header("referrer-policy") == "no-referrer")
    }

    @Test(
        "the router's 404 and 405 and a missing photo, in the page's terms for whoever is logged in; 405 carries Allow and no Cache-Control"
    )
    func refusalsAsPages() throws {
        let f = try WebFixture()
        let (cookie, csrf) = try f.login(name: "zoë")
        let viewer = WebPages.Viewer(name: "zoë", csrf: csrf)
        let c = [("Cookie", cookie)]
        let e = f.run([
            request("GET", "/nope", c), request("PUT", "/upload", c), request("GET", "/photo/99", c),
            request("GET", "/photo/99/original", c),
        ])
        #expect(e.statuses == [404, 405, 404, 404], "\(e.responses)")
        #expect(e.responses[0].text == f.door.pages.error("No such page", viewer: viewer))
        #expect(e.responses[0].header("cache-control") == "no-store")
        #expect(e.responses[1].text == f.door.pages.error("PUT is not allowed here", viewer: viewer))
        #expect(e.responses[1].header("allow") == "GET, HEAD, POST" && e.responses[1].header("cache-control") == nil)
        #expect(
            e.responses[2].text == f.door.pages.error("No such photo", viewer: viewer)
                && e.responses[3].text == e.responses[2].text)
        #expect(
            e.responses.allSatisfy { $0.header("connection") == "keep-alive" && $0.header("x-frame-options") == "DENY" }
        )
    }

    @Test(
        "with the library off, the gallery and a photo's routes are 409 with the library's reason; uploads still work")
    func libraryOff() throws {
        let f = try WebFixture { $0.library = false }
        let (cookie, csrf) = try f.login()
        let e = f.run([request("GET", "/", [("Cookie", cookie)]), request("GET", "/photo/1", [("Cookie", cookie)])])
        #expect(e.statuses == [409, 409], "\(e.responses)")
        #expect(e.first.text.contains("the photo library is off on this receiver (library = off): uploads only"))
        let up = upload(f, name: "a.png", body: makePNG(size: 3000), cookie: cookie, csrf: csrf)
        #expect(up.first.status == 200 && f.kept() == ["a.png"])
    }

    @Test("an upload's answer is JSON, not cached; a name taken gets the next free one; refusals name their reason")
    func uploadAnswers() throws {
        let f = try WebFixture()
        let (cookie, csrf) = try f.login()
        let png = makePNG(size: 3000)
        let first = upload(f, name: "a.png", body: png, cookie: cookie, csrf: csrf)
        #expect(first.first.text == "{\"duplicate\":false,\"name\":\"a.png\"}", "\(first.first)")
        #expect(
            first.first.header("content-type") == "application/json"
                && first.first.header("cache-control") == "no-store")
        #expect(first.first.header("connection") == "keep-alive")
        let again = upload(f, name: "a.png", body: png, cookie: cookie, csrf: csrf)
        // A browser gives no SHA-256: the same name again is kept beside the first, never over it.
        #expect(again.first.text == "{\"duplicate\":false,\"name\":\"a (2).png\"}", "\(again.first)")
        let noName = f.run([request("POST", "/upload", [("Cookie", cookie), ("X-CSRF-Token", csrf)], body: png)])
        #expect(noName.first.status == 400 && noName.first.text == "{\"message\":\"the upload has no name (?name=)\"}")
        #expect(noName.first.header("connection") == "close")
        let cross = f.run([
            request(
                "POST", "/upload?name=c.png",
                [("Cookie", cookie), ("X-CSRF-Token", csrf), ("Origin", "https://evil.example")], body: png)
        ])
        #expect(cross.first.status == 403 && cross.first.text == "{\"message\":\"this change came from another site\"}")
        #expect(cross.first.header("connection") == "close")
        #expect(f.kept() == ["a (2).png", "a.png"])
    }

    @Test(
        "an original: the whole file, one range (206), several ranges (the whole), past the end (416, empty), HEAD (its length, no body); each file is closed once sent"
    )
    func originalRanges() throws {
        let f = try WebFixture()
        let (cookie, csrf) = try f.login()
        let png = makePNG(size: 3000)
        #expect(upload(f, name: "p.png", body: png, cookie: cookie, csrf: csrf).first.status == 200)
        let library = try PhotoLibrary(directory: f.photos, create: false)
        _ = try library.reconcile()
        let id = try #require(try library.all().first?.id)
        let c = [("Cookie", cookie)]
        let e = f.run([
            request("GET", "/photo/\(id)/original", c),
            request("GET", "/photo/\(id)/original", c + [("Range", "bytes=100-199")]),
            request("GET", "/photo/\(id)/original", c + [("Range", "bytes=-10")]),
            request("GET", "/photo/\(id)/original", c + [("Range", "bytes=0-1,5-6")]),
            request("GET", "/photo/\(id)/original", c + [("Range", "bytes=\(png.count)-")]),
        ])
        #expect(e.statuses == [200, 206, 206, 200, 416], "\(e.statuses)")
        #expect(
            e.responses[0].body == png && e.responses[0].header("accept-ranges") == "bytes"
                && e.responses[0].header("cache-control") == "private, no-cache")
        #expect(e.responses[0].header("content-disposition") == nil)
        #expect(
            e.responses[1].body == Array(png[100..<200])
                && e.responses[1].header("content-range") == "bytes 100-199/\(png.count)")
        #expect(
            e.responses[2].body == Array(png.suffix(10))
                && e.responses[2].header("content-range") == "bytes \(png.count - 10)-\(png.count - 1)/\(png.count)")
        #expect(e.responses[3].body == png)
        #expect(
            e.responses[4].body.isEmpty && e.responses[4].header("content-range") == "bytes */\(png.count)"
                && e.responses[4].header("content-type") == nil)
        let head = f.run([request("HEAD", "/photo/\(id)/original", c)], headOnly: true)
        #expect(
            head.statuses == [200] && head.first.header("content-length") == "\(png.count)"
                && head.first.header("content-type") == "image/png")
        #expect(head.text.hasSuffix("\r\n\r\n") && head.raw.count < 1000 && !head.raw.contains(0x89))
        #expect(!openFiles(below: f.photos).contains(f.photos + "/p.png"), "\(openFiles(below: f.photos))")
    }

    @Test("a package: a zip of NAME.ptk, an attachment, not stored; nothing of its export is left behind")
    func package() throws {
        let f = try WebFixture()
        let (cookie, csrf) = try f.login()
        #expect(upload(f, name: "p.png", body: makePNG(size: 3000), cookie: cookie, csrf: csrf).first.status == 200)
        let library = try indexed(f)
        let id = try #require(try library.all().first?.id)
        let e = f.run([
            request("GET", "/photo/\(id)/package", [("Cookie", cookie)]),
            request("GET", "/photo/\(id)/package", [("Cookie", cookie), ("Range", "bytes=0-1")]),
        ])
        #expect(e.statuses == [200, 206], "\(e.responses)")
        #expect(e.first.header("content-type") == "application/zip" && e.first.header("cache-control") == "no-store")
        #expect(
            e.first.header("content-disposition")?.hasPrefix("attachment; filename=\"p.ptk.zip\"") == true, "\(e.first)"
        )
        #expect(
            e.first.body.prefix(4) == [0x50, 0x4B, 0x03, 0x04]
                && String(decoding: e.first.body, as: UTF8.self).contains("p.ptk/photo.metadata"))
        #expect(e.responses[1].body == [0x50, 0x4B])
        #expect(listDirectory(f.door.access.directory).filter { $0.hasPrefix("export-") }.isEmpty)
        // The archive was removed while it was open; its descriptor is closed once sent.
        #expect(
            openFiles(below: f.door.access.directory).filter { $0.contains("/export-") }.isEmpty,
            "\(openFiles(below: f.door.access.directory))")
    }

    @Test(
        "a preview as the library made it (Range is not taken: the whole), a thumbnail the same; both cacheable with ?v="
    )
    func previewBytes() throws {
        let f = try WebFixture()
        let (cookie, csrf) = try f.login()
        let jpeg = makeJPEG(width: 1600, height: 1200)
        let sent = f.run([
            request(
                "POST", "/upload?name=big.jpg",
                [("Cookie", cookie), ("X-CSRF-Token", csrf), ("Content-Type", "image/jpeg")], body: jpeg)
        ])
        #expect(sent.first.status == 200, "\(sent.first)")
        let library = try indexed(f)
        let photo = try #require(try library.all().first)
        #expect(try library.makePreviews(ids: [photo.id]).map(\.outcome) == [.made(name: "big.jpg")])
        let refreshed = try #require(try library.photo(id: photo.id))
        let made = try #require(try library.preview(of: refreshed))
        let c = [("Cookie", cookie)]
        let e = f.run([
            request("GET", "/photo/\(photo.id)/preview?v=1", c + [("Range", "bytes=0-9")]),
            request("GET", "/photo/\(photo.id)/preview", c),
            request("GET", "/photo/\(photo.id)/thumbnail/180?v=1", c + [("Range", "bytes=0-9")]),
        ])
        #expect(e.statuses == [200, 200, 200], "\(e.responses)")
        #expect(
            e.first.body == made && e.first.header("content-type") == "image/jpeg"
                && e.first.header("cache-control") == "private, max-age=86400")
        #expect(e.first.header("content-range") == nil && e.responses[1].header("cache-control") == "no-cache")
        let thumbnail = try #require(try library.thumbnail(of: photo, side: 180))
        #expect(e.responses[2].body == thumbnail.bytes)
    }

    @Test(
        "changes answer 303 to where the browser goes next; a refused one shows the photo's page (409) with the reason; no token keeps the connection"
    )
    func changeAnswers() throws {
        let f = try WebFixture()
        let (cookie, csrf) = try f.login()
        #expect(upload(f, name: "p.png", body: makePNG(size: 3000), cookie: cookie, csrf: csrf).first.status == 200)
        #expect(
            upload(f, name: "q.png", body: makePNG(size: 3100, seed: 2), cookie: cookie, csrf: csrf).first.status == 200
        )
        let library = try PhotoLibrary(directory: f.photos, create: false)
        _ = try library.reconcile()
        let p = try #require(try library.all().first { $0.name == "p.png" })
        let form = [("Cookie", cookie), ("Content-Type", "application/x-www-form-urlencoded")]
        let e = f.run([
            request("POST", "/photo/\(p.id)/rename", form, body: Array("csrf=\(csrf)&name=q.png".utf8)),
            request("POST", "/photo/\(p.id)/rename", form, body: Array("csrf=\(csrf)&name=+".utf8)),
            request("POST", "/photo/\(p.id)/note", form, body: Array("note=x".utf8)),
            request("POST", "/photo/\(p.id)/rate", form, body: Array("csrf=\(csrf)&rating=none".utf8)),
        ])
        #expect(e.statuses == [409, 409, 403, 303], "\(e.responses)")
        #expect(e.first.text.contains("never replaces") || e.first.text.contains("taken"), "\(e.first.text)")
        #expect(e.first.text.contains("<h1>p.png</h1>") || e.first.text.contains("p.png"))
        #expect(e.responses[1].text.contains("a name cannot be empty"))
        #expect(
            e.responses[2].text.contains("the page&#39;s token is missing or out of date")
                || e.responses[2].text.contains("token is missing"))
        #expect(e.responses[3].header("location") == "/photo/\(p.id)" && e.responses[3].header("content-length") == "0")
        #expect(e.responses[3].header("cache-control") == "no-store" && e.responses[3].header("content-type") == nil)
        #expect(f.kept() == ["p.png", "q.png"])
    }
}

/// The files below `folder` this process holds open (a file a response left open shows here,
/// removed or not); other tests' files, running at the same time, are elsewhere.
func openFiles(below folder: String) -> [String] {
    listDirectory("/proc/self/fd").compactMap { fd in
        // A descriptor closed since the listing has no target: not open.
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + fd)).flatMap {
            $0.hasPrefix(folder + "/") ? $0 : nil
        }
    }
}

/// The web door's steps in front of its routes (`WebDoor.signIn`, `WebDoor.csrf`) on the
/// edges a browser or a forger can reach: the cookie's exact name, quotes and repeats; where a
/// change says it came from; the token in a form or a header; the form's limit.
@Suite("Web door: the session cookie and the CSRF check", .tags(.unit))
struct WebDoorStepsTests {
    /// POST /logout with the form `body` (the session's cookie) and `headers`.
    func logout(_ cookie: String, _ body: String, _ headers: [(String, String)] = []) -> [UInt8] {
        request(
            "POST", "/logout", [("Cookie", cookie), ("Content-Type", "application/x-www-form-urlencoded")] + headers,
            body: Array(body.utf8))
    }

    @Test(
        "the session cookie is matched by its exact name; a quoted value is the value inside; of a repeated name the first wins"
    )
    func cookieName() throws {
        let f = try WebFixture()
        let (cookie, _) = try f.login()
        let secret = String(cookie.dropFirst(WebDoor.cookieName.count + 1))
        let ended = f.door.pages.login(hasPassword: false, message: "Your session has ended: log in again.")
        let cases: [(String, Int, Bool)] = [
            (cookie, 200, false), ("theme=dark; " + cookie, 200, false),
            ("\(WebDoor.cookieName)=\"\(secret)\"", 200, false),
            ("\(WebDoor.cookieName)=\(secret); \(WebDoor.cookieName)=nope", 200, false),
            ("\(WebDoor.cookieName)=nope; \(WebDoor.cookieName)=\(secret)", 401, true),
            ("__host-ptk=\(secret)", 401, false),
            ("\(WebDoor.cookieName)2=\(secret)", 401, false), ("x\(WebDoor.cookieName)=\(secret)", 401, false),
            ("__Host-pt=\(secret)", 401, false),
            (WebDoor.cookieName, 401, false),
        ]
        for (header, status, sessionEnded) in cases {
            let e = f.run([request("GET", "/upload", [("Cookie", header)])])
            #expect(e.first.status == status, "\(header): \(e.first)")
            if status == 401 { #expect((e.first.text == ended) == sessionEnded, "\(header)") }
        }
    }

    @Test(
        "a session proves its connection (it is then not displaced for a newcomer); the login page and a refusal do not"
    )
    func proven() throws {
        let f = try WebFixture()
        let (cookie, _) = try f.login()
        var stages: [ConnectionStage] = []
        _ = f.run(
            [request("GET", "/login"), request("GET", "/"), request("GET", "/static/app.css")],
            onStage: { stages.append($0) })
        #expect(!stages.contains(.working), "\(stages)")
        stages = []
        _ = f.run([request("GET", "/static/app.css", [("Cookie", cookie)])], onStage: { stages.append($0) })
        #expect(stages.contains(.working), "an open route with a session proves it too: \(stages)")
        stages = []
        let e = f.run([request("GET", "/", [("Cookie", cookie)])], onStage: { stages.append($0) })
        #expect(e.statuses == [200] && stages.contains(.working), "\(stages)")
    }

    @Test("a route that changes nothing is served whatever site the request says it came from, with no token")
    func nonChange() throws {
        let f = try WebFixture()
        let (cookie, _) = try f.login()
        let e = f.run([
            request(
                "GET", "/", [("Cookie", cookie), ("Origin", "https://evil.example"), ("Sec-Fetch-Site", "cross-site")]),
            request("GET", "/upload", [("Cookie", cookie), ("Sec-Fetch-Site", "same-site")]),
        ])
        #expect(e.statuses == [200, 200], "\(e.responses)")
    }

    @Test(
        "a change from another site is 403 and closes, its body unread; Origin null, this origin, or none pass to the token",
        arguments: [
            ("Origin", "https://evil.example", false), ("Origin", "http://ptk.test", false),
            ("Origin", "https://ptk.test.evil.example", false),
            ("Origin", "https://ptk.test:444", false), ("Origin", "HTTPS://ptk.test", false), ("Origin", "", false),
            ("Sec-Fetch-Site", "cross-site", false), ("Sec-Fetch-Site", "same-site", false),
            ("Sec-Fetch-Site", "Same-Origin", false),
            ("Origin", "null", true), ("Origin", "https://ptk.test", true), ("Sec-Fetch-Site", "same-origin", true),
            ("Sec-Fetch-Site", "none", true),
        ])
    func otherSites(name: String, value: String, passes: Bool) throws {
        let f = try WebFixture()
        let (cookie, csrf) = try f.login()
        let e = f.run([logout(cookie, "csrf=\(csrf)", [(name, value)]), request("GET", "/static/app.css")])
        if passes {
            #expect(e.statuses == [303, 200], "\(name): \(value): \(e.responses)")
            return
        }
        #expect(e.statuses == [403], "\(name): \(value): \(e.responses)")
        #expect(
            e.first.text
                == f.door.pages.error(
                    "this change came from another site", viewer: WebPages.Viewer(name: "ann", csrf: csrf)))
        #expect(e.first.header("connection") == "close" && e.ending == nil)
        // The session is still there: the forged logout did nothing.
        #expect(f.run([request("GET", "/", [("Cookie", cookie)])]).first.status == 200)
    }

    @Test(
        "a form without the session's token is 403 and the connection goes on (the form was read); a percent-encoded token is decoded first"
    )
    func formTokens() throws {
        let f = try WebFixture()
        let (cookie, csrf) = try f.login()
        let encoded = csrf.unicodeScalars.map { "%" + String($0.value, radix: 16) }.joined()
        for body in ["a=1", "csrf=", "csrf=\(csrf.uppercased())", "csrf=\(csrf)0", "CSRF=\(csrf)", "csrf=%2", ""] {
            let e = f.run([logout(cookie, body), request("GET", "/static/app.css")])
            #expect(e.statuses == [403, 200], "\(body): \(e.responses)")
            #expect(
                e.first.text.contains("go back, reload the page and try again")
                    && e.first.header("connection") == "keep-alive")
        }
        let e = f.run([logout(cookie, "a=1&csrf=\(encoded)"), request("GET", "/", [("Cookie", cookie)])])
        #expect(e.statuses == [303, 401], "\(e.responses)")
    }

    @Test(
        "an upload must send the token as X-CSRF-Token: without it, or with another, 403 in JSON, closing with the body unread"
    )
    func headerTokens() throws {
        let f = try WebFixture()
        let (cookie, csrf) = try f.login()
        let png = makePNG(size: 3000)
        for token in [nil, "nope", csrf.uppercased(), csrf + " " + csrf, ""] as [String?] {
            var headers = [("Cookie", cookie)]
            if let token { headers.append(("X-CSRF-Token", token)) }
            let e = f.run([
                request("POST", "/upload?name=a.png", headers, body: png), request("GET", "/static/app.css"),
            ])
            #expect(e.statuses == [403], "\(token ?? "none"): \(e.responses)")
            #expect(e.first.text == "{\"message\":\"the page's token is missing or out of date: reload the page\"}")
            #expect(e.first.header("connection") == "close")
        }
        // The token in the form's field does not count for a route that is not a form.
        let inBody = f.run([request("POST", "/upload?name=a.png", [("Cookie", cookie), ("X-CSRF", csrf)], body: png)])
        #expect(inBody.first.status == 403)
        #expect(f.kept().isEmpty && f.incoming().isEmpty)
    }

    @Test(
        "a form of exactly the limit is read; one byte over, announced, is 413 unread; chunked over it, 413 as it comes"
    )
    func formLimit() throws {
        let f = try WebFixture()
        let (cookie, csrf) = try f.login()
        let fits = "csrf=\(csrf)&a=" + String(repeating: "x", count: WebDoor.formLimit - "csrf=\(csrf)&a=".utf8.count)
        #expect(fits.utf8.count == WebDoor.formLimit)
        #expect(f.run([logout(cookie, fits)]).statuses == [303])
        let (cookie2, csrf2) = try f.login()
        let over =
            "csrf=\(csrf2)&a=" + String(repeating: "x", count: WebDoor.formLimit + 1 - "csrf=\(csrf2)&a=".utf8.count)
        let announced = f.run([logout(cookie2, over)])
        #expect(
            announced.statuses == [413] && announced.first.header("connection") == "close", "\(announced.responses)")
        #expect(
            announced.ending == "the form is over \(WebDoor.formLimit) bytes; answered 413",
            "\(announced.ending ?? "nil")")
        let chunked = f.run([
            request(
                "POST", "/logout", [("Cookie", cookie2), ("Content-Type", "application/x-www-form-urlencoded")],
                body: Array(over.utf8), chunked: [4096])
        ])
        #expect(chunked.statuses == [413], "\(chunked.responses)")
        #expect(f.run([request("GET", "/", [("Cookie", cookie2)])]).first.status == 200, "the session was not ended")
    }
}
