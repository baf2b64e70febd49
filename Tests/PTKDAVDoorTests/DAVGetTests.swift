import PTKDAV
import PTKTestSupport
import PTKTestTags
import Testing

@testable import PTKDAVDoor

/// GET and HEAD over a scripted connection: photos with and without Range, folders, sidecars
/// and placeholders.
@Suite("WebDAV door: GET and HEAD", .tags(.unit))
struct DAVGetTests {
    @Test("GET of a photo: its bytes, type, ETag (its SHA-256) and Last-Modified; HEAD the same head without the body")
    func photo() throws {
        let f = try DoorFixture()
        let desk = try f.appPassword("desk")
        let png = makePNG(size: 4000, seed: 40)
        writeFile(f.photos + "/a.png", png)
        try f.reconcile()
        let e = f.dav(dav("GET", "/dav/a.png", desk))
        #expect(e.first.status == 200 && digest(e.first.body) == digest(png), "\(e.first.status)")
        #expect(e.first.header("content-type") == "image/png")
        #expect(e.first.header("etag") == "\"\(sha256Hex(png))\"")
        #expect(e.first.header("last-modified")?.hasSuffix(" GMT") == true)
        let head = f.dav(dav("HEAD", "/dav/a.png", desk), dav("HEAD", "/dav/a.png", desk), headOnly: true)
        #expect(head.responses.map(\.status) == [200, 200], "\(head.responses)")
        #expect(
            head.first.header("content-length") == "\(png.count)" && head.first.header("etag") == e.first.header("etag")
        )
        #expect(head.raw.count < 2000, "no body after a HEAD's head")
    }

    @Test(
        "Range: a first part, a suffix and an open end are 206 with Content-Range; past the end 416 with bytes */size")
    func ranges() throws {
        let f = try DoorFixture()
        let desk = try f.appPassword("desk")
        let png = makePNG(size: 4000, seed: 41)
        writeFile(f.photos + "/a.png", png)
        let n = png.count
        let e = f.dav(
            dav("GET", "/dav/a.png", desk, [("Range", "bytes=0-99")]),
            dav("GET", "/dav/a.png", desk, [("Range", "bytes=-10")]),
            dav("GET", "/dav/a.png", desk, [("Range", "bytes=\(n - 5)-")]),
            dav("GET", "/dav/a.png", desk, [("Range", "bytes=\(n)-")]),
            dav("GET", "/dav/a.png", desk, [("Range", "bytes=\(n + 100)-\(n + 200)")]))
        #expect(e.responses.map(\.status) == [206, 206, 206, 416, 416], "\(e.responses.map(\.status))")
        #expect(e[0].header("content-range") == "bytes 0-99/\(n)" && e[0].body == Array(png.prefix(100)))
        #expect(e[1].header("content-range") == "bytes \(n - 10)-\(n - 1)/\(n)" && e[1].body == Array(png.suffix(10)))
        #expect(e[2].header("content-range") == "bytes \(n - 5)-\(n - 1)/\(n)" && e[2].body == Array(png.suffix(5)))
        for r in e.responses.dropFirst(3) {
            #expect(r.header("content-range") == "bytes */\(n)" && r.body.isEmpty, "\(r)")
        }
        let head = f.dav(dav("HEAD", "/dav/a.png", desk, [("Range", "bytes=0-9")]), headOnly: true)
        #expect(head.first.status == 206 && head.first.header("content-length") == "10", "\(head.first)")
    }

    @Test(
        "Range with positions past Int64: bytes=0-9223372036854775807 is the whole file as 206, bytes=9223372036854775807- is 416"
    )
    func hugeRanges() throws {
        let f = try DoorFixture()
        let desk = try f.appPassword("desk")
        let png = makePNG(size: 1200, seed: 43)
        writeFile(f.photos + "/a.png", png)
        let n = png.count
        let e = f.dav(
            dav("GET", "/dav/a.png", desk, [("Range", "bytes=0-9223372036854775807")]),
            dav("GET", "/dav/a.png", desk, [("Range", "bytes=9223372036854775807-")]),
            dav("GET", "/dav/a.png", desk, [("Range", "bytes=5-99999999999999999999")]))
        #expect(e.responses.map(\.status) == [206, 416, 206], "\(e.responses.map(\.status))")
        #expect(e[0].header("content-range") == "bytes 0-\(n - 1)/\(n)" && e[0].body == png)
        #expect(e[1].header("content-range") == "bytes */\(n)" && e[1].body.isEmpty)
        #expect(e[2].header("content-range") == "bytes 5-\(n - 1)/\(n)" && e[2].body == Array(png.dropFirst(5)))
    }

    @Test("GET of a folder is a short text; of a missing name 404; a Range on a folder is ignored")
    func folder() throws {
        let f = try DoorFixture()
        let desk = try f.appPassword("desk")
        writeFile(in: f.photos, "sub/b.png", makePNG(size: 900, seed: 42))
        let e = f.dav(
            dav("GET", "/dav/", desk), dav("GET", "/dav/sub/", desk),
            dav("GET", "/dav/sub", desk, [("Range", "bytes=0-3")]),
            dav("GET", "/dav/nothing.png", desk), dav("GET", "/dav/sub/nothing/", desk))
        #expect(e.responses.map(\.status) == [200, 200, 200, 404, 404], "\(e.responses.map(\.status))")
        for r in e.responses.prefix(3) {
            #expect(
                r.header("content-type")?.hasPrefix("text/plain") == true && r.text.contains("WebDAV folder"), "\(r)")
        }
        let head = f.dav(dav("HEAD", "/dav/sub/", desk), headOnly: true)
        #expect(head.first.status == 200 && (Int(head.first.header("content-length") ?? "") ?? 0) > 0)
    }

    @Test(
        "GET of a sidecar gives back the bytes its password wrote (a Range is not needed for them: 200 with the whole)")
    func sidecar() throws {
        let f = try DoorFixture()
        let desk = try f.appPassword("desk")
        let bytes: [UInt8] = Array("Mac OS X        ATTR".utf8) + (0..<300).map { UInt8($0 % 251) }
        let e = f.dav(
            dav("PUT", "/dav/._a.png", desk, body: bytes), dav("GET", "/dav/._a.png", desk),
            dav("GET", "/dav/._a.png", desk, [("Range", "bytes=0-3")]))
        #expect(e.responses.map(\.status) == [201, 200, 200], "\(e.responses.map(\.status))")
        #expect(e[1].body == bytes && e[2].body == bytes)
        let head = f.dav(dav("HEAD", "/dav/._a.png", desk), headOnly: true)
        #expect(head.first.status == 200 && head.first.header("content-length") == "\(bytes.count)", "\(head.first)")
    }

    @Test("GET of a placeholder (a 0-byte PUT) is 200 and empty")
    func placeholder() throws {
        let f = try DoorFixture()
        let desk = try f.appPassword("desk")
        let e = f.dav(dav("PUT", "/dav/new.png", desk), dav("GET", "/dav/new.png", desk))
        #expect(e.responses.map(\.status) == [201, 200], "\(e.responses)")
        #expect(e[1].body.isEmpty && e[1].header("content-length") == "0")
    }
}
