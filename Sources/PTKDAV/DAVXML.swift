import CExpat

/// Request bodies parsed by expat into `XMLElement` trees, with namespaces resolved.
///
/// A body may carry no document type declaration at all: a DOCTYPE (with or without an
/// internal subset), an entity or a parameter entity stops the parser at once, so no entity is
/// ever expanded (billion laughs) and no external one is read (`<!ENTITY x SYSTEM
/// "file:///etc/passwd">`). Parameter entity parsing is off and external entity references are
/// refused as well, in case a declaration ever got past. Size is checked before parsing, depth
/// and element count while parsing.
public enum DAVXML {
    /// The tree of `bytes`, or why it was refused.
    public static func parse(_ bytes: [UInt8], limits: XMLLimits = .default) -> Result<XMLElement, DAVXMLError> {
        // expat takes an int length: no limit lets a body past that.
        if bytes.count > limits.maxBytes || bytes.count > Int(Int32.max) {
            return .failure(DAVXMLError("the XML body is over \(limits.maxBytes) bytes"))
        }
        // U+0001 cannot occur in an XML 1.0 document, not even as a character reference, so it
        // cannot be part of a namespace URI or a local name.
        guard let parser = XML_ParserCreateNS(nil, 1) else {
            return .failure(DAVXMLError("the XML parser could not be created (out of memory)"))
        }
        defer { XML_ParserFree(parser) }
        let builder = TreeBuilder(limits: limits, parser: parser)
        // The builder outlives the parser: both live until this function returns.
        XML_SetUserData(parser, Unmanaged.passUnretained(builder).toOpaque())
        _ = XML_SetParamEntityParsing(parser, XML_PARAM_ENTITY_PARSING_NEVER)
        XML_SetElementHandler(
            parser,
            { user, name, attributes in
                TreeBuilder.from(user).start(name, attributes)
            },
            { user, _ in
                TreeBuilder.from(user).end()
            })
        XML_SetCharacterDataHandler(
            parser,
            { user, text, length in
                TreeBuilder.from(user).characters(text, Int(length))
            })
        XML_SetStartDoctypeDeclHandler(
            parser,
            { user, _, _, _, _ in
                TreeBuilder.from(user).refuse(DAVXMLError.declaration)
            })
        XML_SetEntityDeclHandler(
            parser,
            { user, _, _, _, _, _, _, _, _ in
                TreeBuilder.from(user).refuse(DAVXMLError.declaration)
            })
        XML_SetUnparsedEntityDeclHandler(
            parser,
            { user, _, _, _, _, _ in
                TreeBuilder.from(user).refuse(DAVXMLError.declaration)
            })
        // Returning XML_STATUS_ERROR refuses the entity: expat reports an error, reads nothing.
        XML_SetExternalEntityRefHandler(parser, { _, _, _, _, _ in 0 })
        let status = bytes.withUnsafeBufferPointer { buffer in
            buffer.baseAddress.map { base in
                base.withMemoryRebound(to: CChar.self, capacity: buffer.count) {
                    XML_Parse(parser, $0, Int32(buffer.count), 1)
                }
            } ?? XML_Parse(parser, nil, 0, 1)
        }
        if let refusal = builder.refusal { return .failure(refusal) }
        guard status == XML_STATUS_OK else {
            let code = XML_GetErrorCode(parser)
            let reason = XML_ErrorString(code).map { String(cString: $0) } ?? "error \(code.rawValue)"
            if code == XML_ERROR_UNDEFINED_ENTITY || code == XML_ERROR_EXTERNAL_ENTITY_HANDLING {
                return .failure(DAVXMLError.declaration)
            }
            return .failure(
                DAVXMLError("the XML body is not well-formed (line \(XML_GetCurrentLineNumber(parser)): \(reason))"))
        }
        guard let root = builder.root else {
            return .failure(DAVXMLError("the XML body is not well-formed (no root element)"))
        }
        return .success(root)
    }
}

extension DAVXMLError {
    /// A DOCTYPE, entity or parameter entity in a body.
    static let declaration = DAVXMLError("the XML body declares a DTD or entity: refused")
}

/// Builds the tree from expat's callbacks. A class so that the callbacks (C function pointers
/// that capture nothing) reach it through expat's user data; used by one parse on one thread.
private final class TreeBuilder {
    let limits: XMLLimits
    let parser: XML_Parser
    var stack: [XMLElement] = []
    var texts: [[UInt8]] = []
    var root: XMLElement?
    var elements = 0
    var refusal: DAVXMLError?
    /// Each namespace met, once: every name in it shares this one string.
    var namespaces: [String: String] = [:]

    init(limits: XMLLimits, parser: XML_Parser) {
        self.limits = limits
        self.parser = parser
    }

    static func from(_ user: UnsafeMutableRawPointer?) -> TreeBuilder {
        // Set by `DAVXML.parse` before any callback can run.
        Unmanaged<TreeBuilder>.fromOpaque(user!).takeUnretainedValue()
    }

    /// Stops the parser; expat may still finish the current token, so every callback checks
    /// `refusal` first.
    func refuse(_ error: DAVXMLError) {
        if refusal == nil { refusal = error }
        _ = XML_StopParser(parser, 0)
    }

    func start(_ name: UnsafePointer<CChar>?, _ attributes: UnsafeMutablePointer<UnsafePointer<CChar>?>?) {
        guard refusal == nil, let name else { return }
        elements += 1
        if stack.count + 1 > limits.maxDepth {
            return refuse(DAVXMLError("the XML body is nested deeper than \(limits.maxDepth) elements"))
        }
        if elements > limits.maxElements {
            return refuse(DAVXMLError("the XML body has more than \(limits.maxElements) elements"))
        }
        guard let elementName = self.name(name) else { return }
        var element = XMLElement(name: elementName)
        if let attributes {
            var i = 0
            while let key = attributes[i], let value = attributes[i + 1] {
                guard let attributeName = self.name(key) else { return }
                element.attributes[attributeName] = String(cString: value)
                i += 2
            }
        }
        stack.append(element)
        texts.append([])
    }

    func end() {
        guard refusal == nil, var element = stack.popLast(), let text = texts.popLast() else { return }
        element.text = String(decoding: text, as: UTF8.self)
        if stack.isEmpty {
            root = element
        } else {
            stack[stack.count - 1].children.append(element)
        }
    }

    func characters(_ text: UnsafePointer<CChar>?, _ length: Int) {
        guard refusal == nil, let text, length > 0, !texts.isEmpty else { return }
        text.withMemoryRebound(to: UInt8.self, capacity: length) { bytes in
            texts[texts.count - 1].append(contentsOf: UnsafeBufferPointer(start: bytes, count: length))
        }
    }

    /// expat's "namespace\u{1}local" (or "local" for a name in no namespace) as a name, its
    /// namespace kept once however many names use it (a body names one namespace on thousands
    /// of elements); nil after refusing a namespace over `maxNamespaceBytes`.
    func name(_ raw: UnsafePointer<CChar>) -> XMLName? {
        var length = 0
        var split: Int? = nil
        while raw[length] != 0 {
            if raw[length] == 1 && split == nil { split = length }
            length += 1
        }
        return raw.withMemoryRebound(to: UInt8.self, capacity: length) { p -> XMLName? in
            let bytes = UnsafeBufferPointer(start: p, count: length)
            guard let split else { return XMLName("", String(decoding: bytes, as: UTF8.self)) }
            if split > limits.maxNamespaceBytes {
                refuse(
                    DAVXMLError(
                        "the XML body names a namespace of \(split) bytes; at most \(limits.maxNamespaceBytes) are taken"
                    ))
                return nil
            }
            let namespace = String(decoding: bytes[..<split], as: UTF8.self)
            let kept: String
            if let known = namespaces[namespace] {
                kept = known
            } else {
                namespaces[namespace] = namespace
                kept = namespace
            }
            return XMLName(kept, String(decoding: bytes[(split + 1)...], as: UTF8.self))
        }
    }
}
