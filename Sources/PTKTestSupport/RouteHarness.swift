import PTKHTTP
import PTKSystem
import PTKTime
import PTKTransport

/// Drives a door's route table (`HTTPResponder`) with a client's scripted bytes over one
/// connection: no daemon, no socket, no TLS (as Hummingbird's router test framework does).
/// Every request goes the way a served connection's do (`HTTPConversation.converse`): the
/// route, the middleware, the error middleware, the response the connection writes, its
/// keep-alive.
public struct RouteHarness<Context> {
    /// The door's routes, middleware and error rendering under test.
    public let responder: HTTPResponder<Context>
    /// The connection's wait for each read and write; short, so a test that hangs fails soon.
    public var idle: Duration
    /// The body of an answer the connection gives itself (a malformed head: 400), from its message.
    public var errorBody: (String) -> ([UInt8], String)
    /// The client's address, from the documentation range (RFC 5737); set it to test per-address limits.
    public var peer = SocketAddress(numericHost: "192.0.2.7", port: 40000)!
    /// Header lines (each ending in CRLF) the connection adds to every response, as the door's
    /// server sets them (`HTTPSServer.fixedHeaders`); none by default.
    public var fixedHeaders = ""
    /// Told where the connection is in its life (`HTTPConnection.onStage`): a request proven
    /// (`Request.proven`) says `.working`.
    public var onStage: ((ConnectionStage) -> Void)?

    /// A harness for `responder`; `errorBody` defaults to the message as plain text.
    public init(
        _ responder: HTTPResponder<Context>, idle: Duration = .seconds(5),
        errorBody: @escaping (String) -> ([UInt8], String) = { (Array($0.utf8), "text/plain; charset=utf-8") }
    ) {
        self.responder = responder
        self.idle = idle
        self.errorBody = errorBody
    }

    /// What one scripted connection came to: the responses in order, how it ended (the log's
    /// words, nil for a plain close) and the bytes written.
    public struct Exchange {
        /// The responses parsed from what the connection wrote, in order.
        public var responses: [ParsedResponse]
        /// What the log would say about how the connection ended; nil for a plain close.
        public var ending: String?
        /// Every byte the connection wrote, unparsed.
        public var raw: [UInt8]
        /// The scripted stream, to see whether the server shut down or closed it.
        public var stream: ScriptedHTTPStream
        /// The first response; status 0 when there was none (so a test fails on the status, not a crash).
        public var first: ParsedResponse { responses.first ?? ParsedResponse(status: 0, headers: [:], body: []) }
        /// The responses' status codes, in order.
        public var statuses: [Int] { responses.map(\.status) }
        /// The bytes written, as text.
        public var text: String { String(decoding: raw, as: UTF8.self) }
    }

    /// Plays `pieces` (a client's bytes, each a request or part of one) on one connection, as
    /// a client showing `certificate`; `readSize` cuts what each read returns (1: a byte at a
    /// time); `headOnly` parses the answers as heads alone (HEAD requests).
    public func run(
        _ pieces: [[UInt8]], certificate: String? = nil, readSize: Int = 1 << 20,
        whenEmpty: ScriptedStream.WhenEmpty = .close, headOnly: Bool = false
    ) -> Exchange {
        let stream = ScriptedHTTPStream(pieces, readSize: readSize, whenEmpty: whenEmpty)
        let http = HTTPConnection(stream: stream, kind: .request, idle: idle)
        http.fixedHeaders = fixedHeaders
        http.onStage = onStage
        let conversation = HTTPConversation(idle: idle, errorBody: errorBody)
        let ending = conversation.converse(http, certificate: certificate, deadline: .now + idle) {
            (head, http, certificate) throws(HTTPError) in
            try responder.response(to: head, on: http, peer: peer, connectionID: 1, certificate: certificate)
        }
        return Exchange(
            responses: ParsedResponse.all(in: stream.written, headOnly: headOnly), ending: ending, raw: stream.written,
            stream: stream)
    }

    /// One request's bytes: the request line, `headers`, and `body` with its Content-Length
    /// (or chunked in pieces of `chunked` sizes).
    public static func request(
        _ method: String, _ target: String, _ headers: [(String, String)] = [], body: [UInt8] = [],
        chunked: [Int]? = nil
    ) -> [UInt8] {
        var head = "\(method) \(target) HTTP/1.1\r\nHost: ptk.test\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        guard let chunked else {
            if !body.isEmpty || method == "POST" || method == "PUT" { head += "Content-Length: \(body.count)\r\n" }
            return Array((head + "\r\n").utf8) + body
        }
        head += "Transfer-Encoding: chunked\r\n\r\n"
        var out = Array(head.utf8)
        var rest = body[...]
        var sizes = chunked[...]
        while !rest.isEmpty {
            let n = min(sizes.popFirst() ?? rest.count, rest.count)
            out += Array((String(n, radix: 16) + "\r\n").utf8) + rest.prefix(n) + Array("\r\n".utf8)
            rest = rest.dropFirst(n)
        }
        return out + Array("0\r\n\r\n".utf8)
    }
}
