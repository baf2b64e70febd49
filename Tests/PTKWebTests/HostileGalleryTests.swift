import PTKSystem
import PTKTestTags
import PTKWeb
import Testing

/// The static gallery (`ptk gallery`) against texts that put `<`, `>`, `"`, `'` and `&` next to
/// marks that join them into one Character (grapheme cluster) with their neighbours: a
/// Character-by-Character escaper or path split misses them. (Moved here from the library's
/// tests with the page; the library's writing of it: PTKLibraryTests' GalleryTests.)
@Suite("Hostile texts in the static gallery", .tags(.unit))
struct HostileGalleryTests {
    static let marks = ["\u{301}", "\u{600}", "\u{200D}", "\u{FE0F}", "\u{202E}"]

    /// A hostile text around mark `m`, with no "/" when `slashes` is false (a file or folder name).
    static func text(_ m: String, _ i: Int, slashes: Bool = true) -> String {
        var s =
            "x\u{600}<b id=pwn\(i)>\(m) \(m)\"\(m) data-pwn\(i)=1 x=\(m)\"\(m) \(m)'\(m) data-q\(i)='\(m) &\(m)amp;\(m)&\(m)"
        if slashes {
            s +=
                " \u{600}</title>\(m)\u{600}<meta http-equiv=refresh content=0;url=//evil.example/>\(m)\u{600}<base href=//evil.example/>\(m)"
                + " \u{600}<img src='//evil.example/?\(m)"
        }
        return s
    }

    static func harmless(_ s: String) -> String {
        var out = String.UnicodeScalarView()
        for u in s.unicodeScalars { out.append(["<", ">", "\"", "'", "&"].contains(u) ? "_" : u) }
        return String(out)
    }

    /// The gallery page of a directory named by `t(0)`, as the library writes it in
    /// `.ptk/gallery/`, holding two photos named, noted and sent by `t(k)`, the second without
    /// a thumbnail (its problem shown instead).
    static func gallery(_ t: (Int) -> String) -> String {
        let names = [t(1) + "/" + t(2) + ".png", t(3) + ".png"]
        let photos = names.enumerated().map { i, name in
            WebPhoto(
                id: Int64(i + 1), name: name, sha256: String(repeating: "a", count: 64), displayedWidth: 40,
                displayedHeight: 30,
                received: WallTime(milliseconds: 1_700_000_000_000 + Int64(i) * 1000),
                takenMinutes: String(("2024-05-06 07:08" + t(14)).prefix(16)), day: "2024-05-06",
                senderName: t(4 + i), note: t(10 + i), rating: 4, indexed: true, hasThumbnail: i == 0, problem: t(15))
        }
        return StaticGallery.page(
            directory: "/tmp/ptk-gallery " + t(0), photos: photos.reversed(), photosLink: "../..",
            thumbnailsLink: "../thumbnails")
    }

    @Test(
        "the static gallery with hostile texts in every field has exactly the elements and attributes it has with harmless ones",
        arguments: HostileGalleryTests.marks.indices)
    func staticGallery(mark: Int) throws {
        let m = Self.marks[mark]
        // Names of files and folders cannot hold "/"; notes, senders and the rest can.
        let text = { (k: Int) in Self.text(m, k, slashes: k > 3) }
        let hostile = Self.gallery(text)
        let harmless = Self.gallery { Self.harmless(text($0)) }
        let structure = try htmlStructure([hostile, harmless])
        #expect(structure[0] == structure[1], "\(Set(structure[0]).subtracting(structure[1]).sorted())")
        #expect(!structure[0].contains { $0.contains("pwn") || $0.contains("data-q") || $0.contains("\"base\"") })
        #expect(structure[0].filter { $0.hasPrefix("[\"start\", \"figure\"") }.count == 2)
    }
}
