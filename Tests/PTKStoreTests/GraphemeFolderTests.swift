import PTKProtocol
import PTKStore
import PTKSystem
import PTKTestTags
import PTKVocabulary
import Testing

/// Folders the store publishes into, against "/" joined by marks into one Character: the rules
/// look at every "/" scalar, as the kernel does.
@Suite("Store folders with marks that join a separator", .tags(.unit))
struct GraphemeFolderTests {
    @Test("isValidFolder refuses climbs, hidden and empty components however marks join their \"/\"")
    func invalid() {
        for folder in [
            "a/\u{301}..", "a/\u{301}", "../\u{301}x", "a/\u{600}/..", "..\u{600}/x", "\u{301}x", "x\u{600}",
            "a/.\u{301}x",
            "a//\u{301}b", "/\u{301}a", "a/b/c/d/\u{301}e", "a\u{600}/b",
        ] {
            #expect(!StoreRequest.isValidFolder(folder), "\(folder.debugDescription)")
        }
        for folder in ["a", "a/b", "x\u{301}/y\u{600}z", "Anna\u{200D}s/2024", "\u{202E}gnp"] {
            #expect(StoreRequest.isValidFolder(folder), "\(folder.debugDescription)")
        }
    }

    @Test("an offered name's folders are split at every \"/\" scalar and each made a valid name")
    func adding() {
        for (offered, expected) in [
            ("../\u{301}x/y.png", "x"), ("a/\u{301}../b.png", "a/unknown"), ("x\u{600}/y/z.png", "x/y"),
            ("\u{600}/\u{301}/..\u{301}/p.png", "unknown/unknown/unknown"), ("./\u{200D}.hidden/p.png", "hidden"),
        ] {
            let folder = StoreRequest.folder("", adding: offered)
            #expect(folder == expected, "\(offered.debugDescription) gives \(folder.debugDescription)")
            #expect(StoreRequest.isValidFolder(folder), "\(folder.debugDescription)")
        }
        #expect(StoreRequest.folder("bob", adding: "1/2/3/4/5.png") == "bob/1/2/3")
    }

    @Test("a package's name is the photo's last component after the last \"/\" scalar")
    func packageNames() {
        #expect(Package.folderName(for: "a/\u{301}b.png") == "\u{301}b.ptk")
        #expect(Package.photoName(forPackage: "/tmp/x/\u{301}b.ptk", type: .png) == "\u{301}b.png")
        #expect(Package.photoName(forPackage: "/tmp/x/b.PTK/", type: .jpeg) == "b.jpg")
    }
}
