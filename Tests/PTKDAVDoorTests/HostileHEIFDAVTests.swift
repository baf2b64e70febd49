import PTKTestSupport
import PTKTestTags
import Testing

@testable import PTKDAVDoor

/// The audits' hostile HEICs (`HostileHEICs`, issue 54) at the WebDAV door, on the web port as
/// a client reaches it: each PUT refused as not a photo, 400 with the reason, and nothing kept.
@Suite("Hostile HEICs at the WebDAV door (issue 54)", .tags(.unit))
struct HostileHEIFDAVTests {
    @Test("a PUT of each: 400 with the reason; nothing kept")
    func refused() throws {
        let f = try DoorFixture()
        let desk = try f.appPassword("desk")
        for (name, words) in HostileHEICs.files {
            let b = try #require(HostileHEICs.bytes(name))
            let dav = f.dav(dav("PUT", "/dav/\(name)", desk, body: b))
            #expect(dav.first.status == 400 && dav.first.text.contains(words), "WebDAV \(name): \(dav.first)")
        }
        #expect(f.kept().isEmpty && f.incoming().isEmpty, "\(f.kept()) \(f.incoming())")
    }
}
