import PTKTestTags
import Testing

@testable import PTKVocabulary

/// The naming rules against "/" and "\" that a mark joins into one Character (grapheme cluster)
/// with their neighbours: "/\u{301}" equals no "/" Character, yet the kernel sees a "/".
@Suite("Final names with marks that join a separator", .tags(.unit))
struct GraphemeNameTests {
    static let offered = [
        "x/\u{301}y.png", "../\u{301}y.png", "\u{600}/etc", "..\u{600}/x.png", "x\\\u{301}y.png",
        "a\u{600}\\\u{301}b.png",
        "/\u{301}", "\u{301}", "\u{301}.hidden.png", ".\u{301}hidden.png", "\u{200D}/\u{FE0F}/\u{202E}x.png",
        "x/\u{200D}.png",
        "/\u{301}..", "..\u{301}", "\u{600}..", "x\u{600}/\u{301}..\u{600}/\u{301}y.png",
    ]

    @Test(
        "a sanitised name has no \"/\" or \"\\\" scalar, no leading dot and no leading mark that joins a \"/\"",
        arguments: offered)
    func sanitize(offered: String) {
        for type in PhotoType.allCases {
            let name = FileName.sanitize(offered, type: type)
            #expect(
                !name.unicodeScalars.contains("/") && !name.unicodeScalars.contains("\\"),
                "\(offered.debugDescription) gives \(name.debugDescription)")
            #expect(name.unicodeScalars.first != "." && name.unicodeScalars.first != " ", "\(name.debugDescription)")
            #expect(!FileName.joinsSlashBefore(name.unicodeScalars.first!), "\(name.debugDescription)")
            #expect(FileName.collisionKey(offered).unicodeScalars.contains("/") == false)
        }
    }

    @Test("the last component is the one after the last \"/\" scalar")
    func lastComponent() {
        #expect(FileName.sanitize("x/\u{301}y.png") == "y.png")
        #expect(FileName.sanitize("../\u{301}y.png") == "y.png")
        #expect(FileName.sanitize("\u{600}/etc") == "etc.png")
        #expect(FileName.sanitize("a/b\u{600}") == "b\u{600}.png")
        #expect(FileName.sanitize("\u{301}\u{301}") == "photo.png")
    }

    @Test(
        "a folder name has no separator, no leading mark that joins the \"/\" before it, no trailing one that joins the \"/\" after it",
        arguments: offered)
    func folderComponent(text: String) {
        let folder = FileName.folderComponent(text)
        #expect(!folder.unicodeScalars.contains("/") && !folder.unicodeScalars.contains("\\"))
        #expect(
            folder.unicodeScalars.first != "." && !FileName.joinsSlashBefore(folder.unicodeScalars.first!),
            "\(folder.debugDescription)")
        #expect(!FileName.joinsSlashAfter(folder.unicodeScalars.last!), "\(folder.debugDescription)")
        // So a path made of such folders splits the same by Characters as by scalars.
        let path = folder + "/" + folder + "/" + FileName.sanitize(text)
        #expect(path.split(separator: "/").count == 3, "\(path.debugDescription)")
    }

    @Test("what joins a \"/\" into one Character")
    func joiners() {
        #expect(
            FileName.joinsSlashBefore("\u{301}") && FileName.joinsSlashBefore("\u{200D}")
                && FileName.joinsSlashBefore("\u{FE0F}"))
        #expect(
            !FileName.joinsSlashBefore("\u{600}") && !FileName.joinsSlashBefore("a")
                && !FileName.joinsSlashBefore("\u{202E}"))
        #expect(
            FileName.joinsSlashAfter("\u{600}") && !FileName.joinsSlashAfter("\u{301}")
                && !FileName.joinsSlashAfter("x"))
    }
}
