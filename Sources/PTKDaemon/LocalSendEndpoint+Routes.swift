import PTKConfiguration
import PTKHTTP
import PTKLocalSend
import PTKProtocol
import PTKSystem
import PTKTrust
import PTKVocabulary

/// What a LocalSend request carries besides its head: who the app is for the trust list
/// (`LocalSendIdentity`).
struct LocalSendContext {
    /// The app's certificate as a sender id, nil when it showed none.
    var sender: SenderID?
    /// Whether the trust list names it.
    var trusted = false
}

typealias LocalSendRequest = HTTPRequest<LocalSendContext>

/// The client certificate's identity: the sender id it gives (LocalSend 1.18 shows one) and
/// whether the trust list names it. (A trusted app's prepare-upload, and an upload with its
/// session's token, prove its connection: the handlers say so.)
struct LocalSendIdentity: HTTPMiddleware {
    let isTrusted: (SenderID) -> Bool

    func respond(to request: LocalSendRequest, next: HTTPHandler<LocalSendContext>) throws(HTTPFailure) -> Bool {
        if let certificate = request.certificate {
            let sender = SenderID.localSend(certificate)
            request.context.sender = sender
            request.context.trusted = isTrusted(sender)
        }
        return try next(request)
    }
}

/// The LocalSend v2 routes the apps call (docs/PROTOCOL.md, "LocalSend"). Paths are compared
/// percent-decoded, as the apps' libraries may encode them.
extension LocalSendEndpoint {
    func router() -> Router<LocalSendContext> {
        var router = Router<LocalSendContext>(decodesPath: true)
        // GET, or POST as some apps send it, with or without a body.
        for path in ["/api/localsend/v1/info", "/api/localsend/v2/info"] {
            router.add(["GET", "POST"], path) { r throws(HTTPFailure) in
                try r.http.respond(200, LocalSendJSON.encode(self.info()), deadline: .now + self.configuration.idleTimeout)
                return true
            }
        }
        // The caller is discovering us: answered at once, whatever its body says.
        router.add(["POST"], "/api/localsend/v2/register") { r throws(HTTPFailure) in
            try r.http.respond(200, LocalSendJSON.encode(self.info()), deadline: .now + self.configuration.idleTimeout)
            return true
        }
        router.add(["POST"], "/api/localsend/v2/prepare-upload", traits: .body) { r throws(HTTPFailure) in try self.prepareUpload(r) }
        router.add(["POST"], "/api/localsend/v2/upload", traits: .body) { r throws(HTTPFailure) in try self.upload(r) }
        router.add(["POST"], "/api/localsend/v2/cancel") { r throws(HTTPFailure) in
            let n = self.lock.withLock { self.sessions.cancel(session: r.head.query["sessionId"], address: r.address) }
            if n > 0 { r.log("the sender cancelled") }
            try r.http.respond(200, deadline: .now + self.configuration.idleTimeout)
            return true
        }
        return router
    }

    func service() -> HTTPService<LocalSendContext> {
        let middleware: [any HTTPMiddleware<LocalSendContext>] = [RequestLog(budget: requestLogBudget), LocalSendIdentity(isTrusted: { self.trust.isTrusted($0) })]
        return HTTPService(kind: "localsend", router: router(), middleware: middleware, idle: configuration.idleTimeout, logBudget: requestLogBudget,
                           log: { Log.info($0) }) {
            (r: LocalSendRequest, status: Int, allow: String?) throws(HTTPFailure) in
            let text = allow == nil ? "no such route" : "\(r.head.method) is not allowed here"
            try r.http.respond(status, message(text), headers: allow.map { [("Allow", $0)] } ?? [], headOnly: r.headOnly,
                               deadline: .now + self.configuration.idleTimeout)
        }
    }
}
