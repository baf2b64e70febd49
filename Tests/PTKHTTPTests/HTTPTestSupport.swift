import PTKHTTP
import PTKSystem
import PTKTestSupport
import PTKTime
import PTKTransport

// Shared by the PTKHTTP unit tests: a notebook for what middleware and handlers saw, a door's
// loop over one scripted connection, a test door, and failures as comparable text.

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

/// Answers requests on `http` one after another through `responder` (connection 7), each
/// response written by the connection; how it ended: the client closed, the connection closed
/// after an answer, or the failure.
@discardableResult
func serveValues<C>(_ responder: HTTPResponder<C>, _ http: HTTPConnection, peer: SocketAddress = testPeer) -> String {
    do throws(HTTPError) {
        while let head = try http.nextHead(deadline: soon()) {
            let response = try responder.response(to: head, on: http, peer: peer, connectionID: 7, certificate: nil)
            if try !http.send(response, headOnly: head.method == "HEAD") { return "closed after the answer" }
        }
        return "client closed"
    } catch {
        return error.label
    }
}

/// A connection reading `text` (the client's whole script, in one piece unless `readSize` cuts it).
func connection(_ text: String, readSize: Int = 1 << 20, whenEmpty: ScriptedStream.WhenEmpty = .close) -> (
    ScriptedHTTPStream, HTTPConnection
) {
    let stream = ScriptedHTTPStream(text: text, readSize: readSize, whenEmpty: whenEmpty)
    return (stream, HTTPConnection(stream: stream, kind: .request))
}

/// A handler for routes whose handler is never the point.
func noop<C>() -> RouteHandler<C> {
    let handler: RouteHandler<C> = { _, _ throws(HTTPError) in Response(.ok) }
    return handler
}

/// A door over `routes` and `middleware` whose context is `context` (the run's notebook),
/// logging into `log`, its error middleware noting each refusal in `refusals` ("refuse 405
/// GET, HEAD") and answering it as text with its headers (Allow).
func testResponder(
    _ routes: RouteTable<Notes>, _ middleware: [RouteMiddleware<Notes>] = [], context: Notes = Notes(),
    refusals: Notes = Notes(),
    log: Notes? = nil, logBudget: LogBudget? = nil, requestLog: LogBudget? = nil
) -> HTTPResponder<Notes> {
    HTTPResponder(
        routes: routes, middleware: middleware, kind: "web", logBudget: logBudget, requestLog: requestLog,
        log: { log?.add($0) },
        context: { _ in context },
        renderError: { _, status, _, headers in
            refusals.add("refuse \(status.code)" + (headers["allow"].map { " " + $0 } ?? ""))
            return .bytes(status, Array("no\n".utf8), type: "text/plain", headers: headers)
        })
}

/// The text of what the server wrote.
func writtenText(_ stream: ScriptedHTTPStream) -> String { String(decoding: stream.written, as: UTF8.self) }
