import PTKLocalSend
import PTKTestTags
import PTKTime
import Testing

// LocalSend discovery's decisions (issue 41, finding 2), fed as raw datagrams.

private func at(_ seconds: Double) -> Instant { Instant(seconds: seconds) }

private let phoneCert = String(repeating: "ab", count: 32)
private let ownCert = String(repeating: "C0", count: 32)

/// A datagram as an app sends it; `fields` replace or add keys (raw JSON values), nil removes one.
private func datagram(_ fields: [String: String?] = [:]) -> [UInt8] {
    var all: [String: String?] = [
        "alias": #""Nice Orange""#, "version": #""2.1""#, "deviceModel": "null", "deviceType": #""mobile""#,
        "fingerprint": "\"\(phoneCert)\"", "port": "53317", "protocol": #""https""#, "download": "false",
        "announce": "true",
    ]
    for (k, v) in fields { all[k] = v }
    let body = all.sorted { $0.key < $1.key }.compactMap { k, v in v.map { "\"\(k)\":\($0)" } }.joined(separator: ",")
    return Array("{\(body)}".utf8)
}

/// A scheduler serving lo (127.0.0.1/8) and a LAN address (192.168.1.10/24), unless told otherwise.
private func scheduler(
    _ served: [(String, Int)] = [("127.0.0.1", 8), ("192.168.1.10", 24)],
    limits: DiscoveryLimits = DiscoveryLimits()
) -> DiscoveryScheduler {
    var s = DiscoveryScheduler(ownFingerprint: ownCert.lowercased(), ownPorts: [47850, 53317, 47851], limits: limits)
    s.serve(served.map { ServedAddress(address: DiscoveryIPv4($0.0)!, prefixLength: $0.1) })
    return s
}

private func refusal(_ o: DiscoveryOutcome) -> DiscoveryRefusal? {
    if case .refused(let why) = o { return why }
    return nil
}

private func job(_ o: DiscoveryOutcome) -> RegisterJob? {
    if case .queued(let j) = o { return j }
    return nil
}

@Suite(.tags(.unit)) struct DiscoveryParsingTests {
    @Test func anAppsAnnouncementIsParsedAndItsFingerprintUpperCased() throws {
        let a = try Announcement.parse(datagram())
        #expect(
            a
                == Announcement(
                    alias: "Nice Orange", fingerprint: phoneCert.uppercased(), port: 53317, https: true,
                    asksForAnswers: true))
        // Fields left out: the protocol's defaults (HTTPS, port 53317); `announcement` as older apps send it.
        let old = try Announcement.parse(
            datagram(["protocol": nil, "port": nil, "announce": nil, "announcement": "true"]))
        #expect(old.https && old.port == 53317 && old.asksForAnswers)
        #expect(try !Announcement.parse(datagram(["announce": "false"])).asksForAnswers)
    }

    @Test func notJSONOrWrongTypesAreNotLocalSend() {
        for bad in [
            Array("hello".utf8), [0xFF, 0x00, 0x7B], Array("[1,2]".utf8), Array("{}".utf8), Array("".utf8),
            datagram(["alias": nil]), datagram(["alias": "5"]), datagram(["port": #""53317""#]),
            datagram(["port": "1e30"]),
            datagram(["port": "99999999999999999999"]), datagram(["fingerprint": "12"]),
            datagram(["announce": #""yes""#]),
            Array(String(repeating: "[", count: 3000).utf8),
        ] {
            do {
                let a = try Announcement.parse(bad)
                Issue.record("parsed \(a) from \(String(decoding: bad.prefix(60), as: UTF8.self))")
            } catch {
                guard case .notLocalSend = error else {
                    Issue.record("\(error)")
                    continue
                }
            }
        }
    }

    @Test func anHTTPSFingerprintMustBe64HexDigits() {
        for f in [
            String(repeating: "a", count: 63), String(repeating: "a", count: 65), String(repeating: "g", count: 64),
            String(repeating: "a", count: 62) + " a", String(repeating: "a", count: 3000), "",
        ] {
            #expect(throws: DiscoveryRefusal.badFingerprint) {
                try Announcement.parse(datagram(["fingerprint": "\"\(f)\""]))
            }
        }
        #expect(throws: DiscoveryRefusal.badFingerprint) { try Announcement.parse(datagram(["fingerprint": nil])) }
        #expect(throws: DiscoveryRefusal.badFingerprint) { try Announcement.parse(datagram(["fingerprint": "null"])) }
    }

    @Test func anHTTPFingerprintIsTheAppsRandomStringBounded() throws {
        let uuid = "0f8fad5b-d9cb-469f-a165-70867728950e"
        let a = try Announcement.parse(datagram(["protocol": #""http""#, "fingerprint": "\"\(uuid)\""]))
        #expect(!a.https && a.fingerprint == uuid)
        #expect(try Announcement.parse(datagram(["protocol": #""http""#, "fingerprint": nil])).fingerprint == nil)
        for f in [String(repeating: "x", count: 129), "a b", "a\\nb", ""] {
            #expect(throws: DiscoveryRefusal.badFingerprint) {
                try Announcement.parse(datagram(["protocol": #""http""#, "fingerprint": "\"\(f)\""]))
            }
        }
        #expect(throws: DiscoveryRefusal.badProtocol) { try Announcement.parse(datagram(["protocol": #""ftp""#])) }
        #expect(throws: DiscoveryRefusal.badProtocol) { try Announcement.parse(datagram(["protocol": #""HTTPS""#])) }
    }

    @Test func aliasesAreBoundedAndCleaned() throws {
        #expect(throws: DiscoveryRefusal.badAlias) {
            try Announcement.parse(datagram(["alias": "\"\(String(repeating: "x", count: 1025))\""]))
        }
        let long = try Announcement.parse(datagram(["alias": "\"\(String(repeating: "é", count: 300))\""]))
        #expect(long.alias.unicodeScalars.count == 64 && long.alias.hasSuffix("…"))
        let hostile = try Announcement.parse(
            datagram(["alias": #"" Ph\none\u0085\u009b[2J\u2028x\u202egnp.exe\u0000 ""#]))
        #expect(hostile.alias == "Ph one  [2J xgnp.exe")
        #expect(try Announcement.parse(datagram(["alias": #""\u202e\n""#])).alias == "(no name)")
        #expect(Announcement.cleanAlias("Ana's \"phone\"") == "Ana's \"phone\"")
    }

    @Test func addressesAreDottedDecimalOnly() {
        #expect(DiscoveryIPv4("192.168.1.10")?.description == "192.168.1.10")
        #expect(DiscoveryIPv4("0.0.0.0")?.value == 0)
        for bad in [
            "01.2.3.4", "256.1.1.1", "1.2.3", "1.2.3.4.5", "::1", "1.2.3.4 ", "", "1..2.3", "+1.2.3.4", "0x7f.0.0.1",
        ] {
            #expect(DiscoveryIPv4(bad) == nil, "\(bad)")
        }
        let lan = ServedAddress(address: DiscoveryIPv4("192.168.1.10")!, prefixLength: 24)
        #expect(lan.hasOnLink(DiscoveryIPv4("192.168.1.77")!))
        #expect(!lan.hasOnLink(DiscoveryIPv4("192.168.2.77")!))
        #expect(!lan.hasOnLink(DiscoveryIPv4("192.168.1.0")!), "the network's address")
        #expect(!lan.hasOnLink(DiscoveryIPv4("192.168.1.255")!), "the broadcast address")
        #expect(
            ServedAddress(address: DiscoveryIPv4("10.0.0.1")!, prefixLength: 31).hasOnLink(DiscoveryIPv4("10.0.0.0")!))
        #expect(
            !ServedAddress(address: DiscoveryIPv4("10.0.0.1")!, prefixLength: 32).hasOnLink(DiscoveryIPv4("10.0.0.2")!))
    }
}

@Suite(.tags(.unit)) struct DiscoveryDecisionTests {
    private func decide(_ d: [UInt8], from source: String, _ s: DiscoveryScheduler = scheduler()) throws
        -> DiscoveryDecision
    {
        s.decide(try Announcement.parse(d), from: DiscoveryAddress(source)!)
    }

    @Test func registersOverHTTPSWithTheSourceAddressAndTheAnnouncedPort() throws {
        #expect(
            try decide(datagram(["port": "53999"]), from: "192.168.1.77")
                == .register(host: DiscoveryAddress("192.168.1.77")!, port: 53999, fingerprint: phoneCert.uppercased()))
        // Loopback when ptkd serves loopback (the tests' namespaces).
        #expect(
            try decide(datagram(["port": "53999"]), from: "127.0.0.1")
                == .register(host: DiscoveryAddress("127.0.0.1")!, port: 53999, fingerprint: phoneCert.uppercased()))
        #expect(
            try decide(datagram(), from: "127.0.0.5")
                == .register(host: DiscoveryAddress("127.0.0.5")!, port: 53317, fingerprint: phoneCert.uppercased()))
        // 53317 is every app's default: refused only as ptkd's own port on ptkd's own address.
        #expect(try decide(datagram(), from: "192.168.1.10") == .refuse(.ownPort))
        #expect(try decide(datagram(["port": "47850"]), from: "127.0.0.1") == .refuse(.ownPort))
        #expect(
            try decide(datagram(["port": "47850"]), from: "192.168.1.77")
                == .register(host: DiscoveryAddress("192.168.1.77")!, port: 47850, fingerprint: phoneCert.uppercased()))
    }

    @Test func plainHTTPAndPortsOutOfRangeGetOnlyTheMulticastAnswer() throws {
        guard
            case .answerByMulticast(let why) = try decide(
                datagram(["protocol": #""http""#, "fingerprint": #""r""#]), from: "192.168.1.77")
        else {
            Issue.record("http")
            return
        }
        #expect(why.contains("HTTPS only"))
        for port in ["0", "9", "80", "443", "1023", "65536", "-1", "70000"] {
            guard case .answerByMulticast = try decide(datagram(["port": port]), from: "192.168.1.77") else {
                Issue.record("port \(port)")
                continue
            }
        }
        for port in [1024, 65535] {
            #expect(
                try decide(datagram(["port": "\(port)"]), from: "192.168.1.77")
                    == .register(
                        host: DiscoveryAddress("192.168.1.77")!, port: port, fingerprint: phoneCert.uppercased()))
        }
    }

    @Test func forgedSourcesAreRefused() throws {
        let lanOnly = scheduler([("192.168.1.10", 24)])
        #expect(try decide(datagram(), from: "127.0.0.1", lanOnly) == .refuse(.loopbackFromNetwork))
        #expect(try decide(datagram(), from: "127.9.9.9", lanOnly) == .refuse(.loopbackFromNetwork))
        #expect(try decide(datagram(), from: "10.0.0.5", lanOnly) == .refuse(.sourceNotServed))
        #expect(try decide(datagram(), from: "192.168.1.255", lanOnly) == .refuse(.sourceNotServed))
        #expect(try decide(datagram(), from: "8.8.8.8") == .refuse(.sourceNotServed))
        for bad in ["0.0.0.0", "224.0.0.167", "239.1.1.1", "255.255.255.255", "240.0.0.1"] {
            #expect(try decide(datagram(), from: bad) == .refuse(.badSource), "\(bad)")
        }
        // Nothing served (no interface allowed by --listen yet): nothing is answered.
        #expect(try decide(datagram(), from: "192.168.1.77", scheduler([])) == .refuse(.sourceNotServed))
    }

    @Test func ownAnnouncementsAndAnswersAreNotAnswered() throws {
        #expect(try decide(datagram(["fingerprint": "\"\(ownCert)\""]), from: "192.168.1.10") == .refuse(.own))
        #expect(
            try decide(datagram(["fingerprint": "\"\(ownCert.lowercased())\""]), from: "127.0.0.1") == .refuse(.own))
        #expect(try decide(datagram(["announce": "false"]), from: "192.168.1.77") == .refuse(.notAnnouncement))
    }
}

@Suite(.tags(.unit)) struct DiscoveryLimitTests {
    @Test func hugeDatagramsAreRefusedUnreadAndCounted() {
        var s = scheduler()
        let fingerprint = datagram(["fingerprint": "\"\(String(repeating: "A", count: 65_000))\""])
        let alias = datagram(["alias": "\"\(String(repeating: "x", count: 65_000))\""])
        #expect(refusal(s.receive(fingerprint, from: "192.168.1.77", now: at(0))) == .tooLong)
        #expect(refusal(s.receive(alias, from: "192.168.1.78", now: at(0))) == .tooLong)
        #expect(refusal(s.receive(Array(repeating: 0x20, count: 4097), from: "192.168.1.79", now: at(0))) == .tooLong)
        #expect(s.queue.isEmpty)
        #expect(s.tally == ["invalid": 3])
        // At the limit, a datagram is read (and this one is refused for what it says).
        var padded = datagram()
        padded.insert(contentsOf: Array(repeating: 0x20, count: 4096 - padded.count), at: 1)
        #expect(job(s.receive(padded, from: "192.168.1.80", now: at(0))) != nil)
    }

    @Test func eachSourceIsAnsweredOncePerIntervalWhateverFingerprintItAnnounces() {
        var s = scheduler()
        #expect(job(s.receive(datagram(), from: "192.168.1.77", now: at(0))) != nil)
        // A fresh fingerprint from the same address is the same announcer.
        let fresh = datagram(["fingerprint": "\"\(String(repeating: "12", count: 32))\""])
        #expect(refusal(s.receive(fresh, from: "192.168.1.77", now: at(1))) == .repeated)
        #expect(refusal(s.receive(fresh, from: "192.168.1.77", now: at(4.9))) == .repeated)
        #expect(job(s.receive(datagram(), from: "192.168.1.78", now: at(1))) != nil)
        #expect(job(s.receive(fresh, from: "192.168.1.77", now: at(5.1))) != nil)
        // Repeats are normal (apps announce a few times): not counted for the log.
        #expect(s.tally.isEmpty)
    }

    @Test func aFloodOfFreshSourcesAndFingerprintsQueuesAFewRegistersAndKeepsLittle() {
        var s = scheduler([("10.255.255.254", 8)])
        var queued = 0
        // 10,000 announcements in one second, each from its own address with its own fingerprint.
        for i in 0..<10_000 {
            let hex = String(i, radix: 16)
            let f = hex + String(repeating: "0", count: 64 - hex.count)
            let source = "10.\(i >> 16 & 255).\(i >> 8 & 255).\(i & 255 | 1)"
            if job(s.receive(datagram(["fingerprint": "\"\(f)\""]), from: source, now: at(Double(i) / 10_000))) != nil {
                queued += 1
            }
        }
        // The burst of 6 and 2 more a second.
        #expect(queued <= 8, "\(queued)")
        #expect(s.queue.count <= 8)
        #expect(s.tally["over the rate limit", default: 0] >= 9_900)
        #expect(s.tally.keys.sorted() == ["over the rate limit"])
        // The worker takes the newest first; those that waited over 4 s are dropped and counted.
        let newest = s.queue.last
        #expect(s.next(now: at(1)) == newest)
        #expect(s.next(now: at(10)) == nil)
        #expect(s.queue.isEmpty)
        #expect(s.tally["waited too long", default: 0] >= 1)
    }

    @Test func aFullQueuePushesOutItsOldestAndCountsIt() {
        var limits = DiscoveryLimits()
        limits.registersPerSecond = 1000
        limits.registerBurst = 1000
        limits.queueCapacity = 3
        var s = scheduler(limits: limits)
        for i in 1...5 { _ = s.receive(datagram(), from: "192.168.1.\(i + 20)", now: at(0)) }
        #expect(s.queue.map(\.host.description) == ["192.168.1.23", "192.168.1.24", "192.168.1.25"])
        #expect(s.tally == ["pushed out of the full queue": 2])
        #expect(s.next(now: at(0))?.host.description == "192.168.1.25")
    }

    @Test func aSourceOverTheRateIsNotRememberedSoItsNextAnnouncementGetsThrough() {
        var limits = DiscoveryLimits()
        limits.registerBurst = 1
        limits.registersPerSecond = 1
        var s = scheduler(limits: limits)
        #expect(job(s.receive(datagram(), from: "192.168.1.77", now: at(0))) != nil)
        #expect(refusal(s.receive(datagram(), from: "192.168.1.78", now: at(0.1))) == .overRate)
        #expect(job(s.receive(datagram(), from: "192.168.1.78", now: at(1.2))) != nil)
    }

    @Test func multicastAnswersAreAtMostOneASecond() {
        var s = scheduler()
        let http = datagram(["protocol": #""http""#, "fingerprint": #""r""#])
        guard
            case .answerByMulticast(let alias, let host, let port, _) = s.receive(
                http, from: "192.168.1.77", now: at(0))
        else {
            Issue.record("no answer")
            return
        }
        #expect(alias == "Nice Orange" && host == "192.168.1.77" && port == 53317)
        #expect(refusal(s.receive(http, from: "192.168.1.78", now: at(0.5))) == .answeredAlready)
        guard case .answerByMulticast = s.receive(http, from: "192.168.1.79", now: at(1.5)) else {
            Issue.record("no second answer")
            return
        }
        let tooSoon = s.mayAnswerByMulticast(now: at(2))
        let later = s.mayAnswerByMulticast(now: at(2.6))
        #expect(!tooSoon && later)
        #expect(s.queue.isEmpty)
    }

    @Test func refusalsAreReportedAtOnceThenOncePerInterval() {
        var s = scheduler([("192.168.1.10", 24)])
        #expect(s.report(now: at(0)) == nil)
        _ = s.receive(Array("nope".utf8), from: "192.168.1.77", now: at(0))
        let first = s.report(now: at(0))
        #expect(
            first?.hasPrefix("LocalSend discovery: 1 announcement(s) not answered: 1 invalid") == true,
            "\(first ?? "nil")")
        _ = s.receive(datagram(), from: "127.0.0.1", now: at(1))
        _ = s.receive(datagram(), from: "10.1.1.1", now: at(2))
        _ = s.receive(datagram(), from: "192.168.1.77", now: at(3))
        #expect(s.report(now: at(30)) == nil)
        let second = s.report(now: at(61))
        #expect(
            second?.hasPrefix(
                "LocalSend discovery: 2 announcement(s) not answered in the last 61 s: 2 from a refused source")
                == true, "\(second ?? "nil")")
        #expect(s.report(now: at(200)) == nil)
    }

    @Test func theRecentTableHasAFixedCapacityAndForgetsItsOldest() {
        var t = DiscoveryRecentTable<Int>(capacity: 3, interval: .seconds(5))
        for k in 1...3 { t.record(k, now: at(Double(k))) }
        #expect(t.count == 3 && t.contains(1, now: at(4)))
        t.record(4, now: at(4))
        #expect(t.count == 3)
        #expect(!t.contains(1, now: at(4)) && t.contains(4, now: at(4)))
        // Recording a key again moves it: the oldest is then 3.
        t.record(2, now: at(5))
        t.record(5, now: at(5))
        #expect(t.count == 3 && t.contains(2, now: at(5)) && !t.contains(3, now: at(5)))
        #expect(!t.contains(4, now: at(9.5)), "expired")
        for k in 0..<100_000 { t.record(k, now: at(10)) }
        #expect(t.count == 3)
    }

    @Test func theTokenBucketGivesItsBurstThenItsRate() {
        var b = DiscoveryTokenBucket(rate: 2, burst: 3)
        var taken: [Bool] = []
        for _ in 0..<5 { taken.append(b.take(now: at(0))) }
        taken.append(b.take(now: at(0.4)))
        taken.append(b.take(now: at(0.5)))
        for _ in 0..<5 { taken.append(b.take(now: at(100))) }
        // A clock that goes back gives nothing.
        taken.append(b.take(now: at(50)))
        #expect(taken == [true, true, true, false, false, false, true, true, true, true, false, false, false])
    }
}

// Issue 47: IPv6 sources, as the kernel reports them (a link-local one with its interface).

/// A scheduler serving eth0's link-local address and its global prefix 2001:db8:1::/64, and ::1
/// only when `loopback`; plus 192.168.1.10/24.
private func scheduler6(loopback: Bool = false) -> DiscoveryScheduler {
    var s = DiscoveryScheduler(ownFingerprint: ownCert, ownPorts: [47850, 53317, 47851])
    s.serve(
        [
            ServedAddress(address: DiscoveryAddress("fe80::10%eth0")!, prefixLength: 64),
            ServedAddress(address: DiscoveryAddress("2001:db8:1::10")!, prefixLength: 64),
            ServedAddress(address: DiscoveryAddress("192.168.1.10")!, prefixLength: 24),
        ]
            + (loopback ? [ServedAddress(address: DiscoveryAddress("::1")!, prefixLength: 128)] : []))
    return s
}

@Suite(.tags(.unit)) struct DiscoveryIPv6Tests {
    @Test func ipv6TextIsParsedWithItsZoneAndWrittenBackCanonically() {
        for (text, canonical) in [
            ("fe80::1%eth0", "fe80::1%eth0"), ("FE80:0:0:0:0:0:0:1%wlan0", "fe80::1%wlan0"), ("::1", "::1"),
            ("::", "::"),
            ("2001:db8:0:0:1:0:0:1", "2001:db8::1:0:0:1"), ("2001:db8::", "2001:db8::"),
            ("1:2:3:4:5:6:7:8", "1:2:3:4:5:6:7:8"),
            ("::ffff:192.168.1.77", "::ffff:192.168.1.77"), ("::ffff:c0a8:14d", "::ffff:192.168.1.77"),
            ("1::2:3:4:5:6:7", "1:0:2:3:4:5:6:7"),
        ] {
            #expect(DiscoveryIPv6(text)?.description == canonical, "\(text)")
            #expect(DiscoveryAddress(text)?.description == canonical, "\(text)")
        }
        for bad in [
            "", ":", ":::", "1::2::3", "1:2:3:4:5:6:7:8:9", "1:2:3:4:5:6:7", "12345::", "g::1", "fe80::1%",
            "fe80::1%a b", "fe80::1%eth0%x",
            "[::1]", "::1.2.3", "::ffff:1.2.3.04", "1:2:3:4:5:6:7::8", "fe80::1%" + String(repeating: "x", count: 16),
        ] {
            #expect(DiscoveryIPv6(bad) == nil, "\(bad)")
        }
        #expect(
            DiscoveryIPv6("fe80::1%eth0") != DiscoveryIPv6("fe80::1%eth1"), "a link-local address is one per interface")
        #expect(DiscoveryAddress("fe80::1%eth0")!.withPort(53317) == "[fe80::1%eth0]:53317")
    }

    @Test func onLinkForIPv6IsTheLinkLocalRangeOfThatInterfaceOrAServedPrefix() {
        let ll = ServedAddress(address: DiscoveryAddress("fe80::10%eth0")!, prefixLength: 64)
        #expect(ll.hasOnLink(DiscoveryAddress("fe80::77%eth0")!))
        #expect(
            ll.hasOnLink(DiscoveryAddress("fe80:0:0:1::77%eth0")!),
            "fe80::/10 on that interface, whatever the prefix length")
        #expect(!ll.hasOnLink(DiscoveryAddress("fe80::77%eth1")!), "another interface's link")
        #expect(!ll.hasOnLink(DiscoveryAddress("fe80::77")!), "no interface")
        #expect(!ll.hasOnLink(DiscoveryAddress("2001:db8:1::77")!))
        let global = ServedAddress(address: DiscoveryAddress("2001:db8:1::10")!, prefixLength: 64)
        #expect(global.hasOnLink(DiscoveryAddress("2001:db8:1::77")!))
        #expect(global.hasOnLink(DiscoveryAddress("2001:db8:1:0:ffff:ffff:ffff:ffff")!))
        #expect(!global.hasOnLink(DiscoveryAddress("2001:db8:2::77")!), "off-link")
        #expect(!global.hasOnLink(DiscoveryAddress("2001:db8:1::")!), "the subnet-router anycast address")
        #expect(!global.hasOnLink(DiscoveryAddress("fe80::77%eth0")!))
        #expect(!global.hasOnLink(DiscoveryAddress("192.168.1.77")!), "never across families")
        #expect(
            !ServedAddress(address: DiscoveryAddress("192.168.1.10")!, prefixLength: 24).hasOnLink(
                DiscoveryAddress("::ffff:192.168.1.77")!))
        #expect(
            ServedAddress(address: DiscoveryAddress("2001:db8::1")!, prefixLength: 128).hasOnLink(
                DiscoveryAddress("2001:db8::1")!))
        #expect(ServedAddress(address: DiscoveryAddress("2001:db8::1")!, prefixLength: 999).prefixLength == 128)
    }

    private func decide(_ d: [UInt8], from source: String, _ s: DiscoveryScheduler = scheduler6()) throws
        -> DiscoveryDecision
    {
        s.decide(try Announcement.parse(d), from: DiscoveryAddress(source)!)
    }

    @Test func aLinkLocalAnnouncerIsRegisteredWithOverItsOwnInterface() throws {
        #expect(
            try decide(datagram(["port": "53999"]), from: "fe80::77%eth0")
                == .register(host: DiscoveryAddress("fe80::77%eth0")!, port: 53999, fingerprint: phoneCert.uppercased())
        )
        var s = scheduler6()
        let j = job(s.receive(datagram(["port": "53999"]), from: "fe80::77%eth0", now: at(0)))
        #expect(j?.host.withPort(j?.port ?? 0) == "[fe80::77%eth0]:53999")
        // Link-local on an interface discovery is not on, or without an interface: refused.
        #expect(try decide(datagram(), from: "fe80::77%eth1") == .refuse(.sourceNotServed))
        #expect(try decide(datagram(), from: "fe80::77") == .refuse(.badSource))
    }

    @Test func aGlobalAnnouncerOnAServedPrefixIsRegisteredWithAndOneOffLinkIsNot() throws {
        #expect(
            try decide(datagram(), from: "2001:db8:1::77")
                == .register(
                    host: DiscoveryAddress("2001:db8:1::77")!, port: 53317, fingerprint: phoneCert.uppercased()))
        #expect(try decide(datagram(), from: "2001:db8:2::77") == .refuse(.sourceNotServed))
        #expect(try decide(datagram(), from: "2606:4700::1111") == .refuse(.sourceNotServed))
        // ptkd's own address and port: it would call itself.
        #expect(try decide(datagram(), from: "fe80::10%eth0") == .refuse(.ownPort))
        #expect(try decide(datagram(), from: "2001:db8:1::10") == .refuse(.ownPort))
        // HTTP is answered by multicast there too.
        guard
            case .answerByMulticast = try decide(
                datagram(["protocol": #""http""#, "fingerprint": #""r""#]), from: "fe80::77%eth0")
        else {
            Issue.record("http")
            return
        }
    }

    @Test func loopbackV4MappedAndOtherNonDeviceIPv6SourcesAreRefused() throws {
        #expect(try decide(datagram(), from: "::1") == .refuse(.loopbackFromNetwork))
        #expect(
            try decide(datagram(), from: "::1", scheduler()) == .refuse(.loopbackFromNetwork),
            "an IPv4 loopback served is not ::1")
        #expect(
            try decide(datagram(["port": "53999"]), from: "::1", scheduler6(loopback: true))
                == .register(host: DiscoveryAddress("::1")!, port: 53999, fingerprint: phoneCert.uppercased()))
        // An IPv4 address in IPv6 form (which the IPv6-only sockets never see from a real IPv4
        // sender): refused, even when the IPv4 address is on a served network.
        for bad in [
            "::ffff:192.168.1.77", "::ffff:127.0.0.1", "::192.168.1.77", "::", "ff02::1", "ff12::fd3a:e420%eth0",
        ] {
            #expect(try decide(datagram(), from: bad) == .refuse(.badSource), "\(bad)")
        }
        var s = scheduler6()
        #expect(refusal(s.receive(datagram(), from: "::ffff:192.168.1.77", now: at(0))) == .badSource)
        #expect(
            refusal(s.receive(datagram(), from: "[fe80::77%eth0]", now: at(0))) == .badSource, "not the kernel's form")
    }

    @Test func limitsHoldPerIPv6SourceAndTheSameAddressOnTwoInterfacesIsTwoSources() {
        var s = scheduler6()
        s.serve(s.served + [ServedAddress(address: DiscoveryAddress("fe80::10%eth1")!, prefixLength: 64)])
        #expect(job(s.receive(datagram(), from: "fe80::77%eth0", now: at(0))) != nil)
        #expect(
            refusal(
                s.receive(
                    datagram(["fingerprint": "\"\(String(repeating: "12", count: 32))\""]), from: "fe80::77%eth0",
                    now: at(1))) == .repeated)
        #expect(job(s.receive(datagram(), from: "fe80::77%eth1", now: at(1))) != nil)
        #expect(job(s.receive(datagram(), from: "fe80::77%eth0", now: at(6))) != nil)
    }
}

@Suite("Discovery: only the networks of the interface an announcement came in on (third audit)", .tags(.unit))
struct DiscoveryArrivalTests {
    @Test(
        "a source in another interface's prefix is on another link: refused there, answered on its own interface",
        arguments: [
            ("10.1.0.99", "a", false), ("10.1.0.99", "c", true), ("10.0.0.99", "a", true), ("10.0.0.99", "c", false),
            ("2001:db8:c::99", "a", false), ("2001:db8:c::99", "c", true), ("2001:db8:c::1", "a", false),
        ])
    func arrivalInterface(_ source: String, _ interface: String, _ registers: Bool) throws {
        var s = DiscoveryScheduler(ownFingerprint: ownCert, ownPorts: [47850, 53317, 47851])
        s.serve([
            ServedAddress(address: DiscoveryAddress("10.0.0.1")!, prefixLength: 24, interface: "a"),
            ServedAddress(address: DiscoveryAddress("10.1.0.1")!, prefixLength: 24, interface: "c"),
            ServedAddress(address: DiscoveryAddress("2001:db8:a::1")!, prefixLength: 64, interface: "a"),
            ServedAddress(address: DiscoveryAddress("2001:db8:c::1")!, prefixLength: 64, interface: "c"),
        ])
        let decision = s.decide(
            try Announcement.parse(datagram(["port": "53999"])), from: DiscoveryAddress(source)!, arrivedOn: interface)
        if registers {
            #expect(
                decision == .register(host: DiscoveryAddress(source)!, port: 53999, fingerprint: phoneCert.uppercased())
            )
        } else {
            #expect(decision == .refuse(.sourceNotServed))
        }
    }
}
