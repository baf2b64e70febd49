import PTKSystem
import PTKTime
import PTKTransport

/// Answers one request; returns whether the connection may carry another request after it.
public typealias HTTPHandler<Context> = (HTTPRequest<Context>) throws(HTTPError) -> Bool

/// One request as the middleware and a route's handler see it: its head, the connection to
/// read its body from and answer on, who sent it, the route it matched, and the door's own
/// `context` (a session, a library handle), which middleware fills in before the handler runs.
public final class HTTPRequest<Context> {
    /// The request line and header fields, parsed.
    public let head: HTTPHead
    /// The connection, to read the body from and write the answer to (the legacy contract).
    public let http: HTTPConnection
    /// The address and port the connection came from.
    public let peer: SocketAddress
    /// The connection's number in the log.
    public let connectionID: Int
    /// The SHA-256 of the client certificate the peer showed, if any.
    public let certificate: String?
    /// The route's traits (a request no route matched has none: it is treated as private).
    public let traits: RouteTraits
    /// The path's captures by name.
    public let parameters: RouteParameters
    /// The door's own state for this request, filled in by middleware before the handler runs.
    public var context: Context
    /// The form of a `.form` route, read by `FormReader` before the handler runs.
    public var form: [String: String] = [:]
    /// Said after the door and connection in each log line (who the sender is, once known).
    public var logSubject = ""
    /// Whether a line was logged about this request (`RequestLog` then adds none).
    public private(set) var logged = false
    private let logLine: (String) -> Void
    private let kind: String
    /// The door's lines a minute per address; nil: every line is written.
    public let logBudget: LogBudget?

    /// A request as the service builds it once a route is matched; tests build one over a scripted stream.
    public init(head: HTTPHead, http: HTTPConnection, peer: SocketAddress, connectionID: Int, certificate: String?, traits: RouteTraits,
                parameters: RouteParameters, context: Context, kind: String, logBudget: LogBudget? = nil, log: @escaping (String) -> Void) {
        self.logBudget = logBudget
        self.head = head
        self.http = http
        self.peer = peer
        self.connectionID = connectionID
        self.certificate = certificate
        self.traits = traits
        self.parameters = parameters
        self.context = context
        self.kind = kind
        logLine = log
    }

    /// Whether only the head is wanted: the handler must send a head without its body.
    public var headOnly: Bool { head.method == "HEAD" }
    /// The peer's address, without its port.
    public var address: String { peer.host }

    /// The error this request was answered with is part of normal use (a PIN asked for before
    /// the first try): the request log adds no line for it.
    public func needsNoLogLine() { logged = true }

    /// Logs `line`, whole, about this request (a door whose lines name more than its subject).
    /// Budgeted as `log` is.
    public func logWhole(_ line: String, always: Bool = false) {
        logged = true
        lines.write(line, address: address, always: always)
    }

    /// Logs `line` about this request: "KIND ID from PEER SUBJECT: line". Unless `always` (a
    /// line saying what was changed: a photo saved, deleted, moved, which the store and disk
    /// bound), the line counts against the door's `logBudget` for the peer's address: past it
    /// the line is left out, and the next one written says how many were. Peer text in `line`
    /// is quoted and cut by the caller (`quotedForLog`); the line itself is cut at `maxLogLine`.
    public func log(_ line: String, always: Bool = false) {
        logged = true
        lines.write("\(kind) \(connectionID) from \(peer)\(logSubject.isEmpty ? "" : " " + logSubject): \(line)", address: address, always: always)
    }

    private var lines: RequestLines { RequestLines(kind: kind, budget: logBudget, log: logLine) }
}

/// A step in front of every route of a door (a session, a password, a check of where a change
/// came from): it answers the request itself, or hands it on to `next`.
public protocol HTTPMiddleware<Context> {
    associatedtype Context
    func respond(to request: HTTPRequest<Context>, next: HTTPHandler<Context>) throws(HTTPError) -> Bool
}

/// A door: its route table, the middleware every request passes in order, and how it says
/// "no such page" and "not with this method" in its own terms.
public struct HTTPService<Context> {
    /// The door's routes, matched for each request.
    public var router: Router<Context>
    /// Run in order before the handler; each may answer and stop the request there.
    public var middleware: [any HTTPMiddleware<Context>]
    /// Bodies of requests that need none (and of refused routes) are read and dropped up to this size.
    public static var ignoredBodyLimit: Int { 64 << 10 }
    /// Answers a request no route takes: `status` 404, or 405 with `allow`, the methods the
    /// path takes, which the answer must send as its Allow header. The request's body has been
    /// read and dropped.
    public var refuse: (HTTPRequest<Context>, _ status: Int, _ allow: String?) throws(HTTPError) -> Void
    /// How log lines name the door ("web", "localsend").
    public let kind: String
    /// Where the door's log lines go.
    public let log: (String) -> Void
    /// The lines a minute per address of the door's requests (`HTTPRequest.log`).
    public let logBudget: LogBudget?
    /// How long each body read and each write may wait for the peer.
    public let idle: Duration

    /// A door's service; `refuse` answers requests no route takes, in the door's own terms.
    public init(kind: String, router: Router<Context>, middleware: [any HTTPMiddleware<Context>], idle: Duration, logBudget: LogBudget? = nil,
                log: @escaping (String) -> Void, refuse: @escaping (HTTPRequest<Context>, Int, String?) throws(HTTPError) -> Void) {
        self.kind = kind
        self.logBudget = logBudget
        self.router = router
        self.middleware = middleware
        self.idle = idle
        self.log = log
        self.refuse = refuse
    }

    /// `handler` after the request's body is read and dropped (a route that takes none).
    private func skippingBody(_ handler: @escaping HTTPHandler<Context>) -> HTTPHandler<Context> {
        let idle = self.idle
        return { (r: HTTPRequest<Context>) throws(HTTPError) -> Bool in
            _ = try r.http.readBody(limit: Self.ignoredBodyLimit, deadline: { .now + idle })
            return try handler(r)
        }
    }

    /// The handler of a request no route takes: its body read and dropped, then `refuse`.
    private func refused(status: Int, allow: String?) -> HTTPHandler<Context> {
        let idle = self.idle
        let refuse = self.refuse
        return { (r: HTTPRequest<Context>) throws(HTTPError) -> Bool in
            _ = try r.http.readBody(limit: Self.ignoredBodyLimit, deadline: { .now + idle })
            try refuse(r, status, allow)
            return true
        }
    }

    /// Answers one request read on `http`; returns whether the connection may carry another.
    public func respond(to head: HTTPHead, on http: HTTPConnection, peer: SocketAddress, connectionID: Int, certificate: String?,
                        context: Context) throws(HTTPError) -> Bool {
        let route: Route<Context>?
        let parameters: RouteParameters
        var refusal: (Int, String?)? = nil
        switch router.match(method: head.method, target: head.target) {
        case .found(let r, let p): (route, parameters) = (r, p)
        case .notFound: (route, parameters, refusal) = (nil, RouteParameters(), (404, nil))
        case .methodNotAllowed(let allow): (route, parameters, refusal) = (nil, RouteParameters(), (405, allow))
        }
        let request = HTTPRequest(head: head, http: http, peer: peer, connectionID: connectionID, certificate: certificate,
                                  traits: route?.traits ?? [], parameters: parameters, context: context, kind: kind, logBudget: logBudget, log: log)
        var handler: HTTPHandler<Context>
        if let route {
            handler = route.traits.isDisjoint(with: [.body, .form]) ? skippingBody(route.handler) : route.handler
        } else {
            let (status, allow) = refusal ?? (404, nil)
            handler = refused(status: status, allow: allow)
        }
        for step in middleware.reversed() {
            let next = handler
            handler = { (r: HTTPRequest<Context>) throws(HTTPError) -> Bool in try step.respond(to: r, next: next) }
        }
        return try handler(request)
    }
}
