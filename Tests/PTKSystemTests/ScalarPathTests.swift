import Glibc
import PTKSystem
import PTKTestSupport
import PTKTestTags
import PTKVocabulary
import Testing

/// Paths split as the kernel splits them: at every "/" scalar, even one that a combining mark
/// after it (or a prepended mark before it) joins into a single Character.
@Suite("Path rules by scalars", .tags(.unit))
struct ScalarPathTests {
    static let climbing = [
        "../\u{301}x", "\u{600}/../x", "a/\u{301}../../x", "./\u{200D}x", "x/\u{FE0F}/..", "a//\u{301}b", "/\u{301}x",
        "x/\u{301}/",
    ]

    @Test("\"/\" is found wherever a mark joins it")
    func split() {
        #expect(pathComponents("../\u{301}x") == ["..", "\u{301}x"])
        #expect("../\u{301}x".split(separator: "/").count == 1, "Swift's Character split sees one part")
        #expect(pathComponents("/a//b/") == ["", "a", "", "b", ""])
        #expect("a;\u{301}b".parts(separatedBy: ";", omittingEmpty: true) == ["a", "\u{301}b"])
        #expect(splitLastComponent("a/\u{600}b/\u{301}c") == ("a/\u{600}b", "\u{301}c"))
        #expect(splitLastComponent("abc") == (nil, "abc"))
        #expect(lastPathComponent("x/\u{301}y.png") == "\u{301}y.png")
        #expect("a/\u{301}b".containsScalar("/") && !"a/\u{301}b".contains("/"))
        #expect(".\u{301}x".startsWithScalar(".") && !".\u{301}x".hasPrefix("."))
        #expect("..".isDotOrDotDot && ".".isDotOrDotDot && !"..\u{301}".isDotOrDotDot && !"\u{301}..".isDotOrDotDot)
        #expect(
            droppingTrailingSlashes("a/b//") == "a/b" && droppingTrailingSlashes("/") == "/"
                && droppingTrailingSlashes("a/\u{301}") == "a/\u{301}")
    }

    @Test(
        "parentBeneath and openDirectoryBeneath refuse \"..\", \".\" and empty components however marks join them",
        arguments: climbing)
    func refused(path: String) throws {
        let dir = makeTemporaryDirectory("ptk-beneath")
        defer { removeTree(dir) }
        try makeDirectories(dir + "/inner")
        let inner = try FileDescriptor.open(dir + "/inner", flags: [.readOnly, .directory])
        defer { inner.close() }
        do {
            let place = try inner.parentBeneath(path)
            place.close()
            Issue.record("parentBeneath took \(path.debugDescription)")
        } catch {
            #expect(error.errno == EINVAL, "\(error)")
        }
        do {
            let made = try inner.openDirectoryBeneath(path, creating: 0o755, ownerOf: dir)
            made.close()
            Issue.record("openDirectoryBeneath took \(path.debugDescription)")
        } catch {
            #expect(error.errno == EINVAL, "\(error)")
        }
        // Nothing was made, inside or beside.
        #expect(listDirectory(dir) == ["inner"])
        #expect(listDirectory(dir + "/inner") == [])
    }

    @Test("a folder whose name starts with a mark is one component below, not a climb")
    func markedNames() throws {
        let dir = makeTemporaryDirectory("ptk-beneath")
        defer { removeTree(dir) }
        let top = try FileDescriptor.open(dir, flags: [.readOnly, .directory])
        defer { top.close() }
        let made = try top.openDirectoryBeneath("a/\u{301}b", creating: 0o755, ownerOf: dir)
        made.close()
        #expect(listDirectory(dir + "/a") == ["\u{301}b"])
        let place = try top.parentBeneath("a/\u{301}b/c.png")
        defer { place.close() }
        #expect(place.name == "c.png")
    }
}
