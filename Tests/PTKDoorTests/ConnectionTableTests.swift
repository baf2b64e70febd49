import PTKSystem
import PTKTestTags
import Testing

@testable import PTKDoor

@Suite("Connection slots: who may displace whom", .tags(.unit))
struct ConnectionTableTests {
    let t0 = Instant.now

    @Test(
        "within the limits every connection is admitted; over an address's own limit it is refused; each IPv6 address of a /64 is its own (a home's devices share one), an IPv4-mapped one is its IPv4 address"
    )
    func limits() {
        var table = ConnectionTable(capacity: 10, perAddress: 3)
        for id in 1...3 {
            do {
                let d = table.admit(id, from: "2001:db8::1", now: t0)
                #expect(d == .admit)
            }
        }
        do {
            let d = table.admit(4, from: "2001:db8::1", now: t0)
            #expect(d == .addressFull)
        }
        do {
            let d = table.admit(5, from: "2001:db8::2", now: t0)
            #expect(d == .admit)
        }
        #expect(table.count == 4)
        #expect(table.count(of: "2001:db8::1") == 3)
        do {
            let d = table.admit(6, from: "::ffff:192.0.2.1", now: t0)
            #expect(d == .admit)
        }
        #expect(table.count(of: "192.0.2.1") == 1)
        table.remove(1)
        do {
            let d = table.admit(7, from: "2001:db8::1", now: t0)
            #expect(d == .admit)
        }
    }

    @Test(
        "full with one connection from each of many addresses: a newcomer holding none displaces the oldest that has not worked for 2 s, never a working one"
    )
    func onePerAddressDisplaced() {
        var table = ConnectionTable(capacity: 4, perAddress: 4)
        for id in 1...4 {
            do {
                let d = table.admit(id, from: "10.0.0.\(id)", now: t0 + .milliseconds(Double(id)))
                #expect(d == .admit)
            }
        }
        table.set(1, .working, now: t0)
        // Too fresh: all were opened within the last 2 s.
        do {
            let d = table.admit(10, from: "10.0.1.1", now: t0 + .seconds(1))
            #expect(d == .full)
        }
        do {
            let d = table.admit(11, from: "10.0.1.1", now: t0 + .seconds(3))
            #expect(d == .admitDisplacing(victim: 2))
        }
        // The newcomer's address now holds one: it displaces no more on equal terms.
        do {
            let d = table.admit(12, from: "10.0.1.1", now: t0 + .seconds(4))
            #expect(d == .full)
        }
        #expect(table.entries[1] != nil)
    }

    @Test(
        "full of connections that never finish their handshake: a newcomer from a third address displaces the oldest of the address holding most"
    )
    func handshakeFloodDisplaced() {
        var table = ConnectionTable(capacity: 12, perAddress: 8)
        var id = 0
        for n in 0..<6 {
            id += 1
            do {
                let d = table.admit(id, from: "10.0.0.2", now: t0 + .milliseconds(n))
                #expect(d == .admit)
            }
            id += 1
            do {
                let d = table.admit(id, from: "10.0.0.3", now: t0 + .milliseconds(n))
                #expect(d == .admit)
            }
        }
        // 10.0.0.2's first (id 1) and 10.0.0.3's first (id 2) are the oldest, and their addresses hold as many: one of them goes.
        do {
            let d = table.admit(100, from: "10.0.0.4", now: t0 + .seconds(1))
            #expect(d == .admitDisplacing(victim: 1) || d == .admitDisplacing(victim: 2))
        }
        // The holders coming back hold nearly as many as each other: refused, never in the newcomer's place.
        for n in 0..<40 {
            let decision = table.admit(
                200 + n, from: n % 2 == 0 ? "10.0.0.2" : "10.0.0.3", now: t0 + .seconds(Double(2 + n)))
            #expect(decision == .full || decision == .addressFull, "\(decision)")
        }
        #expect(table.entries[100] != nil)
    }

    @Test("a working connection is never displaced: a newcomer is refused when all others work")
    func workingStays() {
        var table = ConnectionTable(capacity: 4, perAddress: 4)
        for id in 1...4 {
            do {
                let d = table.admit(id, from: "10.0.0.2", now: t0)
                #expect(d == .admit)
            }
            table.set(id, .working, now: t0)
        }
        do {
            let d = table.admit(5, from: "10.0.0.3", now: t0)
            #expect(d == .full)
        }
        // One goes idle (keep-alive): it may be displaced now.
        table.set(3, .idle, now: t0 + .seconds(1))
        do {
            let d = table.admit(6, from: "10.0.0.3", now: t0 + .seconds(2))
            #expect(d == .admitDisplacing(victim: 3))
        }
    }

    @Test("no displacing between addresses holding nearly as many: the newcomer must hold at least two fewer")
    func fairShareOnly() {
        var table = ConnectionTable(capacity: 4, perAddress: 4)
        for (id, host) in [(1, "a"), (2, "b"), (3, "c"), (4, "d")] {
            do {
                let d = table.admit(id, from: host, now: t0)
                #expect(d == .admit)
            }
        }
        do {
            let d = table.admit(5, from: "e", now: t0)
            #expect(d == .full)
        }
        do {
            let d = table.admit(6, from: "a", now: t0)
            #expect(d == .full)
        }
    }

    @Test(
        "the stage timestamps: the one idle or unproven longest goes first; a displaced connection's release changes nothing"
    )
    func oldestPreemptible() {
        var table = ConnectionTable(capacity: 3, perAddress: 3)
        for id in 1...3 { _ = table.admit(id, from: "a", now: t0) }
        table.set(1, .unproven, now: t0 + .seconds(5))
        table.set(2, .idle, now: t0 + .seconds(3))
        table.set(3, .working, now: t0 + .seconds(1))
        do {
            let d = table.admit(4, from: "b", now: t0 + .seconds(6))
            #expect(d == .admitDisplacing(victim: 2))
        }
        let removed = table.remove(2)
        #expect(!removed)
        #expect(table.count == 3)
        #expect(table.count(of: "a") == 2)
    }
}

@Suite("Connection slots: an app password's share (issue 54)", .tags(.unit))
struct PasswordShareSlotTests {
    let t0 = Instant.now

    @Test(
        "an owner may have perAddress connections working, whatever their addresses; the next claim is refused and its connection may be displaced again"
    )
    func share() {
        var table = ConnectionTable(capacity: 20, perAddress: 2)
        for id in 1...6 {
            do {
                let d = table.admit(id, from: "10.0.0.\(id)", now: t0)
                #expect(d == .admit)
            }
        }
        do {
            let c = table.claim(1, owner: "app password a", now: t0)
            #expect(c)
        }
        do {
            let c = table.claim(2, owner: "app password a", now: t0)
            #expect(c)
        }
        do {
            let c = table.claim(3, owner: "app password a", now: t0)
            #expect(!c)
        }
        #expect(table.entries[3]?.stage == .unproven)
        // Another owner has its own share; a connection claiming again for its owner is not counted twice.
        do {
            let c = table.claim(4, owner: "app password b", now: t0)
            #expect(c)
        }
        do {
            let c = table.claim(1, owner: "app password a", now: t0)
            #expect(c)
        }
        // Between requests a connection is idle and not counted; a connection gone gives its share back.
        table.set(1, .idle, now: t0)
        do {
            let c = table.claim(3, owner: "app password a", now: t0)
            #expect(c)
        }
        do {
            let c = table.claim(5, owner: "app password a", now: t0)
            #expect(!c)
        }
        table.remove(2)
        do {
            let c = table.claim(5, owner: "app password a", now: t0)
            #expect(c)
        }
        // A displaced (gone) connection claims nothing and is not refused.
        do {
            let c = table.claim(99, owner: "app password a", now: t0)
            #expect(c)
        }
    }

    @Test(
        "one owner's connections from many addresses: a newcomer from elsewhere displaces a refused one, never one of its share that works"
    )
    func refusedAreDisplaced() {
        var table = ConnectionTable(capacity: 6, perAddress: 2)
        for id in 1...6 {
            do {
                let d = table.admit(id, from: "10.0.0.\((id + 1) / 2)", now: t0)
                #expect(d == .admit)
            }
        }
        for id in 1...6 { table.set(id, .working, now: t0) }
        do {
            let c1 = table.claim(1, owner: "o", now: t0)
            let c2 = table.claim(2, owner: "o", now: t0)
            #expect(c1 && c2)
        }
        for id in 3...6 {
            do {
                let c = table.claim(id, owner: "o", now: t0)
                #expect(!c)
            }
        }
        do {
            let d = table.admit(10, from: "10.0.9.9", now: t0 + .seconds(3))
            #expect(
                d == .admitDisplacing(victim: 3) || d == .admitDisplacing(victim: 4) || d == .admitDisplacing(victim: 5)
                    || d == .admitDisplacing(victim: 6), "\(d)")
        }
        #expect(table.entries[1]?.stage == .working && table.entries[2]?.stage == .working)
    }
}
