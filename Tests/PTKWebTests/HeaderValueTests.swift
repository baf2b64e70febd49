import PTKHTTP
import PTKTestTags
import PTKWeb
import Testing

@Suite("Range headers", .tags(.unit))
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
        for header in [
            "", "bytes", "bytes=", "bytes=-", "bytes=a-b", "bytes=5-4", "bytes=1-2-3", "bytes=0x10-20", "items=0-1",
            "bytes=0-1,1-2", "bytes=0-50,25-75,0-", "bytes=0-0,-1", "bytes=+1-2", "bytes=1-+2",
            "bytes=" + String(repeating: "1", count: 300) + "-", "bytes=99999999999999999999-1",
        ] {
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

    @Test(
        "positions past what Int64 holds: a last position is the end (206), a first position is past it (416), a suffix is the whole file"
    )
    func hugePositions() {
        // RFC 9110 14.1.2: a last-pos at or past the end means the end; positions are any number of digits.
        #expect(ByteRange(header: "bytes=0-9223372036854775807", size: 100) == .part(start: 0, end: 99))
        #expect(ByteRange(header: "bytes=10-99999999999999999999999", size: 100) == .part(start: 10, end: 99))
        #expect(ByteRange(header: "bytes=0-00000000000000000000009", size: 100) == .part(start: 0, end: 9))
        #expect(ByteRange(header: "bytes=9223372036854775807-", size: 100) == .unsatisfiable)
        #expect(ByteRange(header: "bytes=9223372036854775807-9223372036854775807", size: 100) == .unsatisfiable)
        #expect(ByteRange(header: "bytes=99999999999999999999-", size: 100) == .unsatisfiable)
        #expect(ByteRange(header: "bytes=-9223372036854775807", size: 100) == .part(start: 0, end: 99))
        #expect(ByteRange(header: "bytes=-99999999999999999999", size: 100) == .part(start: 0, end: 99))
        #expect(
            ByteRange(header: "bytes=9223372036854775806-9223372036854775807", size: .max)
                == .part(start: .max - 1, end: .max - 1))
    }
}

@Suite("Cookies and downloads", .tags(.unit))
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
        #expect(
            hostile
                == "attachment; filename=\"a___Set-Cookie: x=1__.png\"; filename*=UTF-8''a%22%0D%0ASet-Cookie%3A%20x%3D1%5C%C3%A9.png"
        )
    }
}
