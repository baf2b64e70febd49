import PTKHTTP
import PTKTestTags
import Testing

/// A match as text: "found PATTERN name=value ...", "404", or "405 ALLOW".
func describe<C>(_ match: RouteMatch<RouteTable<C>.Route>) -> String {
    switch match {
    case .found(let route, let parameters):
        let captures = parameters.values.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
        return (["found", route.pattern] + captures).joined(separator: " ")
    case .notFound: return "404"
    case .methodNotAllowed(let allow): return "405 \(allow)"
    }
}

/// The captures of a found route, nil otherwise.
func parameters<C>(_ match: RouteMatch<RouteTable<C>.Route>) -> RouteParameters? {
    if case .found(_, let p) = match { return p }
    return nil
}

/// The route found, nil otherwise.
func route<C>(_ match: RouteMatch<RouteTable<C>.Route>) -> RouteTable<C>.Route? {
    if case .found(let r, _) = match { return r }
    return nil
}

/// Any text at all: what reaches a capture is then exactly what the table split off.
let anyText = PathCapture { _ in true }

/// The web interface's kind of table: literals, ids, secrets, a choice of words.
func photoRoutes() -> RouteTable<Notes> {
    var r = RouteTable<Notes>()
    r.add(["GET"], "/", noop())
    r.add(["GET", "HEAD"], "/photos", noop())
    r.add(["POST"], "/photos", traits: [.change], noop())
    r.add(["GET"], "/photo/{id}/original", captures: ["id": .id], noop())
    r.add(["GET"], "/s/{secret}", captures: ["secret": .lowerHex(32)], noop())
    r.add(["GET"], "/thumb/{size}/{id}", captures: ["size": .oneOf(["small", "large"]), "id": .id], noop())
    return r
}

/// Files under a folder, one or two segments, captured as they come.
func fileRoutes(decodesPath: Bool) -> RouteTable<Notes> {
    var r = RouteTable<Notes>(decodesPath: decodesPath)
    r.add(["GET"], "/files/{name}", captures: ["name": anyText], noop())
    r.add(["GET"], "/files/{a}/{b}", captures: ["a": anyText, "b": anyText], noop())
    return r
}

@Suite("RouteTable: method and path to a route, 404 and 405", .tags(.unit))
struct RouteMatchingTests {
    @Test("a literal path finds its route, and the query takes no part in the match")
    func literals() {
        let r = photoRoutes()
        #expect(describe(r.match(method: "GET", target: "/photos")) == "found /photos")
        #expect(describe(r.match(method: "HEAD", target: "/photos")) == "found /photos")
        #expect(describe(r.match(method: "POST", target: "/photos")) == "found /photos")
        #expect(describe(r.match(method: "GET", target: "/photos?x=1&next=/photo/1/original")) == "found /photos")
        #expect(describe(r.match(method: "GET", target: "/photos?")) == "found /photos")
        #expect(describe(r.match(method: "GET", target: "/")) == "found /")
        #expect(describe(r.match(method: "GET", target: "/?a=/photos")) == "found /")
    }

    @Test("the route found for a method is the one that lists it, with that route's traits")
    func routeOfTheMethod() throws {
        let r = photoRoutes()
        let post = try #require(route(r.match(method: "POST", target: "/photos")))
        #expect(post.methods == ["POST"])
        #expect(post.traits == [.change])
        let get = try #require(route(r.match(method: "GET", target: "/photos")))
        #expect(get.methods == ["GET", "HEAD"])
        #expect(get.traits == [])
    }

    @Test("an id capture takes 1 to 18 decimal digits without a leading zero, and int64 gives it as a number")
    func idCapture() throws {
        let r = photoRoutes()
        #expect(describe(r.match(method: "GET", target: "/photo/42/original")) == "found /photo/{id}/original id=42")
        let p = try #require(parameters(r.match(method: "GET", target: "/photo/42/original")))
        #expect(p.int64("id") == 42)
        #expect(p["id"] == "42")
        let big = try #require(parameters(r.match(method: "GET", target: "/photo/999999999999999999/original")))
        #expect(big.int64("id") == 999_999_999_999_999_999)
        for bad in [
            "0", "042", "-1", "+1", "1e3", "4%32", "42a", "", "\u{FF14}\u{FF12}", "1234567890123456789",
            "99999999999999999999",
        ] {
            #expect(describe(r.match(method: "GET", target: "/photo/\(bad)/original")) == "404", "id \(bad)")
        }
    }

    @Test("a lowerHex(32) capture takes exactly 32 lower-case hexadecimal digits")
    func hexCapture() {
        let r = photoRoutes()
        let secret = "0123456789abcdef0123456789abcdef"
        #expect(describe(r.match(method: "GET", target: "/s/\(secret)")) == "found /s/{secret} secret=\(secret)")
        for bad in [secret.uppercased(), String(secret.dropLast()), secret + "0", String(secret.dropLast()) + "g", ""] {
            #expect(describe(r.match(method: "GET", target: "/s/\(bad)")) == "404", "secret \(bad)")
        }
    }

    @Test("a oneOf capture takes its words exactly, and several captures are all given")
    func oneOfCapture() {
        let r = photoRoutes()
        #expect(
            describe(r.match(method: "GET", target: "/thumb/small/7")) == "found /thumb/{size}/{id} id=7 size=small")
        #expect(
            describe(r.match(method: "GET", target: "/thumb/large/7")) == "found /thumb/{size}/{id} id=7 size=large")
        for bad in ["Small", "medium", "small%20", "smal", "largesmall"] {
            #expect(describe(r.match(method: "GET", target: "/thumb/\(bad)/7")) == "404", "size \(bad)")
        }
        #expect(describe(r.match(method: "GET", target: "/thumb/small/07")) == "404")
    }

    @Test("route parameters give nil for a missing name or a capture that is not a number")
    func routeParameters() {
        let p = RouteParameters(["id": "12", "size": "small"])
        #expect(p.int64("id") == 12)
        #expect(p.int64("size") == nil)
        #expect(p.int64("missing") == nil)
        #expect(p["missing"] == nil)
        #expect(p["size"] == "small")
    }

    @Test("a path no route has is 404, whatever the method")
    func unknownPaths() {
        let r = photoRoutes()
        for target in ["/nope", "/photos/extra", "/photo/42", "/photo/42/original/more", "/PHOTOS", "/thumb/small"] {
            #expect(describe(r.match(method: "GET", target: target)) == "404", "\(target)")
            #expect(describe(r.match(method: "DELETE", target: target)) == "404", "\(target)")
        }
    }

    @Test("a path whose routes lack the method is 405, Allow merged across them in canonical order")
    func methodNotAllowed() {
        let r = photoRoutes()
        #expect(describe(r.match(method: "DELETE", target: "/photos")) == "405 GET, HEAD, POST")
        #expect(describe(r.match(method: "PUT", target: "/photos?x=1")) == "405 GET, HEAD, POST")
        #expect(describe(r.match(method: "POST", target: "/photo/9/original")) == "405 GET")
    }

    @Test(
        "Allow lists the common methods first in their order, then the others by name, each once, from this path's routes only"
    )
    func allowOrder() {
        var r = RouteTable<Notes>()
        r.add(["PROPFIND", "PUT"], "/dav/{p}", captures: ["p": anyText], noop())
        r.add(["BREW", "OPTIONS", "GET"], "/dav/{p}", captures: ["p": anyText], noop())
        r.add(["DELETE", "GET", "ACL"], "/dav/{p}", captures: ["p": anyText], noop())
        r.add(["MKCOL", "ZAP"], "/other", noop())
        r.add(["LOCK"], "/dav/{p}/deeper", captures: ["p": anyText], noop())
        #expect(
            describe(r.match(method: "POST", target: "/dav/x")) == "405 OPTIONS, GET, PUT, DELETE, PROPFIND, ACL, BREW")
        #expect(describe(r.match(method: "POST", target: "/other")) == "405 MKCOL, ZAP")
    }

    @Test("methods are matched case-sensitively: \"get\" is not GET")
    func methodCase() {
        let r = photoRoutes()
        #expect(describe(r.match(method: "get", target: "/photos")) == "405 GET, HEAD, POST")
        #expect(describe(r.match(method: "Get", target: "/")) == "405 GET")
    }

    @Test("without decoding, %2F and %2e%2e reach a capture as the text sent, never as a separator or ..")
    func notDecoded() {
        let r = fileRoutes(decodesPath: false)
        #expect(describe(r.match(method: "GET", target: "/files/a%2Fb")) == "found /files/{name} name=a%2Fb")
        #expect(describe(r.match(method: "GET", target: "/files/a%2fb")) == "found /files/{name} name=a%2fb")
        #expect(describe(r.match(method: "GET", target: "/files/%2e%2e")) == "found /files/{name} name=%2e%2e")
        #expect(
            describe(r.match(method: "GET", target: "/files/%2E%2E/%2e%2e%2Fetc"))
                == "found /files/{a}/{b} a=%2E%2E b=%2e%2e%2Fetc")
        #expect(describe(r.match(method: "GET", target: "/files%2Fx")) == "404")
        #expect(describe(r.match(method: "GET", target: "/files/x%3Fy")) == "found /files/{name} name=x%3Fy")
    }

    @Test("with decoding (LocalSend), the path is decoded before it is split; a broken escape is matched as sent")
    func decoded() {
        let r = fileRoutes(decodesPath: true)
        #expect(describe(r.match(method: "GET", target: "/files/a%2Fb")) == "found /files/{a}/{b} a=a b=b")
        #expect(describe(r.match(method: "GET", target: "/files/%2e%2e")) == "found /files/{name} name=..")
        #expect(describe(r.match(method: "GET", target: "/files/x%20y")) == "found /files/{name} name=x y")
        #expect(describe(r.match(method: "GET", target: "/files/%zz")) == "found /files/{name} name=%zz")
        #expect(describe(r.match(method: "GET", target: "/files/x%3Fy?q=%2F")) == "found /files/{name} name=x?y")
        #expect(describe(r.match(method: "GET", target: "%2Ffiles%2Fx")) == "found /files/{name} name=x")
    }

    @Test("segments are cut at each \"/\" and \"?\" scalar even when a combining mark after it makes one Character")
    func combiningMarks() {
        // "/\u{301}" is a single Character: a split by Characters would not cut there.
        #expect("x/\u{301}y".split(separator: "/").count == 1)
        let plain = fileRoutes(decodesPath: false)
        #expect(
            describe(plain.match(method: "GET", target: "/files/x/\u{301}y")) == "found /files/{a}/{b} a=x b=\u{301}y")
        #expect(describe(plain.match(method: "GET", target: "/files/x?\u{301}=/1/2")) == "found /files/{name} name=x")
        #expect(describe(plain.match(method: "GET", target: "/\u{301}files/x")) == "404")
        let decoding = fileRoutes(decodesPath: true)
        #expect(
            describe(decoding.match(method: "GET", target: "/files/x%2F%CC%81y"))
                == "found /files/{a}/{b} a=x b=\u{301}y")
        #expect(describe(decoding.match(method: "GET", target: "/files/x?\u{301}a/b")) == "found /files/{name} name=x")
    }

    @Test("hostile targets find no route: empty, *, absolute form, doubled or trailing slashes, dot segments")
    func hostileTargets() {
        let r = photoRoutes()
        for target in [
            "", "*", "?", "?/photos", "photos", "http://evil/photos", "https://evil/", "//", "//photos", "/photos/",
            "/photos//",
            "/photo//original", "/./photos", "/photos/.", "/photos/..", "/photo/42/original/", " /photos", "/photos#x",
        ] {
            #expect(describe(r.match(method: "GET", target: target)) == "404", "target \(target)")
        }
        let files = fileRoutes(decodesPath: false)
        #expect(describe(files.match(method: "GET", target: "/files/")) == "found /files/{name} name=")
        #expect(describe(files.match(method: "GET", target: "//files/x")) == "404")
    }
}
