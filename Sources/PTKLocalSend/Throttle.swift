import PTKTime

/// The key an address's wrong guesses and connections are counted under: an IPv4 address as
/// it is, an IPv6 address by its /64 (a host on IPv6 owns a whole /64, so counting each of its
/// addresses apart would hand it 2^64 tries), an IPv4-mapped IPv6 address as its IPv4 one. A
/// text that is not an address (a test's name) is its own key. Pure: no system call parses it.
public func addressKey(_ address: String) -> String {
    var text = Substring(address)
    if text.hasPrefix("["), text.hasSuffix("]") { text = text.dropFirst().dropLast() }
    // A zone ("fe80::1%eth0") stays part of the key: link-local /64s of two links are two.
    guard text.unicodeScalars.contains(":"), let ip = DiscoveryIPv6(String(text)) else { return address }
    // ::ffff:a.b.c.d is an IPv4 peer on a dual-stack socket.
    if ip.high == 0 && ip.low >> 32 == 0xFFFF {
        let v4 = UInt32(truncatingIfNeeded: ip.low)
        return "\(v4 >> 24).\(v4 >> 16 & 0xFF).\(v4 >> 8 & 0xFF).\(v4 & 0xFF)"
    }
    let groups = (0..<4).map { String(UInt16(truncatingIfNeeded: ip.high >> (48 - 16 * $0)), radix: 16) }
    return groups.joined(separator: ":") + "::/64" + (ip.zone.map { "%" + $0 } ?? "")
}

/// Wrong guesses (passwords, PINs, app passwords) for the whole receiver: at most `limit`
/// within any `window`; beyond that every address is answered "too many" until the oldest
/// of them is `window` old. Spreading guesses over many addresses gains nothing. Not
/// thread-safe; told the time by every call.
public struct GuessBudget: Sendable {
    /// Guesses allowed within any `window`, over all addresses together.
    public let limit: Int
    /// How far back guesses are counted.
    public let window: Duration
    private var times: [Instant] = []

    /// The defaults allow ten guesses a minute for the whole receiver.
    public init(limit: Int = 10, window: Duration = .seconds(60)) {
        self.limit = limit
        self.window = window
    }

    /// Whether the budget is spent now (no guess may be checked).
    public mutating func isSpent(now: Instant) -> Bool {
        times.removeAll { now - $0 >= window }
        return times.count >= limit
    }

    /// Counts a wrong guess; returns true when this one spent the budget (to be logged once).
    public mutating func failed(now: Instant) -> Bool {
        times.removeAll { now - $0 >= window }
        times.append(now)
        if times.count > limit { times.removeFirst(times.count - limit) }
        return times.count == limit
    }

    /// When the budget is next available (the oldest counted guess leaves the window).
    public func availableAt() -> Instant? { times.count >= limit ? times.first.map { $0 + window } : nil }
}
