import PTKVocabulary

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
    /// Whether the body comes with `Transfer-Encoding: chunked`, its length not known ahead.
    public var chunked = false
    /// Whether the connection may carry another request after this one (HTTP/1.1 default,
    /// `Connection: close`, HTTP/1.0 without keep-alive).
    public var keepAlive = true
    /// The minor version of HTTP/1.x: 0 for an HTTP/1.0 peer, which knows no `100 Continue`.
    public var minorVersion = 1

    /// An empty head; the parser fills it in.
    public init() {}

    /// The header `name`'s value (any case), repeated ones joined with ", "; nil when it was not sent.
    public func header(_ name: String) -> String? { headers[name.lowercased()] }

    /// The target's path, percent-decoded.
    public var path: String {
        let raw = target.parts(separatedBy: "?", maxSplits: 1).first ?? ""
        return percentDecoded(raw, plusIsSpace: false) ?? raw
    }

    /// The target's query parameters, percent-decoded (`+` is a space); the first of a repeated name wins.
    public var query: [String: String] {
        let parts = target.parts(separatedBy: "?", maxSplits: 1)
        guard parts.count == 2 else { return [:] }
        return urlEncodedFields(parts[1])
    }
}

/// `name=value&...` (a query, or an `application/x-www-form-urlencoded` body) percent-decoded,
/// `+` as a space; the first of a repeated name wins, broken escapes give an empty value.
public func urlEncodedFields(_ text: String) -> [String: String] {
    var out: [String: String] = [:]
    for pair in text.parts(separatedBy: "&", omittingEmpty: true) {
        let kv = pair.parts(separatedBy: "=", maxSplits: 1)
        guard let name = percentDecoded(kv[0], plusIsSpace: true), !name.isEmpty else { continue }
        let value = kv.count > 1 ? percentDecoded(kv[1], plusIsSpace: true) ?? "" : ""
        if out[name] == nil { out[name] = value }
    }
    return out
}
