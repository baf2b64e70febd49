import PTKSystem

/// A converted door's HTTP side: its route table (built once), the middleware every request
/// passes in order, its error middleware, and how it makes a request's context. The handlers
/// return `Response` values, which the connection writes (`HTTPConnection.send`).
public struct HTTPResponder<Context> {
    /// The door's routes, built once and shared by every connection.
    public let routes: RouteTable<Context>
    /// Run in order, outermost first, before the route's handler; each may answer and stop there.
    public let middleware: [RouteMiddleware<Context>]
    /// The door's one error middleware: a handler's (or middleware's) `.status` refusal, and
    /// the router's 404 and 405, as a response in the door's terms (JSON, DAV XML, HTML).
    public let renderError: (Request, HTTPStatus, String, HTTPFields) -> Response
    /// The context of a request (the door's state, what its certificate says).
    public let context: (Request) -> Context
    let lines: RequestLines
    /// The request log, with a budget: a request answered with an error status that no one
    /// logged (`GET "/x": answered 404`) gets one line, so no refusal goes unseen; requests a
    /// handler logged, and those answered well, add none (a gallery page fetches dozens of
    /// thumbnails). The path is logged as it was sent (printable ASCII: the parser refuses
    /// anything else), cut after 200 characters; each address has the budget's share of lines
    /// a minute, and the next line after a pause says how many were left out, so a client
    /// asking for nonsense in a loop cannot fill the journal.
    let requestLog: LogBudget?

    /// `kind` names the door in log lines; `logBudget` bounds its lines a minute per address,
    /// and `requestLog` adds a line for an error no one logged (nil: none).
    public init(
        routes: RouteTable<Context>, middleware: [RouteMiddleware<Context>] = [], kind: String,
        logBudget: LogBudget? = nil,
        requestLog: LogBudget? = nil, log: @escaping (String) -> Void, context: @escaping (Request) -> Context,
        renderError: @escaping (Request, HTTPStatus, String, HTTPFields) -> Response
    ) {
        self.routes = routes
        self.middleware = middleware
        self.renderError = renderError
        self.context = context
        self.requestLog = requestLog
        lines = RequestLines(kind: kind, budget: logBudget, log: log)
    }

    /// The response to one request whose head `http` just read. Bodies of routes that take
    /// none, and of requests no route takes, are read and dropped first (up to
    /// `RequestBody.ignoredBodyLimit`).
    public func response(
        to head: HTTPHead, on http: HTTPConnection, peer: SocketAddress, connectionID: Int,
        certificate: String?
    ) throws(HTTPError) -> Response {
        let match = routes.match(method: head.method, target: head.target)
        var found: (route: RouteTable<Context>.Route, parameters: RouteParameters)? = nil
        if case .found(let r, let p) = match { found = (r, p) }
        let route = found?.route
        let parameters = found?.parameters ?? RouteParameters()
        let request = Request(
            head: head, connection: http, peer: peer, connectionID: connectionID, certificate: certificate,
            traits: route?.traits ?? [], parameters: parameters, lines: lines)
        var response: Response
        do throws(HTTPError) {
            var handler: RouteHandler<Context>
            switch match {
            case .found(let r, _): handler = r.handler
            case .notFound: handler = { _, _ throws(HTTPError) in throw .status(.notFound, HTTPError.noSuchRoute) }
            case .methodNotAllowed(let allow):
                let method = head.method
                handler = { _, _ throws(HTTPError) in
                    throw .status(.methodNotAllowed, "\(method) is not allowed here", headers: ["Allow": allow])
                }
            }
            if route?.traits.isDisjoint(with: [.body, .form]) ?? true {
                // After the middleware: a refusal there leaves the body unread (the connection then closes).
                let inner = handler
                handler = { (r: Request, c: Context) throws(HTTPError) -> Response in
                    try r.body.discard(limit: RequestBody.ignoredBodyLimit)
                    return try inner(r, c)
                }
            }
            for step in middleware.reversed() {
                let next = handler
                handler = { (r: Request, c: Context) throws(HTTPError) -> Response in try step(r, c, next) }
            }
            response = try handler(request, context(request))
        } catch {
            guard case .status(let status, let message, let headers) = error else { throw error }
            response = renderError(request, status, message, headers)
        }
        if let requestLog, response.status.isError, !request.logged {
            let (allowed, left) = requestLog.take(request.address, now: .now)
            if allowed {
                let raw = head.target.parts(separatedBy: "?", maxSplits: 1).first ?? ""
                let more = left > 0 ? " (\(left) more from this address not logged)" : ""
                // Counted here already.
                request.log("\(head.method) \(quotedForLog(raw)): answered \(response.status)\(more)", always: true)
            }
        }
        return response
    }
}
