import PTKTestSupport
import PTKTestTags
import Testing

@testable import PTKWebDoor

/// The audits' hostile HEICs (`HostileHEICs`, issue 54) at the web door's upload: each refused
/// as not a photo, 400 with the reason, and nothing kept.
@Suite("Hostile HEICs at the web door (issue 54)", .tags(.unit))
struct HostileHEIFWebTests {
    @Test("the web upload: 400 with the reason; nothing kept")
    func refused() throws {
        let f = try WebFixture()
        let (cookie, csrf) = try f.login()
        for (name, words) in HostileHEICs.files {
            let b = try #require(HostileHEICs.bytes(name))
            let web = f.run([
                request(
                    "POST", "/upload?name=\(name)",
                    [("Cookie", cookie), ("X-CSRF-Token", csrf), ("Content-Type", "image/heic")], body: b)
            ])
            #expect(web.first.status == 400 && web.first.text.contains(words), "web \(name): \(web.first)")
        }
        #expect(f.kept().isEmpty && f.incoming().isEmpty, "\(f.kept()) \(f.incoming())")
    }
}
