import PTKVocabulary

/// A value of a Nextcloud-compatible answer (`status.php`, the OCS API), written as JSON or as
/// the OCS API's XML. Objects keep their keys in the order given: clients read them by name,
/// and people reading a capture read them in the order they are documented.
public indirect enum OCSValue: Equatable, Sendable {
    case string(String)
    case int(Int64)
    case bool(Bool)
    case null
    case array([OCSValue])
    case object([(String, OCSValue)])

    /// Objects are equal when their keys and values are, in order.
    public static func == (a: OCSValue, b: OCSValue) -> Bool {
        switch (a, b) {
        case (.string(let x), .string(let y)): x == y
        case (.int(let x), .int(let y)): x == y
        case (.bool(let x), .bool(let y)): x == y
        case (.null, .null): true
        case (.array(let x), .array(let y)): x == y
        case (.object(let x), .object(let y)): x.map(\.0) == y.map(\.0) && x.map(\.1) == y.map(\.1)
        default: false
        }
    }

    /// The value at `key` of an object; nil for a missing key or another kind of value.
    public subscript(key: String) -> OCSValue? {
        guard case .object(let fields) = self else { return nil }
        return fields.first { $0.0 == key }?.1
    }

    /// Compact JSON; strings escaped as JSON needs (`jsonString`), slashes left as they are.
    public var json: String {
        switch self {
        case .string(let s): return jsonString(s)
        case .int(let n): return String(n)
        case .bool(let b): return b ? "true" : "false"
        case .null: return "null"
        case .array(let items): return "[" + items.map(\.json).joined(separator: ",") + "]"
        case .object(let fields):
            return "{" + fields.map { jsonString($0.0) + ":" + $0.1.json }.joined(separator: ",") + "}"
        }
    }

    /// The inner XML of the OCS API's form: an object's fields as elements named by their keys
    /// (a key that is not an XML name is written as `<element key="...">`), an array's items as
    /// `<element>`, booleans as 1 or empty, null as empty, text escaped.
    public var xml: String {
        switch self {
        case .string(let s): return Self.escape(s)
        case .int(let n): return String(n)
        case .bool(let b): return b ? "1" : ""
        case .null: return ""
        case .array(let items): return items.map { "<element>" + $0.xml + "</element>" }.joined()
        case .object(let fields):
            return fields.map { key, value in
                Self.isXMLName(key)
                    ? "<" + key + ">" + value.xml + "</" + key + ">"
                    : "<element key=\"" + Self.escape(key) + "\">" + value.xml + "</element>"
            }.joined()
        }
    }

    /// Text for XML character data and attribute values (`escapeXML`).
    static func escape(_ text: String) -> String { escapeXML(text) }

    /// ASCII letters, digits, `_`, `-` and `.`, starting with a letter or `_`: what an element
    /// name can be written as without a question.
    static func isXMLName(_ key: String) -> Bool {
        guard let first = key.utf8.first, first == UInt8(ascii: "_") || isLetter(first) else { return false }
        return key.utf8.allSatisfy {
            isLetter($0) || (0x30...0x39).contains($0) || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "-")
                || $0 == UInt8(ascii: ".")
        }
    }

    private static func isLetter(_ c: UInt8) -> Bool { (0x41...0x5A).contains(c) || (0x61...0x7A).contains(c) }
}
