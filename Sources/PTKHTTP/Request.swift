import PTKSystem
import PTKTime

/// One request as a route's handler and the door's middleware see it: its head, its body (a
/// stream: `body`), who sent it, the route it matched and its captures. The handler answers
/// with a `Response` value; it never writes to the connection.
public final class Request {
    /// The request line and header fields, parsed.
    public let head: HTTPHead
    /// The body, read on demand; what the handler leaves unread decides whether the connection can go on.
    public let body: RequestBody
    /// The address and port the connection came from.
    public let peer: SocketAddress
    /// The connection's number in the log.
    public let connectionID: Int
    /// The SHA-256 of the client certificate the peer showed, if any.
    public let certificate: String?
    /// The route's traits (a request no route matched has none).
    public let traits: RouteTraits
    /// The path's captures by name; `parameters.require("id", as: Int64.self)` reads one typed.
    public let parameters: RouteParameters
    /// Said after the door and connection in each log line (who the sender is, once known).
    public var logSubject = ""
    /// Whether a line was logged about this request (the request log then adds none).
    public private(set) var logged = false
    private let connection: HTTPConnection
    private let lines: RequestLines

    init(
        head: HTTPHead, connection: HTTPConnection, peer: SocketAddress, connectionID: Int, certificate: String?,
        traits: RouteTraits,
        parameters: RouteParameters, lines: RequestLines
    ) {
        self.head = head
        self.connection = connection
        body = connection.requestBody
        self.peer = peer
        self.connectionID = connectionID
        self.certificate = certificate
        self.traits = traits
        self.parameters = parameters
        self.lines = lines
    }

    /// The request line's method, as a typed value for comparing with `.get`, `.post`...
    public var method: HTTPMethod { HTTPMethod(head.method) }
    /// Whether only the head is wanted: the connection then sends the response's head without its body.
    public var headOnly: Bool { head.method == "HEAD" }
    /// The peer's address, without its port.
    public var address: String { peer.host }
    /// The target's query parameters, percent-decoded.
    public var query: [String: String] { head.query }

    /// The request is one its sender has the right to (a session, a token): its connection is
    /// working and is not displaced for a newcomer (`HTTPConnection.proven`).
    public func proven() { connection.proven() }

    /// Whether the connection may work for `owner` (`HTTPConnection.claim`).
    public func claim(_ owner: String) -> Bool { connection.claim(owner) }

    /// The error this request was answered with is part of normal use: the request log adds
    /// no line for it.
    public func needsNoLogLine() { logged = true }

    /// Logs `line`, whole (a door whose lines name more than its subject); budgeted as `log` is.
    public func logWhole(_ line: String, always: Bool = false) {
        logged = true
        lines.write(line, address: address, always: always)
    }

    /// Logs `line` about this request: "KIND ID from PEER SUBJECT: line". Unless `always` (a
    /// line saying what was changed: a photo saved, deleted, moved, which the store and disk
    /// bound), the line counts against the door's budget of lines for the peer's address: past
    /// it the line is left out, and the next one written says how many were. Peer text in
    /// `line` is quoted and cut by the caller (`quotedForLog`); the line itself is cut at
    /// `maxLogLine`.
    public func log(_ line: String, always: Bool = false) {
        logged = true
        lines.write(
            "\(lines.kind) \(connectionID) from \(peer)\(logSubject.isEmpty ? "" : " " + logSubject): \(line)",
            address: address, always: always)
    }
}

/// Where a door's request lines go: its log, under its budget of lines a minute per address.
struct RequestLines {
    /// How log lines name the door ("web", "localsend").
    let kind: String
    let budget: LogBudget?
    let log: (String) -> Void

    /// Writes `line` (cut at `maxLogLine`) unless the budget leaves it out; the next line
    /// written after some were left out says how many.
    func write(_ line: String, address: String, always: Bool) {
        var note = ""
        if !always, let budget {
            let (allowed, left) = budget.take(address, now: .now)
            guard allowed else { return }
            if left > 0 { note = " (\(left) more from this address not logged)" }
        }
        log(boundedLine(line) + note)
    }
}
