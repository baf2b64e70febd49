import PTKDigest
import PTKStore
import PTKSystem
import PTKTestSupport
import PTKTestTags
import PTKVocabulary
import Testing

@testable import PTKLibrary

/// The naming rules against texts that put a "/" next to marks that join it into one Character
/// (grapheme cluster) with its neighbours: a Character-by-Character path split misses them. (The
/// static gallery's page against such texts: Tests/PTKWebTests/HostileGalleryTests.swift.)
@Suite("Hostile texts in renames", .tags(.unit))
struct HostileRenameTests {
    @Test("a rename to a path whose \"/\" carries a combining mark is refused like any other climb out")
    func renameThroughMarks() throws {
        let f = Fixture()
        let bytes = photoBytes(1)
        try f.receive("a.png", bytes)
        for bad in [
            "../\u{301}x.png", "..\u{600}/x.png", "x/\u{301}../../y.png", "a/\u{301}../b.png", "\u{301}/x.png",
            ".\u{301}/x.png", "/\u{301}../x.png",
        ] {
            do {
                _ = try f.library.rename("a.png", to: bad)
                Issue.record("renamed to \(bad.debugDescription)")
            } catch {
                #expect(error.kind == .refused, "\(bad.debugDescription): \(error)")
            }
        }
        #expect(readFile(f.directory + "/a.png") == bytes)
        #expect(try f.library.find("a.png").name == "a.png")
        // The name a rename gives never has a "/" the path rules did not check, nor starts with one.
        for newName in ["../\u{301}x.png", "x/\u{301}y.png", "\u{600}/etc", "\u{301}x.png", "/\u{301}x.png"] {
            let name = PhotoLibrary.renamed("a.png", to: newName, type: .png)
            #expect(
                !name.startsWithScalar("/") && !name.startsWithScalar("."),
                "\(newName.debugDescription) gives \(name.debugDescription)")
            #expect(
                pathComponents(name).allSatisfy { !$0.isEmpty && !$0.isDotOrDotDot && !$0.startsWithScalar(".") },
                "\(name.debugDescription)")
        }
    }
}
