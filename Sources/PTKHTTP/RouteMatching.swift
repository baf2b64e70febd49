import PTKSystem
import PTKVocabulary

/// What a route asks of the middleware in front of it.
public struct RouteTraits: OptionSet, Sendable, Hashable {
    /// The traits' bits; use the named traits, not numbers.
    public let rawValue: Int
    /// Traits from their bits (OptionSet's requirement).
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// Served to anyone: no session or password is asked for (a login page, its files).
    public static let open = RouteTraits(rawValue: 1)
    /// Changes something: it must come from this site's own pages, with the session's token.
    public static let change = RouteTraits(rawValue: 2)
    /// Its body is an `application/x-www-form-urlencoded` form, read by the door's CSRF step
    /// before the handler runs (the web door's `WebDoor.csrf`), with the change's token checked
    /// in it. Only with `.change` (the tables refuse it alone); a form anyone may send reads its
    /// own body.
    public static let form = RouteTraits(rawValue: 4)
    /// The handler reads the request's body itself. Any other route's body (a GET may have
    /// one) is read and dropped, up to `RequestBody.ignoredBodyLimit`, before its handler runs.
    public static let body = RouteTraits(rawValue: 8)
}

/// A path segment's capture: which texts it takes. Segments are matched as they were sent
/// (not percent-decoded), so an encoded "/" or ".." never reaches a capture as one.
public struct PathCapture: Sendable {
    /// Whether a segment, as sent (not decoded), may be this capture.
    public let accepts: @Sendable (String) -> Bool
    /// A capture taking the segments `accepts` says yes to; it runs on peer text, so keep it strict.
    public init(_ accepts: @escaping @Sendable (String) -> Bool) { self.accepts = accepts }

    /// A database id: 1 to 18 decimal digits, no sign, no leading zero (`RouteParameters.int64`).
    public static let id = PathCapture { s in
        (1...18).contains(s.utf8.count) && s.utf8.allSatisfy { $0 >= 0x30 && $0 <= 0x39 } && s.utf8.first != 0x30
    }

    /// Exactly `count` lower-case hexadecimal digits (a secret).
    public static func lowerHex(_ count: Int) -> PathCapture {
        PathCapture { s in
            s.utf8.count == count && s.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) }
        }
    }

    /// One of `words`, exactly.
    public static func oneOf(_ words: [String]) -> PathCapture {
        let set = Set(words)
        return PathCapture { set.contains($0) }
    }
}

/// The captures of a matched path, by name.
public struct RouteParameters: Sendable, Equatable {
    /// The captured text by name, as sent (not percent-decoded, except on a route table that decodes paths).
    public var values: [String: String] = [:]
    /// Captures given by hand (tests; the route table fills them in from the path).
    public init(_ values: [String: String] = [:]) { self.values = values }
    /// The capture `name` as text, nil when the route has no such capture.
    public subscript(_ name: String) -> String? { values[name] }
    /// A capture made with `PathCapture.id`, as a number.
    public func int64(_ name: String) -> Int64? { values[name].flatMap { Int64($0) } }

    /// The capture `name` as a `T`: the route's pattern has it, and its `PathCapture` lets only
    /// texts a `T` takes through, so a failure is a table that does not fit its handler: it is
    /// answered as no such route (404) rather than trusted.
    public func require<T: RouteCaptureValue>(_ name: String, as type: T.Type = T.self) throws(HTTPError) -> T {
        guard let text = values[name], let value = T(routeCapture: text) else {
            throw .status(.notFound, HTTPError.noSuchRoute)
        }
        return value
    }
}

/// A type a path capture can be read as (`RouteParameters.require`).
public protocol RouteCaptureValue {
    init?(routeCapture text: String)
}

extension Int64: RouteCaptureValue {
    /// A decimal capture; nil when it is not an Int64 (a `PathCapture.id` capture always is).
    public init?(routeCapture text: String) { self.init(text) }
}

extension String: RouteCaptureValue {
    /// The capture's text as it is; never nil.
    public init?(routeCapture text: String) { self = text }
}

/// A route's path pattern ("/photo/{id}/original"): literal segments, captures `{name}`, and
/// a last `{name*}` that takes the rest of the path.
public struct PathPattern: Sendable {
    enum Segment: Sendable {
        case literal(String)
        case capture(String, PathCapture)
        /// `{name*}`, last: zero or more segments, joined by "/" as sent.
        case rest(String)
    }

    /// The pattern as written: for logs and tests.
    public let text: String
    let segments: [Segment]

    /// `pattern` with each `{name}` taking the texts `captures[name]` accepts.
    public init(_ pattern: String, captures: [String: PathCapture]) {
        text = pattern
        segments = pathComponents(pattern).dropFirst().map { part in
            if part.hasPrefix("{"), part.hasSuffix("*}") { return .rest(String(part.dropFirst().dropLast(2))) }
            if part.hasPrefix("{"), part.hasSuffix("}") {
                let name = String(part.dropFirst().dropLast())
                guard let capture = captures[name] else {
                    preconditionFailure("route \(pattern): no capture named \(name)")
                }
                return .capture(name, capture)
            }
            return .literal(part)
        }
    }

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

    /// The path segments of a request target (its query dropped; percent-decoded first when
    /// `decoding`), nil when it is not a path.
    static func segments(of target: String, decoding: Bool) -> [String]? {
        let raw = target.parts(separatedBy: "?", maxSplits: 1).first ?? ""
        let path = decoding ? (percentDecoded(raw, plusIsSpace: false) ?? raw) : raw
        guard path.startsWithScalar("/") else { return nil }
        return Array(pathComponents(path).dropFirst())
    }
}

/// What a route table found for a request.
public enum RouteMatch<Found> {
    /// The route that takes the request, and the path's captures.
    case found(Found, RouteParameters)
    /// No route has the path (404).
    case notFound
    /// `allow` is the Allow header: the methods the path's routes take.
    case methodNotAllowed(allow: String)
}

/// The first of `routes` whose pattern fits `segments` and whose methods include `method`;
/// else the methods the fitting routes take (405), or none (404).
func matchRoute<R>(
    _ routes: [R], method: String, segments: [String]?, methods: (R) -> [String], pattern: (R) -> PathPattern
) -> RouteMatch<R> {
    guard let segments else { return .notFound }
    var allowed: [String] = []
    for route in routes {
        guard let parameters = pattern(route).captures(segments) else { continue }
        if methods(route).contains(method) { return .found(route, parameters) }
        allowed += methods(route).filter { !allowed.contains($0) }
    }
    guard !allowed.isEmpty else { return .notFound }
    return .methodNotAllowed(allow: orderedMethods(allowed).joined(separator: ", "))
}

/// Methods in the order an Allow header lists them here: the common ones first, the rest by name.
func orderedMethods(_ methods: [String]) -> [String] {
    let known = [
        "OPTIONS", "GET", "HEAD", "POST", "PUT", "DELETE", "PROPFIND", "PROPPATCH", "MKCOL", "COPY", "MOVE", "LOCK",
        "UNLOCK",
    ]
    return known.filter(methods.contains) + methods.filter { !known.contains($0) }.sorted()
}
