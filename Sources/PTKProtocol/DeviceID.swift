/// A peer's device identity (protocol §6): the SHA-256 of its certificate's
/// SubjectPublicKeyInfo, shown in RFC 4648 base32, upper case, without padding (52 characters).
public struct DeviceID: Hashable, Sendable, CustomStringConvertible, Comparable {
    /// The 52 base32 characters, no dashes.
    public let compact: String

    static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567".utf8)
    /// Characters of an encoded ID.
    public static let length = 52

    /// The ID of the key whose SubjectPublicKeyInfo hashes to `digest` (32 bytes).
    public init(sha256 digest: [UInt8]) {
        precondition(digest.count == 32, "a device ID is made from a 32-byte SHA-256 digest")
        compact = Self.base32(digest)
    }

    /// Parses an ID as a person may type it: case, spaces and dashes are ignored. Nil unless
    /// exactly 52 base32 characters remain, the last of which leaves no stray bits.
    public init?(parsing text: String) {
        guard let n = Self.normalized(text), n.utf8.count == Self.length else { return nil }
        // 52 characters carry 260 bits; the last 4 must be zero for a 256-bit digest.
        guard let last = Self.alphabet.firstIndex(of: n.utf8.last!), last & 0x0F == 0 else { return nil }
        compact = n
    }

    /// `text` upper-cased without spaces and dashes, or nil when a character is not base32.
    public static func normalized(_ text: String) -> String? {
        var out: [UInt8] = []
        for var c in text.utf8 {
            if c == UInt8(ascii: "-") || c == UInt8(ascii: " ") { continue }
            if c >= UInt8(ascii: "a") && c <= UInt8(ascii: "z") { c -= 32 }
            guard alphabet.contains(c) else { return nil }
            out.append(c)
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// 13 groups of 4 joined by dashes, as people read it.
    public var description: String {
        var groups: [Substring] = []
        var rest = Substring(compact)
        while !rest.isEmpty {
            groups.append(rest.prefix(4))
            rest = rest.dropFirst(4)
        }
        return groups.joined(separator: "-")
    }

    /// The first two groups, for lists and progress lines.
    public var short: String { String(description.prefix(9)) }

    /// True when `prefix` (as typed: any case, dashes, spaces) starts this ID.
    public func hasPrefix(_ prefix: String) -> Bool {
        guard let p = Self.normalized(prefix), !p.isEmpty else { return false }
        return compact.hasPrefix(p)
    }

    /// Orders by the compact form, so lists of devices come out the same every time.
    public static func < (a: DeviceID, b: DeviceID) -> Bool { a.compact < b.compact }

    /// RFC 4648 base32 without padding.
    static func base32(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count * 8 + 4) / 5)
        var buffer: UInt32 = 0
        var bits = 0
        for b in bytes {
            buffer = (buffer << 8) | UInt32(b)
            bits += 8
            while bits >= 5 {
                bits -= 5
                out.append(alphabet[Int((buffer >> UInt32(bits)) & 0x1F)])
            }
        }
        if bits > 0 { out.append(alphabet[Int((buffer << UInt32(5 - bits)) & 0x1F)]) }
        return String(decoding: out, as: UTF8.self)
    }
}
