import PTKCloud
import PTKTestTags
import Testing

@Suite("Nextcloud-compatible documents", .tags(.unit))
struct CloudDocumentsTests {
    /// The Android app refuses a major below 20 and warns at or below 30; clients parse the
    /// version from digits and dots.
    @Test func statusIsOneTheAppsAccept() {
        let status = CloudDocuments.status()
        #expect(status["installed"] == .bool(true))
        #expect(status["maintenance"] == .bool(false))
        #expect(status["needsDbUpgrade"] == .bool(false))
        guard case .string(let version)? = status["version"] else {
            Issue.record("no version")
            return
        }
        let parts = version.split(separator: ".").compactMap { Int($0) }
        #expect(parts.count == 4)
        #expect(parts.first.map { $0 > 30 } == true)
        #expect(status["productname"] == .string("ptk"))
        #expect(status["extendedSupport"] == .bool(false))
    }

    /// What changes the clients' behaviour: chunked upload v2 on, SHA-1 checksums, and none of
    /// bulk upload, TUS, locking or encryption (each would send requests the door does not take).
    @Test func capabilitiesSayWhatTheDoorDoes() {
        let c = CloudDocuments.capabilities()
        guard case .object(let version)? = c["version"], case .object? = c["capabilities"] else {
            Issue.record("no version or capabilities")
            return
        }
        #expect(version.first { $0.0 == "major" }?.1 == .int(CloudDocuments.version.major))
        let caps = c["capabilities"]!
        #expect(caps["dav"]?["chunking"] == .string("1.0"))
        #expect(caps["dav"]?["bulkupload"] == nil)
        #expect(caps["files"]?["tus_support"] == nil)
        #expect(caps["files"]?["locking"] == nil)
        #expect(caps["end-to-end-encryption"] == nil)
        #expect(caps["core"]?["pollinterval"] == .int(60))
        #expect(caps["core"]?["webdav-root"] == .string("remote.php/webdav"))
        #expect(caps["checksums"]?["preferredUploadType"] == .string("SHA1"))
        #expect(caps["theming"] == .object([]))
    }

    @Test func userCarriesItsNameAndRoom() {
        let u = CloudDocuments.user(name: "annas-phone", free: 300, used: 100)
        #expect(u["id"] == .string("annas-phone"))
        #expect(u["display-name"] == .string("annas-phone"))
        #expect(u["quota"]?["free"] == .int(300))
        #expect(u["quota"]?["used"] == .int(100))
        #expect(u["quota"]?["total"] == .int(400))
        #expect(u["quota"]?["relative"] == .int(25))
        #expect(u["quota"]?["quota"] == .int(-3))
        // Unknown room: Nextcloud's "not computed".
        #expect(CloudDocuments.user(name: "a", free: nil, used: 0)["quota"]?["free"] == .int(-2))
    }
}
