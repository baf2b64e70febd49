// LocalSend discovery's addresses: IPv4 and IPv6 sources as numbers, and the networks ptkd
// serves (whether an address is on one of their links). See Discovery.swift for the limits.

/// An IPv4 address as a number (10.0.0.1 is 0x0A000001).
public struct DiscoveryIPv4: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The address as a number, the first dotted part in the top byte.
    public var value: UInt32
    /// From the number itself: 0x0A000001 is 10.0.0.1.
    public init(_ value: UInt32) { self.value = value }

    /// Dotted decimal only: four parts of one to three digits, 0...255, without a leading zero
    /// (which inet_aton would read as octal); nil otherwise.
    public init?(_ text: String) {
        let parts = text.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count == 4 else { return nil }
        var v: UInt32 = 0
        for part in parts {
            guard (1...3).contains(part.count), part.allSatisfy({ (48...57).contains($0) }),
                part.count == 1 || part.first != 48
            else { return nil }
            let n = part.reduce(0) { $0 * 10 + Int($1 - 48) }
            guard n <= 255 else { return nil }
            v = v << 8 | UInt32(n)
        }
        value = v
    }

    /// Dotted decimal, "192.0.2.7".
    public var description: String { "\(value >> 24).\(value >> 16 & 255).\(value >> 8 & 255).\(value & 255)" }
    /// 127.0.0.0/8.
    public var isLoopback: Bool { value >> 24 == 127 }
    /// Whether a device can have this address: not 0.0.0.0/8, not multicast (224.0.0.0/4), not
    /// reserved or broadcast (240.0.0.0/4).
    public var isHostAddress: Bool { value >> 24 != 0 && value >> 28 < 14 }
    /// Numeric order, so lists of addresses come out the same every time.
    public static func < (a: DiscoveryIPv4, b: DiscoveryIPv4) -> Bool { a.value < b.value }
}

/// An IPv6 address as a number (two halves), with its zone (an interface name) when it is a
/// link-local address as the kernel reports a datagram's source ("fe80::1%eth0").
public struct DiscoveryIPv6: Hashable, Sendable, CustomStringConvertible {
    /// The first 64 bits, the network prefix of the usual /64.
    public var high: UInt64
    /// The last 64 bits, the interface identifier; an IPv4-mapped address keeps the IPv4 one in its low 32.
    public var low: UInt64
    /// The interface a scoped (link-local) address is on; nil for a global one.
    public var zone: String?

    /// From the two halves; `zone` only for a scoped address.
    public init(high: UInt64, low: UInt64, zone: String? = nil) {
        self.high = high
        self.low = low
        self.zone = zone
    }

    /// Numeric IPv6 text: eight groups of one to four hex digits, one "::" at most, an IPv4
    /// dotted tail allowed in the last 32 bits, and "%zone" (an interface name: letters, digits,
    /// ".", "-", "_", at most 15) allowed after it; no brackets. Nil otherwise.
    public init?(_ text: String) {
        var body = Substring(text)
        var zone: String?
        if let percent = text.firstIndex(of: "%") {
            let z = text[text.index(after: percent)...]
            guard (1...15).contains(z.utf8.count),
                z.utf8.allSatisfy({
                    (48...57).contains($0) || (65...90).contains($0) || (97...122).contains($0) || $0 == 45 || $0 == 46
                        || $0 == 95
                })
            else { return nil }
            zone = String(z)
            body = text[..<percent]
        }
        guard body.utf8.count <= 45 else { return nil }
        func groups(_ part: Substring) -> [UInt16]? {
            if part.isEmpty { return [] }
            var out: [UInt16] = []
            let fields = part.split(separator: ":", omittingEmptySubsequences: false)
            for (i, field) in fields.enumerated() {
                if i == fields.count - 1, field.contains(".") {
                    guard let v4 = DiscoveryIPv4(String(field)) else { return nil }
                    out += [UInt16(v4.value >> 16), UInt16(v4.value & 0xFFFF)]
                    continue
                }
                guard (1...4).contains(field.utf8.count), let v = UInt16(field, radix: 16) else { return nil }
                out.append(v)
            }
            return out
        }
        var words: [UInt16]
        if let range = body.firstRange(of: "::") {
            guard let head = groups(body[..<range.lowerBound]), let tail = groups(body[range.upperBound...]),
                !body[range.upperBound...].contains("::"), head.count + tail.count <= 7
            else { return nil }
            words = head + Array(repeating: 0, count: 8 - head.count - tail.count) + tail
        } else {
            guard let all = groups(body), all.count == 8 else { return nil }
            words = all
        }
        high = words[0..<4].reduce(0) { $0 << 16 | UInt64($1) }
        low = words[4..<8].reduce(0) { $0 << 16 | UInt64($1) }
        self.zone = zone
    }

    private var words: [UInt16] {
        (0..<4).map { UInt16(truncatingIfNeeded: high >> (48 - 16 * $0)) }
            + (0..<4).map { UInt16(truncatingIfNeeded: low >> (48 - 16 * $0)) }
    }

    /// RFC 5952 text (the longest run of two or more zero groups as "::", lower case), a
    /// v4-mapped address with its dotted tail, and "%zone".
    public var description: String {
        let w = words
        var text: String
        if isV4Mapped {
            text = "::ffff:" + DiscoveryIPv4(UInt32(truncatingIfNeeded: low)).description
        } else {
            var best = (start: -1, count: 0)
            var i = 0
            while i < 8 {
                var j = i
                while j < 8 && w[j] == 0 { j += 1 }
                if j - i > best.count && j - i >= 2 { best = (i, j - i) }
                i = max(j, i + 1)
            }
            let hex = w.map { String($0, radix: 16) }
            if best.start < 0 {
                text = hex.joined(separator: ":")
            } else {
                text =
                    hex[..<best.start].joined(separator: ":") + "::"
                    + hex[(best.start + best.count)...].joined(separator: ":")
            }
        }
        return zone.map { text + "%" + $0 } ?? text
    }

    /// ::1.
    public var isLoopback: Bool { high == 0 && low == 1 }
    /// ::.
    public var isUnspecified: Bool { high == 0 && low == 0 }
    /// ff00::/8.
    public var isMulticast: Bool { high >> 56 == 0xFF }
    /// fe80::/10.
    public var isLinkLocal: Bool { high >> 54 == 0x3FA }
    /// ::ffff:0:0/96, an IPv4 address written as IPv6.
    public var isV4Mapped: Bool { high == 0 && low >> 32 == 0xFFFF }
    /// ::/96 other than :: and ::1 (the old IPv4-compatible form).
    public var isV4Compatible: Bool { high == 0 && low >> 32 == 0 && low > 1 }
    /// Whether a device on a link can have this address as its own: not ::, ::1, multicast, an
    /// IPv4 address in IPv6 form, nor a link-local address without the interface it is on.
    public var isHostAddress: Bool {
        !isUnspecified && !isLoopback && !isMulticast && !isV4Mapped && !isV4Compatible && (!isLinkLocal || zone != nil)
    }
}

/// A source or served address, IPv4 or IPv6.
public enum DiscoveryAddress: Hashable, Sendable, CustomStringConvertible {
    case v4(DiscoveryIPv4)
    case v6(DiscoveryIPv6)

    /// Dotted IPv4 (`DiscoveryIPv4`) or numeric IPv6 (`DiscoveryIPv6`); nil otherwise.
    public init?(_ text: String) {
        if let a = DiscoveryIPv4(text) {
            self = .v4(a)
        } else if let a = DiscoveryIPv6(text) {
            self = .v6(a)
        } else {
            return nil
        }
    }

    /// The address as text, without a port ("192.0.2.7", "fe80::1%eth0").
    public var description: String {
        switch self {
        case .v4(let a): return a.description
        case .v6(let a): return a.description
        }
    }

    /// "192.0.2.7:53317" or "[fe80::1%eth0]:53317".
    public func withPort(_ port: Int) -> String {
        switch self {
        case .v4(let a): return "\(a):\(port)"
        case .v6(let a): return "[\(a)]:\(port)"
        }
    }

    /// 127.0.0.0/8 or ::1: ptkd registers with one only when it serves loopback of that family.
    public var isLoopback: Bool {
        switch self {
        case .v4(let a): return a.isLoopback
        case .v6(let a): return a.isLoopback
        }
    }

    /// True for the `.v6` case, an IPv4-mapped address included.
    public var isIPv6: Bool { if case .v6 = self { return true } else { return false } }

    /// Whether a device can have this address (see `DiscoveryIPv4.isHostAddress` and
    /// `DiscoveryIPv6.isHostAddress`; the IPv6 loopback counts, as the IPv4 one does).
    public var isHostAddress: Bool {
        switch self {
        case .v4(let a): return a.isHostAddress
        case .v6(let a): return a.isLoopback || a.isHostAddress
        }
    }
}

/// An address of an interface discovery serves (one `--listen` names, or any when it names
/// none), with its network's prefix length.
public struct ServedAddress: Hashable, Sendable {
    /// The interface's own address.
    public var address: DiscoveryAddress
    /// The network's prefix length, clamped to 0...32 (IPv4) or 0...128 (IPv6).
    public var prefixLength: Int
    /// The interface it is on (nil: any, as in tests that need no interface): an announcement
    /// is answered only when its source is on-link on the interface it arrived on.
    public var interface: String?
    /// `prefixLength` out of range is clamped to the family's.
    public init(address: DiscoveryAddress, prefixLength: Int, interface: String? = nil) {
        self.address = address
        self.prefixLength = min(address.isIPv6 ? 128 : 32, max(0, prefixLength))
        self.interface = interface
    }

    /// An IPv4 network, for callers and tests that have no `DiscoveryAddress` at hand.
    public init(address: DiscoveryIPv4, prefixLength: Int, interface: String? = nil) {
        self.init(address: .v4(address), prefixLength: prefixLength, interface: interface)
    }

    /// `hasOnLink(_:)` for an IPv4 host.
    public func hasOnLink(_ host: DiscoveryIPv4) -> Bool { hasOnLink(.v4(host)) }

    /// Whether `host` is a device on this network. IPv4: in it, and neither its network address
    /// nor its broadcast address (for prefixes up to /30, which have those). IPv6: a link-local
    /// host is on the link of a served link-local address with the same zone (fe80::/10 on that
    /// interface, whatever the prefix length says); any other host must be in the prefix and not
    /// its subnet-router anycast address (all host bits zero, up to /126); never across families.
    public func hasOnLink(_ host: DiscoveryAddress) -> Bool {
        switch (address, host) {
        case (.v4(let own), .v4(let h)):
            let mask: UInt32 = prefixLength == 0 ? 0 : UInt32.max << (32 - prefixLength)
            guard h.value & mask == own.value & mask else { return false }
            if prefixLength <= 30 {
                let hostBits = h.value & ~mask
                return hostBits != 0 && hostBits != ~mask
            }
            return true
        case (.v6(let own), .v6(let h)):
            if own.isLinkLocal || h.isLinkLocal {
                return own.isLinkLocal && h.isLinkLocal && own.zone != nil && own.zone == h.zone
            }
            guard !h.isV4Mapped && !h.isMulticast else { return false }
            let highMask: UInt64 = prefixLength == 0 ? 0 : prefixLength >= 64 ? .max : UInt64.max << (64 - prefixLength)
            let lowMask: UInt64 =
                prefixLength <= 64 ? 0 : prefixLength == 128 ? .max : UInt64.max << (128 - prefixLength)
            guard h.high & highMask == own.high & highMask, h.low & lowMask == own.low & lowMask else { return false }
            if prefixLength <= 126 && h.high & ~highMask == 0 && h.low & ~lowMask == 0 { return false }
            return true
        default:
            return false
        }
    }
}
