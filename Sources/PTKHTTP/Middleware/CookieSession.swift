/// A session named by a cookie: the session is looked up for every request (an open route
/// shows who is logged in too); a route that is not `.open` without one is answered by
/// `refuse`, told whether a cookie came (a session that has ended) or none. A request with a
/// session is proven: its connection is not displaced for a newcomer.
public struct CookieSession<Context, Session>: HTTPMiddleware {
    public let cookieName: String
    public let lookup: (String) -> Session?
    /// Keeps the session in the request's context (and its log subject).
    public let keep: (HTTPRequest<Context>, Session) -> Void
    public let refuse: (HTTPRequest<Context>, _ hadCookie: Bool) throws(HTTPError) -> Bool

    public init(cookieName: String, lookup: @escaping (String) -> Session?, keep: @escaping (HTTPRequest<Context>, Session) -> Void,
                refuse: @escaping (HTTPRequest<Context>, Bool) throws(HTTPError) -> Bool) {
        self.cookieName = cookieName
        self.lookup = lookup
        self.keep = keep
        self.refuse = refuse
    }

    public func respond(to request: HTTPRequest<Context>, next: HTTPHandler<Context>) throws(HTTPError) -> Bool {
        let secret = cookies(request.head.header("cookie"))[cookieName]
        if let session = secret.flatMap(lookup) {
            keep(request, session)
            request.http.proven()
        } else if !request.traits.contains(.open) {
            return try refuse(request, secret != nil)
        }
        return try next(request)
    }
}
