import PTKProtocol
import PTKSystem
import PTKTestSupport
import PTKTestTags
import PTKVocabulary
import Testing

@testable import PTKTrust

func device(_ n: UInt8) -> DeviceID { DeviceID(sha256: Array(repeating: n, count: 32)) }

@Suite("The trust list and the pending senders", .tags(.unit))
struct TrustStoreTests {
    @Test(
        "the trust list reads IDs in any case, with dashes or without, skips comments and junk, keeps names with spaces"
    )
    func parse() {
        let a = device(1)
        let b = device(2)
        let text =
            "# comment\n\n\(a.description.lowercased())  living room laptop\n  \(b.compact)\tphone\nnot-an-id name\n\(a.compact.prefix(10)) short\n"
        #expect(
            TrustStore.parseTrustList(text) == [
                TrustedSender(id: a, name: "living room laptop"), TrustedSender(id: b, name: "phone"),
            ])
    }

    @Test(
        "a name that starts with a combining mark reads back as written: the separator before it is still a separator (found by the trust fuzz target)"
    )
    func combiningMarkAfterSeparator() {
        let a = device(1)
        let b = device(2)
        let list = [TrustedSender(id: a, name: "\u{05AB}accent first"), TrustedSender(id: b, name: "\u{0301}")]
        let written = list.map { "\($0.id) \($0.name)\n" }.joined()
        #expect(TrustStore.parseTrustList(written) == list)
        let pending = TrustStore.parsePending(
            "\(a.compact)\t1\t1764495660\t1764495700\t\u{0301}10.0.0.1:5\t\u{05AB}name\n")
        #expect(pending.map(\.name) == ["\u{05AB}name"])
        #expect(pending.map(\.address) == ["\u{0301}10.0.0.1:5"])
    }

    @Test(
        "a pending line whose times are not times (beyond what a date can hold) is skipped, not a crash (found by the trust fuzz target)"
    )
    func pendingTimesOutOfRange() {
        let a = device(1)
        let b = device(2)
        let text =
            "\(a.compact)\t2\t666666666266665660\t17495700\t10.0.0.1:5\tfar\n\(b.compact)\t1\t1764495660\t1764495700\t10.0.0.2:5\tnear\n"
        let pending = TrustStore.parsePending(text)
        #expect(pending.map(\.name) == ["near"])
        #expect(pending.first?.lastAttempt == WallTime(seconds: 1_764_495_700))
        #expect(WallTime(seconds: .max).milliseconds == .max && WallTime(seconds: .min).milliseconds == .min)
        #expect(WallTime(exactSeconds: Int64.max / 1000 + 1) == nil)
    }

    @Test("a pending line with an attempt count or times out of range is skipped; a count at the top stays there")
    func pendingNumbersOutOfRange() throws {
        let a = device(1)
        let b = device(2)
        let c = device(3)
        let text =
            "\(a.compact)\t9223372036854775807\t1764495660\t1764495700\t10.0.0.1:5\tcount\n"
            + "\(b.compact)\t1\t-9223372036854775808\t1764495700\t10.0.0.2:5\tfirst\n"
            + "\(c.compact)\t2147483647\t1764495660\t1764495700\t10.0.0.3:5\ttop\n"
        #expect(TrustStore.parsePending(text).map(\.name) == ["top"])
        let dir = makeTemporaryDirectory("ptk-trust")
        defer { removeTree(dir) }
        writeFile(dir + "/pending-senders", Array(text.utf8))
        let store = TrustStore(directory: dir)
        try store.recordAttempt(id: c, name: "top", address: "10.0.0.3:6", at: WallTime(seconds: 1_764_495_800))
        #expect(try store.pending().first { $0.id == .device(c) }?.attempts == Int(Int32.max))
    }

    @Test("refused attempts are recorded once per device and counted; allow by a unique prefix moves it to the list")
    func pendingThenAllow() throws {
        let dir = makeTemporaryDirectory("ptk-trust")
        defer { removeTree(dir) }
        let store = TrustStore(directory: dir)
        let a = device(1)
        let b = device(9)
        try store.recordAttempt(id: a, name: "alice", address: "192.0.2.1:4000", at: WallTime(seconds: 100))
        try store.recordAttempt(id: b, name: "bob\tthe\nsecond", address: "192.0.2.2:5000", at: WallTime(seconds: 150))
        try store.recordAttempt(id: a, name: "alice2", address: "192.0.2.3:4001", at: WallTime(seconds: 200))
        let pending = try store.pending()
        #expect(
            pending == [
                PendingSender(
                    id: a, name: "alice2", address: "192.0.2.3:4001", firstAttempt: WallTime(seconds: 100),
                    lastAttempt: WallTime(seconds: 200), attempts: 2),
                PendingSender(
                    id: b, name: "bob the second", address: "192.0.2.2:5000", firstAttempt: WallTime(seconds: 150),
                    lastAttempt: WallTime(seconds: 150), attempts: 1),
            ])
        #expect(!store.isTrusted(a))
        let entry = try store.allow(String(a.compact.prefix(4)).lowercased())
        #expect(entry == TrustedSender(id: a, name: "alice2"))
        #expect(store.isTrusted(a))
        #expect(try store.pending().map(\.id) == [.device(b)])
        // A given name wins; allowing again renames.
        #expect(try store.allow(a.description, name: "Alice's laptop").name == "Alice's laptop")
        #expect(store.trusted() == [TrustedSender(id: a, name: "Alice's laptop")])
    }

    @Test("a prefix that matches nothing, or two devices, or is not base32, is refused with a clear message")
    func badPrefixes() throws {
        let dir = makeTemporaryDirectory("ptk-trust")
        defer { removeTree(dir) }
        let store = TrustStore(directory: dir)
        // Two IDs that share their first characters: digests 0x00.. and 0x01.. both start with "AA".
        let a = device(0)
        let b = DeviceID(sha256: [0, 1] + Array(repeating: 0, count: 30))
        try store.recordAttempt(id: a, name: "a", address: "x")
        try store.recordAttempt(id: b, name: "b", address: "y")
        // Each a refusal of the request (ptk exits 1), not a file's failure.
        let refused: (TrustError) -> Bool = { $0.kind == .refused }
        #expect { try store.allow("AA") } throws: { refused($0 as! TrustError) }
        #expect { try store.allow("77") } throws: { refused($0 as! TrustError) }
        #expect { try store.allow("0") } throws: { refused($0 as! TrustError) }
        #expect { try store.deny("ZZZ") } throws: { refused($0 as! TrustError) }
        // pending, not listed
        #expect { try store.remove(String(a.compact.prefix(6))) } throws: { refused($0 as! TrustError) }
        #expect(store.trusted().isEmpty)
    }

    @Test("a state file that cannot be read or written is a TrustError of kind .files saying what the file layer said")
    func fileFailures() throws {
        let dir = makeTemporaryDirectory("ptk-trust")
        defer { removeTree(dir) }
        writeFile(dir + "/state", Array("not a directory\n".utf8))
        let store = TrustStore(directory: dir + "/state")
        do {
            _ = try store.allow(device(1).compact, name: "x")
            Issue.record("allowed in a file")
        } catch {
            #expect(error.kind == .files)
            #expect(error.description.contains(dir + "/state"), "\(error)")
        }
        do {
            _ = try store.pending()
            Issue.record("pending read from a file")
        } catch {
            #expect(error.kind == .files)
        }
    }

    @Test("remove and deny drop exactly one entry")
    func removeAndDeny() throws {
        let dir = makeTemporaryDirectory("ptk-trust")
        defer { removeTree(dir) }
        let store = TrustStore(directory: dir)
        let a = device(3)
        let b = device(4)
        try store.recordAttempt(id: a, name: "a", address: "x")
        try store.recordAttempt(id: b, name: "b", address: "y")
        try store.allow(a.compact)
        #expect(try store.deny(b.compact).id == .device(b))
        #expect(try store.pending().isEmpty)
        #expect(try store.remove(String(a.compact.prefix(3))).id == .device(a))
        #expect(store.trusted().isEmpty)
    }

    @Test("the trust list is re-read when the file changes, also when edited by hand; a deleted file trusts nobody")
    func reread() throws {
        let dir = makeTemporaryDirectory("ptk-trust")
        defer { removeTree(dir) }
        let store = TrustStore(directory: dir)
        let a = device(5)
        let b = device(6)
        #expect(!store.isTrusted(a))
        writeFile(dir + "/trusted-senders", Array("\(a) a\n".utf8))
        #expect(store.isTrusted(a))
        // Same size, written again at once: the inode (atomic replace) or time changes.
        try writeFileAtomically(dir + "/trusted-senders", Array("\(b) a\n".utf8), mode: 0o644)
        #expect(!store.isTrusted(a) && store.isTrusted(b))
        try removeFile(dir + "/trusted-senders")
        #expect(!store.isTrusted(b))
    }

    @Test("two processes' worth of concurrent writers lose no attempt (the lock file)")
    func concurrent() throws {
        let dir = makeTemporaryDirectory("ptk-trust")
        defer { removeTree(dir) }
        let done = Semaphore()
        for t in 0..<4 {
            try startThread(name: "test") {
                // Separate stores, as ptkd and ptk are separate processes.
                let store = TrustStore(directory: dir)
                for i in 0..<10 { try? store.recordAttempt(id: device(UInt8(t * 10 + i)), name: "n", address: "a") }
                done.signal()
            }
        }
        for _ in 0..<4 { done.wait() }
        // Each store writes what waited within a second of its last write.
        #expect(eventually(5) { (try? TrustStore(directory: dir).pending().count) == 40 })
    }

    @Test(
        "a refused device's name keeps no terminal control: C1 (CSI, NEL), line separators and bidi overrides become spaces"
    )
    func pendingNameControls() throws {
        let dir = makeTemporaryDirectory("ptk-trust")
        defer { removeTree(dir) }
        let store = TrustStore(directory: dir)
        try store.recordAttempt(
            id: device(3), name: "Phone\u{9B}2J\u{9B}8m\u{202E}gnp.exe\u{2028}\u{85}tail", address: "192.0.2.1:1")
        let name = try #require(try store.pending().first?.name)
        #expect(name == "Phone 2J 8m gnp.exe  tail")
    }

    @Test(
        "1,500 refused devices in a row: the pending list keeps the newest 100 and is rewritten at most once a second")
    func pendingBounded() throws {
        let dir = makeTemporaryDirectory("ptk-trust")
        defer { removeTree(dir) }
        let store = TrustStore(directory: dir)
        let started = Instant.now
        for i in 0..<1500 {
            var bytes = Array(repeating: UInt8(i & 0xFF), count: 32)
            bytes[0] = UInt8(i >> 8)
            try store.recordAttempt(
                id: DeviceID(sha256: bytes), name: "d\(i)" + String(repeating: "x", count: 200), address: "192.0.2.1:1",
                at: WallTime(seconds: Int64(1_700_000_000 + i)))
        }
        let elapsed = (Instant.now - started).seconds
        #expect(store.pendingWrites <= Int(elapsed) + 1, "\(store.pendingWrites) rewrites in \(elapsed) s")
        // What waited is written within the second.
        #expect(eventually(5) { (try? TrustStore(directory: dir).pending().count) == TrustStore.pendingLimit })
        let pending = try TrustStore(directory: dir).pending()
        #expect(pending.map(\.name).contains("d1499" + String(repeating: "x", count: 59)), "names are cut to 64")
        #expect(!pending.map(\.name).contains { $0.hasPrefix("d1399") }, "the oldest went")
        #expect((readFile(dir + "/pending-senders") ?? []).count < 20_000)
    }

    @Test(
        "LocalSend fingerprints sit on the same lists: parsed in any case and with colons, kept apart from device IDs, allowed by prefix"
    )
    func localSendFingerprints() throws {
        let hex = String(repeating: "ab", count: 32)
        let upper = hex.uppercased()
        #expect(SenderID(parsing: hex) == .localSend(upper))
        #expect(
            SenderID(
                parsing: stride(from: 0, to: 64, by: 2).map { String(hex.dropFirst($0).prefix(2)) }.joined(
                    separator: ":")) == .localSend(upper))
        #expect(SenderID(parsing: String(hex.prefix(63))) == nil)
        #expect(SenderID(parsing: device(1).description) == .device(device(1)))
        #expect(SenderID.localSend(upper).kind == "LocalSend")
        #expect(SenderID.device(device(1)).kind.trimmingSpaces == "ptk")
        let text = "\(hex) my phone\n\(device(1)) laptop\n"
        #expect(
            TrustStore.parseTrustList(text) == [
                TrustedSender(id: .localSend(upper), name: "my phone"), TrustedSender(id: device(1), name: "laptop"),
            ])

        let dir = makeTemporaryDirectory("ptk-trust")
        defer { removeTree(dir) }
        let store = TrustStore(directory: dir)
        try store.recordAttempt(
            id: .localSend(upper), name: "Pixel", address: "192.0.2.9:5000", at: WallTime(seconds: 10))
        #expect(try store.pending().map(\.id) == [.localSend(upper)])
        let entry = try store.allow("abab")
        #expect(entry == TrustedSender(id: .localSend(upper), name: "Pixel"))
        #expect(store.isTrusted(.localSend(upper)))
        #expect(!store.isTrusted(device(1)))
        // The file keeps the fingerprint as it was written, and a fresh store reads it back.
        #expect(TrustStore(directory: dir).trusted() == [entry])
        #expect(throws: TrustError.self) { try store.allow("xyz!") }
    }
}
