/// Answers one request with a response value: the contract of every converted door's routes.
/// `Context` is the door's (its state, and what its middleware learned of the request).
public typealias RouteHandler<Context> = @Sendable (Request, Context) throws(HTTPError) -> Response

/// A step in front of every route of a door (`HTTPResponder.middleware`): answers the request
/// itself, or hands it on to `next`, perhaps with a narrower context.
public typealias RouteMiddleware<Context> = @Sendable (Request, Context, _ next: RouteHandler<Context>) throws(HTTPError) -> Response

/// Method and path to handler: a door's route table, built once (a `static let`), its
/// handlers reaching the door's state through their context, never through a captured
/// endpoint. Matching is `Router`'s: paths split at each "/" scalar before any decoding, 404
/// when no route has the path, 405 with Allow when routes have it but not the method.
public struct RouteTable<Context>: Sendable {
    struct Entry: Sendable {
        let methods: [HTTPMethod]
        let path: PathPattern
        let traits: RouteTraits
        let handler: RouteHandler<Context>
    }

    private(set) var entries: [Entry] = []
    /// Whether the path is percent-decoded before it is split (LocalSend's).
    public let decodesPath: Bool

    /// An empty table; `decodesPath` only for LocalSend, whose routes were always matched decoded.
    public init(decodesPath: Bool = false) { self.decodesPath = decodesPath }

    /// Adds a route: `pattern` as in `Router.add`, `traits` as in `RouteTraits`.
    public mutating func add(_ methods: [HTTPMethod], _ pattern: String, captures: [String: PathCapture] = [:], traits: RouteTraits = [],
                             _ handler: @escaping RouteHandler<Context>) {
        precondition(!traits.contains(.form) || traits.contains(.change), "route \(pattern): .form without .change")
        entries.append(Entry(methods: methods, path: PathPattern(pattern, captures: captures), traits: traits, handler: handler))
    }

    /// Adds the routes `build` adds, each behind `enter`, which makes their narrower context
    /// (an authenticated viewer, a checked password) from the door's or throws the refusal.
    public mutating func group<Inner>(_ enter: @escaping @Sendable (Request, Context) throws(HTTPError) -> Inner,
                                      _ build: (inout RouteGroup<Context, Inner>) -> Void) {
        var group = RouteGroup<Context, Inner>(table: self, enter: enter)
        build(&group)
        self = group.table
    }

    /// Each route's methods and pattern, in order: for tests and docs.
    public var patterns: [(methods: [HTTPMethod], pattern: String)] { entries.map { ($0.methods, $0.path.text) } }

    /// The route for a request's method and target (path and query as sent).
    func match(method: String, target: String) -> RouteMatch<Entry> {
        matchRoute(entries, method: method, segments: PathPattern.segments(of: target, decoding: decodesPath),
                   methods: { $0.methods.map(\.name) }, pattern: { $0.path })
    }
}

/// Routes added behind one `enter` step (`RouteTable.group`): their handlers get its context.
public struct RouteGroup<Context, Inner> {
    var table: RouteTable<Context>
    let enter: @Sendable (Request, Context) throws(HTTPError) -> Inner

    /// Adds a route behind the group's `enter`: the handler runs only if `enter` returns, with its context.
    public mutating func add(_ methods: [HTTPMethod], _ pattern: String, captures: [String: PathCapture] = [:], traits: RouteTraits = [],
                             _ handler: @escaping @Sendable (Request, Inner) throws(HTTPError) -> Response) {
        let enter = self.enter
        table.add(methods, pattern, captures: captures, traits: traits) { (r: Request, c: Context) throws(HTTPError) -> Response in
            try handler(r, try enter(r, c))
        }
    }
}
