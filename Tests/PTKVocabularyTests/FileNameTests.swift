import PTKTestTags
import Testing

@testable import PTKVocabulary

@Suite("Final-name sanitiser", .tags(.unit))
struct FileNameTests {
    @Test(
        "nasty names become safe names",
        arguments: [
            ("IMG_0001.png", "IMG_0001.png"),
            ("../../etc/passwd", "passwd.png"),
            ("..\\..\\windows\\evil.png", "evil.png"),
            ("/absolute/path/x.png", "x.png"),
            ("dir/", "photo.png"),
            ("..", "photo.png"),
            ("...", "photo.png"),
            (".hidden.png", "hidden.png"),
            ("  . .lead.png", "lead.png"),
            (".png", "png.png"),
            ("", "photo.png"),
            ("/", "photo.png"),
            ("\\", "photo.png"),
            ("noext", "noext.png"),
            ("photo.jpg", "photo.jpg.png"),
            ("UPPER.PNG", "UPPER.PNG"),
            ("a\u{0}b\u{1F}c\u{7F}d\u{85}.png", "abcd.png"),
            ("line\nbreak.png", "linebreak.png"),
            ("\u{1}\u{2}", "photo.png"),
            ("Ünïcödé 写真.png", "Ünïcödé 写真.png"),
            ("trailing space .png", "trailing space .png"),
            (".incoming", "incoming.png"),
        ])
    func sanitize(offered: String, expected: String) {
        #expect(FileName.sanitize(offered) == expected)
    }

    @Test("long names are cut to 200 bytes at a character boundary, keeping .png")
    func longNames() {
        let long = String(repeating: "a", count: 300) + ".png"
        let s = FileName.sanitize(long)
        #expect(s.utf8.count == 200)
        #expect(s.hasSuffix(".png"))
        let wide = String(repeating: "写", count: 100)  // 3 bytes each, no extension
        let w = FileName.sanitize(wide)
        #expect(w.utf8.count <= 200)
        #expect(w == String(repeating: "写", count: 65) + ".png")
        #expect(FileName.withSuffix(s, counter: 12).utf8.count == 200)
        #expect(FileName.withSuffix(s, counter: 12).hasSuffix(" (12).png"))
    }

    @Test("collision suffixes go before the extension")
    func suffixes() {
        #expect(FileName.withSuffix("IMG.png", counter: 1) == "IMG.png")
        #expect(FileName.withSuffix("IMG.png", counter: 2) == "IMG (2).png")
        #expect(FileName.withSuffix("IMG.PNG", counter: 3) == "IMG (3).PNG")
        #expect(FileName.withSuffix("a.b.png", counter: 10) == "a.b (10).png")
    }

    @Test(
        "a name is never empty, hidden, or a path",
        arguments: [
            "", ".", "..", "/..", "../", " ", "\u{7}", ".\u{0}.", "a/b/../..", String(repeating: "\u{301}", count: 300),
        ])
    func neverUnsafe(offered: String) {
        let s = FileName.sanitize(offered)
        #expect(!s.isEmpty)
        #expect(!s.hasPrefix("."))
        #expect(!s.contains("/"))
        #expect(!s.contains("\\"))
        #expect(s.utf8.count <= 200)
        #expect(s.hasSuffix(".png"))
    }

    @Test(
        "names that compete for one final name share a collision key; others do not",
        arguments: [
            ("a.png", "a.png"), ("a", "a.png"), (".a.png", "a.png"), ("  a.png", "a.png"), ("dir/a.png", "a.png"),
            ("a (2).png", "a.png"), ("a (2) (3).png", "a.png"), ("a (x).png", "a (x).png"), ("(2).png", "(2).png"),
            ("a.PNG", "a.PNG"), ("b.png", "b.png"), ("a\u{1}.png", "a.png"),
        ])
    func collisionKeys(offered: String, key: String) {
        #expect(FileName.collisionKey(offered) == key)
    }

    @Test("a name and the suffixed form the receiver would give its second copy share a key")
    func suffixesShareKey() {
        for n in 2...12 {
            #expect(
                FileName.collisionKey(FileName.withSuffix(FileName.sanitize("IMG_1.png"), counter: n))
                    == FileName.collisionKey("IMG_1.png"))
        }
    }

    @Test(
        "a JPEG keeps .jpg or .jpeg in any case and gets .jpg otherwise",
        arguments: [
            ("IMG_0001.jpg", "IMG_0001.jpg"), ("IMG_0001.JPG", "IMG_0001.JPG"), ("scan.jpeg", "scan.jpeg"),
            ("scan.JPEG", "scan.JPEG"),
            ("DCIM/Camera/IMG.jpg", "IMG.jpg"), ("noext", "noext.jpg"), ("photo.png", "photo.png.jpg"),
            ("", "photo.jpg"),
            ("../..", "photo.jpg"), (".jpg", "jpg.jpg"), ("a\u{1}.jpeg", "a.jpeg"),
        ])
    func jpegNames(offered: String, expected: String) {
        #expect(FileName.sanitize(offered, type: .jpeg) == expected)
    }

    @Test("a JPEG's collision suffix goes before .jpg or .jpeg, and a long name keeps its ending")
    func jpegSuffixes() {
        #expect(FileName.withSuffix("IMG.jpg", counter: 2, type: .jpeg) == "IMG (2).jpg")
        #expect(FileName.withSuffix("IMG.JPEG", counter: 3, type: .jpeg) == "IMG (3).JPEG")
        let long = FileName.sanitize(String(repeating: "b", count: 300) + ".jpeg", type: .jpeg)
        #expect(long.utf8.count == 200)
        #expect(long.hasSuffix("b.jpeg"))
        #expect(FileName.withSuffix(long, counter: 7, type: .jpeg).hasSuffix("b (7).jpeg"))
        #expect(FileName.withSuffix(long, counter: 7, type: .jpeg).utf8.count == 200)
    }

    @Test("photo types from media types, name endings and first bytes")
    func photoTypes() {
        #expect(PhotoType(mediaType: "image/png") == .png)
        #expect(PhotoType(mediaType: "IMAGE/JPEG") == .jpeg)
        #expect(PhotoType(mediaType: "image/gif") == nil)
        #expect(PhotoType(fileName: "a.PNG") == .png)
        #expect(PhotoType(fileName: "a.jpeg") == .jpeg)
        #expect(PhotoType(fileName: "a.JPG") == .jpeg)
        #expect(PhotoType(fileName: ".jpg") == nil)
        #expect(PhotoType(fileName: "a.jpg.txt") == nil)
        #expect(PhotoType.sniff([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0]) == .png)
        #expect(PhotoType.sniff([0xFF, 0xD8, 0xFF, 0xE0]) == .jpeg)
        #expect(PhotoType.sniff([0xFF, 0xD8]) == nil)
        #expect(PhotoType.sniff(Array("GIF89a".utf8)) == nil)
    }
}

@Suite("Text", .tags(.unit))
struct TextTests {
    @Test(
        "trimmingSpaces drops the spaces, tabs and carriage returns around a value, and nothing inside",
        arguments: [
            ("  a b  ", "a b"), ("\tkey\t", "key"), ("value\r", "value"), (" \r\t ", ""), ("", ""),
            ("a\u{A0}", "a\u{A0}"), ("é ", "é"),
        ])
    func trims(text: String, trimmed: String) {
        #expect(text.trimmingSpaces == trimmed)
        #expect(text[...].trimmingSpaces == trimmed)
    }
}
