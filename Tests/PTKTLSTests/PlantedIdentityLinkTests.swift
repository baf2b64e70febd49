import Glibc
import PTKSystem
import PTKTestSupport
import PTKTestTags
import Testing

@testable import PTKTLS

@Suite("Planted links at the identity directory (issue 42)", .tags(.unit))
struct PlantedIdentityLinkTests {
    /// The bytes and status of every file in `dir`.
    static func snapshot(_ dir: String) -> [String: ([UInt8]?, FileStatus?)] {
        var out: [String: ([UInt8]?, FileStatus?)] = [:]
        // A file that cannot be stat'ed shows as nil, which a later snapshot must match.
        for name in listDirectory(dir) { out[name] = (readFile(dir + "/" + name), try? fileStatus(dir + "/" + name)) }
        return out
    }

    static func same(_ a: [String: ([UInt8]?, FileStatus?)], _ b: [String: ([UInt8]?, FileStatus?)]) -> Bool {
        a.keys.sorted() == b.keys.sorted()
            && a.allSatisfy { name, value in b[name]!.0 == value.0 && b[name]!.1 == value.1 }
    }

    @Test(
        "STATE/identity as a symlink to another directory: ptkd's loadOrCreate and ptk id's load refuse it, naming it; nothing there is read, made or changed"
    )
    func identityDirectoryLink() throws {
        let state = makeTemporaryDirectory("ptk-planted-state")
        let outside = makeTemporaryDirectory("ptk-planted-outside")
        defer {
            removeTree(state)
            removeTree(outside)
        }
        if geteuid() == 0 { chown(state, 65534, 65534) }
        writeFile(outside + "/notes", Array("a file of someone else's\n".utf8))
        chmod(outside + "/notes", 0o640)
        let before = Self.snapshot(outside)
        symlink(outside, state + "/identity")
        let refused: (any Error) -> Bool = { error in
            let text = "\(error)"
            return text.contains(state + "/identity") && text.contains("symbolic link") && text.contains("not followed")
        }

        #expect { _ = try Identity.loadOrCreate(in: state + "/identity", commonName: "a") } throws: { refused($0) }
        #expect { _ = try Identity.load(from: state + "/identity") } throws: { refused($0) }
        #expect(Self.same(before, Self.snapshot(outside)))

        // A real identity at the link's target is not read either (ptk id would print it).
        for name in ["key.pem", "cert.pem"] {
            writeFile(outside + "/" + name, try #require(readFile(fixture + "/" + name)))
        }
        let withKey = Self.snapshot(outside)
        #expect { _ = try Identity.load(from: state + "/identity") } throws: { refused($0) }
        #expect { _ = try Identity.loadOrCreate(in: state + "/identity", commonName: "a") } throws: { refused($0) }
        #expect(Self.same(withKey, Self.snapshot(outside)))
    }

    @Test("a key.pem or cert.pem planted as a symlink is refused, not read or replaced through")
    func keyFileLink() throws {
        let state = makeTemporaryDirectory("ptk-planted-state")
        let outside = makeTemporaryDirectory("ptk-planted-outside")
        defer {
            removeTree(state)
            removeTree(outside)
        }
        _ = try Identity.loadOrCreate(in: state + "/identity", commonName: "a")
        for name in ["key.pem", "cert.pem"] {
            writeFile(outside + "/" + name, try #require(readFile(fixture + "/" + name)))
        }
        let before = Self.snapshot(outside)
        unlink(state + "/identity/key.pem")
        symlink(outside + "/key.pem", state + "/identity/key.pem")
        #expect { _ = try Identity.load(from: state + "/identity") } throws: {
            "\($0)".contains(state + "/identity/key.pem") && "\($0)".contains("symbolic link")
        }
        #expect { _ = try Identity.loadOrCreate(in: state + "/identity", commonName: "a") } throws: {
            "\($0)".contains("symbolic link")
        }
        #expect(Self.same(before, Self.snapshot(outside)))
    }
}
