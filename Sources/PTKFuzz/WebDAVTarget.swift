import PTKDAV

extension FuzzTargets {
    /// What WebDAV clients send to ptkd's door (PTKDAV). The first byte picks the parser (its
    /// low 2 bits) and a prefix or limit (its high bits); the rest is the input:
    /// - 0, an XML body: `DAVXML.parse` keeps its limits, never takes a body that opens with a
    ///   DOCTYPE, and `serialized()` of what it takes parses back to the same tree; the request
    ///   parsers take only what parses, and a PROPPATCH's values and a LOCK's owner, written into a
    ///   207 body as the door writes them, keep that body well-formed.
    /// - 1, an If header: `allTokens` are tokens the header names; `evaluate` against a resource
    ///   holding every token, or none, gives what section 10.4 says.
    /// - 2, a request-target, a Destination and a Host, on lines of their own: a parsed path has
    ///   only names the store may see, within the limits, that `href` writes and `parse` reads
    ///   back; a query is cut at its first `?` or `#` byte; a Destination is taken only on this
    ///   host; Depth, Timeout and a name's kind by their rules.
    /// - 3, text: `Multistatus.escape` leaves nothing raw that XML reads as markup, and what it
    ///   writes reads back as the text in character data and in an attribute value.
    public static func webdav(_ data: UnsafeRawBufferPointer) {
        guard data.count > 0 else { return }
        let bytes = Array(data[1...])
        switch data[0] & 3 {
        case 0: davXML(bytes)
        case 1: davIf(bytes)
        case 2: davPaths(bytes, choice: data[0] >> 2)
        default: davEscape(bytes)
        }
    }

    private static let roomy = XMLLimits(maxBytes: 1 << 24)

    private static func davXML(_ bytes: [UInt8]) {
        let parsed = DAVXML.parse(bytes)
        if case .success(let root) = parsed {
            let (depth, count) = measure(root)
            precondition(depth <= XMLLimits.default.maxDepth, "a tree \(depth) deep was taken")
            precondition(count <= XMLLimits.default.maxElements, "a tree of \(count) elements was taken")
            let text = root.serialized()
            guard case .success(let again) = DAVXML.parse(Array(text.utf8), limits: roomy) else {
                preconditionFailure("serialized() wrote XML that does not parse: \(text)")
            }
            precondition(
                again == root && again.serialized().utf8.elementsEqual(text.utf8),
                "serialized() does not parse back to the same tree: \(text)")
        }
        // A DOCTYPE at the start, or after the XML declaration, is refused whatever follows.
        let doctype = Array("<!DOCTYPE r [<!ENTITY e \"v\">]>".utf8)
        if case .success = DAVXML.parse(doctype + bytes) { preconditionFailure("a body after a DOCTYPE was taken") }
        if case .success = DAVXML.parse(Array("<!DOCTYPE ".utf8) + bytes) {
            preconditionFailure("a body opening with <!DOCTYPE was taken")
        }
        if bytes.starts(with: Array("<?xml".utf8)), let end = find(Array("?>".utf8), in: bytes) {
            let body = Array(bytes[..<(end + 2)]) + doctype + Array(bytes[(end + 2)...])
            if case .success = DAVXML.parse(body) {
                preconditionFailure("a DOCTYPE after the XML declaration was taken")
            }
        }

        let parses: Bool = { if case .success = parsed { true } else { false } }()
        if case .success = PropfindRequest.parse(bytes) {
            precondition(parses || blank(bytes), "a PROPFIND body taken that does not parse")
        }
        if case .success(let lock?) = LockRequest.parse(bytes) {
            precondition(parses, "a LOCK body taken that does not parse")
            if let owner = lock.owner { wellFormed207([(XMLName.dav("owner"), owner)], "a LOCK owner") }
        }
        if case .success(let patch) = ProppatchRequest.parse(bytes) {
            precondition(parses, "a PROPPATCH body taken that does not parse")
            var values: [(XMLName, String)] = []
            for case .set(let name, let element) in patch.operations {
                precondition(name == element.name)
                values.append((name, element.serializedContent()))
            }
            wellFormed207(values, "PROPPATCH values")
        }
    }

    /// A 207 body with these properties, as the door writes a PROPFIND's, must parse.
    private static func wellFormed207(_ properties: [(XMLName, String)], _ what: String) {
        let body =
            Multistatus.head + Multistatus.response(href: "/dav/a", propstats: [(status: 200, properties: properties)])
            + Multistatus.tail
        guard case .success = DAVXML.parse(Array(body.utf8), limits: roomy) else {
            preconditionFailure("\(what) written into a 207 body broke it: \(body)")
        }
    }

    private static func measure(_ e: XMLElement) -> (depth: Int, count: Int) {
        var depth = 0
        var count = 1
        for c in e.children {
            let (d, n) = measure(c)
            depth = max(depth, d)
            count += n
        }
        return (depth + 1, count)
    }

    private static func blank(_ bytes: [UInt8]) -> Bool {
        bytes.allSatisfy { $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }
    }

    private static func find(_ needle: [UInt8], in bytes: [UInt8], from start: Int = 0) -> Int? {
        guard needle.count <= bytes.count else { return nil }
        var i = start
        while i + needle.count <= bytes.count {
            if bytes[i..<(i + needle.count)].elementsEqual(needle) { return i }
            i += 1
        }
        return nil
    }

    private static func davIf(_ bytes: [UInt8]) {
        let text = String(decoding: bytes, as: UTF8.self)
        guard let header = IfHeader.parse(text) else { return }
        precondition(
            !header.lists.isEmpty && header.lists.allSatisfy { !$0.conditions.isEmpty },
            "an If header with an empty list")
        let utf8 = Array(text.utf8)
        for token in header.allTokens {
            precondition(
                !token.isEmpty && find(Array(("<" + token + ">").utf8), in: utf8) != nil,
                "a token the header does not name: \(token)")
        }
        precondition(Set(header.allTokens).count == header.allTokens.count, "a token submitted twice")
        // Tags resolve to themselves, so every list is checked against the resource named.
        let all = header.evaluate(requestResource: "r", resolve: { $0 }, state: { _ in (header.allTokens, nil) })
        let none = header.evaluate(requestResource: "r", resolve: { $0 }, state: { _ in ([], nil) })
        let unresolved = header.evaluate(
            requestResource: "r", resolve: { _ in nil }, state: { _ in (header.allTokens, "\"e\"") })
        let positive = header.lists.contains {
            $0.conditions.allSatisfy { c in
                if case .token = c.kind { !c.not } else { false }
            }
        }
        let negative = header.lists.contains { $0.conditions.allSatisfy(\.not) }
        precondition(!positive || all, "a list of held tokens is false")
        precondition(none == negative, "against a resource with no lock and no ETag, the header is \(none)")
        precondition(
            unresolved
                == header.lists.contains {
                    $0.resource == nil
                        && $0.conditions.allSatisfy { c in
                            switch c.kind {
                            case .token(let t): header.allTokens.contains(t) != c.not
                            case .etag(let e): (e == "\"e\"") != c.not
                            }
                        }
                }, "tagged lists that resolve nowhere changed the answer")
    }

    private static let prefixes = ["/dav", "/", "", "/dav/", "/a%20b", "/dav/x/y"]

    private static func davPaths(_ bytes: [UInt8], choice: UInt8) {
        let fields = bytes.split(separator: UInt8(ascii: "\n"), maxSplits: 2, omittingEmptySubsequences: false)
            .map { String(decoding: $0, as: UTF8.self) }
        let target = fields[0]
        let destination = fields.count > 1 ? fields[1] : target
        let host: String? = fields.count > 2 ? fields[2] : nil
        let prefix = prefixes[Int(choice) % prefixes.count]

        if case .success(let path) = DAVPath.parse(target: target, prefix: prefix) {
            checkPath(path, prefix: prefix)
            // A query or fragment goes, at its first "?" or "#" byte.
            let utf8 = Array(target.utf8)
            if let cut = utf8.firstIndex(where: { $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") }) {
                let before = String(decoding: utf8[..<cut], as: UTF8.self)
                precondition(
                    DAVPath.parse(target: before, prefix: prefix) == .success(path),
                    "the query was not cut at its \"?\" or \"#\"")
            }
        }
        if case .success(let path) = DAVPath.destination(destination, prefix: prefix, host: host) {
            checkPath(path, prefix: prefix)
            let value = Array(destination.utf8).drop { $0 == 0x20 || $0 == 0x09 }
            if value.first != UInt8(ascii: "/") {
                guard let host else { preconditionFailure("an absolute Destination was taken with no Host") }
                let lower = { (b: UInt8) in b >= 0x41 && b <= 0x5A ? b + 0x20 : b }
                let sent = Array(value.map(lower))
                let authority = Array(host.utf8.map(lower))
                let here = [Array("http://".utf8) + authority, Array("https://".utf8) + authority].contains {
                    sent.starts(with: $0)
                }
                let end = sent.dropFirst(
                    sent.starts(with: Array("https://".utf8)) ? 8 + authority.count : 7 + authority.count
                ).first
                precondition(
                    here
                        && (end == nil || end == UInt8(ascii: "/") || end == UInt8(ascii: "?")
                            || end == UInt8(ascii: "#")),
                    "a Destination on another host was taken: \(destination) (Host \(host))")
            }
        }

        if let depth = DAVDepth.parse(target, default: .infinity), target.utf8.count > 0 {
            precondition(DAVDepth.parse(depth.headerValue, default: .zero) == depth)
        }
        let maximum = Int(choice) * 100
        let seconds = DAVTimeout.seconds(destination, default: 600, maximum: maximum)
        precondition(seconds >= 1 && seconds <= max(1, maximum), "a lock of \(seconds) s (maximum \(maximum))")
        for name in [target, destination] where name.utf8.first == UInt8(ascii: ".") {
            precondition(DAVName.kind(name) != .ordinary, "a dotted name is ordinary: \(name)")
        }
    }

    private static func checkPath(_ path: DAVPath, prefix: String) {
        precondition(path.components.count <= DAVPath.maxComponents, "a path of \(path.components.count) names")
        precondition(path.string.utf8.count <= DAVPath.maxBytes, "a path of \(path.string.utf8.count) bytes")
        for name in path.components {
            let utf8 = Array(name.utf8)
            precondition(!utf8.isEmpty && utf8 != [0x2E] && utf8 != [0x2E, 0x2E], "the name \"\(name)\" was taken")
            precondition(utf8.count <= DAVPath.maxNameBytes, "a name of \(utf8.count) bytes")
            precondition(
                !utf8.contains { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "\\") || $0 < 0x20 || $0 == 0x7F },
                "a name with a slash or a control byte")
            precondition(!name.unicodeScalars.contains { (0x80...0x9F).contains($0.value) }, "a name with a C1 control")
        }
        for collection in [false, true] {
            let href = path.href(prefix: prefix, collection: collection)
            precondition(
                DAVPath.parse(target: href, prefix: prefix) == .success(path), "\(href) does not read back as \(path)")
        }
    }

    private static func davEscape(_ bytes: [UInt8]) {
        let text = String(decoding: bytes, as: UTF8.self)
        let escaped = Multistatus.escape(text)
        var rest = escaped.unicodeScalars[...]
        let entities = ["amp;", "lt;", "gt;", "quot;", "apos;", "#13;"]
        while let u = rest.popFirst() {
            precondition(
                u != "<" && u != ">" && u != "\"" && u != "'" && u != "\r",
                "escape left a raw U+\(String(u.value, radix: 16))")
            precondition(
                u.value >= 0x20 || u == "\t" || u == "\n", "escape left the control U+\(String(u.value, radix: 16))")
            precondition(u.value != 0xFFFE && u.value != 0xFFFF, "escape left a noncharacter XML cannot carry")
            if u == "&" {
                guard let entity = entities.first(where: { rest.starts(with: $0.unicodeScalars) }) else {
                    preconditionFailure("escape left an & that starts no entity it writes")
                }
                rest = rest.dropFirst(entity.unicodeScalars.count)
            }
        }
        // What a parser reads back: the text, with what XML cannot carry as U+FFFD; in an
        // attribute value, tab and line feed normalized to spaces (XML 1.0 section 3.3.3).
        var expected = String.UnicodeScalarView()
        for u in text.unicodeScalars {
            expected.append(
                u.value < 0x20 && u != "\t" && u != "\n" && u != "\r" || u.value == 0xFFFE || u.value == 0xFFFF
                    ? "\u{FFFD}" : u)
        }
        guard case .success(let element) = DAVXML.parse(Array(("<a>" + escaped + "</a>").utf8), limits: roomy) else {
            preconditionFailure("escaped text broke the element it was put in")
        }
        precondition(element.text.unicodeScalars.elementsEqual(expected), "escaped text does not read back as the text")
        guard
            case .success(let attributed) = DAVXML.parse(
                Array(("<a b=\"" + escaped + "\" c='" + escaped + "'/>").utf8), limits: roomy)
        else {
            preconditionFailure("escaped text broke the attribute value it was put in")
        }
        let value = String(String.UnicodeScalarView(expected.map { $0 == "\t" || $0 == "\n" ? " " : $0 }))
        precondition(
            attributed.attributes[XMLName("", "b")].map { $0.unicodeScalars.elementsEqual(value.unicodeScalars) }
                == true
                && attributed.attributes[XMLName("", "c")] == attributed.attributes[XMLName("", "b")],
            "escaped text does not read back as the attribute value")
    }
}
