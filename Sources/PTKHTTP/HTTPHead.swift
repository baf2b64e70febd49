/// A request's or response's line and headers, as the parser saw them.
public struct HTTPHead: Sendable, Equatable {
    /// `GET`, `POST`, ... (requests).
    public var method = ""
    /// The status code (responses).
    public var status = 0
    /// The request target as sent: path and query.
    public var target = ""
    /// Header names in lower case; repeated headers joined with ", ".
    public var headers: [String: String] = [:]
    /// The announced body length, nil when none was given.
    public var contentLength: Int64?
    public var chunked = false
    /// Whether the connection may carry another request after this one (HTTP/1.1 default,
    /// `Connection: close`, HTTP/1.0 without keep-alive).
    public var keepAlive = true

    public init() {}

    public func header(_ name: String) -> String? { headers[name.lowercased()] }

    /// The target's path, percent-decoded.
    public var path: String {
        let raw = splitScalars(target, "?", maxSplits: 1).first ?? ""
        return percentDecoded(raw, plusIsSpace: false) ?? raw
    }

    /// The target's query parameters, percent-decoded (`+` is a space); the first of a repeated name wins.
    public var query: [String: String] {
        let parts = splitScalars(target, "?", maxSplits: 1)
        guard parts.count == 2 else { return [:] }
        return urlEncodedFields(parts[1])
    }
}

/// `name=value&...` (a query, or an `application/x-www-form-urlencoded` body) percent-decoded,
/// `+` as a space; the first of a repeated name wins, broken escapes give an empty value.
public func urlEncodedFields(_ text: String) -> [String: String] {
    var out: [String: String] = [:]
    for pair in splitScalars(text, "&", omittingEmpty: true) {
        let kv = splitScalars(pair, "=", maxSplits: 1)
        guard let name = percentDecoded(kv[0], plusIsSpace: true), !name.isEmpty else { continue }
        let value = kv.count > 1 ? percentDecoded(kv[1], plusIsSpace: true) ?? "" : ""
        if out[name] == nil { out[name] = value }
    }
    return out
}

/// `text` split at each `separator` scalar, never at Characters: "?" or "&" followed by a
/// combining mark is one Character, which `split(separator:)` would not cut at.
func splitScalars(_ text: String, _ separator: Unicode.Scalar, maxSplits: Int = .max, omittingEmpty: Bool = false) -> [String] {
    text.unicodeScalars.split(separator: separator, maxSplits: maxSplits, omittingEmptySubsequences: omittingEmpty)
        .map { String(String.UnicodeScalarView($0)) }
}

/// `%XX` sequences decoded (and `+` as a space in queries); nil when a sequence is broken or
/// the result is not UTF-8.
func percentDecoded(_ text: String, plusIsSpace: Bool) -> String? {
    var out: [UInt8] = []
    var bytes = Array(text.utf8)[...]
    func hex(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return c - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
    while let c = bytes.popFirst() {
        if c == UInt8(ascii: "%") {
            guard let h = bytes.popFirst().flatMap(hex), let l = bytes.popFirst().flatMap(hex) else { return nil }
            out.append(h << 4 | l)
        } else if plusIsSpace && c == UInt8(ascii: "+") {
            out.append(UInt8(ascii: " "))
        } else {
            out.append(c)
        }
    }
    return String(validating: out, as: UTF8.self)
}
