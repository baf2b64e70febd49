/// The small WebDAV request headers: Depth, Timeout, Overwrite (RFC 4918 section 10). The If
/// header has a file of its own (`IfHeader`), Destination is `DAVPath.destination`.

/// The Depth header (RFC 4918 section 10.2).
public enum DAVDepth: Sendable, Equatable {
    /// The resource alone.
    case zero
    /// The resource and its members.
    case one
    /// The resource and everything below.
    case infinity

    /// The depth `header` names ("0", "1" or "infinity", case-insensitive, whitespace
    /// around allowed), `default` when there is no header (each method has its own, section
    /// 10.2), nil for any other value (the door answers 400).
    public static func parse(_ header: String?, default: DAVDepth) -> DAVDepth? {
        guard let header else { return `default` }
        switch asciiLowercased(trimmed(header)) {
        case "0": return .zero
        case "1": return .one
        case "infinity": return .infinity
        default: return nil
        }
    }

    /// The header value: "0", "1" or "infinity".
    public var headerValue: String {
        switch self {
        case .zero: "0"
        case .one: "1"
        case .infinity: "infinity"
        }
    }
}

/// The Timeout header of a LOCK (RFC 4918 section 10.7): the client's wishes, of which the
/// server may honour any or none.
public enum DAVTimeout {
    /// The seconds a lock is given: the first acceptable entry of the comma-separated list,
    /// "Second-N" (case-insensitive; N of 1 or more, anything larger than `maximum` is
    /// `maximum`) or "Infinite" (`maximum`: a lock never outlives the bound). Entries that are
    /// neither are skipped; with no header or no acceptable entry, `default` (at most
    /// `maximum`). "Second-0" is taken as 1 second.
    public static func seconds(_ header: String?, default: Int = 600, maximum: Int = 3600) -> Int {
        let fallback = max(1, min(`default`, maximum))
        guard let header else { return fallback }
        for entry in header.split(separator: ",") {
            let word = trimmed(String(entry))
            if asciiLowercased(word) == "infinite" { return max(1, maximum) }
            let prefix = "second-"
            guard word.utf8.count > prefix.utf8.count, asciiLowercased(word).hasPrefix(prefix) else { continue }
            let digits = word.utf8.dropFirst(prefix.utf8.count)
            guard digits.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else { continue }
            // Many digits overflow Int: anything of more than 18 digits is over any maximum.
            guard digits.count <= 18, let n = Int(String(decoding: digits, as: UTF8.self)) else {
                return max(1, maximum)
            }
            return max(1, min(n, maximum))
        }
        return fallback
    }

    /// The header value of `seconds`: "Second-600".
    public static func headerValue(_ seconds: Int) -> String { "Second-\(seconds)" }
}

/// The Overwrite header of COPY and MOVE (RFC 4918 section 10.6).
public enum DAVOverwrite {
    /// true for "T" or no header (section 10.6: absent means T), false for "F", nil for any
    /// other value (the door answers 400). Case-insensitive, whitespace around allowed.
    public static func parse(_ header: String?) -> Bool? {
        // No header is T.
        switch header.map(trimmed) ?? "T" {
        case "T", "t": true
        case "F", "f": false
        default: nil
        }
    }
}

/// `s` without spaces and tabs around it (HTTP's OWS).
func trimmed(_ s: String) -> String {
    let scalars = s.unicodeScalars
    guard let first = scalars.firstIndex(where: { $0 != " " && $0 != "\t" }),
        let last = scalars.lastIndex(where: { $0 != " " && $0 != "\t" })
    else { return "" }
    return String(scalars[first...last])
}

/// `s` with ASCII letters lowered and nothing else touched: header words are ASCII, and
/// `lowercased()` would turn U+212A KELVIN SIGN into "k".
func asciiLowercased(_ s: String) -> String {
    String(decoding: s.utf8.map { $0 >= 0x41 && $0 <= 0x5A ? $0 + 0x20 : $0 }, as: UTF8.self)
}
