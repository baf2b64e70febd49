import PTKDAV
import PTKHTTP
import PTKSystem
import PTKTrust

/// The WebDAV door's route table and the middleware in front of it. Every route needs an app
/// password (`BasicAuth`: 401 with the challenge, OPTIONS included; wrong ones throttled per
/// address with the web login's tries). The path below `/dav` is decoded once, by
/// `DAVPath.parse` (`..`, encoded slashes, control characters refused), never by the router.
extension DAVEndpoint {
    static let methods = ["OPTIONS", "GET", "HEAD", "PUT", "DELETE", "PROPFIND", "PROPPATCH", "MKCOL", "COPY", "MOVE", "LOCK", "UNLOCK"]

    func router() -> Router<DAVContext> {
        var router = Router<DAVContext>()
        let pattern = Self.prefix + "/{path*}"
        router.add(["OPTIONS"], pattern) { r throws(HTTPError) in try self.options(r) }
        router.add(["GET", "HEAD"], pattern) { r throws(HTTPError) in try self.get(r) }
        router.add(["PROPFIND"], pattern, traits: .body) { r throws(HTTPError) in try self.propfind(r) }
        router.add(["PROPPATCH"], pattern, traits: .body) { r throws(HTTPError) in try self.proppatch(r) }
        router.add(["PUT"], pattern, traits: .body) { r throws(HTTPError) in try self.put(r) }
        router.add(["MKCOL"], pattern, traits: .body) { r throws(HTTPError) in try self.mkcol(r) }
        router.add(["DELETE"], pattern) { r throws(HTTPError) in try self.delete(r) }
        router.add(["MOVE"], pattern) { r throws(HTTPError) in try self.move(r) }
        router.add(["COPY"], pattern) { r throws(HTTPError) in
            try self.refuse(r, 403, "COPY is not offered: the receiver keeps each photo once (copy it on your side and PUT it)")
        }
        router.add(["LOCK"], pattern, traits: .body) { r throws(HTTPError) in try self.lock(r) }
        router.add(["UNLOCK"], pattern) { r throws(HTTPError) in try self.unlock(r) }
        return router
    }

    func service() -> HTTPService<DAVContext> {
        let auth = BasicAuth(
            realm: Self.realm, throttle: throttle, idle: configuration.idleTimeout,
            verify: { name, password in self.passwords.verify(name: name, password: password) },
            failed: { address in self.guesses.failed("app password", from: address) },
            spent: { self.guesses.isSpent },
            keep: { (r: DAVRequest, account: AppPassword) in
                r.context.account = account
                r.logSubject = "(app password \(quotedForLog(account.name, limit: 64)))"
                self.passwords.noteUse(id: account.id, address: r.address, now: Self.now)
            })
        let middleware: [any HTTPMiddleware<DAVContext>] = [RequestLog(budget: requestLogBudget), auth, PasswordShare(idle: configuration.idleTimeout)]
        return HTTPService(kind: "webdav", router: router(), middleware: middleware, idle: configuration.idleTimeout, logBudget: requestLogBudget,
                           log: { Log.info($0) }) {
            (r: DAVRequest, status: Int, allow: String?) throws(HTTPError) in
            let text = allow == nil ? "no such WebDAV resource\n" : "\(r.head.method) is not a WebDAV method this receiver takes\n"
            try r.http.respond(status, Array(text.utf8), contentType: "text/plain; charset=utf-8", headers: allow.map { [("Allow", $0)] } ?? [],
                               headOnly: r.headOnly, deadline: .now + self.configuration.idleTimeout)
        }
    }

    // MARK: Answers

    /// A plain-text refusal (logged). A request whose body was not read closes the connection.
    @discardableResult
    func refuse(_ r: DAVRequest, _ status: Int, _ why: String, headers: [(String, String)] = [], close: Bool = false) throws(HTTPError) -> Bool {
        r.log("refused \(r.head.method) \(quotedForLog(r.head.path)): \(why); answered \(status)")
        try r.http.respond(status, Array((why + "\n").utf8), contentType: "text/plain; charset=utf-8", headers: headers, close: close,
                           headOnly: r.headOnly, deadline: .now + configuration.idleTimeout)
        return !close
    }

    /// 401 with the challenge, for a request whose app password was removed while it was on its
    /// way (`isCurrent`): nothing was kept for it.
    @discardableResult
    func refuseRemoved(_ r: DAVRequest, close: Bool = false) throws(HTTPError) -> Bool {
        try refuse(r, 401, Self.removedReason, headers: [Self.challenge], close: close)
    }

    static let removedReason = "this app password was removed while the request was on its way; nothing was kept for it"
    static var challenge: (String, String) { ("WWW-Authenticate", "Basic realm=\"\(realm)\", charset=\"UTF-8\"") }

    /// A precondition refusal with its RFC 4918 `DAV:error` body (`condition`, e.g. "<D:propfind-finite-depth/>").
    func refuseCondition(_ r: DAVRequest, _ status: Int, _ condition: String, _ why: String, close: Bool = false) throws(HTTPError) -> Bool {
        r.log("refused \(r.head.method) \(quotedForLog(r.head.path)): \(why); answered \(status)")
        try r.http.respond(status, Array(DAVError.body(condition).utf8), contentType: "application/xml; charset=utf-8", close: close,
                           headOnly: r.headOnly, deadline: .now + configuration.idleTimeout)
        return !close
    }

    func answer(_ r: DAVRequest, _ status: Int, _ body: String = "", type: String = "text/plain; charset=utf-8",
                headers: [(String, String)] = []) throws(HTTPError) -> Bool {
        try r.http.respond(status, Array(body.utf8), contentType: type, headers: headers, headOnly: r.headOnly,
                           deadline: .now + configuration.idleTimeout)
        return true
    }

    /// The request's resource, decoded; nil after answering a path that names none (400 for
    /// `..`, encoded slashes and bad encodings, 404 for a hidden name: `.ptk/`, `.incoming/`).
    func target(_ r: DAVRequest, close: Bool = false) throws(HTTPError) -> DAVPath? {
        switch DAVPath.parse(target: r.head.target, prefix: Self.prefix) {
        case .success(let path):
            if path.components.dropLast().contains(where: { DAVName.kind($0) != .ordinary })
                || path.components.last.map({ DAVName.kind($0) == .hidden }) == true {
                try refuse(r, 404, "no such WebDAV resource (names starting with a dot are the receiver's own)", close: close)
                return nil
            }
            return path
        case .failure(let refusal):
            try refuse(r, 400, "the path is not one this door takes (\(refusal))", close: close)
            return nil
        }
    }

    /// OPTIONS: what the door speaks. Finder mounts read-only without class 2; Windows wants MS-Author-Via.
    func options(_ r: DAVRequest) throws(HTTPError) -> Bool {
        try r.http.respond(200, [], headers: [("DAV", "1, 2"), ("MS-Author-Via", "DAV"), ("Allow", Self.methods.joined(separator: ", ")),
                                              ("Accept-Ranges", "bytes")],
                           deadline: .now + configuration.idleTimeout)
        return true
    }
}

/// After `BasicAuth`: the connection works for its app password, which holds at most its share
/// of the connection slots (`ConnectionTable.claim`), however many addresses it comes from.
/// Past it, 429: the request is not served, and its connection closes (its body unread).
struct PasswordShare: HTTPMiddleware {
    let idle: Duration

    func respond(to r: DAVRequest, next: HTTPHandler<DAVContext>) throws(HTTPError) -> Bool {
        guard let account = r.context.account, !r.http.claim("app password " + account.id) else { return try next(r) }
        r.log("refused \(r.head.method) \(quotedForLog(r.head.path)): this app password has its share of the connections at work already; answered 429")
        try r.http.respond(429, Array("this app password has its share of the receiver's connections at work already; try again when one is done\n".utf8),
                           contentType: "text/plain; charset=utf-8", headers: [("Retry-After", "5")], close: true, headOnly: r.headOnly,
                           deadline: .now + idle)
        return false
    }
}
