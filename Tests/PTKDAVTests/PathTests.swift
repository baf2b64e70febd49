import PTKDAV
import PTKTestTags
import Testing

private func path(_ target: String, prefix: String = "/dav") -> Result<DAVPath, DAVPathRefusal> {
    DAVPath.parse(target: target, prefix: prefix)
}

@Suite("Paths below the door's prefix", .tags(.unit))
struct PathTests {
    @Test(
        "root forms",
        arguments: [
            "/dav", "/dav/", "//dav//", "/dav?x=1", "/dav#f", "https://host:8443/dav", "http://host", "HTTP://h/dav/",
        ])
    func root(target: String) {
        let prefix = target == "http://host" ? "/" : "/dav"
        #expect(path(target, prefix: prefix) == .success(.root))
    }

    @Test("names are decoded, empty segments collapsed, a query dropped")
    func decoded() {
        #expect(path("/dav/a%20b//c%C3%A9.jpg?x") == .success(DAVPath(["a b", "cé.jpg"])))
        #expect(path("/dav/%E5%86%99%E7%9C%9F/") == .success(DAVPath(["写真"])))
        #expect(path("/dav/100%25+x") == .success(DAVPath(["100%+x"])))
        #expect(path("/x", prefix: "/") == .success(DAVPath(["x"])))
        #expect(path("/x", prefix: "") == .success(DAVPath(["x"])))
        #expect(
            path("/%64av/x") == .success(DAVPath(["x"])),
            "an encoded unreserved byte is the same byte (RFC 3986 6.2.2.2)")
    }

    @Test(
        "refusals",
        arguments: [
            ("/dav/..", DAVPathRefusal.dotSegment), ("/dav/a/../../etc", .dotSegment), ("/dav/%2e%2e/x", .dotSegment),
            ("/dav/%2E./x", .dotSegment), ("/dav/.", .dotSegment), ("/dav/./a", .dotSegment),
            ("/dav/.%2e", .dotSegment),
            ("/dav/a%2Fb", .encodedSlash), ("/dav/a%2fb", .encodedSlash), ("/dav/..%2F..%2Fetc", .encodedSlash),
            ("/dav/a%5Cb", .encodedSlash), ("/dav/a\\b", .encodedSlash),
            ("/dav/a%00b", .control), ("/dav/a%0Ab", .control), ("/dav/a%7F", .control), ("/dav/a%C2%85", .control),
            ("/dav/%C3", .badEncoding), ("/dav/%C3%28", .badEncoding), ("/dav/%ED%A0%80", .badEncoding),
            ("/dav/%C0%AE%C0%AE", .badEncoding),
            ("/dav/%", .badEncoding), ("/dav/%4", .badEncoding), ("/dav/%zz", .badEncoding),
            ("/davx/..", .outside), ("/dav../", .outside), ("/davx", .outside), ("/", .outside),
            ("/other/dav/x", .outside),
            ("dav/x", .outside), ("*", .outside), ("ftp://host/dav/x", .outside), ("http:/dav/x", .outside),
            ("http:///dav/x", .outside),
        ])
    func refused(target: String, refusal: DAVPathRefusal) {
        #expect(path(target) == .failure(refusal))
    }

    @Test("length bounds: 255 bytes a name, 32 names, 1,024 bytes")
    func lengths() {
        let name255 = String(repeating: "a", count: 255)
        #expect(path("/dav/" + name255) == .success(DAVPath([name255])))
        #expect(path("/dav/" + name255 + "a") == .failure(.tooLong))
        let deep32 = Array(repeating: "d", count: 32)
        #expect(path("/dav/" + deep32.joined(separator: "/")) == .success(DAVPath(deep32)))
        #expect(path("/dav/" + Array(repeating: "d", count: 33).joined(separator: "/")) == .failure(.tooLong))
        let six = Array(repeating: String(repeating: "b", count: 200), count: 6)
        #expect(path("/dav/" + six.joined(separator: "/")) == .failure(.tooLong))
        #expect(path("/dav/" + String(repeating: "%41", count: 10_000)) == .failure(.tooLong))
        #expect(
            path("/dav/" + String(repeating: "é", count: 127))
                == .success(DAVPath([String(repeating: "é", count: 127)])))
        #expect(path("/dav/" + String(repeating: "é", count: 128)) == .failure(.tooLong))
    }

    @Test("Destination: same host (case-insensitive, port included), http or https, or an absolute path")
    func destination() {
        #expect(
            DAVPath.destination("https://Photos.local:8443/dav/a%20b", prefix: "/dav", host: "photos.LOCAL:8443")
                == .success(DAVPath(["a b"])))
        #expect(DAVPath.destination("/dav/x", prefix: "/dav", host: nil) == .success(DAVPath(["x"])))
        #expect(DAVPath.destination(" /dav/x ", prefix: "/dav", host: "h") == .success(DAVPath(["x"])))
        for (header, host) in [
            ("https://evil.example/dav/x", "photos.local:8443"), ("https://photos.local/dav/x", "photos.local:8443"),
            ("https://photos.local:8443/dav/x", nil), ("https://user@photos.local:8443/dav/x", "photos.local:8443"),
            ("ftp://photos.local:8443/dav/x", "photos.local:8443"),
            ("https://photos.local:8443/davx/x", "photos.local:8443"),
            ("//evil.example/dav/x", "photos.local:8443"),
        ] as [(String, String?)] {
            #expect(DAVPath.destination(header, prefix: "/dav", host: host) == .failure(.outside), "\(header)")
        }
        #expect(DAVPath.destination("https://h/dav/%2e%2e/x", prefix: "/dav", host: "h") == .failure(.dotSegment))
    }

    @Test(
        "a query, a fragment and an authority end at their byte, a combining mark after it or not; found by fuzz target webdav"
    )
    func combiningMarks() {
        #expect(path("/dav/a?\u{301}b/c") == .success(DAVPath(["a"])))
        #expect(path("/dav/a#\u{301}") == .success(DAVPath(["a"])))
        #expect(path("/\u{301}dav/a") == .failure(.outside))
        #expect(path("http://h/\u{301}x", prefix: "/") == .success(DAVPath(["\u{301}x"])))
        // The authority is "h", whatever Host claims beyond it.
        #expect(DAVPath.destination("http://h/\u{301}dav/x", prefix: "/", host: "h/\u{301}dav") == .failure(.outside))
        #expect(
            DAVPath.destination("http://h/\u{301}dav/x", prefix: "/", host: "h")
                == .success(DAVPath(["\u{301}dav", "x"])))
        // Host and authority are compared byte for byte: "é" and "e" + U+0301 are two hosts.
        #expect(
            DAVPath.destination("http://caf\u{E9}/dav/x", prefix: "/dav", host: "cafe\u{301}") == .failure(.outside))
    }

    @Test(
        "href round trip for awkward names",
        arguments: [
            ["a b.jpg"], ["100%.png"], ["#1?.jpg"], ["写真", "東京 2026"], ["e\u{301}te\u{301}.heic"], ["été.heic"],
            ["a;b=c&d'e+f"],
            ["~x", "(1)", "!$*,=:@"], ["emoji 👨‍👩‍👧.png"], ["<&>\""],
        ])
    func hrefRoundTrip(components: [String]) throws {
        let p = DAVPath(components)
        for collection in [false, true] {
            let href = p.href(prefix: "/dav", collection: collection)
            #expect(href.unicodeScalars.allSatisfy { $0.isASCII && $0.value > 0x20 }, "\(href)")
            #expect(!href.contains("#") && !href.contains("?") && !href.contains("&") && !href.contains("'"))
            #expect(path(href) == .success(p), "\(href)")
        }
    }

    @Test("href forms")
    func hrefs() {
        #expect(DAVPath.root.href(prefix: "/dav", collection: true) == "/dav/")
        #expect(DAVPath.root.href(prefix: "/dav/", collection: false) == "/dav/")
        #expect(DAVPath.root.href(prefix: "/", collection: true) == "/")
        #expect(DAVPath(["a b", "c.jpg"]).href(prefix: "/dav", collection: false) == "/dav/a%20b/c.jpg")
        #expect(DAVPath(["albums"]).href(prefix: "/dav", collection: true) == "/dav/albums/")
        #expect(DAVPath(["é"]).href(prefix: "", collection: false) == "/%C3%A9")
    }

    @Test("equality is byte for byte: composed and decomposed names are two paths")
    func byteEquality() {
        let composed = DAVPath(["\u{E9}"])
        let decomposed = DAVPath(["e\u{301}"])
        #expect(composed != decomposed)
        #expect(Set([composed, decomposed]).count == 2)
        #expect(path("/dav/%C3%A9") == .success(composed))
        #expect(path("/dav/e%CC%81") == .success(decomposed))
    }

    @Test("parent, name, appending, ancestors, string")
    func structure() {
        let p = DAVPath(["a", "b", "c.jpg"])
        #expect(p.parent == DAVPath(["a", "b"]))
        #expect(p.name == "c.jpg")
        #expect(DAVPath.root.parent == nil && DAVPath.root.name == nil && DAVPath.root.isRoot)
        #expect(DAVPath(["a", "b"]).appending("c.jpg") == p)
        #expect(DAVPath(["a"]).isAncestor(of: p) && DAVPath.root.isAncestor(of: p))
        #expect(
            !p.isAncestor(of: p) && !DAVPath(["a", "c"]).isAncestor(of: p)
                && !DAVPath(["ab"]).isAncestor(of: DAVPath(["a", "b"])))
        #expect(p.string == "a/b/c.jpg" && DAVPath.root.string == "")
    }
}

@Suite("Name kinds", .tags(.unit))
struct NameKindTests {
    @Test(
        "sidecars of macOS and Windows, any case",
        arguments: [
            "._IMG_0001.jpg", "._", ".DS_Store", ".ds_store", ".localized", "Thumbs.db", "THUMBS.DB", "desktop.ini",
            "Desktop.ini",
            ".Trashes", ".Spotlight-V100", ".fseventsd", ".TemporaryItems", ".metadata_never_index", "ehthumbs.db",
            ".apdisk",
            "._\u{301}x.jpg",
        ])
    func sidecar(name: String) {
        #expect(DAVName.kind(name) == .sidecar)
    }

    @Test(
        "hidden: any other dotted name, a combining mark after the dot too (found by fuzz target webdav)",
        arguments: [".ptk", ".incoming", ".git", ".", "..", ".hidden.jpg", ".DS_Store2", ".\u{301}ptk", ".\u{20DD}"])
    func hidden(name: String) {
        #expect(DAVName.kind(name) == .hidden)
    }

    @Test("ordinary names", arguments: ["IMG_0001.jpg", "Thumbs.db.jpg", "x.DS_Store", "desktop.ini ", "写真", "_x"])
    func ordinary(name: String) {
        #expect(DAVName.kind(name) == .ordinary)
    }
}
