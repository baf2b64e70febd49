import Glibc
import PTKDigest
import PTKSystem
import PTKTestSupport
import PTKTestTags
import Testing

@testable import PTKTrust

@Suite("App passwords: stored as SHA-256, verified at once after every change", .tags(.unit))
struct AppPasswordsTests {
    let now: Int64 = 1_800_000_000

    /// A store in a new temporary state directory, and that directory (remove it after).
    func store() -> (AppPasswords, String) {
        let dir = makeTemporaryDirectory("ptk-app")
        return (AppPasswords(directory: dir + "/web"), dir)
    }

    @Test(
        "add, list, verify: each password verifies as its own name only; a wrong one, or a name another way, does not")
    func addListVerify() throws {
        let (s, dir) = store()
        defer { removeTree(dir) }
        #expect(try s.list().isEmpty)
        let (phone, p1) = try s.add(name: "Kate-phone", access: .upload, now: now)
        let (desk, p2) = try s.add(name: "desk.top_2", access: .full, now: now + 5)
        #expect(
            phone.name == "Kate-phone" && phone.access == .upload && phone.created == now && phone.lastUsed == nil
                && phone.lastAddress == nil)
        #expect(
            phone.id.utf8.count == 16 && phone.id.utf8.allSatisfy { AppPasswordFile.isLowerHex($0) }
                && phone.id != desk.id)
        #expect(try s.list() == [phone, desk])
        #expect(s.verify(name: "Kate-phone", password: p1) == phone)
        #expect(s.verify(name: "desk.top_2", password: p2) == desk)
        #expect(s.verify(name: "Kate-phone", password: p2) == nil)
        #expect(s.verify(name: "desk.top_2", password: p1) == nil)
        #expect(s.verify(name: "kate-phone", password: p1) == nil)
        // U+212A KELVIN SIGN is canonically "K" (Swift's == says equal): names are compared as bytes.
        #expect(s.verify(name: "\u{212A}ate-phone", password: p1) == nil)
        #expect(s.verify(name: "Kate-phone", password: String(p1.dropLast())) == nil)
        #expect(s.verify(name: "Kate-phone", password: p1 + " ") == nil)
        #expect(s.verify(name: "Kate-phone", password: "") == nil)
        #expect(s.verify(name: "", password: "") == nil)
        // A phone's keyboard capitalising the first letter (or caps lock) still gets in.
        #expect(s.verify(name: "Kate-phone", password: p1.prefix(1).uppercased() + p1.dropFirst()) == phone)
        #expect(s.verify(name: "Kate-phone", password: p1.uppercased()) == phone)
        // Another instance (ptkd) reads the same file.
        #expect(AppPasswords(directory: dir + "/web").verify(name: "Kate-phone", password: p1) == phone)
    }

    @Test(
        "a removal by another instance (root's ptk) stops the password on the very next check, within the same second")
    func removedStopsAtOnce() throws {
        let (daemon, dir) = store()
        defer { removeTree(dir) }
        let admin = AppPasswords(directory: dir + "/web")
        let (_, keep) = try admin.add(name: "keep", access: .upload, now: now)
        let (_, gone) = try admin.add(name: "gone", access: .upload, now: now)
        for _ in 0..<3 {
            #expect(daemon.verify(name: "gone", password: gone) != nil)
            #expect(daemon.verify(name: "keep", password: keep) != nil)
        }
        #expect(try admin.remove(name: "gone"))
        #expect(daemon.verify(name: "gone", password: gone) == nil)
        #expect(daemon.verify(name: "keep", password: keep) != nil)
        #expect(!(try admin.remove(name: "gone")))
        #expect(!(try admin.remove(name: "never")))
        // A new password under the old name: a new id and password; the old one stays dead.
        let (again, new) = try admin.add(name: "gone", access: .full, now: now)
        #expect(daemon.verify(name: "gone", password: gone) == nil)
        #expect(daemon.verify(name: "gone", password: new) == again)
        // The file removed by hand: nothing verifies.
        try removeFile(admin.path)
        #expect(daemon.verify(name: "keep", password: keep) == nil)
    }

    @Test(
        "names: 1 to 64 of A-Z a-z 0-9 . _ -, not starting with . or -; add refuses others and names in use (TrustError)",
        arguments: [
            ("a", true), ("Anna.s-phone_2", true), ("9", true), (String(repeating: "x", count: 64), true), ("_x", true),
            ("", false), (String(repeating: "x", count: 65), false), (".hidden", false), ("-flag", false),
            ("a:b", false),
            ("a b", false), ("a\tb", false), ("a/b", false), ("é", false), ("\u{212A}", false), ("a\n", false),
        ])
    func names(_ name: String, _ valid: Bool) throws {
        #expect(AppPasswords.validName(name) == valid)
        let (s, dir) = store()
        defer { removeTree(dir) }
        if valid {
            _ = try s.add(name: name, access: .upload, now: now)
            #expect(throws: TrustError.self) { try s.add(name: name, access: .full, now: now) }
            #expect(try s.list().count == 1)
        } else {
            #expect(throws: TrustError.self) { try s.add(name: name, access: .upload, now: now) }
            #expect(try s.list().isEmpty)
        }
    }

    @Test("a name in use is refused with a message naming it and what to do")
    func duplicateMessage() throws {
        let (s, dir) = store()
        defer { removeTree(dir) }
        _ = try s.add(name: "phone", access: .upload, now: now)
        #expect(
            throws: TrustError(
                "an app password named 'phone' exists already: choose another name, or remove it first (ptk app-password remove phone)"
            )
        ) {
            try s.add(name: "phone", access: .upload, now: now)
        }
    }

    @Test("generated passwords: 6 groups of 5 lower-case letters, no two alike in 10,000, letters evenly spread")
    func generated() {
        var seen = Set<String>()
        var counts = [Int](repeating: 0, count: 26)
        for _ in 0..<10_000 {
            let p = AppPasswords.generatePassword()
            let groups = p.split(separator: "-", omittingEmptySubsequences: false)
            #expect(p.utf8.count == 35 && groups.count == 6 && groups.allSatisfy { $0.utf8.count == 5 }, "\(p)")
            #expect(p.utf8.allSatisfy { (0x61...0x7A).contains($0) || $0 == UInt8(ascii: "-") }, "\(p)")
            for c in p.utf8 where c != UInt8(ascii: "-") { counts[Int(c - 0x61)] += 1 }
            seen.insert(p)
        }
        #expect(seen.count == 10_000)
        // 300,000 letters, 11,538 of each expected. χ² over 25 degrees of freedom passes 80 with a
        // chance of about 1e-7; the bias of b % 26 over all of 0...255 (a-v drawn 10/9 as often as
        // w-z) would give about 400.
        let expected = 300_000.0 / 26
        let chiSquare = counts.reduce(0.0) { sum, n in
            let d = Double(n) - expected
            return sum + d * d / expected
        }
        #expect(chiSquare < 80, "χ² \(chiSquare): \(counts)")
        #expect(Double(AppPasswords.groups * AppPasswords.groupLength) * log2of26 > 128)
    }

    @Test("the file holds no password, only its SHA-256; mode 0600; one line per password in its documented form")
    func fileContents() throws {
        let (s, dir) = store()
        defer { removeTree(dir) }
        let (p, password) = try s.add(name: "phone", access: .full, now: now)
        let text = try readTextFile(s.path)
        #expect(s.path == dir + "/web/app-passwords")
        #expect(!text.contains(password) && !text.contains(String(password.prefix(11))))
        #expect(
            text == AppPasswordFile.header
                + "\(p.id)\tphone\tfull\t\(SHA256.hex(of: Array(password.utf8)))\t\(now)\t-\t-\n")
        #expect(try fileStatus(s.path).permissions & 0o777 == 0o600)
        #expect(try fileStatus(dir + "/web").permissions & 0o777 == 0o700)
        // Damaged lines are left out, verifying nothing; good ones still work.
        try writeFileAtomically(s.path, Array((text + "zz\tx\tfull\t00\t1\t-\t-\nnot a line\n").utf8), mode: 0o600)
        #expect(try s.list() == [p])
        #expect(s.verify(name: "phone", password: password) == p)
    }

    @Test(
        "one password used from two addresses in turn, 200 times in 100 s, rewrites the file at most once a minute; the latest use is written when the next write is due"
    )
    func noteUseCoalesced() throws {
        let (daemon, dir) = store()
        defer { removeTree(dir) }
        let admin = AppPasswords(directory: dir + "/web")
        let (p, _) = try admin.add(name: "phone", access: .upload, now: now)
        var rewrites = 0
        var last = try fileStatus(admin.path)
        for i in 0..<200 {
            daemon.noteUse(id: p.id, address: i % 2 == 0 ? "192.0.2.1" : "192.0.2.2", now: now + Int64(i / 2))
            let status = try fileStatus(admin.path)
            if status != last { rewrites += 1 }
            last = status
        }
        #expect(rewrites <= 2, "\(rewrites) rewrites")
        let listed = try #require(try admin.list().first)
        #expect(
            listed.lastUsed == now + 60,
            "the use at the minute's end was written: \(String(describing: listed.lastUsed))")
        daemon.noteUse(id: p.id, address: "192.0.2.3", now: now + 120)
        #expect(try admin.list().first?.lastUsed == now + 120)
        #expect(try admin.list().first?.lastAddress == "192.0.2.3")
    }

    @Test(
        "uses not written yet are written by flushNotes (ptkd stopping), every password's at once; a removed password's are not written back"
    )
    func noteUseFlushed() throws {
        let (daemon, dir) = store()
        defer { removeTree(dir) }
        let admin = AppPasswords(directory: dir + "/web")
        let (a, _) = try admin.add(name: "phone", access: .upload, now: now)
        let (b, _) = try admin.add(name: "laptop", access: .full, now: now)
        let (c, _) = try admin.add(name: "gone", access: .full, now: now)
        for p in [a, b, c] { daemon.noteUse(id: p.id, address: "192.0.2.1", now: now + 10) }
        daemon.noteUse(id: a.id, address: "192.0.2.2", now: now + 30)
        daemon.noteUse(id: b.id, address: "192.0.2.3", now: now + 40)
        daemon.noteUse(id: c.id, address: "192.0.2.4", now: now + 40)
        #expect(try admin.list().map(\.lastUsed) == [now + 10, now + 10, now + 10])
        #expect(try admin.remove(name: "gone"))
        daemon.flushNotes(now: now + 45)
        let listed = try admin.list()
        #expect(listed.map(\.lastUsed) == [now + 30, now + 40])
        #expect(listed.map(\.lastAddress) == ["192.0.2.2", "192.0.2.3"])
        let status = try fileStatus(admin.path)
        daemon.flushNotes(now: now + 46)
        #expect(try fileStatus(admin.path) == status, "nothing left to write: not rewritten")
    }

    @Test(
        "a use is written at once the first time, then at most once a minute whatever its address; a removed password is not written back"
    )
    func noteUseThrottled() throws {
        let (daemon, dir) = store()
        defer { removeTree(dir) }
        let admin = AppPasswords(directory: dir + "/web")
        let (p, _) = try admin.add(name: "phone", access: .upload, now: now)
        func listed() throws -> (Int64?, String?) {
            let e = try #require(try admin.list().first { $0.id == p.id })
            return (e.lastUsed, e.lastAddress)
        }
        daemon.noteUse(id: p.id, address: "192.0.2.1", now: now + 10)
        #expect(try listed() == (now + 10, "192.0.2.1"))
        let status = try fileStatus(admin.path)
        daemon.noteUse(id: p.id, address: "192.0.2.1", now: now + 20)
        daemon.noteUse(id: p.id, address: "192.0.2.1", now: now + 69)
        #expect(try listed() == (now + 10, "192.0.2.1"))
        #expect(try fileStatus(admin.path) == status)  // not even rewritten
        daemon.noteUse(id: p.id, address: "198.51.100.7", now: now + 70)
        #expect(try listed() == (now + 70, "198.51.100.7"))
        daemon.noteUse(id: p.id, address: "198.51.100.7", now: now + 129)
        #expect(try listed() == (now + 70, "198.51.100.7"))
        daemon.noteUse(id: p.id, address: "198.51.100.7", now: now + 130)
        #expect(try listed() == (now + 130, "198.51.100.7"))
        // A restarted ptkd starts from what the file says: no write within the minute.
        let restarted = AppPasswords(directory: dir + "/web")
        restarted.noteUse(id: p.id, address: "198.51.100.7", now: now + 140)
        #expect(try listed() == (now + 130, "198.51.100.7"))
        // An address with controls, tabs and spaces is kept to one field.
        daemon.noteUse(id: p.id, address: "a\tb c\n\u{1B}[2J", now: now + 200)
        #expect(try listed() == (now + 200, "abc[2J"))
        // Removed: a later use writes nothing back.
        #expect(try admin.remove(name: "phone"))
        daemon.noteUse(id: p.id, address: "192.0.2.9", now: now + 400)
        daemon.noteUse(id: "0123456789abcdef", address: "192.0.2.9", now: now + 400)
        #expect(try admin.list().isEmpty)
    }

    @Test(
        "a line whose created or last used time is out of range (Int64.min, before 1970, after 9999) is left out, and a use noted then traps nothing"
    )
    func plantedTimesAreLeftOut() throws {
        let (s, dir) = store()
        defer { removeTree(dir) }
        let (good, _) = try s.add(name: "phone", access: .upload, now: now)
        var text = try readTextFile(s.path)
        for (i, t) in ["-9223372036854775808", "9223372036854775807", "-1", "253402300800"].enumerated() {
            text +=
                ["00000000000000a\(i)", "created\(i)", "upload", String(repeating: "2", count: 64), t, "-", "-"].joined(
                    separator: "\t") + "\n"
            text +=
                ["00000000000000b\(i)", "used\(i)", "full", String(repeating: "3", count: 64), "\(now)", t, "10.0.0.1"]
                .joined(separator: "\t") + "\n"
        }
        writeFile(s.path, Array(text.utf8))
        #expect(try s.list().map(\.name) == ["phone"])
        s.noteUse(id: "00000000000000b0", address: "192.0.2.1", now: now)
        s.noteUse(id: good.id, address: "192.0.2.1", now: now + 10)
        #expect(try s.list().first?.lastUsed == now + 10)
    }

    @Test("uses noted by ptkd's threads while root's ptk adds and removes lose no change of either")
    func concurrentNoteAndAdd() throws {
        let (daemon, dir) = store()
        defer { removeTree(dir) }
        let admin = AppPasswords(directory: dir + "/web")
        let (p, password) = try admin.add(name: "busy", access: .upload, now: now)
        let done = Semaphore()
        let threads = 4
        for t in 0..<threads {
            try startThread(name: "test") {
                // A new address each time: every call writes.
                for i in 0..<40 {
                    _ = daemon.verify(name: "busy", password: password)
                    daemon.noteUse(id: p.id, address: "10.0.\(t).\(i)", now: now + Int64(i))
                }
                done.signal()
            }
        }
        try startThread(name: "test") {
            // Another process's worth: a store of its own.
            let other = AppPasswords(directory: dir + "/web")
            for i in 0..<30 {
                _ = try? other.add(name: "app\(i)", access: .full, now: now)  // checked below: all 30 must be there
                if i % 3 == 0 { _ = try? other.remove(name: "app\(i)") }  // checked below
            }
            done.signal()
        }
        for _ in 0...threads { done.wait() }
        let names = try admin.list().map(\.name)
        #expect(names == ["busy"] + (0..<30).filter { $0 % 3 != 0 }.map { "app\($0)" })
        let busy = try #require(try admin.list().first)
        #expect(busy.lastUsed != nil && busy.lastAddress?.hasPrefix("10.0.") == true)
        #expect(daemon.verify(name: "busy", password: password)?.id == p.id)
    }

    @Test(
        "STATE/web/app-passwords or STATE/web as a symlink: add, list and remove refuse it, nothing verifies through it; the target is untouched"
    )
    func plantedLinks() throws {
        let (state, outside) = plantedState()
        defer {
            removeTree(state)
            removeTree(outside)
        }
        let password = AppPasswords.generatePassword()
        let line = "0123456789abcdef\tplanted\tfull\t\(SHA256.hex(of: Array(password.utf8)))\t1\t-\t-\n"
        let target = Sentinel(outside + "/app-passwords", line)
        let s = AppPasswords(directory: state + "/web")
        _ = try s.add(name: "real", access: .upload, now: now)
        try removeFile(s.path)
        symlink(target.path, s.path)
        #expect(refusesLink(s.path) { _ = try s.add(name: "x", access: .full, now: now) })
        #expect(refusesLink(s.path) { _ = try s.list() })
        #expect(refusesLink(s.path) { _ = try s.remove(name: "planted") })
        #expect(s.verify(name: "planted", password: password) == nil)
        s.noteUse(id: "0123456789abcdef", address: "10.0.0.1", now: now)
        #expect(target.unchanged && isSymlink(s.path))

        // The whole directory swapped for a link to where the file is.
        removeTree(state + "/web")
        symlink(outside, state + "/web")
        let web = state + "/web"
        #expect(refusesLink(web) { _ = try s.add(name: "x", access: .full, now: now) })
        #expect(refusesLink(web) { _ = try s.list() })
        #expect(refusesLink(web) { _ = try s.remove(name: "planted") })
        #expect(s.verify(name: "planted", password: password) == nil)
        s.noteUse(id: "0123456789abcdef", address: "10.0.0.1", now: now)
        #expect(target.unchanged && isSymlink(web))
        #expect(listDirectory(outside) == ["app-passwords"])
    }
}

private let log2of26 = 4.700439718141092
