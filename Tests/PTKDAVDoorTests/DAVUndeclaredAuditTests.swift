import Foundation
import PTKDAV
import PTKSystem
import PTKTestSupport
import PTKTestTags
import Testing

@testable import PTKDAVDoor
@testable import PTKWebDoor

/// Probes of the bodies of undeclared length (`putUndeclared`, the spool) from the security
/// review of issue 55 (attack-55).
@Suite("WebDAV door: bodies of undeclared length, audited", .tags(.unit))
struct DAVUndeclaredAuditTests {
    @Test(
        "an upload password removed while its chunked PUT of undeclared length is spooled: 401 with its challenge at the next check, the rest unread; nothing kept"
    )
    func removedWhileSpooling() throws {
        let f = try DoorFixture()
        let up1 = try f.appPassword("up1", .upload)
        let png = makePNG(size: 40_000, seed: 5501)
        let put = dav("PUT", "/dav/late.png", up1, body: png, chunked: Array(repeating: 1_000, count: 40))
        // The head and a few chunks, then the rest a chunk's worth at a time.
        var pieces = [Array(put[..<3_000])]
        var at = 3_000
        while at < put.count {
            pieces.append(Array(put[at..<min(at + 1_000, put.count)]))
            at += 1_000
        }
        nonisolated(unsafe) var readToEnd = false
        let stream = GatedHTTPStream(
            pieces,
            before: [
                1: {
                    #expect((try? f.appPasswords.remove(name: "up1")) == true)
                    // Past the 200 ms between two checks of `stop`.
                    Thread.sleep(forTimeInterval: 0.3)
                },
                pieces.count - 1: { readToEnd = true },
            ])
        let answers = f.converse(stream)
        #expect(answers.map(\.status) == [401], "\(answers.map(\.status))")
        #expect(answers.first?.header("www-authenticate")?.hasPrefix("Basic") == true)
        #expect(answers.first?.header("connection") == "close")
        #expect(!readToEnd, "the removed password's body was spooled to its end")
        #expect(f.kept().isEmpty, "\(f.kept())")
        #expect(f.incoming().isEmpty)
    }
}
