import PTKConfiguration
import PTKDoor
import PTKHTTP
import PTKLocalSend
import PTKLog
import PTKProtocol
import PTKSystem
import PTKTrust
import PTKVocabulary

/// What a LocalSend handler works with: the door, and who the app is for the trust list (its
/// client certificate as a sender id, and whether the trust list names it).
struct LocalSendContext {
    let door: LocalSendDoor
    /// The app's certificate as a sender id, nil when it showed none.
    var sender: SenderID?
    /// Whether the trust list names it.
    var trusted = false

    /// A request's context: its certificate against the trust list. (A trusted app's
    /// prepare-upload, and an upload with its session's token, prove its connection: the
    /// handlers say so.)
    init(door: LocalSendDoor, certificate: String?) {
        self.door = door
        if let certificate {
            let sender = SenderID.localSend(certificate)
            self.sender = sender
            trusted = door.trust.isTrusted(sender)
        }
    }
}

/// The LocalSend v2 routes the apps call (docs/PROTOCOL.md, "LocalSend"). Paths are compared
/// percent-decoded, as the apps' libraries may encode them. Built once; every handler reaches
/// the door through its context.
extension LocalSendDoor {
    static let routes: RouteTable<LocalSendContext> = {
        var routes = RouteTable<LocalSendContext>(decodesPath: true)
        // GET, or POST as some apps send it, with or without a body.
        for path in ["/api/localsend/v1/info", "/api/localsend/v2/info"] {
            routes.add([.get, .post], path) { _, c throws(HTTPError) in
                jsonAnswer(.ok, LocalSendJSON.encode(c.door.info()))
            }
        }
        // The caller is discovering us: answered at once, whatever its body says.
        routes.add([.post], "/api/localsend/v2/register") { _, c throws(HTTPError) in
            jsonAnswer(.ok, LocalSendJSON.encode(c.door.info()))
        }
        routes.add([.post], "/api/localsend/v2/prepare-upload", traits: .body) { r, c throws(HTTPError) in
            try c.door.prepareUpload(r, c)
        }
        routes.add([.post], "/api/localsend/v2/upload", traits: .body) { r, c throws(HTTPError) in
            try c.door.upload(r, c)
        }
        routes.add([.post], "/api/localsend/v2/cancel") { r, c throws(HTTPError) in
            let door = c.door
            let n = door.lock.withLock { door.sessions.cancel(session: r.query["sessionId"], address: r.address) }
            if n > 0 { r.log("the sender cancelled") }
            return Response(.ok)
        }
        return routes
    }()

    /// The door's HTTP side over `routes`: each request's context from its certificate,
    /// refusals as `{"message"}`, and a log line for each error no handler logged.
    func responder() -> HTTPResponder<LocalSendContext> {
        HTTPResponder(
            routes: Self.routes, kind: "localsend", logBudget: requestLogBudget, requestLog: requestLogBudget,
            log: { Log.info($0) },
            context: { r in LocalSendContext(door: self, certificate: r.certificate) },
            renderError: { _, status, text, headers in jsonAnswer(status, message(text), headers: headers) })
    }
}

/// A JSON answer of the LocalSend door.
func jsonAnswer(_ status: HTTPStatus, _ body: [UInt8], headers: HTTPFields = []) -> Response {
    .bytes(status, body, type: "application/json", headers: headers)
}
