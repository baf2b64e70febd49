import PTKSystem
import PTKTestTags
import Testing

@testable import PTKTrust

/// A clock the test moves by hand.
final class ManualClock: @unchecked Sendable {
    private let lock = Lock()
    private var seconds = 1000.0
    var now: Instant { lock.withLock { Instant(seconds: seconds) } }
    func advance(_ by: Double) { lock.withLock { seconds += by } }
}

@Suite("Login flows: every transition, expiry, bounds and guessed secrets", .tags(.unit))
struct LoginFlowsTests {
    let clock = ManualClock()
    var flows: LoginFlows { LoginFlows(clock: { [clock] in clock.now }) }

    func request(_ address: String = "192.0.2.7", device: String = "Nextcloud-android") -> LoginFlowRequest {
        LoginFlowRequest(device: device, address: address, server: "https://192.0.2.1:8443")
    }

    func start(_ t: LoginFlows, _ r: LoginFlowRequest) throws -> LoginFlows.Started {
        try t.start(r).get()
    }

    @Test("start hands out a 128-hex-digit poll token and a 64-hex-digit login secret, new each time")
    func secrets() throws {
        let t = flows
        let a = try start(t, request())
        let b = try start(t, request())
        for s in [a, b] {
            #expect(s.pollToken.utf8.count == 128 && s.loginSecret.utf8.count == 64)
            #expect((s.pollToken + s.loginSecret).utf8.allSatisfy { AppPasswordFile.isLowerHex($0) })
        }
        #expect(a.pollToken != b.pollToken && a.loginSecret != b.loginSecret && a.pollToken != a.loginSecret)
        #expect(t.count == 2)
    }

    @Test("pending → approving → approved → collected once; then the poll finds nothing")
    func approveAndCollect() throws {
        let t = flows
        let s = try start(t, request())
        #expect(t.poll(token: s.pollToken) == .pending)
        #expect(t.pending(login: s.loginSecret) == request())
        #expect(t.beginApproval(login: s.loginSecret) == request())
        // Being approved: not pending (a second approval finds none), the device still waits.
        #expect(t.pending(login: s.loginSecret) == nil)
        #expect(t.beginApproval(login: s.loginSecret) == nil)
        #expect(t.deny(login: s.loginSecret) == nil)
        #expect(t.poll(token: s.pollToken) == .pending)
        #expect(t.finishApproval(login: s.loginSecret, loginName: "phone", appPassword: "pw", passwordID: "id1"))
        #expect(t.finishApproval(login: s.loginSecret, loginName: "x", appPassword: "y", passwordID: "id2") == false)
        #expect(t.pending(login: s.loginSecret) == nil)
        let expected = LoginFlowCredentials(server: "https://192.0.2.1:8443", loginName: "phone", appPassword: "pw")
        #expect(t.poll(token: s.pollToken) == .approved(expected))
        #expect(t.poll(token: s.pollToken) == .none)
        #expect(t.count == 0)
        #expect(t.takeOrphans().isEmpty)
    }

    @Test("an approval abandoned (the password could not be made) leaves the flow pending")
    func abandoned() throws {
        let t = flows
        let s = try start(t, request())
        #expect(t.beginApproval(login: s.loginSecret) != nil)
        t.abandonApproval(login: s.loginSecret)
        #expect(t.pending(login: s.loginSecret) == request())
        #expect(t.poll(token: s.pollToken) == .pending)
    }

    @Test("denied: the flow is gone for the page and the device alike")
    func denied() throws {
        let t = flows
        let s = try start(t, request())
        #expect(t.deny(login: s.loginSecret) == request())
        #expect(t.deny(login: s.loginSecret) == nil)
        #expect(t.pending(login: s.loginSecret) == nil)
        #expect(t.beginApproval(login: s.loginSecret) == nil)
        #expect(t.poll(token: s.pollToken) == .none)
        #expect(t.count == 0)
    }

    @Test("20 minutes after the start a flow is gone in any state; an approved one's password is an orphan")
    func expiry() throws {
        let t = flows
        let pending = try start(t, request())
        let approving = try start(t, request())
        let approved = try start(t, request())
        #expect(t.beginApproval(login: approving.loginSecret) != nil)
        #expect(t.beginApproval(login: approved.loginSecret) != nil)
        #expect(
            t.finishApproval(login: approved.loginSecret, loginName: "late", appPassword: "pw", passwordID: "abc"))
        clock.advance(20 * 60 - 1)
        #expect(t.count == 3)
        #expect(t.poll(token: pending.pollToken) == .pending)
        clock.advance(1)
        #expect(t.count == 0)
        #expect(t.poll(token: pending.pollToken) == .none)
        #expect(t.poll(token: approved.pollToken) == .none)
        #expect(t.pending(login: pending.loginSecret) == nil)
        // The approval under way when it expired is refused: the caller removes its password.
        #expect(
            t.finishApproval(login: approving.loginSecret, loginName: "x", appPassword: "y", passwordID: "d") == false)
        let orphans = t.takeOrphans()
        #expect(orphans.count == 1 && orphans[0].name == "late" && orphans[0].id == "abc")
        #expect(t.takeOrphans().isEmpty)
    }

    @Test("a clock that goes back (it should not: monotonic) ends the flows rather than keeping them")
    func clockBack() throws {
        let t = flows
        let s = try start(t, request())
        clock.advance(-1)
        #expect(t.poll(token: s.pollToken) == .none)
    }

    @Test("replayed, guessed, cut, padded, upper-case and crossed secrets find nothing")
    func guessed() throws {
        let t = flows
        let s = try start(t, request())
        let other = try start(t, request("192.0.2.8"))
        for token in [
            "", "0", String(repeating: "0", count: 128), s.pollToken.uppercased(), String(s.pollToken.dropLast()),
            s.pollToken + "0", " " + s.pollToken, s.loginSecret, String(repeating: "a", count: 10_000),
            String(s.pollToken.prefix(64)),
        ] {
            #expect(t.poll(token: token) == .none, "\(token.prefix(20))")
        }
        for secret in [
            "", s.pollToken, String(repeating: "0", count: 64), s.loginSecret.uppercased(),
            String(s.loginSecret.dropLast()) + (s.loginSecret.hasSuffix("0") ? "1" : "0"),
        ] {
            #expect(t.pending(login: secret) == nil && t.beginApproval(login: secret) == nil)
            #expect(t.deny(login: secret) == nil)
        }
        // One flow's login secret approves that flow only.
        #expect(t.beginApproval(login: other.loginSecret) == request("192.0.2.8"))
        #expect(t.finishApproval(login: other.loginSecret, loginName: "o", appPassword: "p", passwordID: "i"))
        #expect(t.poll(token: s.pollToken) == .pending)
        #expect(t.count == 2)
    }

    @Test(
        "bounds: 8 from one address, 64 in all; a full table makes room by the busiest address's oldest; room comes back as flows end"
    )
    func bounds() throws {
        let t = flows
        var first: [LoginFlows.Started] = []
        for _ in 0..<8 { first.append(try start(t, request("192.0.2.1"))) }
        #expect(t.start(request("192.0.2.1")) == .failure(.fullForAddress))
        for a in 2...8 { for _ in 0..<8 { _ = try start(t, request("192.0.2.\(a)")) } }
        #expect(t.count == 64)
        // Full: a new address's start takes the place of the oldest flow of the busiest address.
        let phone = try start(t, request("192.0.2.99"))
        #expect(t.count == 64)
        #expect(t.poll(token: first[0].pollToken) == .none)
        #expect(t.poll(token: first[1].pollToken) == .pending)
        #expect(t.poll(token: phone.pollToken) == .pending)
        // The busiest address cannot push its own out, and an address waiting once is never pushed out.
        #expect(t.start(request("192.0.2.2")) == .failure(.fullForAddress))
        let g = LoginFlows(limits: LoginFlows.Limits(total: 4, perAddress: 2), clock: { [clock] in clock.now })
        let lone = (1...4).map { try? start(g, request("198.51.100.\($0)")) }
        #expect(g.start(request("198.51.100.9")) == .failure(.full))
        #expect(lone.allSatisfy { $0.map { g.poll(token: $0.pollToken) == .pending } == true })
        #expect(t.deny(login: first[1].loginSecret) != nil)
        #expect(t.start(request("192.0.2.1")) != .failure(.fullForAddress))
        clock.advance(20 * 60)
        #expect(t.count == 0)
        #expect((try? t.start(request("192.0.2.99")).get()) != nil)
    }

    @Test("addresses count under the key the table is given (the web door's: an IPv6 /64 is one)")
    func addressKeys() throws {
        let t = LoginFlows(clock: { [clock] in clock.now }, addressKey: { String($0.prefix(6)) })
        for i in 0..<8 { _ = try start(t, request("2001:0:\(i)")) }
        #expect(t.start(request("2001:0:99")) == .failure(.fullForAddress))
        #expect((try? t.start(request("2001:1:0")).get()) != nil)
    }

    @Test("a device's name: controls and line breaks out, white space folded, cut to 100; none named")
    func deviceNames() {
        #expect(
            LoginFlows.deviceName(userAgent: "Mozilla/5.0 (Android) Nextcloud-android/3.30.0")
                == "Mozilla/5.0 (Android) Nextcloud-android/3.30.0")
        #expect(LoginFlows.deviceName(userAgent: "a\r\nb\u{1B}[31m\u{202E}c\t\t d  ") == "a b [31m c d")
        #expect(LoginFlows.deviceName(userAgent: nil) == "an unnamed device")
        #expect(LoginFlows.deviceName(userAgent: " \u{7} ") == "an unnamed device")
        #expect(LoginFlows.deviceName(userAgent: String(repeating: "é", count: 500)).count == 100)
    }

    @Test("a password's suggested name: the app's product, valid, unique")
    func suggestedNames() {
        let cases: [(String, String)] = [
            ("Mozilla/5.0 (Android) Nextcloud-android/3.30.0", "Nextcloud-android"),
            (
                "Mozilla/5.0 (Linux) mirall/3.13.0 (Nextcloud, debian-6.1 ClientArchitecture: x86_64)",
                "mirall"
            ),
            ("Mozilla/5.0 (Android) ownCloud-android/4.1.0", "ownCloud-android"),
            ("curl/8.5.0", "curl"),
            ("an unnamed device", "an-unnamed-device"),
            ("Anna's phone ✓", "Anna-s-phone"),
            ("...---", "device"),
            ("Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 Chrome/120.0 Safari/537.36", "browser"),
            (String(repeating: "x", count: 300), String(repeating: "x", count: 48)),
        ]
        for (device, expected) in cases {
            let name = LoginFlows.suggestedPasswordName(device: device, taken: [])
            #expect(name == expected, "\(device)")
            #expect(AppPasswords.validName(name), "\(device)")
        }
        #expect(
            LoginFlows.suggestedPasswordName(
                device: "Nextcloud-android/3", taken: ["Nextcloud-android", "Nextcloud-android-2"])
                == "Nextcloud-android-3")
    }

    @Test("the QR login link: the app's nc://login form, each value URL-encoded as its parser decodes it")
    func loginLink() {
        #expect(
            AppPasswords.loginLink(user: "annas-phone", password: "abcde-fghij", server: "https://192.0.2.1:8443")
                == "nc://login/user:annas-phone&password:abcde-fghij&server:https://192.0.2.1:8443")
        #expect(
            AppPasswords.loginLink(user: "a&b c", password: "p+%:", server: "https://[fe80::1]:8443/x?y")
                == "nc://login/user:a%26b%20c&password:p%2B%25%3A&server:https://[fe80::1]:8443/x%3Fy")
    }
}
