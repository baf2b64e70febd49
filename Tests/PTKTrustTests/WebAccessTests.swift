import PTKDigest
import PTKSystem
import PTKTestSupport
import PTKTestTags
import PTKTrust
import Testing

@Suite("Web access: password, one-time links, sessions", .tags(.unit))
struct WebAccessTests {
    /// A cheap scrypt for tests (the standard cost is checked once, below).
    static let cheap = Scrypt(n: 1 << 10, r: 8, p: 1)

    func access() -> (WebAccess, String) {
        let dir = makeTemporaryDirectory("ptk-web")
        return (WebAccess(directory: dir + "/web"), dir)
    }

    @Test("scrypt matches RFC 7914's test vector")
    func vector() {
        // RFC 7914 §12: P="password", S="NaCl", N=1024, r=8, p=16, dkLen=64.
        let key = Scrypt(n: 1024, r: 8, p: 16).derive(password: "password", salt: Array("NaCl".utf8), length: 64)
        #expect(
            key.map(hex)
                == "fdbabe1c9d3472007856e7190d01e9fe7c6ad7cbc8237830e77376634b3731622eaf30d92e22a3886ff109279d9830dac727afb94a83ee6d8360cbdfa2cc0640"
        )
    }

    @Test("the password is kept as a salted scrypt hash (0600) and checked; removing it makes every password wrong")
    func password() throws {
        let (a, dir) = access()
        defer { removeTree(dir) }
        #expect(!a.hasPassword && !a.checkPassword(""))
        try a.setPassword("correct horse", cost: Self.cheap)
        #expect(a.hasPassword)
        #expect(a.checkPassword("correct horse"))
        #expect(!a.checkPassword("correct hors") && !a.checkPassword("correct horse ") && !a.checkPassword(""))
        let text = try readTextFile(a.passwordFile)
        #expect(text.hasPrefix("scrypt$1024$8$1$") && !text.contains("correct"))
        #expect(try fileStatus(a.passwordFile).permissions & 0o777 == 0o600)
        try a.setPassword("correct horse", cost: Self.cheap)
        #expect(try readTextFile(a.passwordFile) != text)  // a new salt each time
        #expect(try a.removePassword())
        #expect(!a.checkPassword("correct horse"))
        #expect(!(try a.removePassword()))
    }

    @Test("the standard cost is scrypt N=2^15, r=8, p=1 and works with OpenSSL's memory limit")
    func standardCost() throws {
        let (a, dir) = access()
        defer { removeTree(dir) }
        try a.setPassword("a long enough one")
        #expect(try readTextFile(a.passwordFile).hasPrefix("scrypt$32768$8$1$"))
        #expect(a.checkPassword("a long enough one"))
    }

    @Test(
        "damaged password files log no one in",
        arguments: [
            "", "scrypt$1024$8$1$zz$00", "scrypt$1000$8$1$00$" + String(repeating: "0", count: 64),
            "bcrypt$1024$8$1$00$" + String(repeating: "0", count: 64), "scrypt$1024$8$1$00$00",
        ])
    func damaged(_ text: String) throws {
        let (a, dir) = access()
        defer { removeTree(dir) }
        try a.prepare()
        try writeFileAtomically(a.passwordFile, Array(text.utf8), mode: 0o600)
        #expect(!a.checkPassword(""))
        #expect(!a.checkPassword("x"))
    }

    @Test("a link works once and for 10 minutes; only its hash is written")
    func links() throws {
        let (a, dir) = access()
        defer { removeTree(dir) }
        let now = WallTime(seconds: 1_800_000_000)
        let secret = try a.createLink(name: "Anna's\tphone\n", now: now)
        #expect(secret.utf8.count == 32)
        #expect(!(try readTextFile(a.linksFile)).contains(secret))
        #expect(try fileStatus(a.linksFile).permissions & 0o777 == 0o600)
        #expect(try a.openLinks(now: now).map(\.name) == ["Anna's phone"])
        let late = try a.createLink(name: "late", now: WallTime(seconds: now.seconds - 10))
        #expect(try a.redeemLink(late, address: "192.0.2.1", now: WallTime(seconds: now.seconds + 590)) == nil)
        let (session, cookie) = try #require(
            try a.redeemLink(secret, address: "192.0.2.1", now: WallTime(seconds: now.seconds + 599)))
        #expect(session.name == "Anna's phone" && session.address == "192.0.2.1" && cookie.utf8.count == 64)
        #expect(try a.redeemLink(secret, address: "192.0.2.1", now: WallTime(seconds: now.seconds + 600)) == nil)
        #expect(try a.redeemLink("0" + secret.dropFirst(), address: "192.0.2.1", now: now) == nil)
        #expect(try a.openLinks(now: WallTime(seconds: now.seconds + 601)).isEmpty)
    }

    @Test(
        "a sessions or links line whose times are out of range is no session (listing, finding a cookie and revoking trap nothing)"
    )
    func plantedTimes() throws {
        let (a, dir) = access()
        defer { removeTree(dir) }
        let (_, secret) = try a.login(name: "kept", address: "192.0.2.1:5")
        var text = try readTextFile(a.sessionsFile)
        for t in ["-9223372036854775808", "9223372036854775807", "-1", "253402300800"] {
            for field in 3...5 {
                var f = [
                    "e\(field)", String(repeating: "0", count: 64), "csrf", "1800000000", "1800000000", "1800086400",
                    "127.0.0.1:1", "planted",
                ]
                f[field] = t
                text += f.joined(separator: "\t") + "\n"
            }
        }
        writeFile(a.sessionsFile, Array(text.utf8))
        writeFile(a.linksFile, Array((String(repeating: "1", count: 64) + "\t-9223372036854775808\tplanted\n").utf8))
        #expect(try a.sessions().map(\.name) == ["kept"])
        #expect(a.session(secret: secret) != nil)
        #expect(try a.openLinks().isEmpty)
        #expect(try a.revoke("all").map(\.name) == ["kept"])
    }

    @Test("sessions: found by their cookie for 30 days, never by another, listed and revoked by ID prefix or all")
    func sessions() throws {
        let (a, dir) = access()
        defer { removeTree(dir) }
        let now = WallTime(seconds: 1_800_000_000)
        let (one, cookie1) = try a.login(name: "", address: "192.0.2.1", now: now)
        let (two, cookie2) = try a.login(name: "laptop", address: "192.0.2.2", now: now)
        #expect(one.name == "browser" && one.id != two.id && one.csrf != two.csrf && one.csrf.utf8.count == 32)
        #expect(a.session(secret: cookie1, now: now)?.id == one.id)
        #expect(a.session(secret: cookie2, now: now)?.id == two.id)
        #expect(a.session(secret: String(cookie1.reversed()), now: now) == nil)
        #expect(a.session(secret: "", now: now) == nil)
        #expect(a.session(secret: cookie1, now: WallTime(seconds: now.seconds + 30 * 86_400)) == nil)
        #expect(!(try readTextFile(a.sessionsFile)).contains(cookie1))
        #expect(try fileStatus(a.sessionsFile).permissions & 0o777 == 0o600)
        // Use after an hour is noted (written), not before.
        _ = a.session(secret: cookie1, now: WallTime(seconds: now.seconds + 3600))
        #expect(try a.sessions(now: now).first { $0.id == one.id }?.lastUsed.seconds == now.seconds + 3600)
        #expect(throws: TrustError.self) { try a.revoke("zzzz", now: now) }
        #expect(try a.revoke(String(two.id.prefix(5)), now: now).map(\.id) == [two.id])
        #expect(a.session(secret: cookie2, now: now) == nil)
        #expect(a.session(secret: cookie1, now: now) != nil)
        #expect(try a.revoke("all", now: now).map(\.id) == [one.id])
        #expect(a.session(secret: cookie1, now: now) == nil)
    }
}
