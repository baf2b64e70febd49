/// Splits `<peer>` into host and port: "host", "host:port", "192.0.2.1", "[2001:db8::1]:47850",
/// or a bare IPv6 address.
public func parsePeer(_ text: String, defaultPort: UInt16) -> (host: String, port: UInt16)? {
    if text.hasPrefix("[") {
        guard let close = text.firstIndex(of: "]") else { return nil }
        let host = String(text[text.index(after: text.startIndex)..<close])
        let rest = text[text.index(after: close)...]
        if rest.isEmpty { return host.isEmpty ? nil : (host, defaultPort) }
        guard rest.hasPrefix(":"), let p = parseInteger(String(rest.dropFirst()), in: 1...65535) else { return nil }
        return host.isEmpty ? nil : (host, UInt16(p))
    }
    let colons = text.filter { $0 == ":" }.count
    if colons == 1 {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard !parts[0].isEmpty, let p = parseInteger(String(parts[1]), in: 1...65535) else { return nil }
        return (String(parts[0]), UInt16(p))
    }
    return text.isEmpty ? nil : (text, defaultPort)
}
