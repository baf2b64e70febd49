/// A response's header fields, in the order they go out. Names are checked when a field is
/// added (an HTTP token: a name is the code's own words, so a bad one is a bug and stops);
/// values can hold peer text (a path in a Location), so a CR, LF or NUL in one becomes a
/// space: no value can end the head or add a field of its own.
public struct HTTPFields: Sendable, Equatable, ExpressibleByDictionaryLiteral, ExpressibleByArrayLiteral, Sequence {
    /// The fields in order, values already cleaned; change them only through `append`.
    public private(set) var fields: [(name: String, value: String)] = []

    /// No fields.
    public init() {}

    /// `pairs` appended in order, each checked as `append` checks it.
    public init(_ pairs: [(String, String)]) {
        for (name, value) in pairs { append(name, value) }
    }

    /// `["Name": "value"]` in source order; unlike a dictionary, a name may repeat.
    public init(dictionaryLiteral elements: (String, String)...) { self.init(elements) }

    /// `[("Name", "value")]` in order; for a name that repeats (`Set-Cookie`).
    public init(arrayLiteral elements: (String, String)...) { self.init(elements) }

    /// Adds a field after the others (a repeated name is sent repeated).
    public mutating func append(_ name: String, _ value: String) {
        precondition(!name.isEmpty && name.utf8.allSatisfy(Self.isTokenByte), "header name \(name)")
        let clean =
            value.utf8.contains(where: { $0 == 13 || $0 == 10 || $0 == 0 })
            ? String(decoding: value.utf8.map { $0 == 13 || $0 == 10 || $0 == 0 ? 0x20 : $0 }, as: UTF8.self) : value
        fields.append((name, clean))
    }

    /// The first value of `name` (compared without case), nil when there is none.
    public subscript(_ name: String) -> String? {
        let lower = name.lowercased()
        return fields.first { $0.name.lowercased() == lower }?.value
    }

    /// Whether no field has been added.
    public var isEmpty: Bool { fields.isEmpty }

    /// The fields in the order they go out.
    public func makeIterator() -> IndexingIterator<[(name: String, value: String)]> { fields.makeIterator() }

    /// Same fields in the same order; names compared as written, with their case.
    public static func == (a: HTTPFields, b: HTTPFields) -> Bool {
        a.fields.count == b.fields.count
            && zip(a.fields, b.fields).allSatisfy { $0.name == $1.name && $0.value == $1.value }
    }

    /// RFC 9110 §5.6.2: tchar.
    static func isTokenByte(_ c: UInt8) -> Bool {
        switch c {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        default: return Array("!#$%&'*+-.^_`|~".utf8).contains(c)
        }
    }
}

/// A request method, as the request line spells it (methods are case-sensitive).
public struct HTTPMethod: Sendable, Hashable, ExpressibleByStringLiteral, CustomStringConvertible {
    /// The method's token, case as sent ("GET", "PROPFIND").
    public let name: String
    /// The method `name`, not checked: an unknown one simply matches no route.
    public init(_ name: String) { self.name = name }
    /// A literal method (`"MKCOL"`), for the ones without a constant here.
    public init(stringLiteral name: String) { self.name = name }
    /// The token, for log lines and the `Allow` header.
    public var description: String { name }

    /// GET: read a resource.
    public static let get: HTTPMethod = "GET"
    /// HEAD: GET's head without its body; a route lists it beside GET to answer it.
    public static let head: HTTPMethod = "HEAD"
    /// POST: a form or an upload.
    public static let post: HTTPMethod = "POST"
    /// PUT: store the body at the target (a WebDAV or raw upload).
    public static let put: HTTPMethod = "PUT"
    /// DELETE: remove the target.
    public static let delete: HTTPMethod = "DELETE"
    /// OPTIONS: which methods and DAV classes the target takes.
    public static let options: HTTPMethod = "OPTIONS"
}
