import PTKTime

/// The key an address's wrong guesses and connections are counted under: an IPv4 address as
/// it is, an IPv6 address by its /64 (a host on IPv6 owns a whole /64, so counting each of its
/// addresses apart would hand it 2^64 tries), an IPv4-mapped IPv6 address as its IPv4 one. A
/// text that is not an address (a test's name) is its own key. Pure: no system call parses it.
public func addressKey(_ address: String) -> String {
    var text = Substring(address)
    if text.hasPrefix("["), text.hasSuffix("]") { text = text.dropFirst().dropLast() }
    // A zone ("fe80::1%eth0") stays part of the key: link-local /64s of two links are two.
    var zone = ""
    if let percent = text.unicodeScalars.firstIndex(of: "%") {
        zone = String(text[percent...])
        text = text[..<percent]
    }
    guard text.unicodeScalars.contains(":"), let groups = ipv6Groups(text) else { return address }
    // ::ffff:a.b.c.d is an IPv4 peer on a dual-stack socket.
    if groups[0..<5].allSatisfy({ $0 == 0 }) && groups[5] == 0xFFFF {
        return "\(groups[6] >> 8).\(groups[6] & 0xFF).\(groups[7] >> 8).\(groups[7] & 0xFF)"
    }
    return groups[0..<4].map { String($0, radix: 16) }.joined(separator: ":") + "::/64" + zone
}

/// The eight 16-bit groups of an IPv6 address in text (RFC 4291 2.2: "::" at most once, a
/// dotted IPv4 tail), or nil when it is not one.
func ipv6Groups(_ text: Substring) -> [UInt16]? {
    let s = String(text)
    let halves = s.split(separator: "::", omittingEmptySubsequences: false).map(String.init)
    guard halves.count <= 2 else { return nil }
    func groups(_ side: String, last: Bool) -> [UInt16]? {
        if side.isEmpty { return [] }
        let parts = side.split(separator: ":", omittingEmptySubsequences: false)
        var out: [UInt16] = []
        for (i, part) in parts.enumerated() {
            if last && i == parts.count - 1 && part.contains(".") {
                let octets = part.split(separator: ".", omittingEmptySubsequences: false)
                guard octets.count == 4 else { return nil }
                var b: [UInt16] = []
                for o in octets {
                    guard (1...3).contains(o.utf8.count), o.utf8.allSatisfy({ (48...57).contains($0) }), let v = UInt16(o), v <= 255 else { return nil }
                    b.append(v)
                }
                out += [b[0] << 8 | b[1], b[2] << 8 | b[3]]
            } else {
                guard (1...4).contains(part.utf8.count), let v = UInt16(part, radix: 16) else { return nil }
                out.append(v)
            }
        }
        return out
    }
    if halves.count == 2 {
        guard let head = groups(halves[0], last: false), let tail = groups(halves[1], last: true), head.count + tail.count <= 7 else { return nil }
        return head + Array(repeating: 0, count: 8 - head.count - tail.count) + tail
    }
    guard let all = groups(s, last: true), all.count == 8 else { return nil }
    return all
}

/// Wrong guesses (passwords, PINs, app passwords) for the whole receiver: at most `limit`
/// within any `window`; beyond that every address is answered "too many" until the oldest
/// of them is `window` old. Spreading guesses over many addresses gains nothing. Not
/// thread-safe; told the time by every call.
public struct GuessBudget: Sendable {
    public let limit: Int
    public let window: Duration
    private var times: [Instant] = []

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
