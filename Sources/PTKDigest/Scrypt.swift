import COpenSSL

/// Password hashing with scrypt (RFC 7914) through OpenSSL: what the web interface's password
/// is kept as. A guess costs `n × r × 128` bytes of memory and about as many operations, so a
/// stolen hash is slow to attack.
public struct Scrypt: Sendable, Equatable {
    /// CPU/memory cost (a power of two), block size and parallelism.
    public var n: UInt64
    /// Block size: the memory each guess needs grows with it.
    public var r: UInt64
    /// Parallelism: how many independent mixes a guess runs, each costing `n × r × 128` bytes.
    public var p: UInt64

    /// 2^15 × 8 × 128 bytes = 32 MiB and about 0.1 s a guess: OWASP's scrypt baseline.
    public static let standard = Scrypt(n: 1 << 15, r: 8, p: 1)

    /// Any values; the stored hash records them, so a later change of `standard` still checks old hashes.
    public init(n: UInt64, r: UInt64, p: UInt64) {
        self.n = n
        self.r = r
        self.p = p
    }

    /// The 32-byte key derived from `password` and `salt`; nil when OpenSSL refuses the
    /// parameters (or memory). The corresponding C function is `EVP_PBE_scrypt`.
    public func derive(password: String, salt: [UInt8], length: Int = 32) -> [UInt8]? {
        var key = [UInt8](repeating: 0, count: length)
        // Room for the work area (128·N·r) and OpenSSL's own bookkeeping.
        let memory = 128 * n * r * p + (16 << 20)
        let ok = Array(password.utf8).withUnsafeBufferPointer { pw in
            pw.withMemoryRebound(to: CChar.self) { pw in
                EVP_PBE_scrypt(pw.baseAddress, pw.count, salt, salt.count, n, r, p, memory, &key, length)
            }
        }
        return ok == 1 ? key : nil
    }
}

/// Whether `a` and `b` are equal, in a time that depends only on their lengths (for secrets).
/// The corresponding C function is `CRYPTO_memcmp`.
public func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
    guard a.count == b.count else { return false }
    if a.isEmpty { return true }
    return CRYPTO_memcmp(a, b, a.count) == 0
}

/// `count` bytes from the kernel's random generator (getrandom), for salts and tokens.
public func randomBytes(_ count: Int) -> [UInt8] {
    var g = SystemRandomNumberGenerator()
    return (0..<count).map { _ in UInt8.random(in: 0...255, using: &g) }
}

/// Bytes from lowercase or upper-case hex; nil for anything else.
public func bytes(fromHex text: String) -> [UInt8]? {
    let utf8 = Array(text.utf8)
    guard utf8.count % 2 == 0 else { return nil }
    func value(_ c: UInt8) -> UInt8? {
        switch c {
        case 0x30...0x39: return c - 0x30
        case 0x61...0x66: return c - 0x61 + 10
        case 0x41...0x46: return c - 0x41 + 10
        default: return nil
        }
    }
    var out: [UInt8] = []
    out.reserveCapacity(utf8.count / 2)
    var i = 0
    while i < utf8.count {
        guard let hi = value(utf8[i]), let lo = value(utf8[i + 1]) else { return nil }
        out.append(hi << 4 | lo)
        i += 2
    }
    return out
}
