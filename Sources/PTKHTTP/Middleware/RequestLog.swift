import PTKSystem

/// The request log line: a request answered with an error status that its handler did not log
/// ("GET "/x": answered 404") gets one line, so no refusal goes unseen; requests a handler
/// logged, and those answered well, add none (a gallery page fetches dozens of thumbnails).
public struct RequestLog<Context>: HTTPMiddleware {
    public init() {}

    public func respond(to request: HTTPRequest<Context>, next: HTTPHandler<Context>) throws(HTTPFailure) -> Bool {
        let before = request.http.responses
        let keepOpen = try next(request)
        let status = request.http.lastStatus
        if request.http.responses > before, status >= 400, !request.logged {
            request.log("\(request.head.method) \(quotedForTerminal(request.head.path)): answered \(status)")
        }
        return keepOpen
    }
}
