import PTKWeb
import Testing

@Suite("Web routes")
struct RouteTests {
    @Test("every page, file and change is found by its method and target")
    func routes() {
        let cases: [(String, String, WebRoute)] = [
            ("GET", "/", .gallery), ("HEAD", "/", .gallery), ("GET", "/?sender=a&rating=3", .gallery),
            ("GET", "/login", .loginPage), ("POST", "/login", .login),
            ("GET", "/login/0123456789abcdef0123456789abcdef", .loginLink("0123456789abcdef0123456789abcdef")),
            ("POST", "/logout", .logout),
            ("GET", "/static/app.css", .asset(.css)), ("GET", "/static/app.js", .asset(.js)),
            ("GET", "/upload", .uploadPage), ("POST", "/upload?name=a.png", .upload),
            ("GET", "/photo/42", .photo(42)), ("GET", "/photo/42/original?download=1", .original(42)),
            ("GET", "/photo/7/thumbnail?v=abc", .thumbnail(7)), ("GET", "/photo/7/package", .package(7)),
            ("GET", "/photo/7/delete", .confirmDelete(7)), ("POST", "/photo/7/delete", .change(7, .delete)),
            ("POST", "/photo/7/rename", .change(7, .rename)), ("POST", "/photo/7/note", .change(7, .note)),
            ("POST", "/photo/7/rate", .change(7, .rate)),
        ]
        for (method, target, route) in cases {
            #expect(WebRoute(method: method, target: target) == route, "\(method) \(target)")
        }
    }

    @Test("traversal, encoded slashes and odd ids reach nothing (404)")
    func hostileTargets() {
        for target in ["/photo/../etc/passwd", "/photo/..%2f..%2fetc%2fpasswd", "/photo/%2e%2e/original", "/photo/1%2foriginal",
                       "/photo/01", "/photo/-1", "/photo/+1", "/photo/1.0", "/photo/9999999999999999999", "/photo/1/original/x",
                       "/photo//original", "//", "/static/../app.css", "/static/app.css%00", "/static/APP.CSS", "/static/", "photo/1",
                       "", "*", "/login/0123456789ABCDEF0123456789ABCDEF", "/login/0123", "/login/../..", "/photo/1/rename/..",
                       "/%2e%2e/%2e%2e/etc/passwd", "/photo/1/original%2f..%2f..%2fpasswd", "http://evil/photo/1"] {
            #expect(WebRoute(method: "GET", target: target) == .notFound, "\(target)")
        }
    }

    @Test("a known path with the wrong method is 405 with the methods it takes")
    func methods() {
        #expect(WebRoute(method: "DELETE", target: "/photo/1") == .methodNotAllowed(allowed: "GET, HEAD"))
        #expect(WebRoute(method: "GET", target: "/photo/1/rename") == .methodNotAllowed(allowed: "POST"))
        #expect(WebRoute(method: "GET", target: "/logout") == .methodNotAllowed(allowed: "POST"))
        #expect(WebRoute(method: "PUT", target: "/upload") == .methodNotAllowed(allowed: "GET, HEAD, POST"))
        #expect(WebRoute(method: "POST", target: "/static/app.js") == .methodNotAllowed(allowed: "GET, HEAD"))
    }

    @Test("only GET spends a one-time link: HEAD of it (a link preview) is the login page")
    func headDoesNotSpendALink() {
        let secret = "0123456789abcdef0123456789abcdef"
        #expect(WebRoute(method: "GET", target: "/login/" + secret) == .loginLink(secret))
        #expect(WebRoute(method: "HEAD", target: "/login/" + secret) == .loginPage)
        #expect(WebRoute(method: "HEAD", target: "/login/" + secret + "?x=1") == .loginPage)
        #expect(WebRoute(method: "POST", target: "/login/" + secret) == .methodNotAllowed(allowed: "GET, HEAD"))
        #expect(WebRoute(method: "get", target: "/login/" + secret) == .methodNotAllowed(allowed: "GET, HEAD"))
    }

    @Test("targets are split at every \"/\" and \"?\" scalar, even one a combining mark joins into a Character")
    func marks() {
        #expect(WebRoute(method: "GET", target: "/\u{301}") == .notFound)
        #expect(WebRoute(method: "GET", target: "/login?\u{301}") == .loginPage)
        #expect(WebRoute(method: "GET", target: "/photo/7?\u{301}x") == .photo(7))
        #expect(WebRoute(method: "GET", target: "/photo/7/\u{301}") == .notFound)
        #expect(WebRoute(method: "GET", target: "/\u{600}/photo/7") == .notFound)
    }

    @Test("only the login page, logging in and static files are public; every change needs the CSRF token")
    func publicAndChanges() {
        let all: [WebRoute] = [.gallery, .loginPage, .login, .loginLink("x"), .logout, .asset(.css), .uploadPage, .upload,
                               .photo(1), .original(1), .thumbnail(1), .package(1), .confirmDelete(1),
                               .change(1, .rename), .change(1, .note), .change(1, .rate), .change(1, .delete),
                               .notFound, .methodNotAllowed(allowed: "GET")]
        #expect(all.filter(\.isPublic) == [.loginPage, .login, .loginLink("x"), .asset(.css)])
        #expect(all.filter(\.isChange) == [.logout, .upload, .change(1, .rename), .change(1, .note), .change(1, .rate), .change(1, .delete)])
    }
}

@Suite("Range headers")
struct RangeTests {
    @Test("one range is served; suffixes and open ends are clamped to the file")
    func ranges() {
        #expect(ByteRange(header: nil, size: 100) == .whole)
        #expect(ByteRange(header: "bytes=0-9", size: 100) == .part(start: 0, end: 9))
        #expect(ByteRange(header: "bytes=90-", size: 100) == .part(start: 90, end: 99))
        #expect(ByteRange(header: "bytes=90-1000", size: 100) == .part(start: 90, end: 99))
        #expect(ByteRange(header: "bytes=-10", size: 100) == .part(start: 90, end: 99))
        #expect(ByteRange(header: "bytes=-1000", size: 100) == .part(start: 0, end: 99))
        #expect(ByteRange(header: "BYTES = 5-5", size: 100) == .whole)  // not "bytes=": ignored
        #expect(ByteRange(header: "Bytes=5-5", size: 100) == .part(start: 5, end: 5))
        #expect(ByteRange(header: "bytes= 5 - 6 ", size: 100) == .part(start: 5, end: 6))
    }

    @Test("malformed and multiple (overlapping) ranges are ignored: the whole file")
    func ignored() {
        for header in ["", "bytes", "bytes=", "bytes=-", "bytes=a-b", "bytes=5-4", "bytes=1-2-3", "bytes=0x10-20", "items=0-1",
                       "bytes=0-1,1-2", "bytes=0-50,25-75,0-", "bytes=0-0,-1", "bytes=+1-2", "bytes=1-+2",
                       "bytes=99999999999999999999-", "bytes=" + String(repeating: "1", count: 300) + "-"] {
            #expect(ByteRange(header: header, size: 100) == .whole, "\(header)")
        }
    }

    @Test("a range starting at or past the end is 416")
    func unsatisfiable() {
        #expect(ByteRange(header: "bytes=100-", size: 100) == .unsatisfiable)
        #expect(ByteRange(header: "bytes=100-200", size: 100) == .unsatisfiable)
        #expect(ByteRange(header: "bytes=-0", size: 100) == .unsatisfiable)
        #expect(ByteRange(header: "bytes=0-", size: 0) == .unsatisfiable)
        #expect(ByteRange(header: "bytes=-5", size: 0) == .unsatisfiable)
    }
}

@Suite("Cookies and downloads")
struct CookieTests {
    @Test("cookies are split, trimmed and unquoted; the first of a name wins")
    func parse() {
        #expect(cookies(nil) == [:])
        #expect(cookies("a=1; b=2;c = 3 ; a=4") == ["a": "1", "b": "2", "c": "3"])
        #expect(cookies("__Host-ptk=\"abc\"; junk; =x") == ["__Host-ptk": "abc"])
    }

    @Test("a download's name cannot break out of Content-Disposition")
    func attachmentName() {
        #expect(attachment("IMG_1.png") == "attachment; filename=\"IMG_1.png\"; filename*=UTF-8''IMG_1.png")
        let hostile = attachment("a\"\r\nSet-Cookie: x=1\\é.png")
        #expect(!hostile.contains("\r") && !hostile.contains("\n"))
        #expect(hostile == "attachment; filename=\"a___Set-Cookie: x=1__.png\"; filename*=UTF-8''a%22%0D%0ASet-Cookie%3A%20x%3D1%5C%C3%A9.png")
    }
}
