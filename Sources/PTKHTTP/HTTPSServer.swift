import PTKSystem
import PTKTLS
import PTKTime
import PTKTransport

/// An HTTPS connection's life, shared by the LocalSend endpoint and the web interface: TLS
/// (plain HTTP on the port is answered 400 in HTTP), requests one after another on a
/// keep-alive connection, and the answers to what goes wrong before a route can answer.
public struct HTTPSServer {
    /// The door's TLS identity and settings, for each connection's handshake.
    public let context: TLSContext
    /// Becomes readable when the daemon shuts down: waits for a peer end there.
    public let interrupt: FileDescriptor
    /// How log lines name the connection ("localsend", "web").
    public let kind: String
    /// How long a kept-alive connection may wait for its next request.
    public let idle: Duration
    /// How long each read of a request's body and each write of a response may wait
    /// (`HTTPConnection.idle`); nil: `idle`.
    public var exchangeTimeout: Duration?
    /// An error's body and content type, from its message.
    public let errorBody: @Sendable (String) -> ([UInt8], String)
    /// Writes one line of the daemon's log.
    public let log: @Sendable (String) -> Void
    /// Header lines (each ending in CRLF) every response carries.
    public var fixedHeaders = ""
    /// The door's log lines a minute per address (the `logBudget` of its `HTTPResponder`), which the lines
    /// written here count against too: failed handshakes, plain HTTP, how a connection ended.
    public var logBudget: LogBudget?

    /// `idle` is the wait for a kept-alive connection's next request; `errorBody` renders what goes wrong early.
    public init(
        context: TLSContext, interrupt: FileDescriptor, kind: String, idle: Duration,
        log: @escaping @Sendable (String) -> Void,
        errorBody: @escaping @Sendable (String) -> ([UInt8], String)
    ) {
        self.context = context
        self.interrupt = interrupt
        self.kind = kind
        self.idle = idle
        self.log = log
        self.errorBody = errorBody
    }

    /// Serves one connection until it closes, on the calling thread. The TLS handshake and the
    /// first request's head must arrive by `deadline`; later requests within `idle`. With
    /// `busy` (ptkd is over its session limits), the first request is answered 429 with that
    /// reason and the connection closed. `respond` makes each request's response (told the
    /// certificate the client showed, if any), which the connection writes.
    public func serve(
        _ socket: FileDescriptor, peer: SocketAddress, id: Int, deadline: Instant, busy: String? = nil,
        stage: ((ConnectionStage) -> Void)? = nil, claim: ((String) -> Bool)? = nil,
        respond: (HTTPHead, HTTPConnection, String?) throws(HTTPError) -> Response
    ) {
        let log = { (line: String) in
            var note = ""
            if let budget = logBudget {
                let (allowed, left) = budget.take(peer.host, now: .now)
                guard allowed else { return }
                if left > 0 { note = " (\(left) more from this address not logged)" }
            }
            self.log(boundedLine("\(kind) \(id) from \(peer): \(line)") + note)
        }
        // A bare connect-and-close (apps probe the port) ends here without a word.
        guard case .byte(let first) = peekFirstByte(socket, interrupt: interrupt, deadline: deadline) else {
            socket.close()
            return
        }
        let stream: ByteStream
        var certificate: String? = nil
        if first == 0x16 {
            do {
                let tls = try TLSStream(
                    socket: socket, peer: peer, context: context, interrupt: interrupt, deadline: deadline)
                certificate = tls.peerCertificateFingerprint
                stream = tls
            } catch {
                switch error {
                case .timedOut: log("TLS handshake not finished within the handshake timeout; closed")
                case .peerClosed, .interrupted: break
                default: log("TLS handshake failed (\(error)); closed")
                }
                return
            }
        } else {
            // Plain HTTP on the HTTPS port: say so in HTTP, then close.
            let plain = TCPStream(socket: socket, peer: peer, interrupt: interrupt)
            let http = HTTPConnection(
                stream: plain, kind: .request, bufferSize: 16 << 10, idle: exchangeTimeout ?? idle)
            http.fixedHeaders = fixedHeaders
            log("plain HTTP on the HTTPS port; answered 400")
            conversation.answer(http, 400, "this port speaks HTTPS only")
            plain.shutdownWrite()
            http.drain(until: .now + .seconds(1), limit: 1 << 20)
            plain.close()
            return
        }
        let http = connection(over: stream)
        http.onStage = stage
        http.onClaim = claim
        let ending = conversation.converse(
            http, certificate: certificate, deadline: deadline, busy: busy, stage: stage, respond: respond)
        if let ending { log(ending) }
        stream.shutdownWrite()
        if http.refusedMidRequest {
            // The client may still be sending the body we refused: read and drop it for a while,
            // so that closing does not reset the connection before it reads our answer.
            http.drain(until: .now + .seconds(busy == nil ? 2 : 1), limit: 256 << 20)
        }
        stream.close()
    }

    /// An HTTP connection over `stream` as this server makes them: its read and write
    /// timeout, its fixed headers.
    public func connection(over stream: ByteStream) -> HTTPConnection {
        let http = HTTPConnection(stream: stream, kind: .request, idle: exchangeTimeout ?? idle)
        http.fixedHeaders = fixedHeaders
        return http
    }

    /// The loop over one connection's requests, without TLS.
    public var conversation: HTTPConversation { HTTPConversation(idle: idle, errorBody: errorBody) }
}

/// Requests on one connection, one after another, each answered with a `Response` the
/// connection writes: how long the client may wait between them, and the answers to what goes
/// wrong before a route can answer. No socket, no TLS: a door's tests drive it over a scripted stream.
public struct HTTPConversation {
    /// How long a kept-alive connection may wait for its next request.
    public let idle: Duration
    /// An error's body and content type, from its message.
    public let errorBody: (String) -> ([UInt8], String)

    /// `idle` is the wait for a kept-alive connection's next request; `errorBody` renders early failures.
    public init(idle: Duration, errorBody: @escaping (String) -> ([UInt8], String)) {
        self.idle = idle
        self.errorBody = errorBody
    }

    /// Answers requests on `http` one after another until the connection must close: the first
    /// head by `deadline`, later ones within `idle`; with `busy`, the first is answered 429. A
    /// request that goes wrong before its handler can answer (a head too large, a body too slow,
    /// nothing in time) is answered here with the status it calls for. `respond` makes each
    /// request's response (told the certificate the client showed), which the connection
    /// writes and whose keep-alive it decides. Returns what the log says about the ending, nil
    /// for a plain close.
    public func converse(
        _ http: HTTPConnection, certificate: String?, deadline: Instant, busy: String? = nil,
        stage: ((ConnectionStage) -> Void)? = nil,
        respond: (HTTPHead, HTTPConnection, String?) throws(HTTPError) -> Response
    ) -> String? {
        var headDeadline = deadline
        var ending: String? = nil
        var firstRequest = true
        while true {
            do {
                // Waiting for a request (the first still belongs to the opening) costs a slot
                // and shows nothing; so does a request until its handler says it is allowed.
                if !firstRequest { stage?(.idle) }
                firstRequest = false
                guard let head = try http.nextHead(deadline: headDeadline) else { break }
                stage?(.unproven)
                if let busy {
                    ending = "refused, \(busy); answered 429"
                    answer(http, 429, busy + "; try again later")
                    break
                }
                let response = try respond(head, http, certificate)
                let keepOpen = try http.send(response, headOnly: head.method == "HEAD")
                if !keepOpen || !head.keepAlive { break }
                headDeadline = .now + idle
            } catch {
                switch error {
                case .gone, .interrupted, .bodyRefused: break
                case .timedOut(let partial):
                    if partial {
                        ending = "request not finished within the timeout; answered 408"
                        answer(http, 408, "request not finished in time")
                    }
                case .refused(let status, let why):
                    ending = "\(why); answered \(status)"
                    answer(http, status, why)
                case .status(let status, let why, _):
                    // A refusal no error middleware rendered (a door without one): as above.
                    ending = "\(why); answered \(status)"
                    answer(http, status.code, why)
                }
                break
            }
        }
        return ending
    }

    /// Answers an error and says the connection closes; best effort (it closes either way).
    func answer(_ http: HTTPConnection, _ status: Int, _ why: String) {
        let (body, type) = errorBody(why)
        // Best effort: the connection closes right after, answered or not.
        try? http.respond(status, body, contentType: type, close: true, deadline: .now + .seconds(1))
    }
}
