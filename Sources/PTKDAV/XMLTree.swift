/// The parsed form of a WebDAV request body (RFC 4918 section 14 elements and whatever
/// properties a client sends), and the limits and errors of parsing one.

/// An expanded XML name: a namespace URI and a local name (Namespaces in XML 1.0, section 3).
/// Prefixes are gone: `<D:prop xmlns:D="DAV:">` and `<prop xmlns="DAV:">` have the same name.
public struct XMLName: Hashable, Sendable, CustomStringConvertible {
    /// The namespace URI, "" for none.
    public var namespace: String
    /// The local part of the name.
    public var local: String

    /// A name in `namespace` ("" for none).
    public init(_ namespace: String, _ local: String) {
        self.namespace = namespace
        self.local = local
    }

    /// `{namespace}local`, James Clark's notation, for messages and tests.
    public var description: String { "{\(namespace)}\(local)" }
}

extension XMLName {
    /// The WebDAV namespace (RFC 4918 section 21): "DAV:".
    public static let dav = "DAV:"
    /// A name in the WebDAV namespace.
    public static func dav(_ local: String) -> XMLName { XMLName(XMLName.dav, local) }
    /// The namespace of the `xml:` prefix (Namespaces in XML 1.0, section 3), as in `xml:lang`.
    public static let xml = "http://www.w3.org/XML/1998/namespace"
}

/// One element of a parsed body: its name, attributes, child elements and the character data
/// directly inside it (the text of all its text nodes joined; the order of text between child
/// elements is not kept, which no WebDAV body needs).
public struct XMLElement: Sendable, Equatable {
    /// The element's expanded name.
    public var name: XMLName
    /// Its attributes by expanded name (an unprefixed attribute has no namespace); namespace
    /// declarations are not attributes.
    public var attributes: [XMLName: String]
    /// Child elements in document order.
    public var children: [XMLElement]
    /// The character data directly inside (not inside children), as sent: whitespace kept.
    public var text: String

    /// An element with the given parts.
    public init(name: XMLName, attributes: [XMLName: String] = [:], children: [XMLElement] = [], text: String = "") {
        self.name = name
        self.attributes = attributes
        self.children = children
        self.text = text
    }

    /// The first child named `name`, if any.
    public func child(_ name: XMLName) -> XMLElement? {
        children.first { $0.name == name }
    }

    /// All children named `name`.
    public func children(_ name: XMLName) -> [XMLElement] {
        children.filter { $0.name == name }
    }

    /// The element as XML text that stands alone: each namespace it or its descendants use is
    /// declared on it (DAV: as `D`, the others `ns0`, `ns1`... in order of first use; no
    /// default namespace, so an unprefixed name is in no namespace), attributes sorted, text
    /// escaped (`Multistatus.escape`; in attribute values tab and line feed as well, which a
    /// parser would read as spaces), the xml: namespace (`xml:lang`) by its own prefix, never
    /// declared; text before child elements. What the door keeps of a
    /// dead property (RFC 4918 section 4.3: the value is kept with its namespaces) and echoes
    /// of a LOCK's `<D:owner>`.
    public func serialized() -> String {
        var prefixes = NamespacePrefixes()
        collectNamespaces(into: &prefixes)
        var out = ""
        write(into: &out, prefixes: prefixes, declarations: prefixes.declarations)
        return out
    }

    /// The element's content alone (text, then each child serialized on its own with its
    /// namespace declarations): the inner XML of a property value for `Multistatus.response`.
    public func serializedContent() -> String {
        Multistatus.escape(text) + children.map { $0.serialized() }.joined()
    }

    private func collectNamespaces(into prefixes: inout NamespacePrefixes) {
        prefixes.add(name.namespace)
        for key in attributes.keys.sorted(by: XMLElement.attributeOrder) { prefixes.add(key.namespace) }
        for c in children { c.collectNamespaces(into: &prefixes) }
    }

    private static func attributeOrder(_ a: XMLName, _ b: XMLName) -> Bool {
        (a.namespace, a.local) < (b.namespace, b.local)
    }

    private func write(into out: inout String, prefixes: NamespacePrefixes, declarations: String) {
        let qname = prefixes.qualified(name)
        out += "<" + qname + declarations
        for key in attributes.keys.sorted(by: XMLElement.attributeOrder) {
            out += " " + prefixes.qualified(key) + "=\"" + escapeAttribute(attributes[key] ?? "") + "\""
        }
        if children.isEmpty && text.isEmpty {
            out += "/>"
            return
        }
        out += ">" + Multistatus.escape(text)
        for c in children { c.write(into: &out, prefixes: prefixes, declarations: "") }
        out += "</" + qname + ">"
    }
}

/// The prefixes `XMLElement.serialized` gives the namespaces it meets.
private struct NamespacePrefixes {
    private(set) var order: [String] = []
    private var prefix: [String: String] = [:]
    /// How many of `order` are not DAV: (the next `nsN`), counted as they come: a body may use
    /// thousands of namespaces.
    private var others = 0

    mutating func add(_ namespace: String) {
        guard !namespace.isEmpty, prefix[namespace] == nil else { return }
        // Bound to "xml" by definition; binding another prefix to it is not well-formed.
        if namespace.utf8.elementsEqual(XMLName.xml.utf8) {
            prefix[namespace] = "xml"
            return
        }
        if namespace == XMLName.dav {
            prefix[namespace] = "D"
        } else {
            prefix[namespace] = "ns\(others)"
            others += 1
        }
        order.append(namespace)
    }

    func qualified(_ name: XMLName) -> String {
        guard let p = prefix[name.namespace] else { return name.local }
        return p + ":" + name.local
    }

    var declarations: String {
        order.map { " xmlns:\(prefix[$0] ?? "")=\"\(escapeAttribute($0))\"" }.joined()
    }
}

/// `Multistatus.escape` for an attribute value: tab and line feed as character references too,
/// since attribute-value normalization (XML 1.0 section 3.3.3) reads a raw one as a space.
private func escapeAttribute(_ value: String) -> String {
    var out = String.UnicodeScalarView()
    for u in Multistatus.escape(value).unicodeScalars {
        switch u {
        case "\t": out.append(contentsOf: "&#9;".unicodeScalars)
        case "\n": out.append(contentsOf: "&#10;".unicodeScalars)
        default: out.append(u)
        }
    }
    return String(out)
}

/// How much of a request body the parser takes: checked before parsing (bytes) and while
/// parsing (depth, elements), so a hostile body costs at most this much.
public struct XMLLimits: Sendable {
    /// The most bytes of a body (64 KiB by default; a PROPPATCH of a few dead properties is
    /// far below it).
    public var maxBytes: Int
    /// The deepest nesting of elements (32 by default; WebDAV's own bodies nest 5 deep).
    public var maxDepth: Int
    /// The most elements in one body (10,000 by default).
    public var maxElements: Int
    /// The longest namespace URI an element or attribute may be in (1 KiB by default; the ones
    /// clients use, `DAV:`, `urn:schemas-microsoft-com:`, Apple's, are under 50 bytes). A
    /// namespace is declared once and named by every element that uses it, so without this a
    /// 64 KiB body could name a 30 KB namespace thousands of times, in the tree and in every
    /// answer that repeats the names.
    public var maxNamespaceBytes: Int

    /// Limits of the given sizes.
    public init(maxBytes: Int = 64 * 1024, maxDepth: Int = 32, maxElements: Int = 10_000, maxNamespaceBytes: Int = 1024)
    {
        self.maxBytes = maxBytes
        self.maxDepth = maxDepth
        self.maxElements = maxElements
        self.maxNamespaceBytes = maxNamespaceBytes
    }

    /// 64 KiB, 32 levels, 10,000 elements, namespaces of 1 KiB.
    public static let `default` = XMLLimits()
}

/// Why a request body was refused, as a sentence for the 400 response and the log.
public struct DAVXMLError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What was wrong, e.g. "the XML body declares a DTD or entity: refused".
    public var description: String

    /// An error saying `description`.
    public init(_ description: String) {
        self.description = description
    }
}
