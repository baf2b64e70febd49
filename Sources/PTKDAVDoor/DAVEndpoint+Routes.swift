import PTKDAV
import PTKDoor
import PTKHTTP
import PTKSystem
import PTKTrust

/// The WebDAV door's route table and the middleware in front of it. Every request needs an app
/// password (`BasicAuth`: 401 with the challenge, OPTIONS and methods no route takes included;
/// wrong ones throttled per address with the web login's tries), checked before any body is
/// read. The path below `/dav` is decoded once, by `DAVPath.parse` (`..`, encoded slashes,
/// control characters refused), never by the router.
extension DAVEndpoint {
    static let methods = [
        "OPTIONS", "GET", "HEAD", "PUT", "DELETE", "PROPFIND", "PROPPATCH", "MKCOL", "COPY", "MOVE", "LOCK", "UNLOCK",
    ]

    /// Every route, behind the password (`DAVCaller`); built once, each handler reaching the
    /// door through its context.
    static let routes: RouteTable<DAVContext> = {
        var routes = RouteTable<DAVContext>()
        for prefix in DAVMount.routePrefixes {
            let pattern = prefix + "/{path*}"
            routes.group({ (_: Request, c: DAVContext) throws(HTTPError) -> DAVCaller in
                // `authenticate` runs first for every request: a context without a password here is a table built wrong.
                guard let account = c.account else {
                    throw .status(.unauthorized, "a user name and app password are needed", headers: [challenge])
                }
                return DAVCaller(door: c.door, connection: c.connection, account: account, mount: c.mount)
            }) { group in
                group.add([.options], pattern) { r, c throws(HTTPError) in c.door.options(r, c) }
                if prefix == DAVMount.uploadsRoot {
                    // Chunked upload v2's folders (`DAVEndpoint+Chunks`), not a view of files.
                    group.add(["PROPFIND"], pattern, traits: .body) { r, c throws(HTTPError) in
                        try c.door.uploadPropfind(r, c)
                    }
                    group.add([.put], pattern, traits: .body) { r, c throws(HTTPError) in try c.door.uploadPut(r, c) }
                    group.add(["MKCOL"], pattern, traits: .body) { r, c throws(HTTPError) in
                        try c.door.uploadMkcol(r, c)
                    }
                    group.add([.delete], pattern) { r, c throws(HTTPError) in try c.door.uploadDelete(r, c) }
                    group.add(["MOVE"], pattern) { r, c throws(HTTPError) in try c.door.uploadMove(r, c) }
                    return
                }
                group.add([.get, .head], pattern) { r, c throws(HTTPError) in try c.door.get(r, c) }
                group.add(["PROPFIND"], pattern, traits: .body) { r, c throws(HTTPError) in try c.door.propfind(r, c) }
                group.add(["PROPPATCH"], pattern, traits: .body) { r, c throws(HTTPError) in
                    try c.door.proppatch(r, c)
                }
                group.add([.put], pattern, traits: .body) { r, c throws(HTTPError) in try c.door.put(r, c) }
                group.add(["MKCOL"], pattern, traits: .body) { r, c throws(HTTPError) in try c.door.mkcol(r, c) }
                group.add([.delete], pattern) { r, c throws(HTTPError) in try c.door.delete(r, c) }
                group.add(["MOVE"], pattern) { r, c throws(HTTPError) in try c.door.move(r, c) }
                group.add(["COPY"], pattern) { r, c throws(HTTPError) in
                    throw c.door.refusal(
                        r, .forbidden,
                        "COPY is not offered: the receiver keeps each photo once (copy it on your side and PUT it)")
                }
                group.add(["LOCK"], pattern, traits: .body) { r, c throws(HTTPError) in try c.door.lock(r, c) }
                group.add(["UNLOCK"], pattern) { r, c throws(HTTPError) in try c.door.unlock(r, c) }
            }
        }
        return routes
    }()

    /// In front of every request, matched or not: what removed passwords left is dropped, and
    /// expired upload folders (at most once a minute: a phone that left one may never upload
    /// again, while its listings go on), then the password is checked (`authenticate`).
    static let middleware: [RouteMiddleware<DAVContext>] = {
        // A closure given its type by a typed constant: Swift 6.3's module emission crashes on a
        // function reference or a closure literal converted to this type in place.
        let passwordCheck: RouteMiddleware<DAVContext> = { r, c, next throws(HTTPError) in
            c.door.forgetRemovedPasswords()
            c.door.uploads.sweep(now: now)
            var context = c
            let account = try c.door.authenticate(r)
            context.account = account
            switch DAVMount.of(r.head.target, account: account) {
            case .success(let mount): context.mount = mount
            case .failure:
                // Another password's files (or none named): answered as a path that is not there.
                throw c.door.refusal(r, .notFound, "no such WebDAV resource")
            }
            guard context.mount.cloud else { return try next(r, context) }
            var response = try next(r, context)
            response.headers.append(dateHeader().0, dateHeader().1)
            return response
        }
        return [passwordCheck]
    }()

    /// The request's app password, checked by `BasicAuth` (401, 429). The connection then works
    /// for that password, which holds at most its share of the connection slots
    /// (`ConnectionTable.claim`), however many addresses it comes from: past it, 429, and the
    /// connection closes (its body unread).
    package func authenticate(_ r: Request) throws(HTTPError) -> AppPassword {
        let passwords = self.passwords
        let guesses = self.guesses
        let auth = BasicAuth<AppPassword, _>(
            realm: Self.realm, throttle: throttle,
            verify: { name, password in passwords.verify(name: name, password: password) },
            failed: { address in guesses.failed("app password", from: address) }, spent: { guesses.isSpent })
        let account = try auth.authenticate(r)
        r.logSubject = "(app password \(quotedForLog(account.name, limit: 64)))"
        passwords.noteUse(id: account.id, address: r.address, now: Self.now)
        guard r.claim("app password " + account.id) else {
            r.log(
                "refused \(r.head.method) \(quotedForLog(r.head.path)): this app password has its share of the connections at work already; answered 429"
            )
            throw .status(
                .tooManyRequests,
                "this app password has its share of the receiver's connections at work already; try again when one is done",
                headers: ["Retry-After": "5"])
        }
        return account
    }

    // MARK: Answers

    /// The door's one rendering of a refusal (a handler's, the password check's, the router's
    /// 404 and 405): the message as plain text, or, for an RFC 4918 precondition
    /// (`conditionRefusal`), its `DAV:error` body. A 429 (a password locked out, or over its
    /// share of connections) closes the connection: the client comes back through a new one.
    static func errorResponse(_ r: Request, _ status: HTTPStatus, _ message: String, _ headers: HTTPFields) -> Response
    {
        var text = message
        if status == .notFound && message == "no such route" { text = "no such WebDAV resource" }
        if status == .methodNotAllowed && headers["Allow"] != nil {
            text = "\(r.head.method) is not a WebDAV method this receiver takes"
        }
        let response: Response =
            message.hasPrefix(DAVError.prologue)
            ? .bytes(status, Array(message.utf8), type: "application/xml; charset=utf-8", headers: headers)
            : DAVMount.isCloudTarget(r.head.target)
                ? .bytes(
                    status, Array(cloudError(status, text).utf8), type: "application/xml; charset=utf-8",
                    headers: headers)
                : .bytes(status, Array((text + "\n").utf8), type: "text/plain; charset=utf-8", headers: headers)
        return status == .tooManyRequests ? response.closing() : response
    }

    /// A refusal, logged ("refused METHOD PATH: why; answered STATUS"), for the handler to throw.
    func refusal(_ r: Request, _ status: HTTPStatus, _ why: String, headers: HTTPFields = []) -> HTTPError {
        r.log("refused \(r.head.method) \(quotedForLog(r.head.path)): \(why); answered \(status)")
        return .status(status, why, headers: headers)
    }

    /// 401 with the challenge, for a request whose app password was removed while it was on its
    /// way (`isCurrent`): nothing was kept for it.
    func removedRefusal(_ r: Request) -> HTTPError {
        refusal(r, .unauthorized, Self.removedReason, headers: [Self.challenge])
    }

    static let removedReason = "this app password was removed while the request was on its way; nothing was kept for it"
    static var challenge: (String, String) { ("WWW-Authenticate", "Basic realm=\"\(realm)\", charset=\"UTF-8\"") }

    /// A precondition refusal (logged) with its RFC 4918 `DAV:error` body (`condition`, e.g.
    /// "<D:propfind-finite-depth/>"), which `errorResponse` sends as XML.
    func conditionRefusal(_ r: Request, _ status: HTTPStatus, _ condition: String, _ why: String) -> HTTPError {
        r.log("refused \(r.head.method) \(quotedForLog(r.head.path)): \(why); answered \(status)")
        return .status(status, DAVError.body(condition))
    }

    /// A plain-text answer (an empty `body`: none).
    func answer(
        _ status: HTTPStatus, _ body: String = "", type: String = "text/plain; charset=utf-8", headers: HTTPFields = []
    ) -> Response {
        .bytes(status, Array(body.utf8), type: type, headers: headers)
    }

    /// The request's body, at most `limit` bytes: a body over it, or too slow, is a logged
    /// refusal in the door's terms (its rest unread: the connection closes after the answer).
    func body(_ r: Request, limit: Int) throws(HTTPError) -> [UInt8] {
        do { return try r.body.collect(limit: limit) } catch {
            if case .refused(let status, let why) = error { throw refusal(r, HTTPStatus(status), why) }
            throw error
        }
    }

    /// The request's resource, decoded: 400 for `..`, encoded slashes and bad encodings, 404
    /// for a hidden name (`.ptk/`, `.incoming/`).
    func target(_ r: Request, _ c: DAVCaller) throws(HTTPError) -> DAVPath {
        switch DAVPath.parse(target: r.head.target, prefix: c.prefix) {
        case .success(let path):
            if path.components.dropLast().contains(where: { DAVName.kind($0) != .ordinary })
                || path.components.last.map({ DAVName.kind($0) == .hidden }) == true
            {
                throw refusal(
                    r, .notFound, "no such WebDAV resource (names starting with a dot are the receiver's own)")
            }
            return path
        case .failure(let refusal):
            throw self.refusal(r, .badRequest, "the path is not one this door takes (\(refusal))")
        }
    }

    /// OPTIONS: what the door speaks. Finder mounts read-only without class 2; Windows wants MS-Author-Via.
    func options(_ r: Request, _ c: DAVCaller) -> Response {
        Response(
            .ok,
            headers: [
                "DAV": "1, 2", "MS-Author-Via": "DAV", "Allow": Self.methods.joined(separator: ", "),
                "Accept-Ranges": "bytes",
            ])
    }
}
