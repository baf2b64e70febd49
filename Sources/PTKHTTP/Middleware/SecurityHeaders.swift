/// Header lines every response of a door carries (a page's Content-Security-Policy, framing,
/// referrer and sniffing rules), set on the connection before the handler answers.
public struct SecurityHeaders<Context>: HTTPMiddleware {
    /// Each line ends in CRLF.
    public let lines: String

    /// The fields as name and value; names and values are the code's own, not checked for CR or LF.
    public init(_ headers: [(String, String)]) {
        lines = headers.map { "\($0.0): \($0.1)\r\n" }.joined()
    }

    /// Sets the door's header lines on the connection, then hands on.
    public func respond(to request: HTTPRequest<Context>, next: HTTPHandler<Context>) throws(HTTPError) -> Bool {
        request.http.fixedHeaders = lines
        return try next(request)
    }
}
