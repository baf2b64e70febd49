import PTKTestTags
import Testing

@testable import PTKTLS

/// What each flavor offers: TLS 1.3's three suites; TLS 1.2 (LocalSend, web) only ECDHE with an
/// AEAD, for ECDSA and RSA keys: no CBC (LUCKY13), no SHA-1 MAC, no static RSA or DHE.
@Suite("Cipher suites per flavor", .tags(.unit))
struct CipherSuiteTests {
    static let tls13 = ["TLS_AES_128_GCM_SHA256", "TLS_CHACHA20_POLY1305_SHA256", "TLS_AES_256_GCM_SHA384"]
    static let tls12 = [
        "ECDHE-ECDSA-AES128-GCM-SHA256", "ECDHE-RSA-AES128-GCM-SHA256",
        "ECDHE-ECDSA-AES256-GCM-SHA384", "ECDHE-RSA-AES256-GCM-SHA384",
        "ECDHE-ECDSA-CHACHA20-POLY1305", "ECDHE-RSA-CHACHA20-POLY1305",
    ]

    static let cases: [(TLSContext.Flavor, Identity.KeyType, Bool)] = [
        (.ptk, .ed25519, true), (.ptk, .ed25519, false),
        (.https, .rsa, true), (.https, .rsa, false),
        (.web, .ecP256, true), (.web, .ecP256, false),
    ]

    @Test("the exact list, in order, per flavor and side", arguments: cases)
    func exactList(flavor: TLSContext.Flavor, keyType: Identity.KeyType, server: Bool) throws {
        let context = try TLSContext(server: server, identity: try Identity.ephemeral(keyType), flavor: flavor)
        let names = context.cipherSuites.map(\.name)
        #expect(
            names == (flavor == .ptk ? Self.tls13 : Self.tls13 + Self.tls12),
            "\(flavor) \(server ? "server" : "client"): \(names)")
    }

    @Test("every TLS 1.2 suite is ECDHE with an AEAD: no CBC, no SHA-1 MAC", arguments: cases)
    func noObsoleteSuites(flavor: TLSContext.Flavor, keyType: Identity.KeyType, server: Bool) throws {
        let context = try TLSContext(server: server, identity: try Identity.ephemeral(keyType), flavor: flavor)
        for suite in context.cipherSuites {
            #expect(suite.isAEAD, "\(suite.name) is not an AEAD")
            #expect(!suite.name.contains("CBC") && !suite.name.hasSuffix("-SHA"), "\(suite.name)")
            if suite.version == "TLSv1.2" {
                #expect(suite.keyExchange == "KxECDHE", "\(suite.name): \(suite.keyExchange)")
            } else {
                #expect(suite.version == "TLSv1.3", "\(suite.name): \(suite.version)")
            }
        }
    }
}
