import PTKTestSupport
import PTKTestTags
import Testing

/// TLS 1.2 on the LocalSend and web ports offers only ECDHE with an AEAD (Mozilla's
/// "intermediate" profile without DHE), as a real client sees it: `openssl s_client` offering
/// one suite at a time. The ptk v1 port is TLS 1.3 only (TLSTests).
@Suite("End to end: the HTTPS ports' TLS 1.2 suites", .tags(.endToEnd))
struct HTTPSCipherSuiteTests {
    /// The suites testssl.sh found offered before (CBC: LUCKY13, SHA-1 MACs) and static RSA.
    static let refused = [
        "ECDHE-ECDSA-AES128-SHA", "ECDHE-ECDSA-AES256-SHA", "ECDHE-ECDSA-AES128-SHA256", "ECDHE-ECDSA-AES256-SHA384",
        "ECDHE-RSA-AES128-SHA", "ECDHE-RSA-AES256-SHA", "ECDHE-RSA-AES128-SHA256", "ECDHE-RSA-AES256-SHA384",
        "AES128-GCM-SHA256", "AES256-SHA",
    ]

    /// A TLS 1.2 handshake offering `suite` alone: the suite agreed, or nil when refused.
    private func handshake(_ port: UInt16, _ suite: String) throws -> String? {
        let r = try run(
            "/usr/bin/openssl", ["s_client", "-connect", "127.0.0.1:\(port)", "-tls1_2", "-cipher", suite, "-brief"],
            timeout: 20, absolute: true)
        guard r.status == 0 else { return nil }
        let line = r.stderr.split(separator: "\n").first { $0.hasPrefix("Ciphersuite: ") }
        return line.map { String($0.dropFirst("Ciphersuite: ".count)) } ?? "?"
    }

    @Test(
        "LocalSend (RSA key) and web (ECDSA P-256 key): every CBC or non-ECDHE suite refused, ECDHE with GCM or ChaCha20 agreed"
    )
    func onlyAEADWithECDHE() throws {
        let d = try DaemonProcess.withLocalSend(["--web", "on", "--web-port", "0"])
        for (port, key) in [(d.localSendPort, "RSA"), (d.webPort, "ECDSA")] {
            for suite in Self.refused {
                #expect(try handshake(port, suite) == nil, "port \(port) agreed to \(suite)")
            }
            for suite in [
                "ECDHE-\(key)-AES128-GCM-SHA256", "ECDHE-\(key)-AES256-GCM-SHA384", "ECDHE-\(key)-CHACHA20-POLY1305",
            ] {
                #expect(try handshake(port, suite) == suite, "port \(port) refused \(suite): \(d.log.suffix(500))")
            }
        }
        // And TLS 1.3, as before.
        let r = try run(
            "/usr/bin/openssl", ["s_client", "-connect", "127.0.0.1:\(d.webPort)", "-tls1_3", "-brief"], timeout: 20,
            absolute: true)
        #expect(r.status == 0 && r.stderr.contains("Protocol version: TLSv1.3"), "\(r.stderr)")
    }
}
