import CTLS

/// The cipher suites a context offers and accepts, set here for every flavor.
extension TLSContext {
    /// TLS 1.3's suites. AES-128-GCM first: 128-bit security at less CPU per byte than AES-256
    /// (both run on AES-NI here); ChaCha20 for CPUs without it.
    static let tls13CipherSuites = "TLS_AES_128_GCM_SHA256:TLS_CHACHA20_POLY1305_SHA256:TLS_AES_256_GCM_SHA384"

    /// TLS 1.2's suites (the LocalSend and web flavors; ptk v1 is TLS 1.3 only): Mozilla's
    /// "intermediate" profile without its DHE suites. Forward secrecy by ECDHE, and an AEAD
    /// (AES-GCM, ChaCha20-Poly1305) for ECDSA keys (the web's P-256; Ed25519 signs through the
    /// ECDSA suites too) and RSA keys (LocalSend's identity). No CBC suite (LUCKY13, no SHA-1 MAC),
    /// no static RSA key exchange. Dart's TLS (BoringSSL, the LocalSend app) and browsers offer
    /// these; rustls has only these.
    static let tls12CipherList = [
        "ECDHE-ECDSA-AES128-GCM-SHA256", "ECDHE-RSA-AES128-GCM-SHA256",
        "ECDHE-ECDSA-AES256-GCM-SHA384", "ECDHE-RSA-AES256-GCM-SHA384",
        "ECDHE-ECDSA-CHACHA20-POLY1305", "ECDHE-RSA-CHACHA20-POLY1305",
    ].joined(separator: ":")

    /// One cipher suite a context offers.
    public struct CipherSuite: Sendable, Equatable, CustomStringConvertible {
        /// OpenSSL's name ("ECDHE-RSA-AES128-GCM-SHA256", "TLS_AES_128_GCM_SHA256").
        public let name: String
        /// The lowest protocol version it runs in ("TLSv1.2", "TLSv1.3").
        public let version: String
        /// Whether its cipher is an AEAD (no separate MAC).
        public let isAEAD: Bool
        /// The key exchange: "kx-ecdhe", "kx-rsa", ..., or "kx-any" (TLS 1.3's suites).
        public let keyExchange: String
        /// OpenSSL's name alone.
        public var description: String { name }
    }

    /// The suites this context offers (as a client) or accepts (as a server), in its order, for
    /// the protocol versions it allows (SSL_get1_supported_ciphers on a connection made from it).
    public var cipherSuites: [CipherSuite] {
        guard let ssl = SSL_new(context) else { return [] }
        defer { SSL_free(ssl) }
        guard let stack = SSL_get1_supported_ciphers(ssl) else { return [] }
        defer { ptk_ciphers_free(stack) }
        return (0..<ptk_ciphers_count(stack)).compactMap { i in
            guard let cipher = ptk_ciphers_value(stack, i) else { return nil }
            return CipherSuite(
                name: String(cString: SSL_CIPHER_get_name(cipher)),
                version: String(cString: SSL_CIPHER_get_version(cipher)),
                isAEAD: SSL_CIPHER_is_aead(cipher) == 1,
                keyExchange: String(cString: OBJ_nid2sn(SSL_CIPHER_get_kx_nid(cipher))))
        }
    }
}
