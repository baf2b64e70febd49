import CTLS
import PTKProtocol

/// OpenSSL's error queue as text (the oldest reason first), emptied.
func openSSLErrors() -> String {
    var reasons: [String] = []
    while true {
        let code = ERR_get_error()
        if code == 0 { break }
        var buffer = [CChar](repeating: 0, count: 256)
        ERR_error_string_n(code, &buffer, buffer.count)
        // "error:0A00010B:SSL routines::wrong version number" -> "wrong version number"
        let text = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        reasons.append(text.split(separator: ":", omittingEmptySubsequences: false).last.map(String.init) ?? text)
    }
    return reasons.isEmpty ? "unknown OpenSSL error" : reasons.joined(separator: "; ")
}

/// The DER SubjectPublicKeyInfo of `key`. The corresponding C function is `i2d_PUBKEY`.
func subjectPublicKeyInfo(_ key: OpaquePointer) -> [UInt8] {
    let length = i2d_PUBKEY(key, nil)
    guard length > 0 else { return [] }
    var der = [UInt8](repeating: 0, count: Int(length))
    der.withUnsafeMutableBufferPointer { b in
        var p: UnsafeMutablePointer<UInt8>? = b.baseAddress
        _ = i2d_PUBKEY(key, &p)
    }
    return der
}

/// The SHA-256 of a certificate's DER encoding, 64 upper-case hex digits (LocalSend's fingerprint).
func certificateFingerprint(_ certificate: OpaquePointer) -> String {
    let length = i2d_X509(certificate, nil)
    guard length > 0 else { return "" }
    var der = [UInt8](repeating: 0, count: Int(length))
    der.withUnsafeMutableBufferPointer { b in
        var p: UnsafeMutablePointer<UInt8>? = b.baseAddress
        _ = i2d_X509(certificate, &p)
    }
    let digits = Array("0123456789ABCDEF".utf8)
    return String(decoding: sha256(der).flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 15)]] }, as: UTF8.self)
}

/// SHA-256 of `bytes`. The corresponding C function is `EVP_Digest`.
func sha256(_ bytes: [UInt8]) -> [UInt8] {
    var digest = [UInt8](repeating: 0, count: 32)
    var length: UInt32 = 0
    _ = bytes.withUnsafeBytes { b in EVP_Digest(b.baseAddress, b.count, &digest, &length, EVP_sha256(), nil) }
    return digest
}

/// The device ID of a public key (protocol §6), or nil for a key that is not Ed25519.
func deviceID(ofKey key: OpaquePointer) -> DeviceIdentity {
    let id = DeviceID(sha256: sha256(subjectPublicKeyInfo(key)))
    return EVP_PKEY_get_id(key) == EVP_PKEY_ED25519 ? .ed25519(id) : .otherKey(id, keyTypeName(key))
}

func keyTypeName(_ key: OpaquePointer) -> String {
    switch EVP_PKEY_get_id(key) {
    case EVP_PKEY_ED25519: return "Ed25519"
    case EVP_PKEY_RSA: return "RSA"
    case EVP_PKEY_EC: return "EC"
    case EVP_PKEY_ED448: return "Ed448"
    default: return "type \(EVP_PKEY_get_id(key))"
    }
}

/// What a peer's certificate says about who it is.
public enum DeviceIdentity: Equatable, Sendable, CustomStringConvertible {
    /// An Ed25519 key: a device ID in the sense of protocol §6.
    case ed25519(DeviceID)
    /// A certificate with another kind of key: hashed the same way, but not a ptk device ID.
    case otherKey(DeviceID, String)
    /// No certificate at all.
    case none

    /// The device ID, when the peer has a ptk identity.
    public var deviceID: DeviceID? {
        if case .ed25519(let id) = self { return id }
        return nil
    }

    /// The device ID, or why there is none, for logs and the pending list.
    public var description: String {
        switch self {
        case .ed25519(let id): return id.description
        case .otherKey(_, let type): return "no device ID (\(type) certificate)"
        case .none: return "no device ID (no certificate)"
        }
    }
}
