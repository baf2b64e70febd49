import PTKLocalSend
import PTKTestTags
import PTKTime
import Testing

@Suite("Wrong guesses: addresses and the receiver's budget", .tags(.unit))
struct ThrottleTests {
    @Test(
        "an IPv6 host is its /64; IPv4 and IPv4-mapped addresses are themselves; other text is its own key",
        arguments: [
            ("192.0.2.7", "192.0.2.7"),
            ("::ffff:192.0.2.7", "192.0.2.7"),
            ("[::ffff:192.0.2.7]", "192.0.2.7"),
            ("2001:db8:1:2:3:4:5:6", "2001:db8:1:2::/64"),
            ("2001:db8:1:2::99", "2001:db8:1:2::/64"),
            ("2001:DB8:0001:0002:ffff::1", "2001:db8:1:2::/64"),
            ("2001:db8::", "2001:db8:0:0::/64"),
            ("::1", "0:0:0:0::/64"),
            ("fe80::1%eth0", "fe80:0:0:0::/64%eth0"),
            ("fe80::1%eth1", "fe80:0:0:0::/64%eth1"),
            ("1:2:3:4:5:6:7:8:9", "1:2:3:4:5:6:7:8:9"),
            ("1::2::3", "1::2::3"),
            ("12345::1", "12345::1"),
            ("tester", "tester"),
        ])
    func keys(_ address: String, _ key: String) {
        #expect(addressKey(address) == key)
    }

    @Test("ten addresses of one /64 share three tries; another /64 has its own")
    func limiterByPrefix() {
        var limiter = TryLimiter(tries: 3, lockout: .seconds(300))
        let now = Instant(seconds: 1000)
        let first = limiter.failed("2001:db8:1:2::1", now: now)
        let second = limiter.failed("2001:db8:1:2::2", now: now)
        let third = limiter.failed("2001:db8:1:2::3", now: now)
        #expect(!first && !second && third)
        for n in 4...10 { #expect(limiter.isLockedOut("2001:db8:1:2::\(n)", now: now)) }
        #expect(!limiter.isLockedOut("2001:db8:1:3::1", now: now))
        limiter.succeeded("2001:db8:1:2::99")
        #expect(!limiter.isLockedOut("2001:db8:1:2::1", now: now))
    }

    @Test(
        "the receiver's budget: ten wrong guesses a minute from anywhere, then none is checked until the oldest is a minute old"
    )
    func budget() {
        var budget = GuessBudget(limit: 10, window: .seconds(60))
        let start = Instant(seconds: 1000)
        var spentAt: [Int] = []
        for n in 0..<10 {
            let spent = budget.isSpent(now: start + .seconds(n))
            #expect(!spent)
            if budget.failed(now: start + .seconds(n)) { spentAt.append(n) }
        }
        #expect(spentAt == [9], "logged once, when spent")
        let at30 = budget.isSpent(now: start + .seconds(30))
        let at59 = budget.isSpent(now: start + .seconds(59))
        #expect(at30 && at59)
        #expect(budget.availableAt() == start + .seconds(60))
        // The first guess leaves the window: one more may be checked.
        let at60 = budget.isSpent(now: start + .seconds(60))
        let spentAgain = budget.failed(now: start + .seconds(60))
        let at61 = budget.isSpent(now: start + .seconds(60.5))
        let at200 = budget.isSpent(now: start + .seconds(200))
        #expect(!at60 && spentAgain && at61 && !at200)
    }
}
