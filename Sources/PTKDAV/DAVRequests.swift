/// The bodies of PROPFIND, PROPPATCH and LOCK (RFC 4918 sections 9.1, 9.2, 9.10), from the
/// tree `DAVXML.parse` makes. Unknown elements are ignored where the RFC's extensibility rule
/// (section 17) asks it; a body missing what its method needs is refused.

/// What a PROPFIND asks for (RFC 4918 section 14.20).
public enum PropfindRequest: Sendable, Equatable {
    /// `<D:allprop/>` (or an empty body, section 9.1): every live property the door shows and
    /// every dead one, plus the named ones of `<D:include>` (section 14.8).
    case allProperties(include: [XMLName])
    /// `<D:propname/>`: the names alone.
    case propertyNames
    /// `<D:prop>`: these properties, in the order sent.
    case properties([XMLName])

    /// The request of `body`: an empty body (or one of only whitespace) is `allProperties(include: [])`;
    /// otherwise the root must be DAV:propfind with exactly one of prop, allprop or propname.
    public static func parse(_ body: [UInt8]) -> Result<PropfindRequest, DAVXMLError> {
        if isBlank(body) { return .success(.allProperties(include: [])) }
        return DAVXML.parse(body).flatMap { root in
            if let error = expectRoot(root, "propfind") { return .failure(error) }
            let kinds = root.children.filter {
                ["prop", "allprop", "propname"].contains($0.name.local) && $0.name.namespace == XMLName.dav
            }
            guard kinds.count == 1, let kind = kinds.first else {
                return .failure(
                    DAVXMLError(
                        kinds.isEmpty
                            ? "the PROPFIND body names none of prop, allprop or propname"
                            : "the PROPFIND body names more than one of prop, allprop and propname"))
            }
            let include = root.child(.dav("include"))
            if include != nil && kind.name.local != "allprop" {
                return .failure(DAVXMLError("the PROPFIND body has an include without allprop"))
            }
            switch kind.name.local {
            case "prop": return .success(.properties(kind.children.map(\.name)))
            case "propname": return .success(.propertyNames)
            default: return .success(.allProperties(include: include?.children.map(\.name) ?? []))
            }
        }
    }
}

/// A PROPPATCH (RFC 4918 section 14.19): properties to set and to remove, applied in document
/// order, all or none (section 9.2).
public struct ProppatchRequest: Sendable, Equatable {
    /// One instruction.
    public enum Operation: Sendable, Equatable {
        /// Set the property named so to this element (the whole property element, its name,
        /// attributes and content: `serialized()` or `serializedContent()` keep it).
        case set(XMLName, XMLElement)
        /// Remove the property (no error when it is not there, section 14.23).
        case remove(XMLName)
    }

    /// The instructions in document order.
    public var operations: [Operation]

    /// Instructions as given.
    public init(operations: [Operation]) {
        self.operations = operations
    }

    /// The request of `body`: root DAV:propertyupdate, with one or more DAV:set or DAV:remove,
    /// each holding a DAV:prop.
    public static func parse(_ body: [UInt8]) -> Result<ProppatchRequest, DAVXMLError> {
        if isBlank(body) { return .failure(DAVXMLError("the PROPPATCH body is empty")) }
        return DAVXML.parse(body).flatMap { root in
            if let error = expectRoot(root, "propertyupdate") { return .failure(error) }
            var operations: [Operation] = []
            for instruction in root.children where instruction.name == .dav("set") || instruction.name == .dav("remove")
            {
                let props = instruction.children(.dav("prop"))
                if props.isEmpty {
                    return .failure(DAVXMLError("the PROPPATCH body has a \(instruction.name.local) without prop"))
                }
                for prop in props {
                    for property in prop.children {
                        operations.append(
                            instruction.name.local == "set" ? .set(property.name, property) : .remove(property.name))
                    }
                }
            }
            if operations.isEmpty { return .failure(DAVXMLError("the PROPPATCH body sets and removes no property")) }
            return .success(ProppatchRequest(operations: operations))
        }
    }
}

/// A LOCK's `<D:lockinfo>` (RFC 4918 section 14.11): a new write lock.
public struct LockRequest: Sendable, Equatable {
    /// Exclusive or shared (section 6.2).
    public enum Scope: Sendable {
        /// Only the holder may write.
        case exclusive
        /// Several holders may share it; any exclusive lock conflicts.
        case shared
    }

    /// The scope asked for.
    public var scope: Scope
    /// The `<D:owner>` element serialized (`XMLElement.serialized`), to echo in lock
    /// discovery as sent (section 14.17); nil when the body has none.
    public var owner: String?

    /// A request as given.
    public init(scope: Scope, owner: String?) {
        self.scope = scope
        self.owner = owner
    }

    /// The request of `body`: nil for an empty body, which is a refresh (section 9.10.2);
    /// otherwise root DAV:lockinfo with a lockscope of exclusive or shared and a locktype of
    /// write (the only lock type, section 7).
    public static func parse(_ body: [UInt8]) -> Result<LockRequest?, DAVXMLError> {
        if isBlank(body) { return .success(nil) }
        return DAVXML.parse(body).flatMap { root in
            if let error = expectRoot(root, "lockinfo") { return .failure(error) }
            guard let scopeElement = root.child(.dav("lockscope")) else {
                return .failure(DAVXMLError("the LOCK body has no lockscope"))
            }
            let scope: Scope
            if scopeElement.child(.dav("exclusive")) != nil {
                scope = .exclusive
            } else if scopeElement.child(.dav("shared")) != nil {
                scope = .shared
            } else {
                return .failure(DAVXMLError("the LOCK body's lockscope is neither exclusive nor shared"))
            }
            guard let type = root.child(.dav("locktype")) else {
                return .failure(DAVXMLError("the LOCK body has no locktype"))
            }
            guard type.child(.dav("write")) != nil else {
                return .failure(DAVXMLError("the LOCK body's locktype is not write"))
            }
            return .success(LockRequest(scope: scope, owner: root.child(.dav("owner"))?.serialized()))
        }
    }
}

/// A body of nothing but XML whitespace counts as none (clients send "\r\n" now and then).
func isBlank(_ body: [UInt8]) -> Bool {
    body.allSatisfy { $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }
}

/// An error unless `root` is DAV:`local`.
func expectRoot(_ root: XMLElement, _ local: String) -> DAVXMLError? {
    root.name == .dav(local) ? nil : DAVXMLError("the XML body's root is \(root.name), not {DAV:}\(local)")
}
