import PTKDigest
import PTKSystem
import PTKTestSupport
import PTKTestTags
import PTKVocabulary
import Testing

@testable import PTKLibrary

/// `ptk show` says where a photo came from (issue 56): a `source:` line for each inbox file its
/// bytes were taken from, its name escaped as every value (a sender chose it).
@Suite(.tags(.endToEnd)) struct InboxSourceShowTests {
    @Test("ptk show prints 'source:    inbox PATH/RELATIVE' for each source, controls escaped, at most 20")
    func showsSources() throws {
        let dir = makeTemporaryDirectory("ptk-inbox-show")
        defer { removeTree(dir) }
        let library = try PhotoLibrary(directory: dir, create: true)
        for name in ["kept.png", "plain.png", "many.png"] {
            let bytes = makeImagePNG(width: 4, height: 3) { x, y in [UInt8(x), UInt8(y), UInt8(name.utf8.count)] }
            writeFile(dir + "/" + name, bytes)
            try library.record([
                Arrival(
                    name: name, size: Int64(bytes.count), sha256: SHA256.hex(of: bytes),
                    received: WallTime(milliseconds: 1_767_225_600_000), senderName: "Bob",
                    senderAddress: "192.0.2.7:4000", senderID: nil)
            ])
        }
        func record(_ path: BytePath, _ photo: String, _ n: Int64) -> InboxSourceRecord {
            InboxSourceRecord(
                inbox: "/srv/inbox", path: path,
                identity: .init(
                    device: 1, inode: UInt64(n), size: 10, modifiedNanoseconds: n, changedNanoseconds: n),
                sha256: "", photo: photo, taken: WallTime(milliseconds: 1_767_225_600_000 + n))
        }
        let hostile = BytePath(bytes: Array("anna/\u{1B}[2Jx\n".utf8) + [0xE9] + Array(".png".utf8))
        try library.rememberInboxSources(
            [record(BytePath("anna/DCIM/kept.png"), "kept.png", 0), record(hostile, "kept.png", 1)]
                + (0..<25).map { record(BytePath("copies/\($0).png"), "many.png", 10 + Int64($0)) })
        let r = try run("ptk", ["--config", "/dev/null", "--dir", dir, "--state-dir", dir + "/state", "show", "kept"])
        #expect(r.status == 0, "\(r.stderr)")
        let lines = r.stdout.split(separator: "\n").map(String.init)
        #expect(
            lines.filter { $0.hasPrefix("source:") } == [
                "source:    inbox /srv/inbox/anna/DCIM/kept.png",
                "source:    inbox /srv/inbox/anna/\\u{1B}[2Jx\\n\\xE9.png",
            ], "\(r.stdout)")
        #expect(!r.stdout.unicodeScalars.contains { $0 == "\u{1B}" })
        let sender = try #require(lines.firstIndex { $0.hasPrefix("sender:") })
        #expect(lines[sender + 1].hasPrefix("source:"), "after the sender: \(lines)")
        let plain = try run(
            "ptk", ["--config", "/dev/null", "--dir", dir, "--state-dir", dir + "/state", "show", "plain"])
        #expect(plain.status == 0 && !plain.stdout.contains("source:"), "\(plain.stdout)")
        let many = try run(
            "ptk", ["--config", "/dev/null", "--dir", dir, "--state-dir", dir + "/state", "show", "many"])
        let shown = many.stdout.split(separator: "\n").filter { $0.hasPrefix("source:") }
        #expect(shown.count == 21, "\(many.stdout)")
        #expect(shown.first == "source:    inbox /srv/inbox/copies/0.png")
        #expect(shown.last == "source:    (and more inbox files with the same bytes)")
    }
}
