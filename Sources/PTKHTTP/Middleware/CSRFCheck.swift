import PTKSystem
import PTKTime
import PTKVocabulary

/// Why a request comes from a page of another site, nil when it does not (or the browser
/// does not say): its Origin is another (`null`, which pages with `Referrer-Policy:
/// no-referrer` send for their own forms, says nothing), or its Sec-Fetch-Site is neither
/// same-origin nor none (typed or bookmarked).
public func otherSite(_ head: HTTPHead) -> String? {
    if let origin = head.header("origin"), origin != "null", origin != "https://" + (head.header("host") ?? "") {
        return "Origin \(quotedForTerminal(origin)) is not this site"
    }
    if let site = head.header("sec-fetch-site"), site != "same-origin", site != "none" {
        return "Sec-Fetch-Site is \(quotedForTerminal(site))"
    }
    return nil
}

/// Changes (`.change` routes) only from this site's own pages, with the session's token: a
/// change from another site (Origin, Sec-Fetch-Site) is refused before its body is read (the
/// connection closes); a `.form` route's form is read (up to `formLimit`: 413 beyond, not read)
/// into `HTTPRequest.form` and must hold the token as `csrf`; any other change must send it as
/// `X-CSRF-Token` (refused unread, closing).
public struct CSRFCheck<Context>: HTTPMiddleware {
    /// Why a change was refused: for the door's answer (403) and its log line.
    public enum Refusal: Equatable, Sendable {
        /// Not from this site: what the browser said.
        case otherSite(String)
        case missingToken
    }

    /// The token of the request's session (nil: none, which no token matches).
    public let expectedToken: (HTTPRequest<Context>) -> String?
    /// The largest form read, in bytes; a longer one is answered 413 unread.
    public let formLimit: Int
    /// How long each read of the form and each write of a refusal may wait for the peer.
    public let idle: Duration
    /// Answers a refused change; `close` when its body was not read.
    public let refuse: (HTTPRequest<Context>, Refusal, _ close: Bool) throws(HTTPError) -> Bool

    /// `refuse` answers in the door's terms; it is told to close when the body was left unread.
    public init(formLimit: Int, idle: Duration, expectedToken: @escaping (HTTPRequest<Context>) -> String?,
                refuse: @escaping (HTTPRequest<Context>, Refusal, Bool) throws(HTTPError) -> Bool) {
        self.formLimit = formLimit
        self.idle = idle
        self.expectedToken = expectedToken
        self.refuse = refuse
    }

    /// Passes routes that change nothing on; a change passes only from this site with the token.
    public func respond(to request: HTTPRequest<Context>, next: HTTPHandler<Context>) throws(HTTPError) -> Bool {
        guard request.traits.contains(.change) else { return try next(request) }
        if let other = otherSite(request.head) { return try refuse(request, .otherSite(other), true) }
        let expected = expectedToken(request)
        if request.traits.contains(.form) {
            request.form = try readForm(request.http, request.head, limit: formLimit, idle: idle)
            guard let expected, request.form["csrf"] == expected else { return try refuse(request, .missingToken, false) }
        } else {
            guard let expected, request.head.header("x-csrf-token") == expected else { return try refuse(request, .missingToken, true) }
        }
        return try next(request)
    }
}

/// A form's fields (`application/x-www-form-urlencoded`, at most `limit` bytes: a longer one
/// announced by its Content-Length is refused 413 unread, and the connection closes).
public func readForm(_ http: HTTPConnection, _ head: HTTPHead, limit: Int, idle: Duration) throws(HTTPError) -> [String: String] {
    if let length = head.contentLength, length > Int64(limit) {
        throw .refused(413, "the form is over \(limit) bytes")
    }
    let body = try http.readBody(limit: limit, deadline: { .now + idle })
    return urlEncodedFields(String(decoding: body, as: UTF8.self))
}
