/// A session named by a cookie: the session is looked up for every request (an open route
/// shows who is logged in too); a route that is not `.open` without one is answered by
/// `refuse`, told whether a cookie came (a session that has ended) or none. A request with a
/// session is proven: its connection is not displaced for a newcomer.
public struct CookieSession<Context, Session>: HTTPMiddleware {
    /// The cookie holding the session's secret.
    public let cookieName: String
    /// The live session for a cookie's secret, nil when it is unknown or has ended.
    public let lookup: (String) -> Session?
    /// Keeps the session in the request's context (and its log subject).
    public let keep: (HTTPRequest<Context>, Session) -> Void
    /// Answers a non-`.open` route without a session (a login page, a 401); returns whether to keep alive.
    public let refuse: (HTTPRequest<Context>, _ hadCookie: Bool) throws(HTTPError) -> Bool

    /// `refuse` answers, in the door's terms, a route that needs a session and has none.
    public init(cookieName: String, lookup: @escaping (String) -> Session?, keep: @escaping (HTTPRequest<Context>, Session) -> Void,
                refuse: @escaping (HTTPRequest<Context>, Bool) throws(HTTPError) -> Bool) {
        self.cookieName = cookieName
        self.lookup = lookup
        self.keep = keep
        self.refuse = refuse
    }

    /// Keeps the cookie's session in the context and hands on; refuses non-`.open` routes without one.
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
