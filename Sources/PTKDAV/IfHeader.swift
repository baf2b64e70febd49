/// The If request header (RFC 4918 section 10.4): lists of state tokens and entity tags that
/// must match for a request to go ahead, and through which a client submits its lock tokens.
public struct IfHeader: Sendable, Equatable {
    /// One condition of a list: a state token or an entity tag, maybe negated ("Not").
    public struct Condition: Sendable, Equatable {
        /// "Not" before it: true when it does not match.
        public var not: Bool
        /// What is matched.
        public enum Kind: Sendable, Equatable {
            /// A state token (a Coded-URL's URI, without the angle brackets): a lock token, or
            /// one that matches nothing such as "DAV:no-lock" (section 10.4.8).
            case token(String)
            /// An entity tag as sent between the brackets, quotes included (`"abc"`, `W/"abc"`).
            case etag(String)
        }
        /// What is matched.
        public var kind: Kind

        /// A condition as given.
        public init(not: Bool, kind: Kind) {
            self.not = not
            self.kind = kind
        }
    }

    /// One parenthesized list: true when all its conditions are.
    public struct List: Sendable, Equatable {
        /// A tagged list's resource (the Resource-Tag's URI as sent, without angle brackets);
        /// nil for a list that applies to the request's own resource.
        public var resource: String?
        /// The conditions, all of which must hold.
        public var conditions: [Condition]

        /// A list as given.
        public init(resource: String?, conditions: [Condition]) {
            self.resource = resource
            self.conditions = conditions
        }
    }

    /// The lists in the order sent: the header is true when any of them is.
    public var lists: [List]

    /// A header of these lists.
    public init(lists: [List]) {
        self.lists = lists
    }

    /// The most conditions a header may hold, in all its lists (each list holds one at least).
    /// Clients submit a token or two (a MOVE's source and destination); every condition may
    /// name a resource to look at, so a 16 KiB head of them would be thousands of looks.
    public static let maxConditions = 100

    /// The header of `header` by section 10.4's grammar (all lists untagged, or all tagged,
    /// never mixed; "Not" in any case; linear whitespace between the parts); nil when it does
    /// not follow it, or holds more than `maxConditions` conditions, which the door answers
    /// with 400.
    public static func parse(_ header: String) -> IfHeader? {
        var reader = IfReader(Array(header.utf8))
        var lists: [List] = []
        var tagged: Bool?
        var tag: String?
        var count = 0
        while true {
            reader.skipSpace()
            guard let byte = reader.peek() else { break }
            if byte == UInt8(ascii: "<") {
                guard tagged != false, let resource = reader.angled(), reader.nextIsList() else { return nil }
                tagged = true
                tag = resource
            } else if byte == UInt8(ascii: "(") {
                guard tagged != true || tag != nil, let conditions = reader.list() else { return nil }
                if tagged == nil { tagged = false }
                lists.append(List(resource: tag, conditions: conditions))
                count += conditions.count
                if count > maxConditions { return nil }
            } else {
                return nil
            }
        }
        return lists.isEmpty ? nil : IfHeader(lists: lists)
    }

    /// Every state token named without "Not", each once, in the order sent: what a client has
    /// submitted as its lock tokens (section 10.4.1: a token in the If header is submitted
    /// whether or not its list is true).
    public var allTokens: [String] {
        var seen = Set<String>()
        var out: [String] = []
        for list in lists {
            for c in list.conditions where !c.not {
                if case .token(let t) = c.kind, seen.insert(t).inserted { out.append(t) }
            }
        }
        return out
    }

    /// Section 10.4's evaluation: true when any list is true, a list being true when each of
    /// its conditions is. An untagged list is checked against `requestResource`; a tagged
    /// list against `resolve(tag)` (the tag as sent, an absolute URI or a path, turned into
    /// the key `state` knows), and a list whose tag does not resolve (another server, a path
    /// outside the door) is false. `state(key)` gives that resource's current lock tokens and
    /// ETag (nil if the resource does not exist). A token matches when it is among the tokens;
    /// an entity tag when it equals the ETag exactly, quotes and any "W/" included (a bare ETag
    /// from `state` is taken as quoted).
    public func evaluate(
        requestResource: String, resolve: (String) -> String?, state: (String) -> (tokens: [String], etag: String?)
    ) -> Bool {
        lists.contains { list in
            let key: String?
            if let tag = list.resource { key = resolve(tag) } else { key = requestResource }
            guard let key else { return false }
            let current = state(key)
            let etag = current.etag.map(IfHeader.quoted)
            return list.conditions.allSatisfy { c in
                let matches: Bool
                switch c.kind {
                case .token(let t): matches = current.tokens.contains(t)
                case .etag(let e): matches = etag == e
                }
                return matches != c.not
            }
        }
    }

    private static func quoted(_ etag: String) -> String {
        etag.hasSuffix("\"") ? etag : "\"" + etag + "\""
    }
}

/// The reader of an If header's bytes.
private struct IfReader {
    let bytes: [UInt8]
    var i = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    func peek() -> UInt8? { i < bytes.count ? bytes[i] : nil }

    /// Skips LWS: spaces, tabs, and the CR LF of an obsolete folded line.
    mutating func skipSpace() {
        while let b = peek(), b == 0x20 || b == 0x09 || b == 0x0D || b == 0x0A { i += 1 }
    }

    /// Whether a "(" follows (after whitespace): a tag must be followed by a list.
    mutating func nextIsList() -> Bool {
        skipSpace()
        return peek() == UInt8(ascii: "(")
    }

    /// "<...>": a Coded-URL or Resource-Tag, non-empty, with no whitespace or "<" inside.
    mutating func angled() -> String? {
        guard peek() == UInt8(ascii: "<") else { return nil }
        i += 1
        let start = i
        while let b = peek(), b != UInt8(ascii: ">") {
            if b <= 0x20 || b == 0x7F || b == UInt8(ascii: "<") { return nil }
            i += 1
        }
        guard peek() == UInt8(ascii: ">"), i > start else { return nil }
        i += 1
        return String(decoding: bytes[start..<i - 1], as: UTF8.self)
    }

    /// "[" entity-tag "]": an optional W/ and a quoted string.
    mutating func etag() -> String? {
        guard peek() == UInt8(ascii: "[") else { return nil }
        i += 1
        let start = i
        if i + 1 < bytes.count, bytes[i] == UInt8(ascii: "W"), bytes[i + 1] == UInt8(ascii: "/") { i += 2 }
        guard peek() == UInt8(ascii: "\"") else { return nil }
        i += 1
        while let b = peek(), b != UInt8(ascii: "\"") {
            // RFC 9110 etagc has no space, but RFC 4918 10.4.6's own example puts spaces in one.
            if b < 0x20 || b == 0x7F { return nil }
            i += 1
        }
        guard peek() == UInt8(ascii: "\"") else { return nil }
        i += 1
        let tag = String(decoding: bytes[start..<i], as: UTF8.self)
        guard peek() == UInt8(ascii: "]") else { return nil }
        i += 1
        return tag
    }

    /// "(" 1*Condition ")".
    mutating func list() -> [IfHeader.Condition]? {
        guard peek() == UInt8(ascii: "(") else { return nil }
        i += 1
        var conditions: [IfHeader.Condition] = []
        while true {
            skipSpace()
            guard let b = peek() else { return nil }
            if b == UInt8(ascii: ")") {
                i += 1
                return conditions.isEmpty ? nil : conditions
            }
            var not = false
            if b == UInt8(ascii: "N") || b == UInt8(ascii: "n") {
                guard i + 2 < bytes.count, bytes[i + 1] | 0x20 == UInt8(ascii: "o"),
                    bytes[i + 2] | 0x20 == UInt8(ascii: "t")
                else { return nil }
                i += 3
                not = true
                skipSpace()
            }
            if let token = angled() {
                conditions.append(.init(not: not, kind: .token(token)))
            } else if let tag = etag() {
                conditions.append(.init(not: not, kind: .etag(tag)))
            } else {
                return nil
            }
        }
    }
}
