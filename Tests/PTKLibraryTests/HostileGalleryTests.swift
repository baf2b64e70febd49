import PTKDigest
import PTKStore
import PTKSystem
import PTKTestSupport
import Testing

@testable import PTKLibrary

/// The static gallery (`ptk gallery`) and the naming rules against texts that put `<`, `>`,
/// `"`, `'` and `&` next to marks that join them into one Character (grapheme cluster) with
/// their neighbours: a Character-by-Character escaper or path split misses them.
@Suite("Hostile texts in the static gallery and in renames")
struct HostileGalleryTests {
    static let marks = ["\u{301}", "\u{600}", "\u{200D}", "\u{FE0F}", "\u{202E}"]

    /// A hostile text around mark `m`, with no "/" when `slashes` is false (a file or folder name).
    static func text(_ m: String, _ i: Int, slashes: Bool = true) -> String {
        var s = "x\u{600}<b id=pwn\(i)>\(m) \(m)\"\(m) data-pwn\(i)=1 x=\(m)\"\(m) \(m)'\(m) data-q\(i)='\(m) &\(m)amp;\(m)&\(m)"
        if slashes {
            s += " \u{600}</title>\(m)\u{600}<meta http-equiv=refresh content=0;url=//evil.example/>\(m)\u{600}<base href=//evil.example/>\(m)"
                + " \u{600}<img src='//evil.example/?\(m)"
        }
        return s
    }

    static func harmless(_ s: String) -> String {
        var out = String.UnicodeScalarView()
        for u in s.unicodeScalars { out.append(["<", ">", "\"", "'", "&"].contains(u) ? "_" : u) }
        return String(out)
    }

    /// A library in a directory named by `t(0)`, holding two photos named, noted and sent by
    /// `t(k)`; returns its gallery page.
    static func gallery(_ t: (Int) -> String) throws -> String {
        let directory = makeTemporaryDirectory("ptk-gallery " + t(0))
        defer { removeTree(directory) }
        let library = try PhotoLibrary(directory: directory, create: true)
        let names = [t(1) + "/" + t(2) + ".png", t(3) + ".png"]
        try makeDirectories(directory + "/" + t(1))
        for (i, name) in names.enumerated() {
            let bytes = photoBytes(i + 1)
            writeFile(directory + "/" + name, bytes)
            try library.record([Arrival(name: name, size: Int64(bytes.count), sha256: SHA256.hex(of: bytes),
                                        received: WallTime(milliseconds: 1_700_000_000_000 + Int64(i) * 1000),
                                        senderName: t(4 + i), senderAddress: t(6 + i), senderID: t(8 + i))])
            while let id = try library.pending(limit: 1).first { try library.index(id: id) }
            _ = try library.setNote(name, t(10 + i))
            _ = try library.setRating(name, 4)
        }
        // What the photo says of itself (EXIF), and a thumbnail's problem, as the indexer records them.
        try library.database.prepare("UPDATE photos SET camera_make = ?, camera_model = ?, taken = ?, problem = ?")
            .bind(t(12), t(13), "2024-05-06 07:08" + t(14), t(15)).run()
        try library.database.prepare("UPDATE photos SET thumbnail = 0 WHERE name = ?").bind(names[1]).run()
        let page = try library.gallery()
        #expect(page.photos == 2)
        return String(decoding: try #require(readFile(page.path)), as: UTF8.self)
    }

    @Test("the static gallery with hostile texts in every field has exactly the elements and attributes it has with harmless ones",
          arguments: HostileGalleryTests.marks.indices)
    func staticGallery(mark: Int) throws {
        let m = Self.marks[mark]
        // Names of files and folders cannot hold "/"; notes, senders and the rest can.
        let text = { (k: Int) in Self.text(m, k, slashes: k > 3) }
        let hostile = try Self.gallery(text)
        let harmless = try Self.gallery { Self.harmless(text($0)) }
        let structure = try htmlStructure([hostile, harmless]).get()
        #expect(structure[0] == structure[1], "\(Set(structure[0]).subtracting(structure[1]).sorted())")
        #expect(!structure[0].contains { $0.contains("pwn") || $0.contains("data-q") || $0.contains("\"base\"") })
        #expect(structure[0].filter { $0.hasPrefix("[\"start\", \"figure\"") }.count == 2)
    }

    @Test("a rename to a path whose \"/\" carries a combining mark is refused like any other climb out")
    func renameThroughMarks() throws {
        let f = Fixture()
        let bytes = photoBytes(1)
        try f.receive("a.png", bytes)
        for bad in ["../\u{301}x.png", "..\u{600}/x.png", "x/\u{301}../../y.png", "a/\u{301}../b.png", "\u{301}/x.png", ".\u{301}/x.png", "/\u{301}../x.png"] {
            do { _ = try f.library.rename("a.png", to: bad); Issue.record("renamed to \(bad.debugDescription)") } catch {
                #expect(error.kind == .refused, "\(bad.debugDescription): \(error)")
            }
        }
        #expect(readFile(f.directory + "/a.png") == bytes)
        #expect(try f.library.find("a.png").name == "a.png")
        // The name a rename gives never has a "/" the path rules did not check, nor starts with one.
        for newName in ["../\u{301}x.png", "x/\u{301}y.png", "\u{600}/etc", "\u{301}x.png", "/\u{301}x.png"] {
            let name = PhotoLibrary.renamed("a.png", to: newName, type: .png)
            #expect(!name.startsWithScalar("/") && !name.startsWithScalar("."), "\(newName.debugDescription) gives \(name.debugDescription)")
            #expect(pathComponents(name).allSatisfy { !$0.isEmpty && !$0.isDotOrDotDot && !$0.startsWithScalar(".") }, "\(name.debugDescription)")
        }
    }
}
