import PTKDAV
import PTKDigest
import PTKHTTP
import PTKSystem
import PTKVocabulary

/// LOCK and UNLOCK (RFC 4918 9.10, 9.11), and the check every write makes: the `If:` header
/// (10.4: 412 when no list holds) and the locks on what it changes (423 unless their tokens
/// were submitted). Locks are exclusive or shared write locks, held in memory with a timeout
/// (`Timeout:`, at most an hour), at most `maxLocksPerPassword` per password. A LOCK on a name
/// that does not exist holds it as an empty placeholder (201) until the PUT or the UNLOCK:
/// Finder locks before it writes. A lock is its password's (RFC 4918 6.4: the token is only
/// good with the credentials that took it): another password's token submitted counts for
/// nothing, and only the holder refreshes or unlocks. `full` passwords share the directory's
/// locks; each `upload` password's are in a table of its own (`DAVView.lockSpace`).
extension DAVEndpoint {
    /// Returns when a write to `path` (and, `includingBelow`, what is below it) may go ahead;
    /// throws 400, 412 or 423 when not. The If header's untagged lists are about the
    /// request-URI (RFC 4918 10.4.3): `requestURI` when `path` is another (a MOVE's Destination).
    /// `lockTable` false: only the If header's conditions (a LOCK, whose conflicts are the table's).
    func checkLocks(
        _ r: Request, _ view: DAVView, _ path: DAVPath, requestURI: DAVPath? = nil, includingBelow: Bool,
        lockTable: Bool = true
    ) throws(HTTPError) {
        var submitted: [String] = []
        let space = view.lockSpace
        if let header = r.head.header("if") {
            guard let parsed = IfHeader.parse(header) else {
                throw refusal(
                    r, .badRequest,
                    "the If header is not one RFC 4918 allows, or names more than \(IfHeader.maxConditions) conditions")
            }
            let now = Self.now
            // Each resource once, however many lists name it: looking at a name may hash its file.
            var seen: [String: (tokens: [String], etag: String?)] = [:]
            let holds = parsed.evaluate(
                requestResource: (requestURI ?? path).string,
                resolve: { tag in
                    // a tag naming nothing of ours matches no resource
                    (try? DAVPath.destination(tag, prefix: view.mount.prefix, host: r.head.header("host")).get())?
                        .string
                },
                state: { key in
                    if let known = seen[key] { return known }
                    let p = DAVPath(key.isEmpty ? [] : pathComponents(key))
                    let tokens = self.withLocks(space) { $0.covering(p, now: now) }.map(\.token)
                    let state = (
                        tokens: tokens, etag: self.property(.dav("getetag"), of: p, view.resolve(p), view: view)
                    )
                    seen[key] = state
                    return state
                })
            guard holds else { throw refusal(r, .preconditionFailed, "the If header's conditions do not hold") }
            submitted = ownTokens(parsed.allTokens, view.account.id, space: space)
        }
        let now = Self.now
        if lockTable,
            let lock = withLocks(
                space, { $0.missingToken(for: path, submitted: submitted, includingBelow: includingBelow, now: now) })
        {
            let root = lock.root.href(prefix: view.mount.prefix, collection: lock.depth == .infinity)
            throw conditionRefusal(
                r, .locked,
                "<D:lock-token-submitted><D:href>\(Multistatus.escape(root))</D:href></D:lock-token-submitted>",
                "\(path.string.isEmpty ? "/" : path.string) is locked and the request did not give the lock's token")
        }
    }

    func lock(_ r: Request, _ c: DAVCaller) throws(HTTPError) -> Response {
        let body = try xmlBody(r)
        let path = try target(r, c)
        let request: LockRequest?
        switch LockRequest.parse(body) {
        case .success(let parsed): request = parsed
        case .failure(let error): throw refusal(r, .badRequest, error.description)
        }
        let timeout = DAVTimeout.seconds(r.head.header("timeout"))
        let now = Self.now
        guard let request else {
            // A refresh: no body, the lock's token in the If header.
            let space = view(c).lockSpace
            let header = r.head.header("if")
            let parsed = header.flatMap(IfHeader.parse)
            if header != nil && parsed == nil {
                throw refusal(
                    r, .badRequest,
                    "the If header is not one RFC 4918 allows, or names more than \(IfHeader.maxConditions) conditions")
            }
            let tokens = ownTokens(parsed?.allTokens ?? [], c.account.id, space: space)
            for token in tokens {
                if case .success(let lock) = withLocks(
                    space, { $0.refresh(token: token, path: path, timeout: timeout, now: now) })
                {
                    return lockAnswer(.ok, lock, prefix: c.prefix)
                }
            }
            throw conditionRefusal(
                r, .preconditionFailed, "<D:lock-token-matches-request-uri/>",
                "a lock refresh without the token of a lock on it")
        }
        guard let depth = DAVDepth.parse(r.head.header("depth"), default: .infinity), depth != .one else {
            throw refusal(r, .badRequest, "a LOCK's Depth is 0 or infinity")
        }
        // Every lockdiscovery of what the lock covers repeats its owner: a short note is all
        // clients put there (Finder's and Windows' are under 100 bytes).
        if let owner = request.owner, owner.utf8.count > Self.maxOwnerBytes {
            throw refusal(r, .badRequest, "the lock's owner is over \(Self.maxOwnerBytes) bytes")
        }
        let view = view(c)
        let resource = view.resolve(path)
        if !resource.exists {
            guard let parent = path.parent, view.resolve(parent).isCollection else {
                throw refusal(r, .conflict, "the folder it would be in does not exist")
            }
        }
        // Conditions asked for are checked; a lock in the way is the table's conflict (423).
        try checkLocks(r, view, path, includingBelow: false, lockTable: false)
        // The body may have taken its time: a password removed meanwhile takes no lock.
        guard isCurrent(c.account.id) else { throw removedRefusal(r) }
        let token = ActiveLock.token(uuidBytes: randomBytes(16))
        let taken = withLocks(view.lockSpace, for: c.account.id) {
            $0.lock(
                path, depth: resource.isCollection ? depth : .zero, scope: request.scope, owner: request.owner,
                account: c.account.id,
                timeout: timeout, now: now, token: token)
        }
        guard let result = taken else { throw removedRefusal(r) }
        switch result {
        case .success(let lock):
            if !resource.exists, !names.setPlaceholder(c.account.id, path, at: now) {
                _ = withLocks(view.lockSpace) { $0.unlock(token: lock.token, path: path, now: now) }
                throw refusal(
                    r, .insufficientStorage,
                    "this app password holds \(DAVNames.maxPlaceholders) empty names already; finish or unlock some first"
                )
            }
            r.log("locked \(quotedForLog(path.string)) for \(timeout) s")
            return lockAnswer(resource.exists ? .ok : .created, lock, prefix: c.prefix)
        case .failure(.tooMany):
            throw refusal(
                r, .serviceUnavailable,
                "this app password holds \(Self.maxLocksPerPassword) locks, or \(Self.maxOwnerBytesPerPassword) bytes of their owners, already; unlock some first"
            )
        case .failure:
            throw conditionRefusal(r, .locked, "<D:no-conflicting-lock/>", "\(path.string) is locked by another client")
        }
    }

    private func lockAnswer(_ status: HTTPStatus, _ lock: ActiveLock, prefix: String) -> Response {
        // A lock of depth infinity is a folder's (a file's is always depth 0): its root href ends in "/".
        let body = lock.lockResponseBody(prefix: prefix, now: Self.now, collection: lock.depth == .infinity)
        return answer(status, body, type: "application/xml; charset=utf-8", headers: ["Lock-Token": "<\(lock.token)>"])
    }

    func unlock(_ r: Request, _ c: DAVCaller) throws(HTTPError) -> Response {
        let path = try target(r, c)
        guard var token = r.head.header("lock-token")?.trimmingSpaces, token.hasPrefix("<"), token.hasSuffix(">") else {
            throw refusal(r, .badRequest, "UNLOCK needs a Lock-Token header: <token>")
        }
        token = String(token.dropFirst().dropLast())
        let now = Self.now
        let space = view(c).lockSpace
        guard
            ownTokens([token], c.account.id, space: space) == [token]
                || !withLocks(space, { $0.locks.contains { $0.token == token } })
        else {
            throw refusal(r, .forbidden, "that lock was taken with another app password")
        }
        switch withLocks(space, { $0.unlock(token: token, path: path, now: now) }) {
        case .success:
            // A name held only for this lock is let go: it never becomes an empty photo.
            if withLocks(space, { $0.covering(path, now: now) }).isEmpty { names.removePlaceholder(c.account.id, path) }
            return answer(.noContent)
        case .failure:
            throw conditionRefusal(
                r, .conflict, "<D:lock-token-matches-request-uri/>", "no lock with that token covers \(path.string)")
        }
    }

    /// The tokens of `tokens` that name locks of the password `account` (RFC 4918 6.4).
    func ownTokens(_ tokens: [String], _ account: String, space: String) -> [String] {
        let own = withLocks(space) { table in Set(table.locks.filter { $0.account == account }.map(\.token)) }
        return tokens.filter(own.contains)
    }

}
