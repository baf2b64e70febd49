import Glibc
import PTKSystem
import PTKTestSupport
import PTKTestTags
import Testing

@testable import PTKInboxDoor

/// Makes `path`'s folders below `root` and writes `bytes` there.
private func put(_ root: String, _ path: String, _ bytes: [UInt8] = [1, 2, 3]) {
    writeFile(in: root, path, bytes)
}

@Suite("The inbox door's walk of a folder (InboxScan)", .tags(.unit))
struct InboxScanTests {
    private func scan(_ root: String, crossMounts: Bool = false) throws -> (InboxScan.Result, [String]) {
        let fd = try FileDescriptor.open(root, flags: [.readOnly, .directory])
        defer { fd.close() }
        var entered: [String] = []
        let device = try fd.status().device
        let result = InboxScan(root: fd, rootDevice: device, crossMounts: crossMounts).run {
            components, _ in entered.append(components.joined(separator: "/"))
        }
        return (result, entered.sorted())
    }

    @Test(
        "candidates at every level; dot folders, ptk's and Syncthing's never entered; litter and temporaries never listed"
    )
    func candidates() throws {
        let root = makeTemporaryDirectory("ptk-scan")
        defer { removeTree(root) }
        put(root, "a.png")
        put(root, "anna/DCIM/b.jpg")
        put(root, "anna/DCIM/.syncthing.c.jpg.tmp")
        put(root, "anna/.stversions/d.jpg")
        put(root, ".ptk/thumbs/e.png")
        put(root, "bob/f.png.part")
        put(root, "bob/._g.png")
        let (result, entered) = try scan(root)
        #expect(result.files.map { $0.components.joined(separator: "/") }.sorted() == ["a.png", "anna/DCIM/b.jpg"])
        #expect(entered == ["", "anna", "anna/DCIM", "bob"])
        #expect(result.unreadable.isEmpty && !result.truncated)
    }

    @Test("a symlink to a folder is listed as a file to judge (never entered), a symlink to a file is not followed")
    func links() throws {
        let root = makeTemporaryDirectory("ptk-scan")
        let outside = makeTemporaryDirectory("ptk-scan-outside")
        defer {
            removeTree(root)
            removeTree(outside)
        }
        put(outside, "secret/x.png")
        symlink(outside + "/secret", root + "/folder-link")
        symlink(outside + "/secret/x.png", root + "/file-link.png")
        let (result, entered) = try scan(root)
        #expect(entered == [""])
        let listed = result.files.map { ($0.components.joined(separator: "/"), $0.status.isSymlink) }
        #expect(listed.sorted { $0.0 < $1.0 }.map(\.0) == ["file-link.png", "folder-link"])
        #expect(listed.allSatisfy { $0.1 }, "listed as what they are: links")
    }

    @Test("a FIFO is listed with its kind (the intake never opens it), beside the folders walked")
    func fifo() throws {
        let root = makeTemporaryDirectory("ptk-scan")
        defer { removeTree(root) }
        put(root, "ok/a.png")
        mkfifo(root + "/pipe.png", 0o644)
        let (result, _) = try scan(root)
        #expect(result.files.map { $0.components.joined(separator: "/") }.sorted() == ["ok/a.png", "pipe.png"])
        #expect(result.files.first { $0.components == ["pipe.png"] }?.status.isRegularFile == false)
    }
}
