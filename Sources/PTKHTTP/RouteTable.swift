/// Answers one request with a response value: the contract of every converted door's routes.
/// `Context` is the door's (its state, and what its middleware learned of the request).
public typealias RouteHandler<Context> = @Sendable (Request, Context) throws(HTTPError) -> Response

/// A step in front of every route of a door (`HTTPResponder.middleware`): answers the request
/// itself, or hands it on to `next`, perhaps with a narrower context.
public typealias RouteMiddleware<Context> =
    @Sendable (Request, Context, _ next: RouteHandler<Context>) throws(HTTPError) -> Response

/// Method and path to handler: a door's route table, built once (a `static let`), its
/// handlers reaching the door's state through their context, never through a captured
/// endpoint. The table, not each door, says 404 (no route has the path) and 405 with `Allow`
/// (routes have the path, none the method). Paths are split into segments at each "/" scalar
/// before anything is decoded (a "/" or "?" with a combining mark after it is one Character,
/// which a Character split would not cut at), so `%2F` and `..` reach no route but as the text
/// they are. The query is not part of a match.
public struct RouteTable<Context>: Sendable {
    /// One route: the methods it answers, its path pattern, what it asks of the door's
    /// middleware, and its handler.
    public struct Route: Sendable {
        /// The methods the route answers, as the request line spells them.
        public let methods: [HTTPMethod]
        let path: PathPattern
        /// What the route asks of the door's middleware (open, change, form, body).
        public let traits: RouteTraits
        let handler: RouteHandler<Context>
        /// The pattern as written ("/photo/{id}/original"): for logs and tests.
        public var pattern: String { path.text }
    }

    private(set) var entries: [Route] = []
    /// Whether the path is percent-decoded before it is split (LocalSend's).
    public let decodesPath: Bool

    /// An empty table; `decodesPath` only for LocalSend, whose routes were always matched decoded.
    public init(decodesPath: Bool = false) { self.decodesPath = decodesPath }

    /// Adds a route. `pattern` is a path of "/"-separated segments, each a literal or a
    /// capture `{name}` whose texts `captures[name]` takes; the last may be `{name*}`, which
    /// takes the rest of the path (zero or more segments, as sent: the door decodes them).
    public mutating func add(
        _ methods: [HTTPMethod], _ pattern: String, captures: [String: PathCapture] = [:], traits: RouteTraits = [],
        _ handler: @escaping RouteHandler<Context>
    ) {
        // The CSRF step reads a form, and only a change's: a form route that is not a change would
        // find no form and leave its body unread.
        precondition(!traits.contains(.form) || traits.contains(.change), "route \(pattern): .form without .change")
        entries.append(
            Route(methods: methods, path: PathPattern(pattern, captures: captures), traits: traits, handler: handler))
    }

    /// Adds the routes `build` adds, each behind `enter`, which makes their narrower context
    /// (an authenticated viewer, a checked password) from the door's or throws the refusal.
    public mutating func group<Inner>(
        _ enter: @escaping @Sendable (Request, Context) throws(HTTPError) -> Inner,
        _ build: (inout RouteGroup<Context, Inner>) -> Void
    ) {
        var group = RouteGroup<Context, Inner>(table: self, enter: enter)
        build(&group)
        self = group.table
    }

    /// Each route's methods and pattern, in order: for tests and docs.
    public var patterns: [(methods: [HTTPMethod], pattern: String)] { entries.map { ($0.methods, $0.path.text) } }

    /// The route for a request's method and target (path and query as sent), or why none:
    /// 404, or 405 with the Allow header's methods.
    public func match(method: String, target: String) -> RouteMatch<Route> {
        matchRoute(
            entries, method: method, segments: PathPattern.segments(of: target, decoding: decodesPath),
            methods: { $0.methods.map(\.name) }, pattern: { $0.path })
    }
}

/// Routes added behind one `enter` step (`RouteTable.group`): their handlers get its context.
public struct RouteGroup<Context, Inner> {
    var table: RouteTable<Context>
    let enter: @Sendable (Request, Context) throws(HTTPError) -> Inner

    /// Adds a route behind the group's `enter`: the handler runs only if `enter` returns, with its context.
    public mutating func add(
        _ methods: [HTTPMethod], _ pattern: String, captures: [String: PathCapture] = [:], traits: RouteTraits = [],
        _ handler: @escaping @Sendable (Request, Inner) throws(HTTPError) -> Response
    ) {
        let enter = self.enter
        table.add(methods, pattern, captures: captures, traits: traits) {
            (r: Request, c: Context) throws(HTTPError) -> Response in
            try handler(r, try enter(r, c))
        }
    }
}
