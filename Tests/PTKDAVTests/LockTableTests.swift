import PTKDAV
import PTKTestTags
import Testing

private let a = DAVPath(["a"])
private let ab = DAVPath(["a", "b"])
private let abc = DAVPath(["a", "b", "c.jpg"])
private let x = DAVPath(["x"])

private func taken(_ r: Result<ActiveLock, LockConflict>) -> ActiveLock? {
    if case .success(let l) = r { return l }
    return nil
}

@Suite("Lock table", .tags(.unit))
struct LockTableTests {
    @Test("a lock is taken with its parts, and expires at now + timeout")
    func lock() throws {
        var t = LockTable()
        let l = try #require(
            taken(
                t.lock(
                    ab, depth: .infinity, scope: .exclusive, owner: "<D:owner xmlns:D=\"DAV:\">me</D:owner>",
                    account: "p1", timeout: 600, now: 1000, token: "urn:uuid:1")))
        #expect(
            l
                == ActiveLock(
                    token: "urn:uuid:1", root: ab, depth: .infinity, scope: .exclusive,
                    owner: "<D:owner xmlns:D=\"DAV:\">me</D:owner>", account: "p1", expires: 1600, timeout: 600))
        #expect(t.count(account: "p1") == 1)
        #expect(t.covering(abc, now: 1599) == [l])
        #expect(t.covering(abc, now: 1600) == [], "expired at its expiry")
        #expect(t.count(account: "p1") == 0)
    }

    @Test("exclusive conflicts with anything on the same resource; shared with shared does not")
    func scopes() throws {
        var t = LockTable()
        let s1 = try #require(
            taken(t.lock(ab, depth: .zero, scope: .shared, owner: nil, account: "p", timeout: 60, now: 0, token: "s1")))
        #expect(
            taken(t.lock(ab, depth: .zero, scope: .shared, owner: nil, account: "q", timeout: 60, now: 0, token: "s2"))
                != nil)
        #expect(
            t.lock(ab, depth: .zero, scope: .exclusive, owner: nil, account: "q", timeout: 60, now: 0, token: "e")
                == .failure(.locked(by: s1)))
        var u = LockTable()
        let e = try #require(
            taken(
                u.lock(ab, depth: .zero, scope: .exclusive, owner: nil, account: "p", timeout: 60, now: 0, token: "e")))
        #expect(
            u.lock(ab, depth: .zero, scope: .shared, owner: nil, account: "q", timeout: 60, now: 0, token: "s")
                == .failure(.locked(by: e)))
        #expect(
            u.lock(ab, depth: .zero, scope: .exclusive, owner: nil, account: "p", timeout: 60, now: 0, token: "e2")
                == .failure(.locked(by: e)))
    }

    @Test("a depth-infinity lock covers what is below; a depth-0 lock does not")
    func depthInfinityCovers() throws {
        var t = LockTable()
        let l = try #require(
            taken(
                t.lock(
                    a, depth: .infinity, scope: .exclusive, owner: nil, account: "p", timeout: 60, now: 0, token: "t")))
        #expect(
            t.lock(abc, depth: .zero, scope: .exclusive, owner: nil, account: "q", timeout: 60, now: 0, token: "u")
                == .failure(.locked(by: l)))
        #expect(
            t.lock(abc, depth: .zero, scope: .shared, owner: nil, account: "q", timeout: 60, now: 0, token: "u")
                == .failure(.locked(by: l)))
        #expect(
            taken(
                t.lock(
                    x, depth: .infinity, scope: .exclusive, owner: nil, account: "q", timeout: 60, now: 0, token: "v"))
                != nil)
        var z = LockTable()
        _ = z.lock(a, depth: .zero, scope: .exclusive, owner: nil, account: "p", timeout: 60, now: 0, token: "t")
        #expect(
            taken(
                z.lock(ab, depth: .zero, scope: .exclusive, owner: nil, account: "q", timeout: 60, now: 0, token: "u"))
                != nil)
        #expect(z.covering(ab, now: 0).map(\.token) == ["u"])
    }

    @Test("a depth-infinity lock is refused over a lock below it; a depth-0 one is not")
    func lockAboveExisting() throws {
        var t = LockTable()
        let below = try #require(
            taken(
                t.lock(
                    abc, depth: .zero, scope: .exclusive, owner: nil, account: "p", timeout: 60, now: 0, token: "below")
            ))
        #expect(
            t.lock(a, depth: .infinity, scope: .exclusive, owner: nil, account: "q", timeout: 60, now: 0, token: "up")
                == .failure(.locked(by: below)))
        #expect(
            t.lock(a, depth: .infinity, scope: .shared, owner: nil, account: "q", timeout: 60, now: 0, token: "up")
                == .failure(.locked(by: below)))
        #expect(
            taken(
                t.lock(a, depth: .zero, scope: .exclusive, owner: nil, account: "q", timeout: 60, now: 0, token: "zero")
            ) != nil)
        #expect(t.within(a, now: 0).map(\.token) == ["below", "zero"])
    }

    @Test("depth 1 is taken as infinity; an expired lock conflicts with nothing; a reused token is refused")
    func oddities() throws {
        var t = LockTable()
        let l = try #require(
            taken(t.lock(a, depth: .one, scope: .exclusive, owner: nil, account: "p", timeout: 10, now: 0, token: "t")))
        #expect(l.depth == .infinity)
        #expect(
            taken(
                t.lock(abc, depth: .zero, scope: .exclusive, owner: nil, account: "q", timeout: 10, now: 10, token: "u")
            ) != nil)
        let u = try #require(t.covering(abc, now: 10).first)
        #expect(
            t.lock(x, depth: .zero, scope: .shared, owner: nil, account: "q", timeout: 10, now: 10, token: "u")
                == .failure(.locked(by: u)))
    }

    @Test("refresh: only the token's lock, on a path it covers, before it expires")
    func refresh() throws {
        var t = LockTable()
        _ = t.lock(a, depth: .infinity, scope: .exclusive, owner: nil, account: "p", timeout: 60, now: 0, token: "t")
        let r = try #require(taken(t.refresh(token: "t", path: abc, timeout: 300, now: 50)))
        #expect(r.expires == 350 && r.timeout == 300)
        #expect(t.covering(a, now: 349).count == 1)
        #expect(t.refresh(token: "nope", path: a, timeout: 60, now: 100) == .failure(.noSuchLock))
        #expect(t.refresh(token: "t", path: x, timeout: 60, now: 100) == .failure(.noSuchLock))
        #expect(t.refresh(token: "t", path: a, timeout: 60, now: 350) == .failure(.noSuchLock), "expired")
    }

    @Test("unlock: wrong token or a path outside the lock is noSuchLock; the right one removes it")
    func unlock() throws {
        var t = LockTable()
        _ = t.lock(ab, depth: .zero, scope: .exclusive, owner: nil, account: "p", timeout: 60, now: 0, token: "t")
        #expect(t.unlock(token: "u", path: ab, now: 1) == .failure(.noSuchLock))
        #expect(t.unlock(token: "t", path: abc, now: 1) == .failure(.noSuchLock), "depth 0 does not cover a member")
        #expect(t.unlock(token: "t", path: a, now: 1) == .failure(.noSuchLock))
        #expect(taken(t.unlock(token: "t", path: ab, now: 1))?.token == "t")
        #expect(t.covering(ab, now: 1).isEmpty && t.count(account: "p") == 0)
        #expect(t.unlock(token: "t", path: ab, now: 1) == .failure(.noSuchLock))
    }

    @Test("an account holds at most maxPerAccount live locks; others are not counted against it")
    func perAccountBound() {
        var t = LockTable(maxPerAccount: 2)
        _ = t.lock(
            DAVPath(["1"]), depth: .zero, scope: .exclusive, owner: nil, account: "p", timeout: 10, now: 0, token: "1")
        _ = t.lock(
            DAVPath(["2"]), depth: .zero, scope: .exclusive, owner: nil, account: "p", timeout: 100, now: 0, token: "2")
        #expect(
            t.lock(
                DAVPath(["3"]), depth: .zero, scope: .exclusive, owner: nil, account: "p", timeout: 10, now: 0,
                token: "3") == .failure(.tooMany))
        #expect(
            taken(
                t.lock(
                    DAVPath(["3"]), depth: .zero, scope: .exclusive, owner: nil, account: "q", timeout: 10, now: 0,
                    token: "3")) != nil)
        #expect(
            taken(
                t.lock(
                    DAVPath(["4"]), depth: .zero, scope: .exclusive, owner: nil, account: "p", timeout: 10, now: 10,
                    token: "4")) != nil, "lock 1 expired")
        #expect(t.count(account: "p") == 2)
    }

    @Test("missingToken: covering locks, locks below with includingBelow, shared locks need one of theirs")
    func missingToken() throws {
        var t = LockTable()
        let up = try #require(
            taken(
                t.lock(a, depth: .infinity, scope: .shared, owner: nil, account: "p", timeout: 60, now: 0, token: "up1")
            ))
        _ = t.lock(a, depth: .infinity, scope: .shared, owner: nil, account: "q", timeout: 60, now: 0, token: "up2")
        let below = try #require(
            taken(
                t.lock(abc, depth: .zero, scope: .shared, owner: nil, account: "q", timeout: 60, now: 0, token: "below")
            ))
        #expect(t.missingToken(for: ab, submitted: [], includingBelow: false, now: 1) == up)
        #expect(
            t.missingToken(for: ab, submitted: ["up2"], includingBelow: false, now: 1) == nil,
            "one shared holder's token is enough")
        #expect(t.missingToken(for: ab, submitted: ["up2"], includingBelow: true, now: 1) == below)
        #expect(t.missingToken(for: ab, submitted: ["up1", "below"], includingBelow: true, now: 1) == nil)
        #expect(t.missingToken(for: x, submitted: [], includingBelow: true, now: 1) == nil)
        #expect(t.missingToken(for: abc, submitted: ["below"], includingBelow: false, now: 1) == up)
        #expect(t.missingToken(for: ab, submitted: [], includingBelow: true, now: 60) == nil, "all expired")
    }

    @Test("removeAll(within:) drops the locks on a path and below, not an ancestor's")
    func removeAll() throws {
        var t = LockTable()
        _ = t.lock(a, depth: .zero, scope: .shared, owner: nil, account: "p", timeout: 60, now: 0, token: "a")
        _ = t.lock(ab, depth: .infinity, scope: .shared, owner: nil, account: "p", timeout: 60, now: 0, token: "ab")
        _ = t.lock(abc, depth: .zero, scope: .shared, owner: nil, account: "p", timeout: 60, now: 0, token: "abc")
        _ = t.lock(x, depth: .zero, scope: .shared, owner: nil, account: "p", timeout: 60, now: 0, token: "x")
        t.removeAll(within: ab)
        #expect(t.locks.map(\.token) == ["a", "x"])
        #expect(t.count(account: "p") == 2)
    }

    @Test("lock discovery XML and the LOCK response body parse back with the lock's values")
    func discovery() throws {
        var t = LockTable()
        let l = try #require(
            taken(
                t.lock(
                    DAVPath(["a b"]), depth: .infinity, scope: .shared,
                    owner: #"<D:owner xmlns:D="DAV:"><D:href>mailto:x@y</D:href></D:owner>"#,
                    account: "p", timeout: 600, now: 1000, token: "urn:uuid:abc")))
        let body = l.lockResponseBody(prefix: "/dav", now: 1100, collection: true)
        let active = try #require(parsed(body)?.child(.dav("lockdiscovery"))?.child(.dav("activelock")), "\(body)")
        #expect(active.child(.dav("locktype"))?.child(.dav("write")) != nil)
        #expect(active.child(.dav("lockscope"))?.child(.dav("shared")) != nil)
        #expect(active.child(.dav("depth"))?.text == "infinity")
        #expect(active.child(.dav("owner"))?.child(.dav("href"))?.text == "mailto:x@y")
        #expect(active.child(.dav("timeout"))?.text == "Second-500")
        #expect(active.child(.dav("locktoken"))?.child(.dav("href"))?.text == "urn:uuid:abc")
        #expect(active.child(.dav("lockroot"))?.child(.dav("href"))?.text == "/dav/a%20b/")
        let zero = ActiveLock(
            token: "t", root: x, depth: .zero, scope: .exclusive, owner: nil, account: "p", expires: 5, timeout: 5)
        #expect(
            zero.discoveryXML(prefix: "/dav", now: 10).contains("<D:depth>0</D:depth><D:timeout>Second-0</D:timeout>"))
        #expect(zero.discoveryXML(prefix: "/dav", now: 10).contains("<D:lockroot><D:href>/dav/x</D:href></D:lockroot>"))
    }

    @Test("tokens are RFC 9562 version 4 UUID URNs")
    func tokens() {
        #expect(
            ActiveLock.token(uuidBytes: Array(repeating: 0xFF, count: 16))
                == "urn:uuid:ffffffff-ffff-4fff-bfff-ffffffffffff")
        #expect(ActiveLock.token(uuidBytes: Array(0..<16)) == "urn:uuid:00010203-0405-4607-8809-0a0b0c0d0e0f")
        #expect(ActiveLock.token(uuidBytes: []) == "urn:uuid:00000000-0000-4000-8000-000000000000")
    }
}

@Suite("Lock table: what an account may hold, and its locks going with it (issue 54)", .tags(.unit))
struct LockTableBoundsTests {
    @Test(
        "an account's owners are bounded in all: a lock past maxOwnerBytesPerAccount is tooMany; others' are not counted"
    )
    func ownerBytes() throws {
        var t = LockTable(maxPerAccount: 100, maxOwnerBytesPerAccount: 1000)
        let owner = String(repeating: "o", count: 400)
        #expect(
            taken(
                t.lock(
                    DAVPath(["1"]), depth: .zero, scope: .exclusive, owner: owner, account: "p", timeout: 60, now: 0,
                    token: "t1")) != nil)
        #expect(
            taken(
                t.lock(
                    DAVPath(["2"]), depth: .zero, scope: .exclusive, owner: owner, account: "p", timeout: 60, now: 0,
                    token: "t2")) != nil)
        #expect(t.ownerBytes(account: "p") == 800)
        #expect(
            t.lock(
                DAVPath(["3"]), depth: .zero, scope: .exclusive, owner: owner, account: "p", timeout: 60, now: 0,
                token: "t3") == .failure(.tooMany))
        #expect(
            taken(
                t.lock(
                    DAVPath(["3"]), depth: .zero, scope: .exclusive, owner: nil, account: "p", timeout: 60, now: 0,
                    token: "t4")) != nil)
        #expect(
            taken(
                t.lock(
                    DAVPath(["5"]), depth: .zero, scope: .exclusive, owner: owner, account: "q", timeout: 60, now: 0,
                    token: "t5")) != nil)
        // Expired locks give their bytes back.
        #expect(
            taken(
                t.lock(
                    DAVPath(["6"]), depth: .zero, scope: .exclusive, owner: owner, account: "p", timeout: 60, now: 61,
                    token: "t6")) != nil)
    }

    @Test(
        "removeAll(account:) drops every lock of that account, exclusive ones over others' paths included, and no one else's"
    )
    func removeAccount() throws {
        var t = LockTable()
        #expect(
            taken(
                t.lock(
                    DAVPath(), depth: .infinity, scope: .exclusive, owner: nil, account: "gone", timeout: 600, now: 0,
                    token: "g1")) != nil)
        #expect(
            t.lock(abc, depth: .zero, scope: .exclusive, owner: nil, account: "kept", timeout: 600, now: 0, token: "k0")
                == .failure(.locked(by: t.locks[0])))
        t.removeAll(account: "gone")
        #expect(t.locks.isEmpty)
        #expect(
            taken(
                t.lock(
                    abc, depth: .zero, scope: .exclusive, owner: nil, account: "kept", timeout: 600, now: 0, token: "k1"
                )) != nil)
        t.removeAll(account: "gone")
        #expect(t.locks.map(\.token) == ["k1"])
        #expect(t.missingToken(for: abc, submitted: [], includingBelow: false, now: 1) != nil)
    }
}
