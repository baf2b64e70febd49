import PTKSystem
import PTKVocabulary

/// What a route asks of the middleware in front of it.
public struct RouteTraits: OptionSet, Sendable, Hashable {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// Served to anyone: no session or password is asked for (a login page, its files).
    public static let open = RouteTraits(rawValue: 1)
    /// Changes something: it must come from this site's own pages, with the session's token.
    public static let change = RouteTraits(rawValue: 2)
    /// Its body is an `application/x-www-form-urlencoded` form, read by `CSRFCheck` before the
    /// handler runs (`HTTPRequest.form`), with the change's token checked in it. Only with
    /// `.change` (the router refuses it alone); a form anyone may send reads its own body.
    public static let form = RouteTraits(rawValue: 4)
    /// The handler reads the request's body itself. Any other route's body (a GET may have
    /// one) is read and dropped, up to `HTTPService.ignoredBodyLimit`, before its handler runs.
    public static let body = RouteTraits(rawValue: 8)
}

/// A path segment's capture: which texts it takes. Segments are matched as they were sent
/// (not percent-decoded), so an encoded "/" or ".." never reaches a capture as one.
public struct PathCapture: Sendable {
    public let accepts: @Sendable (String) -> Bool
    public init(_ accepts: @escaping @Sendable (String) -> Bool) { self.accepts = accepts }

    /// A database id: 1 to 18 decimal digits, no sign, no leading zero (`RouteParameters.int64`).
    public static let id = PathCapture { s in
        (1...18).contains(s.utf8.count) && s.utf8.allSatisfy { $0 >= 0x30 && $0 <= 0x39 } && s.utf8.first != 0x30
    }

    /// Exactly `count` lower-case hexadecimal digits (a secret).
    public static func lowerHex(_ count: Int) -> PathCapture {
        PathCapture { s in s.utf8.count == count && s.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) } }
    }

    /// One of `words`, exactly.
    public static func oneOf(_ words: [String]) -> PathCapture {
        let set = Set(words)
        return PathCapture { set.contains($0) }
    }
}

/// The captures of a matched path, by name.
public struct RouteParameters: Sendable, Equatable {
    public var values: [String: String] = [:]
    public init(_ values: [String: String] = [:]) { self.values = values }
    public subscript(_ name: String) -> String? { values[name] }
    /// A capture made with `PathCapture.id`, as a number.
    public func int64(_ name: String) -> Int64? { values[name].flatMap { Int64($0) } }
}

/// One route: the methods it answers, its path pattern, what it asks of the middleware, and its handler.
public struct Route<Context> {
    enum Segment {
        case literal(String)
        case capture(String, PathCapture)
        /// `{name*}`, last: zero or more segments, joined by "/" as sent.
        case rest(String)
    }

    public let methods: [String]
    /// The pattern as written ("/photo/{id}/original"): for logs and tests.
    public let pattern: String
    public let traits: RouteTraits
    public let handler: HTTPHandler<Context>
    let segments: [Segment]

    /// The captures if `path`'s segments fit the pattern, nil when they do not.
    func captures(_ path: [String]) -> RouteParameters? {
        var out = RouteParameters()
        if case .rest(let name)? = segments.last {
            guard path.count >= segments.count - 1 else { return nil }
            out.values[name] = path.dropFirst(segments.count - 1).joined(separator: "/")
        } else {
            guard path.count == segments.count else { return nil }
        }
        for (segment, text) in zip(segments, path) {
            switch segment {
            case .rest: break
            case .literal(let word): guard word == text else { return nil }
            case .capture(let name, let capture):
                guard capture.accepts(text) else { return nil }
                out.values[name] = text
            }
        }
        return out
    }
}

/// Method and path to handler: the door's route table. The router, not each door, says 404
/// (no route has the path) and 405 with `Allow` (routes have the path, none the method).
/// Paths are split into segments at each "/" scalar before anything is decoded (a "/" or "?"
/// with a combining mark after it is one Character, which a Character split would not cut at),
/// so `%2F` and `..` reach no route but as the text they are. The query is not part of a match.
public struct Router<Context> {
    public private(set) var routes: [Route<Context>] = []
    /// Whether the path is percent-decoded before it is split (LocalSend's routes are compared
    /// with the decoded path, as before); the web's and WebDAV's are not.
    public let decodesPath: Bool

    public init(decodesPath: Bool = false) { self.decodesPath = decodesPath }

    /// Adds a route. `pattern` is a path of "/"-separated segments, each a literal or a
    /// capture `{name}` whose texts `captures[name]` takes; the last may be `{name*}`, which
    /// takes the rest of the path (zero or more segments, as sent: the door decodes them).
    public mutating func add(_ methods: [String], _ pattern: String, captures: [String: PathCapture] = [:], traits: RouteTraits = [],
                             _ handler: @escaping HTTPHandler<Context>) {
        // CSRFCheck reads a form, and only a change's: a form route that is not a change would
        // find no form and leave its body unread.
        precondition(!traits.contains(.form) || traits.contains(.change), "route \(pattern): .form without .change")
        let segments: [Route<Context>.Segment] = pathComponents(pattern).dropFirst().map { part in
            if part.hasPrefix("{"), part.hasSuffix("*}") { return .rest(String(part.dropFirst().dropLast(2))) }
            if part.hasPrefix("{"), part.hasSuffix("}") {
                let name = String(part.dropFirst().dropLast())
                guard let capture = captures[name] else { preconditionFailure("route \(pattern): no capture named \(name)") }
                return .capture(name, capture)
            }
            return .literal(part)
        }
        routes.append(Route(methods: methods, pattern: pattern, traits: traits, handler: handler, segments: segments))
    }

    public enum Match {
        case found(Route<Context>, RouteParameters)
        case notFound
        /// `allow` is the Allow header: the methods the path's routes take.
        case methodNotAllowed(allow: String)
    }

    /// The route for a request's method and target (path and query as sent).
    public func match(method: String, target: String) -> Match {
        let raw = target.parts(separatedBy: "?", maxSplits: 1).first ?? ""
        let path = decodesPath ? (percentDecoded(raw, plusIsSpace: false) ?? raw) : raw
        guard path.startsWithScalar("/") else { return .notFound }
        let segments = Array(pathComponents(path).dropFirst())
        var allowed: [String] = []
        for route in routes {
            guard let parameters = route.captures(segments) else { continue }
            if route.methods.contains(method) { return .found(route, parameters) }
            allowed += route.methods.filter { !allowed.contains($0) }
        }
        guard !allowed.isEmpty else { return .notFound }
        return .methodNotAllowed(allow: Self.order(allowed).joined(separator: ", "))
    }

    /// Methods in the order an Allow header lists them here: the common ones first, the rest by name.
    static func order(_ methods: [String]) -> [String] {
        let known = ["OPTIONS", "GET", "HEAD", "POST", "PUT", "DELETE", "PROPFIND", "PROPPATCH", "MKCOL", "COPY", "MOVE", "LOCK", "UNLOCK"]
        return known.filter(methods.contains) + methods.filter { !known.contains($0) }.sorted()
    }
}
