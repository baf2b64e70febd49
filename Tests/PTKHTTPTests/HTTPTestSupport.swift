import PTKHTTP
import PTKSystem
import PTKTestSupport
import PTKTime
import PTKTransport

// Shared by the PTKHTTP unit tests: a notebook for what middleware and handlers saw, a door's
// loop over one scripted connection, and failures as comparable text.

/// What happened, in order (also a door's request context: middleware notes what it did).
final class Notes {
    var items: [String] = []
    func add(_ item: String) { items.append(item) }
}

/// The peer every scripted request comes from.
let testPeer = SocketAddress(numericHost: "192.0.2.7", port: 40000)!

/// A deadline no scripted read waits for (a silent script times out at once).
func soon() -> Instant { .now + .seconds(30) }

extension HTTPError {
    /// The failure as text a test compares ("refused 413", "timedOut(partial: true)").
    var label: String {
        switch self {
        case .gone: return "gone"
        case .timedOut(let partial): return "timedOut(partial: \(partial))"
        case .interrupted: return "interrupted"
        case .refused(let status, _): return "refused \(status)"
        case .bodyRefused: return "bodyRefused"
        case .status(let status, _, _): return "status \(status)"
        }
    }
}

/// The label of what `body` threw, nil when it returned.
func failure<T>(_ body: () throws(HTTPError) -> T) -> String? {
    do throws(HTTPError) {
        _ = try body()
        return nil
    } catch {
        return error.label
    }
}

/// A server's loop over one connection: each head read and answered through `service`, until
/// the client closes ("client closed"), a handler says the connection ends ("closed by
/// handler"), or something fails (the failure's label).
@discardableResult
func serve<C>(_ service: HTTPService<C>, _ http: HTTPConnection, context: C, peer: SocketAddress = testPeer) -> String {
    do throws(HTTPError) {
        while let head = try http.nextHead(deadline: soon()) {
            if try !service.respond(to: head, on: http, peer: peer, connectionID: 7, certificate: nil, context: context) {
                return "closed by handler"
            }
        }
        return "client closed"
    } catch {
        return error.label
    }
}

/// A connection reading `text` (the client's whole script, in one piece unless `readSize` cuts it).
func connection(_ text: String, readSize: Int = 1 << 20, whenEmpty: ScriptedStream.WhenEmpty = .close) -> (ScriptedHTTPStream, HTTPConnection) {
    let stream = ScriptedHTTPStream(text: text, readSize: readSize, whenEmpty: whenEmpty)
    return (stream, HTTPConnection(stream: stream, kind: .request))
}

/// A handler that notes `note` (when given) and answers `status` with `text`.
func answer<C>(_ status: Int, _ text: String = "", note: String? = nil, in notes: Notes? = nil, keepOpen: Bool = true) -> HTTPHandler<C> {
    { (r: HTTPRequest<C>) throws(HTTPError) -> Bool in
        if let note { notes?.add(note) }
        try r.http.respond(status, Array(text.utf8), contentType: "text/plain", headOnly: r.headOnly, deadline: soon())
        return keepOpen
    }
}

/// A handler for routes whose handler is never the point.
func noop<C>() -> HTTPHandler<C> { { _ in true } }

/// A door's `refuse`: notes the status and Allow, answers with them.
func refuser<C>(_ notes: Notes) -> (HTTPRequest<C>, Int, String?) throws(HTTPError) -> Void {
    { (r: HTTPRequest<C>, status: Int, allow: String?) throws(HTTPError) -> Void in
        notes.add("refuse \(status)" + (allow.map { " " + $0 } ?? ""))
        try r.http.respond(status, Array("no\n".utf8), contentType: "text/plain", headers: allow.map { [("Allow", $0)] } ?? [],
                           headOnly: r.headOnly, deadline: soon())
    }
}

/// A service over `router` with `middleware`, logging into `log` and refusing through `refuser`.
func service<C>(_ router: Router<C>, _ middleware: [any HTTPMiddleware<C>] = [], notes: Notes, log: Notes? = nil,
                idle: Duration = .seconds(30)) -> HTTPService<C> {
    HTTPService(kind: "web", router: router, middleware: middleware, idle: idle, log: { line in log?.add(line) }, refuse: refuser(notes))
}

/// The text of what the server wrote.
func writtenText(_ stream: ScriptedHTTPStream) -> String { String(decoding: stream.written, as: UTF8.self) }
