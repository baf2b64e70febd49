import COpenSSL

/// Streaming SHA-256 through OpenSSL's EVP interface.
public struct SHA256: ~Copyable {
    private let context: OpaquePointer

    /// A fresh hash. The corresponding C functions are `EVP_MD_CTX_new` and `EVP_DigestInit_ex`.
    public init() {
        guard let ctx = EVP_MD_CTX_new(), EVP_DigestInit_ex(ctx, EVP_sha256(), nil) == 1 else {
            // Only an out-of-memory OpenSSL fails here; nothing sensible can continue.
            fatalError("OpenSSL could not start a SHA-256 context")
        }
        context = ctx
    }

    deinit { EVP_MD_CTX_free(context) }

    /// Adds bytes. The corresponding C function is `EVP_DigestUpdate`.
    public mutating func update(_ bytes: UnsafeRawBufferPointer) {
        guard bytes.count > 0 else { return }
        EVP_DigestUpdate(context, bytes.baseAddress, bytes.count)
    }

    /// Adds bytes.
    public mutating func update<C: ContiguousBytes>(_ bytes: C) {
        bytes.withUnsafeBytes { update($0) }
    }

    /// The digest as 64 lowercase hex digits; the hash starts over afterwards.
    /// The corresponding C function is `EVP_DigestFinal_ex`.
    public mutating func finalizeHex() -> String {
        var digest = [UInt8](repeating: 0, count: 32)
        var len: UInt32 = 0
        EVP_DigestFinal_ex(context, &digest, &len)
        EVP_DigestInit_ex(context, EVP_sha256(), nil)
        return PTKDigest.hex(digest)
    }

    /// The SHA-256 of `bytes` as lowercase hex.
    public static func hex<C: ContiguousBytes>(of bytes: C) -> String {
        var h = SHA256()
        h.update(bytes)
        return h.finalizeHex()
    }
}

/// A contiguous byte container (Array, ArraySlice) that can lend its bytes.
public protocol ContiguousBytes {
    func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R
}
extension Array: ContiguousBytes where Element == UInt8 {}
extension ArraySlice: ContiguousBytes where Element == UInt8 {}

/// Lowercase hex of `bytes`.
public func hex<S: Sequence>(_ bytes: S) -> String where S.Element == UInt8 {
    let digits = Array("0123456789abcdef".utf8)
    var out: [UInt8] = []
    for b in bytes {
        out.append(digits[Int(b >> 4)])
        out.append(digits[Int(b & 0x0F)])
    }
    return String(decoding: out, as: UTF8.self)
}
