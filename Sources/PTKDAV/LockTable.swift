/// WebDAV write locks (RFC 4918 sections 6 and 7), held in memory: a lock is lost when ptkd
/// stops, which section 6.6 allows (a client finds out at its next refresh). Pure: the caller
/// passes the time and the tokens.

/// A lock someone holds.
public struct ActiveLock: Sendable, Equatable {
    /// The lock token, "urn:uuid:..." (section 6.5; `ActiveLock.token(uuidBytes:)` makes one).
    public var token: String
    /// The resource locked (the lock root, section 6.1).
    public var root: DAVPath
    /// `.zero` or `.infinity` (section 9.10.3; the table takes `.one` as `.infinity`).
    public var depth: DAVDepth
    /// Exclusive or shared.
    public var scope: LockRequest.Scope
    /// The `<D:owner>` element as the client sent it, serialized; nil if none.
    public var owner: String?
    /// Who took it: the id of the password the request was authorised with.
    public var account: String
    /// When it expires, in the caller's seconds.
    public var expires: Int64
    /// The seconds it was given (or last refreshed for).
    public var timeout: Int

    /// A lock as given.
    public init(
        token: String, root: DAVPath, depth: DAVDepth, scope: LockRequest.Scope, owner: String?, account: String,
        expires: Int64, timeout: Int
    ) {
        self.token = token
        self.root = root
        self.depth = depth
        self.scope = scope
        self.owner = owner
        self.account = account
        self.expires = expires
        self.timeout = timeout
    }

    /// Whether the lock applies to `path`: its root, or below a depth-infinity root.
    public func covers(_ path: DAVPath) -> Bool {
        root == path || (depth == .infinity && root.isAncestor(of: path))
    }

    /// `<D:activelock>` (section 14.1) for lockdiscovery and a LOCK's response: type, scope,
    /// depth, owner, the seconds left as "Second-N", the token and the lock root (an href under
    /// `prefix`, with a trailing "/" when `collection`). Uses the prefix `D`, which the
    /// surrounding document declares.
    public func discoveryXML(prefix: String, now: Int64, collection: Bool = false) -> String {
        let left = max(0, expires - now)
        return "<D:activelock><D:locktype><D:write/></D:locktype><D:lockscope>"
            + (scope == .exclusive ? "<D:exclusive/>" : "<D:shared/>")
            + "</D:lockscope><D:depth>" + (depth == .zero ? "0" : "infinity") + "</D:depth>"
            + (owner ?? "")
            + "<D:timeout>Second-\(left)</D:timeout>"
            + "<D:locktoken><D:href>" + Multistatus.escape(token) + "</D:href></D:locktoken>"
            + "<D:lockroot><D:href>" + Multistatus.escape(root.href(prefix: prefix, collection: collection))
            + "</D:href></D:lockroot>"
            + "</D:activelock>"
    }

    /// The body of a successful LOCK (section 9.10.1): `<D:prop>` with the lockdiscovery of
    /// this lock alone.
    public func lockResponseBody(prefix: String, now: Int64, collection: Bool = false) -> String {
        "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<D:prop xmlns:D=\"DAV:\"><D:lockdiscovery>"
            + discoveryXML(prefix: prefix, now: now, collection: collection) + "</D:lockdiscovery></D:prop>\n"
    }

    /// A lock token "urn:uuid:xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx" (RFC 9562 version 4) from 16
    /// random bytes of the caller's (more are ignored, fewer are padded with zeros).
    public static func token(uuidBytes: [UInt8]) -> String {
        var b = Array(uuidBytes.prefix(16)) + Array(repeating: 0, count: max(0, 16 - uuidBytes.count))
        b[6] = b[6] & 0x0F | 0x40
        b[8] = b[8] & 0x3F | 0x80
        let hex = Array("0123456789abcdef")
        var out = "urn:uuid:"
        for (i, byte) in b.enumerated() {
            if [4, 6, 8, 10].contains(i) { out += "-" }
            out.append(hex[Int(byte >> 4)])
            out.append(hex[Int(byte & 15)])
        }
        return out
    }
}

/// Why a lock, refresh or unlock was refused.
public enum LockConflict: Error, Sendable, Equatable {
    /// Another lock is in the way (423 Locked, with `no-conflicting-lock`, section 9.10.6).
    case locked(by: ActiveLock)
    /// The account holds as many locks as it may, or as many bytes of `<D:owner>` (the door's
    /// bound against a client that never unlocks, or whose owners every lockdiscovery repeats;
    /// 503 or 507 is the door's choice).
    case tooMany
    /// No live lock has this token, or it does not cover the path (412 for a refresh,
    /// 409 `lock-token-matches-request-uri` for an UNLOCK, section 9.11.1).
    case noSuchLock
}

/// The locks ptkd holds, in the order they were taken. Expired locks are dropped by every
/// mutating call that is given the time.
public struct LockTable: Sendable {
    /// The most live locks one account may hold.
    public let maxPerAccount: Int
    /// The most bytes of `owner` one account's live locks may hold in all: every lockdiscovery
    /// of a resource a lock covers repeats its owner, so a PROPFIND of a folder repeats them
    /// all for each member.
    public let maxOwnerBytesPerAccount: Int
    /// The locks, oldest first.
    public private(set) var locks: [ActiveLock] = []

    /// An empty table.
    public init(maxPerAccount: Int = 100, maxOwnerBytesPerAccount: Int = 8 << 10) {
        self.maxPerAccount = maxPerAccount
        self.maxOwnerBytesPerAccount = maxOwnerBytesPerAccount
    }

    /// Takes a lock on `path` (depth zero or infinity; `.one` is taken as infinity: the door
    /// answers 400 before, section 9.10.3). Conflicts (section 6.2, 7): an exclusive lock on the
    /// path or covering it (an ancestor with depth infinity), or for depth infinity any lock
    /// below; a shared lock conflicts only with exclusive ones, in either direction. The first
    /// conflicting lock is reported. A token already in the table is a conflict with its lock
    /// (the caller's random source is broken). Then the account's bound.
    public mutating func lock(
        _ path: DAVPath, depth: DAVDepth, scope: LockRequest.Scope, owner: String?, account: String, timeout: Int,
        now: Int64, token: String
    ) -> Result<ActiveLock, LockConflict> {
        expire(now)
        let depth: DAVDepth = depth == .zero ? .zero : .infinity
        for l in locks {
            if l.token == token { return .failure(.locked(by: l)) }
            let overlaps = l.covers(path) || (depth == .infinity && path.isAncestor(of: l.root))
            if overlaps && (l.scope == .exclusive || scope == .exclusive) { return .failure(.locked(by: l)) }
        }
        if count(account: account) >= maxPerAccount { return .failure(.tooMany) }
        if ownerBytes(account: account) + (owner?.utf8.count ?? 0) > maxOwnerBytesPerAccount {
            return .failure(.tooMany)
        }
        let lock = ActiveLock(
            token: token, root: path, depth: depth, scope: scope, owner: owner, account: account,
            expires: now + Int64(timeout), timeout: timeout)
        locks.append(lock)
        return .success(lock)
    }

    /// Gives the lock `token` `timeout` more seconds from `now` (section 9.10.2). The lock
    /// must cover `path` (the request-URI).
    public mutating func refresh(token: String, path: DAVPath, timeout: Int, now: Int64) -> Result<
        ActiveLock, LockConflict
    > {
        expire(now)
        guard let i = locks.firstIndex(where: { $0.token == token && $0.covers(path) }) else {
            return .failure(.noSuchLock)
        }
        locks[i].expires = now + Int64(timeout)
        locks[i].timeout = timeout
        return .success(locks[i])
    }

    /// Removes the lock `token`, which must cover `path` (section 9.11: the request-URI is in
    /// the lock's scope). Returns the lock removed.
    public mutating func unlock(token: String, path: DAVPath, now: Int64) -> Result<ActiveLock, LockConflict> {
        expire(now)
        guard let i = locks.firstIndex(where: { $0.token == token && $0.covers(path) }) else {
            return .failure(.noSuchLock)
        }
        return .success(locks.remove(at: i))
    }

    /// Locks that cover `path` (on it, or an ancestor's depth-infinity lock), expired ones
    /// dropped: its lockdiscovery (section 15.8) and what a write to it must hold tokens for.
    public mutating func covering(_ path: DAVPath, now: Int64) -> [ActiveLock] {
        expire(now)
        return locks.filter { $0.covers(path) }
    }

    /// Locks on `path` or anywhere below it (what a DELETE or MOVE of a collection must hold
    /// tokens for, section 9.6.1, 9.9.2).
    public mutating func within(_ path: DAVPath, now: Int64) -> [ActiveLock] {
        expire(now)
        return locks.filter { path.contains($0.root) }
    }

    /// Whether a write to `path` may go ahead with the tokens submitted (`IfHeader.allTokens`,
    /// sections 6.4, 7.5 and 10.4.1): each resource locked that covers `path` (and with
    /// `includingBelow`, each one within it) has a token submitted: the exclusive lock's, or
    /// any one of its shared locks' (shared holders each write under their own lock). Returns
    /// a lock (covering ones first) of the first locked resource without one; nil when the
    /// write is allowed.
    public mutating func missingToken(for path: DAVPath, submitted: [String], includingBelow: Bool, now: Int64)
        -> ActiveLock?
    {
        let candidates = covering(path, now: now) + (includingBelow ? within(path, now: now) : [])
        var roots: [DAVPath] = []
        for l in candidates where !roots.contains(l.root) { roots.append(l.root) }
        for root in roots {
            let group = candidates.filter { $0.root == root }
            if !group.contains(where: { submitted.contains($0.token) }) { return group.first }
        }
        return nil
    }

    /// Drops the locks on `path` and below (section 7.7: a moved or deleted resource loses its
    /// locks; locks of ancestors that cover it stay).
    public mutating func removeAll(within path: DAVPath) {
        locks.removeAll { path.contains($0.root) }
    }

    /// Drops every lock `account` holds (its password was removed: RFC 4918 6.4, a lock is
    /// good only with the credentials that took it, and these can no longer be given).
    public mutating func removeAll(account: String) {
        locks.removeAll { $0.account == account }
    }

    /// The locks `account` holds, counting any that expired since the last call given the time.
    public func count(account: String) -> Int {
        locks.reduce(0) { $0 + ($1.account == account ? 1 : 0) }
    }

    /// The bytes of the owners of the locks `account` holds (as `count`).
    public func ownerBytes(account: String) -> Int {
        locks.reduce(0) { $0 + ($1.account == account ? ($1.owner?.utf8.count ?? 0) : 0) }
    }

    private mutating func expire(_ now: Int64) {
        locks.removeAll { $0.expires <= now }
    }
}
