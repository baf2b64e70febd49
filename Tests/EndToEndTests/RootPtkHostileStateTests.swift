import Foundation
import Glibc
import PTKSystem
import PTKTestSupport
import PTKTestTags
import Testing

@testable import PTKLibrary

// Issue 54, root's `ptk` (findings 16 to 21): directories as administrators misconfigure them
// (a root-owned photos directory others may write, 1777, another user's mount) and state the
// service user plants (terminal controls in every column, FIFOs and huge files in place of
// photos, locks it never lets go, extreme times). Each test runs the real `ptk` as root on a
// library made by the real ptkd (RootBoundaryTests' ServiceLibrary), with the service user an
// unprivileged uid with no passwd entry (4242).

/// A uid and gid other than root's and the service user's: another user of the host.
let otherUID: uid_t = 4343
/// A group that is neither root's nor the service user's.
let otherGID: gid_t = 4300

/// The status `ptk` exits with for a folder others may change (usage).
let refusedStatus: Int32 = 64

/// The terminal controls a planted text must never bring to standard output or error raw: C0
/// (but the line feeds that end lines), DEL, C1, the line and paragraph separators and the
/// bidi controls.
func rawControls(_ text: String) -> [String] {
    text.unicodeScalars.filter { s in
        switch s.value {
        case 0x0A: return false
        case 0x00...0x1F, 0x7F...0x9F, 0x2028, 0x2029, 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069:
            return true
        default: return false
        }
    }.map { "U+" + String($0.value, radix: 16, uppercase: true) }
}

/// The modification time (ns) and size of each of the index's files, to tell it was not written.
func indexFingerprint(_ lib: ServiceLibrary) -> [String] {
    ["", "-wal", "-shm", "-journal"].map { suffix in
        guard let st = linkStatus(lib.index + suffix) else { return "\(suffix): none" }
        return "\(suffix): \(st.st_size) \(st.st_mtim.tv_sec).\(st.st_mtim.tv_nsec) \(st.st_uid)"
    }
}

/// A program running in the background (posix_spawn), its output into files; killed when done.
final class Background {
    let pid: pid_t
    let outPath: String
    let errPath: String
    private var reaped: Int32?

    init(_ path: String, _ args: [String], in dir: String) throws {
        outPath = dir + "/bg-\(UInt32.random(in: 0...UInt32.max)).out"
        errPath = outPath + ".err"
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, errPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK))
        let argv: [UnsafeMutablePointer<CChar>?] = ([path] + args).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var env = ProcessInfo.processInfo.environment
        env["XDG_CONFIG_HOME"] = testConfigHome
        let envp: [UnsafeMutablePointer<CChar>?] = env.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { envp.forEach { free($0) } }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, path, &actions, &attributes, argv, envp)
        guard rc == 0 else { throw HarnessError("cannot run \(path): \(String(cString: strerror(rc)))") }
        self.pid = pid
    }

    var stdout: String { String(decoding: readFile(outPath) ?? [], as: UTF8.self) }
    var stderr: String { String(decoding: readFile(errPath) ?? [], as: UTF8.self) }

    /// Its wait status once it ended within `timeout` seconds, else nil.
    func wait(_ timeout: Double) -> Int32? {
        if let reaped { return reaped }
        let deadline = Date() + timeout
        repeat {
            var status: Int32 = 0
            if waitpid(pid, &status, WNOHANG) == pid {
                reaped = status
                return status
            }
            usleep(20_000)
        } while Date() < deadline
        return nil
    }

    deinit {
        if reaped == nil {
            kill(pid, SIGKILL)
            var status: Int32 = 0
            _ = waitpid(pid, &status, 0)
        }
    }
}

/// The service user holding an exclusive lock on the index (SQLite's own locking, as any
/// process that opens it may take): python3's sqlite3, `locking_mode=EXCLUSIVE` and a write
/// transaction left open. Returns once the lock is held.
func holdIndexLock(_ lib: ServiceLibrary) throws -> Background {
    let python = fileExists("/usr/bin/python3") ? "/usr/bin/python3" : findProgram("python3") ?? "/usr/bin/python3"
    let script = """
        import sqlite3, sys, time
        c = sqlite3.connect(sys.argv[1], isolation_level=None)
        c.execute("PRAGMA locking_mode=EXCLUSIVE")
        c.execute("BEGIN EXCLUSIVE")
        c.execute("UPDATE photos SET note = note")
        print("ready", flush=True)
        time.sleep(600)
        """
    let holder = try Background(
        findProgram("setpriv") ?? "/usr/bin/setpriv",
        ["--reuid=\(serviceUID)", "--regid=\(serviceGID)", "--clear-groups", "--", python, "-c", script, lib.index],
        in: lib.top)
    guard eventuallyValue(20, { holder.stdout.contains("ready") ? true : nil }) == true else {
        throw HarnessError("the lock holder did not start: \(holder.stderr)")
    }
    return holder
}

/// Runs each of `commands` (ptk's arguments) as root on `lib` at once, each on a thread of
/// its own; their results and durations in order.
func ptkConcurrently(_ lib: ServiceLibrary, _ commands: [[String]], timeout: Double) -> [(Finished?, Double)] {
    final class Results: @unchecked Sendable {
        // `all` is read and written under `lock`.
        let lock = NSLock()
        var all: [Int: (Finished?, Double)] = [:]
    }
    let results = Results()
    let arguments = lib.ptkArguments
    let group = DispatchGroup()
    for (i, command) in commands.enumerated() {
        group.enter()
        // A thread each (not a pool of one per core): all wait at once.
        Thread.detachNewThread {
            let started = Date()
            // a harness failure is recorded as no result
            let r = try? run("ptk", arguments + command, timeout: timeout)
            let took = Date().timeIntervalSince(started)
            results.lock.lock()
            results.all[i] = (r, took)
            results.lock.unlock()
            group.leave()
        }
    }
    group.wait()
    return commands.indices.map { results.all[$0]! }
}

@Suite("Root's ptk: misconfigured directories and planted state (issue 54)", .serialized, .tags(.endToEnd))
struct RootPtkHostileStateTests {
    // MARK: 16. Folders others may change

    @Test(
        "16a: a root-owned library whose directory, or a folder on the way, others may write (group not root) is refused, and root's index is not touched"
    )
    func finding16RootOwnedGroupWritable() throws {
        let lib = try ServiceLibrary()
        let s = Sentinel(lib.top + "/sentinel", ["secret": sentinelText()])
        for (label, folder) in [("the photos directory", lib.photos), ("a folder on the way", lib.base)] {
            #expect(chown(folder, 0, otherGID) == 0 && chmod(folder, 0o775) == 0)
            let before = indexFingerprint(lib)
            for command in [["list"], ["note", "pic", "written as root"], ["gallery"]] {
                let r = try lib.ptk(command)
                #expect(r.status == refusedStatus, "\(label), ptk \(command): \(r.status) \(r.stdout) \(r.stderr)")
                #expect(
                    r.stderr.contains("'\(folder)'") || r.stderr.contains("\"\(folder)\""),
                    "\(label): the message does not name \(folder): \(r.stderr)")
                #expect(
                    r.stderr.contains("gid \(otherGID)") && r.stderr.contains("chmod go-w"), "\(label): \(r.stderr)")
            }
            #expect(indexFingerprint(lib) == before, "\(label): root's index was written")
            #expect(!fileExists(lib.ptkFolder + "/gallery/index.html"), "\(label): a gallery was written")
            #expect(s.problems().isEmpty)
            #expect(chown(folder, 0, 0) == 0 && chmod(folder, 0o755) == 0)
        }
        // Put right, it works as before (as root: only root's folders on the way).
        let r = try lib.ptk(["list"])
        #expect(r.status == 0 && r.stdout.hasPrefix("pic.png"), "\(r.status) \(r.stderr)")
    }

    @Test(
        "16b: a root-owned photos directory of mode 1777, or group-writable for the service user's group, is refused, also once the service user removed its .ptk",
        arguments: [
            (gid_t(0), mode_t(0o1777)), (serviceGID, mode_t(0o775)), (serviceGID, mode_t(0o1775)),
        ])
    func finding16SharedDirectory(group: gid_t, mode: mode_t) throws {
        let lib = try ServiceLibrary()
        let packages = lib.rootOnlyFolder("packages")
        #expect(try lib.ptk(["export", "pic", "-o", packages]).status == 0)
        lib.giveToServiceUser()
        #expect(chown(lib.photos, 0, group) == 0 && chmod(lib.photos, mode) == 0)
        let s = Sentinel(lib.top + "/sentinel", ["secret": sentinelText()])
        let label = "root:\(group) \(String(mode, radix: 8))"
        func refused(_ command: [String], _ when: String) throws {
            let r = try lib.ptk(command)
            #expect(r.status == refusedStatus, "\(label) \(when), ptk \(command): \(r.status) \(r.stdout) \(r.stderr)")
            #expect(
                r.stderr.contains(lib.photos) && r.stderr.contains("chmod go-w") && r.stderr.contains("sudo -u"),
                "\(label) \(when): \(r.stderr)")
        }
        try refused(["list"], "with the service user's .ptk")
        // The service user's first step of the race the audit ran: its .ptk gone, no folder
        // inside is another user's, and root would have worked as root.
        try asServiceUser("rm -rf \"$1\"", [lib.ptkFolder])
        let listing = listDirectory(lib.photos)
        for command in [["list"], ["import", packages + "/pic.ptk"], ["gallery"], ["note", "pic", "x"]] {
            try refused(command, "without .ptk")
            #expect(linkStatus(lib.ptkFolder) == nil, "\(label): ptk \(command) made \(lib.ptkFolder)")
        }
        #expect(listDirectory(lib.photos) == listing, "\(label): \(listDirectory(lib.photos)), not \(listing)")
        #expect(s.problems().isEmpty)
    }

    @Test(
        "16c: the service user's own directory keeps working (also group-writable or 1777: its own), and the trusted way through a sticky folder (/tmp) is not refused"
    )
    func finding16ServiceUsersOwn() throws {
        let lib = try ServiceLibrary.owned()
        for mode in [0o755, 0o775, 0o1777] as [mode_t] {
            #expect(chmod(lib.photos, mode) == 0)
            let r = try lib.ptk(["note", "pic", "mode \(String(mode, radix: 8))"])
            #expect(r.status == 0, "photos \(String(mode, radix: 8)): \(r.status) \(r.stderr)")
            #expect(linkStatus(lib.index).map { $0.st_uid } == serviceUID)
        }
        // The library lies below /tmp (1777, root's), whose next folder is root's: not refused.
        #expect(lib.top.hasPrefix("/tmp/"))
    }

    @Test(
        "16d: a directory on another user's mount: reached through that user's folder it is refused; all of it that user's, ptk works as that user"
    )
    func finding16OtherUsersMount() throws {
        let lib = try ServiceLibrary()
        let mountPoint = lib.top + "/mnt"
        mkdir(mountPoint, 0o755)
        // A real mount of the other user (tmpfs, uid=4343), else a folder of theirs: ptk sees owners either way.
        let mounted =
            (try? run(
                "/bin/mount",
                ["-t", "tmpfs", "-o", "uid=\(otherUID),gid=\(otherGID),mode=0755,size=64m", "tmpfs", mountPoint],
                absolute: true))?.status == 0
        defer { if mounted { _ = try? run("/bin/umount", [mountPoint], absolute: true) } }
        if !mounted {
            print("16d: cannot mount a tmpfs here; the other user's folder stands in for its mount")
            #expect(chown(mountPoint, otherUID, otherGID) == 0)
        }
        let photos = mountPoint + "/photos"
        #expect(try run("/bin/cp", ["-a", lib.photos, photos], absolute: true).status == 0)
        chownTree(photos, serviceUID, serviceGID)
        let s = Sentinel(lib.top + "/sentinel", ["secret": sentinelText()])
        let args = ["--config", lib.top + "/ptkd.conf", "--dir", photos, "--state-dir", lib.state]
        let r = try run("ptk", args + ["list"])
        #expect(
            r.status == refusedStatus && r.stderr.contains("uid \(otherUID)") && r.stderr.contains("uid \(serviceUID)"),
            "\(r.status) \(r.stderr)")
        // A FAT-like mount: everything the other user's, every folder 0777. ptk acts as that user.
        chownTree(photos, otherUID, otherGID)
        walkTree(photos) { path, st in if isDirectory(st) { chmod(path, 0o777) } }
        #expect(chmod(mountPoint, 0o777) == 0)
        let note = try run("ptk", args + ["note", "pic", "on a mount"])
        #expect(note.status == 0, "\(note.status) \(note.stderr)")
        let show = try run("ptk", args + ["show", "pic"])
        #expect(show.status == 0 && show.stdout.contains("on a mount"), "\(show.status) \(show.stderr)")
        var notTheirs: [String] = []
        walkTree(photos) { path, st in if st.st_uid != otherUID { notTheirs.append(path) } }
        #expect(notTheirs.isEmpty, "made as another user than the mount's: \(notTheirs)")
        #expect(s.problems().isEmpty)
    }

    @Test(
        "16e: a root-owned library or state directory whose files others may write (group or other bits, an ACL granting write, a -wal of 0666) is refused with 64 and not written; put right, root's ptk works and its -wal and -shm are root's only"
    )
    func finding16GroupWritableFiles() throws {
        let lib = try ServiceLibrary()
        let s = Sentinel(lib.top + "/sentinel", ["secret": sentinelText()])
        func refused(_ command: [String], _ file: String, _ label: String, acl: Bool = false) throws {
            let before = indexFingerprint(lib)
            let bytes = readFile(file)
            let r = try lib.ptk(command)
            #expect(r.status == refusedStatus, "\(label), ptk \(command): \(r.status) \(r.stdout) \(r.stderr)")
            #expect(
                r.stderr.contains("'\(file)'") || r.stderr.contains("\"\(file)\""),
                "\(label): the message does not name \(file): \(r.stderr)")
            #expect(
                r.stderr.contains(acl ? "setfacl" : "chmod g-w,o-w") && r.stderr.contains("chown -R"),
                "\(label): \(r.stderr)")
            #expect(indexFingerprint(lib) == before && readFile(file) == bytes, "\(label): written as root")
        }
        // The probe's layout (chown -R root:SERVICE, the index 0664): the service user may rewrite root's index.
        #expect(chown(lib.index, 0, serviceGID) == 0 && chmod(lib.index, 0o664) == 0)
        try refused(["note", "pic", "written by root"], lib.index, "index root:\(serviceGID) 0664")
        try refused(["list"], lib.index, "index root:\(serviceGID) 0664")
        #expect(chmod(lib.index, 0o646) == 0)
        try refused(["note", "pic", "written by root"], lib.index, "index 0646")
        // Not the mode's group bits: an access ACL granting the service user write (its mask shows it).
        #expect(chown(lib.index, 0, 0) == 0 && chmod(lib.index, 0o644) == 0)
        let acl = try python(
            """
            import os, struct, sys
            e = lambda tag, perm, id=0xFFFFFFFF: struct.pack("<HHI", tag, perm, id)
            os.setxattr(sys.argv[1], "system.posix_acl_access", struct.pack("<I", 2) + e(1, 6) + e(2, 6, int(sys.argv[2])) + e(4, 4) + e(0x10, 6) + e(0x20, 4))
            """, [lib.index, "\(serviceUID)"])
        try #require(acl.status == 0, "cannot set an ACL here: \(acl.stderr)")
        try refused(["note", "pic", "written by root"], lib.index, "index with an ACL", acl: true)
        #expect(
            try python(
                "import os, sys; os.removexattr(sys.argv[1], 'system.posix_acl_access'); os.chmod(sys.argv[1], 0o644)",
                [lib.index]
            ).status == 0)
        // A -wal left 0666 beside a 0644 index: SQLite would read (and write) it as root.
        writeFile(lib.index + "-wal", [])
        #expect(chmod(lib.index + "-wal", 0o666) == 0)
        try refused(["note", "pic", "written by root"], lib.index + "-wal", "-wal 0666")
        #expect(unlink(lib.index + "-wal") == 0)
        // The state directory's files: the trust list root's ptk would rewrite as root.
        let trusted = lib.state + "/trusted-senders"
        writeFile(trusted, Array("\(String(repeating: "ab", count: 32)) root's phone\n".utf8))
        #expect(chown(trusted, 0, serviceGID) == 0 && chmod(trusted, 0o664) == 0)
        try refused(
            ["trust", "allow", String(repeating: "cd", count: 32), "root's laptop"], trusted, "trusted-senders 0664")
        #expect(chmod(trusted, 0o644) == 0)
        // Put right, root's ptk works as root, and what SQLite makes beside the index takes its mode: root's only.
        let note = try lib.ptk(["note", "pic", "written by root"])
        #expect(note.status == 0, "\(note.status) \(note.stderr)")
        for suffix in ["", "-wal", "-shm", "-journal"] {
            guard let st = linkStatus(lib.index + suffix) else { continue }
            #expect(
                st.st_uid == 0 && st.st_mode & 0o022 == 0,
                "\(suffix): uid \(st.st_uid) mode \(String(st.st_mode & 0o7777, radix: 8))")
        }
        #expect(try lib.ptk(["trust", "allow", String(repeating: "cd", count: 32), "root's laptop"]).status == 0)
        #expect(s.problems().isEmpty)
    }

    // MARK: 17. Terminal controls in every column

    @Test(
        "17: ESC sequences, C1 controls and bidi overrides planted in every field reach no text output of ptk raw",
        arguments: [
            "\u{1B}[2J\u{1B}]0;pwned\u{07}2024-05-06T07:08:09",
            "\u{9B}2J\u{9D}0;pwned\u{9C}2024-05-06T07:08:09",
            "\u{202E}2024-05-06T07:08:09\u{2066}\u{2028}",
        ])
    func finding17EveryColumn(planted: String) throws {
        let lib = try ServiceLibrary()
        do {
            let library = try PhotoLibrary(directory: lib.photos, create: false)
            let quoted = "'" + planted.replacingOccurrences(of: "'", with: "''") + "'"
            try library.database.execute(
                """
                UPDATE photos SET taken = \(quoted), sender_name = \(quoted), sender_address = \(quoted), sender_id = \(quoted),
                    note = \(quoted) || '<script>', camera_make = \(quoted), camera_model = \(quoted), problem = \(quoted)
                """)
        }
        let fingerprint = String(repeating: "ab", count: 32)
        let now = Int(time(nil))
        writeFile(lib.state + "/trusted-senders", Array("\(fingerprint) trusted \(planted)\n".utf8))
        writeFile(
            lib.state + "/pending-senders",
            Array("\(String(repeating: "cd", count: 32))\t3\t\(now)\t\(now)\t\(planted)\tpending \(planted)\n".utf8))
        writeFile(
            lib.web + "/sessions",
            Array(
                ([
                    planted + "id", String(repeating: "0", count: 64), "csrf", "\(now)", "\(now)", "\(now + 86_400)",
                    planted, "browser " + planted,
                ]
                .joined(separator: "\t") + "\n").utf8))
        writeFile(
            lib.web + "/app-passwords",
            Array(
                ([
                    "0123456789abcdef", "phone", "upload", String(repeating: "1", count: 64), "\(now)", "\(now)",
                    planted,
                ]
                .joined(separator: "\t") + "\n").utf8))
        lib.giveToServiceUser()
        let commands: [[String]] = [
            ["list"], ["list", "--json"], ["list", "--sort", "taken"], ["show", "pic"], ["show", "pic", "--json"],
            ["trust", "list"], ["trust", "pending"], ["web-sessions"], ["app-password", "list"],
            ["app-password", "list", "--json"],
            ["gallery"], ["export", "pic", "-o", lib.rootOnlyFolder("out")],
        ]
        for command in commands {
            let r = try lib.ptk(command)
            #expect(r.status == 0, "ptk \(command): \(r.status) \(r.stderr)")
            #expect(
                rawControls(r.stdout).isEmpty,
                "ptk \(command) printed \(rawControls(r.stdout)) raw: \(r.stdout.debugDescription)")
            #expect(
                rawControls(r.stderr).isEmpty,
                "ptk \(command) said \(rawControls(r.stderr)) raw: \(r.stderr.debugDescription)")
            #expect(
                r.stdout.contains("pwned") || r.stdout.contains("2024") || command.first == "gallery"
                    || command.first == "export",
                "ptk \(command) left the planted text out: \(r.stdout.debugDescription)")
        }
        // watch runs until interrupted: what it printed in 3 s.
        for command in [["watch", "--since", "all"], ["watch", "--since", "all", "--json"]] {
            let r = try lib.ptk(command, timeout: 3)
            #expect(r.stdout.contains("pic.png"), "ptk \(command): \(r.stdout.debugDescription) \(r.stderr)")
            #expect(
                rawControls(r.stdout).isEmpty,
                "ptk \(command) printed \(rawControls(r.stdout)) raw: \(r.stdout.debugDescription)")
        }
        // The gallery is HTML: the note's markup is escaped.
        let page = String(decoding: readFile(lib.ptkFolder + "/gallery/index.html") ?? [], as: UTF8.self)
        #expect(page.contains("&lt;script&gt;") && !page.contains("<script>"), "\(page)")
    }

    // MARK: 18. Waits without a bound

    @Test(
        "18a: export of a FIFO in place of a photo (indexed or not) fails at once, saying so, and leaves no staging folder"
    )
    func finding18FIFOExport() throws {
        let lib = try ServiceLibrary.owned()
        let photo = lib.photos + "/pic.png"
        try asServiceUser("rm -f \"$1\" && mkfifo \"$1\"", [photo])
        defer {
            // A reader a ptk without the fix left waiting in open(2) is let go.
            let fd = open(photo, O_RDWR | O_NONBLOCK)
            if fd >= 0 { close(fd) }
        }
        for indexed in [1, 0] {
            if indexed == 0 {
                // As the service user could: the row waits for indexing, which export does first.
                let library = try PhotoLibrary(directory: lib.photos, create: false)
                try library.database.execute("UPDATE photos SET indexed = 0")
            }
            chownTree(lib.ptkFolder, serviceUID, serviceGID)
            let out = lib.rootOnlyFolder("out-\(indexed)")
            let started = Date()
            let r = try lib.ptk(["export", "pic", "-o", out], timeout: 20)
            let took = Date().timeIntervalSince(started)
            #expect(took < 10, "indexed \(indexed): ptk export took \(took) s on a FIFO (status \(r.status))")
            #expect(
                r.status != 0 && r.status < 128 && r.stderr.contains("not a regular file"),
                "indexed \(indexed): \(r.status) \(r.stderr)")
            #expect(listDirectory(out).isEmpty, "indexed \(indexed): left in \(out): \(listDirectory(out))")
        }
    }

    @Test(
        "18b: a lock file held by another process (.trust.lock, web/.lock) stops trust, web-link, app-password and web-sessions revoke after 10 s, saying what they wait for"
    )
    func finding18LockFiles() throws {
        let lib = try ServiceLibrary.owned()
        var held: [CInt] = []
        defer { held.forEach { close($0) } }
        for path in [lib.state + "/.trust.lock", lib.web + "/.lock"] {
            try asServiceUser("touch \"$1\"", [path])
            let fd = open(path, O_RDWR)
            #expect(fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) == 0, "cannot hold \(path)")
            held.append(fd)
        }
        let commands: [[String]] = [
            ["trust", "allow", String(repeating: "ab", count: 32), "phone"], ["trust", "deny", "ABCD"],
            ["web-link"], ["app-password", "add", "phone"], ["app-password", "remove", "phone"],
            ["web-sessions", "revoke", "all"], ["web-password", "--remove"],
        ]
        for (command, (result, took)) in zip(commands, ptkConcurrently(lib, commands, timeout: 40)) {
            let lock = command.first == "trust" ? ".trust.lock" : "web/.lock"
            guard let r = result else {
                Issue.record("ptk \(command) could not be run")
                continue
            }
            #expect(r.status == 74, "ptk \(command): \(r.status) after \(took) s: \(r.stderr)")
            #expect(took >= 9 && took < 25, "ptk \(command) gave up after \(took) s")
            #expect(
                r.stderr.contains("waiting for the lock") && r.stderr.contains(lock) && r.stderr.contains("10 seconds"),
                "ptk \(command) did not say what it waited for: \(r.stderr)")
        }
        // Let go, they work.
        held.forEach { close($0) }
        held = []
        let r = try lib.ptk(["app-password", "add", "phone"])
        #expect(r.status == 0, "\(r.stderr)")
    }

    @Test(
        "18c: an exclusive SQLite lock held on the index stops library commands after 30 s (exit 74), saying what they wait for"
    )
    func finding18IndexLock() throws {
        let lib = try ServiceLibrary.owned()
        let holder = try holdIndexLock(lib)
        let commands: [[String]] = [["list"], ["note", "pic", "while locked"], ["show", "pic"]]
        for (command, (result, took)) in zip(commands, ptkConcurrently(lib, commands, timeout: 90)) {
            guard let r = result else {
                Issue.record("ptk \(command) could not be run")
                continue
            }
            #expect(r.status == 74, "ptk \(command): \(r.status) after \(took) s: \(r.stderr)")
            #expect(took >= 25 && took < 60, "ptk \(command) gave up after \(took) s")
            #expect(
                r.stderr.contains("waiting for the library index") && r.stderr.contains("30 seconds")
                    && r.stderr.contains("another process held a lock"),
                "ptk \(command): \(r.stderr)")
        }
        kill(holder.pid, SIGKILL)
        _ = holder.wait(10)
        let r = try lib.ptk(["list"])
        #expect(r.status == 0, "\(r.stderr)")
    }

    @Test(
        "18d: interrupted while the service user's child waits (for a lock, or stopped), root's export ends it and removes its staging folder"
    )
    func finding18InterruptedExport() throws {
        let lib = try ServiceLibrary.owned()
        let holder = try holdIndexLock(lib)
        let out = lib.rootOnlyFolder("out")
        let ptk = try Background(binDirectory + "/ptk", lib.ptkArguments + ["export", "pic", "-o", out], in: lib.top)
        // The child waits for the index (and says so after a second); stopped by its user, it would wait for ever.
        let waiting = eventuallyValue(20) { ptk.stderr.contains("waiting for the library index") ? true : nil }
        #expect(waiting == true, "the child did not start waiting: \(ptk.stderr)")
        #expect(
            listDirectory(out).contains { $0.hasPrefix(".ptk-staging-") }, "no staging folder: \(listDirectory(out))")
        let children = listDirectory("/proc").compactMap(Int32.init).filter { pid in
            let stat = String(decoding: readFile("/proc/\(pid)/stat") ?? [], as: UTF8.self)
            return stat.split(separator: ")").last?.split(separator: " ").dropFirst(1).first == Substring("\(ptk.pid)")
        }
        #expect(children.count == 1, "children of root's ptk: \(children)")
        // What a ptk without the fix left stopped is ended here.
        defer {
            for child in children
            where String(decoding: readFile("/proc/\(child)/cmdline") ?? [], as: UTF8.self).contains("ptk") {
                kill(child, SIGKILL)
            }
        }
        for child in children { kill(child, SIGSTOP) }
        kill(ptk.pid, SIGINT)
        let status = ptk.wait(10)
        #expect(status != nil, "root's ptk did not end within 10 s of SIGINT")
        if let status {
            #expect(
                status & 0x7F == SIGINT, "root's ptk ended with wait status \(status), not by SIGINT: \(ptk.stderr)")
        }
        #expect(listDirectory(out).isEmpty, "left in \(out): \(listDirectory(out))")
        #expect(ptk.stderr.contains("interrupted"), "\(ptk.stderr)")
        for child in children {
            #expect(
                !fileExists("/proc/\(child)")
                    || String(decoding: readFile("/proc/\(child)/stat") ?? [], as: UTF8.self).contains(") Z"),
                "the child \(child) lives on")
        }
        kill(holder.pid, SIGKILL)
        _ = holder.wait(10)
    }

    // MARK: 19. Planted times and numbers

    @Test(
        "19: extreme times and numbers in web/sessions, app-passwords, pending-senders and the index crash no command")
    func finding19PlantedExtremes() throws {
        let lib = try ServiceLibrary()
        let now = Int(time(nil))
        let extremes = ["-9223372036854775808", "9223372036854775807", "-1", "253402300800"]
        var sessions = ""
        for (i, t) in extremes.enumerated() {
            for field in 3...5 {
                var f = [
                    "e\(i)\(field)", String(repeating: "0", count: 64), "csrf", "\(now)", "\(now)", "\(now + 86_400)",
                    "127.0.0.1:1", "planted",
                ]
                f[field] = t
                sessions += f.joined(separator: "\t") + "\n"
            }
        }
        sessions +=
            [
                "good0001", String(repeating: "1", count: 64), "csrf", "\(now)", "\(now)", "\(now + 86_400)",
                "127.0.0.1:2", "kept",
            ].joined(separator: "\t") + "\n"
        writeFile(lib.web + "/sessions", Array(sessions.utf8))
        var passwords = ""
        for (i, t) in extremes.enumerated() {
            passwords +=
                ["00000000000000a\(i)", "created\(i)", "upload", String(repeating: "2", count: 64), t, "-", "-"].joined(
                    separator: "\t") + "\n"
            passwords +=
                ["00000000000000b\(i)", "used\(i)", "full", String(repeating: "3", count: 64), "\(now)", t, "10.0.0.1"]
                .joined(separator: "\t") + "\n"
        }
        passwords +=
            ["00000000000000c0", "phone", "upload", String(repeating: "4", count: 64), "\(now)", "-", "-"].joined(
                separator: "\t") + "\n"
        writeFile(lib.web + "/app-passwords", Array(passwords.utf8))
        var pending = ""
        for (i, t) in extremes.enumerated() {
            let id = String(repeating: "c\(i)", count: 32)
            pending +=
                [id, "9223372036854775807", "\(now)", "\(now)", "10.0.0.1:1", "count"].joined(separator: "\t") + "\n"
            pending += [id, "1", t, t, "10.0.0.1:1", "times"].joined(separator: "\t") + "\n"
        }
        writeFile(lib.state + "/pending-senders", Array(pending.utf8))
        do {
            let library = try PhotoLibrary(directory: lib.photos, create: false)
            try library.database.execute(
                """
                PRAGMA ignore_check_constraints = ON;
                UPDATE photos SET received = -9223372036854775808, mtime = 9223372036854775807, width = 9223372036854775807,
                    height = -5, rating = 99, orientation = 1000, bit_depth = -9223372036854775808, size = size
                """)
        }
        lib.giveToServiceUser()
        let out = lib.rootOnlyFolder("out")
        let commands: [[String]] = [
            ["web-sessions"], ["app-password", "list"], ["app-password", "list", "--json"], ["trust", "pending"],
            ["list"], ["list", "--json"], ["list", "--sort", "taken"], ["show", "pic"], ["show", "pic", "--json"],
            ["gallery"],
            ["thumbnail", "pic", "-o", out + "/t.jpg"], ["export", "pic", "-o", out],
            ["app-password", "add", "laptop"],
            ["web-sessions", "revoke", "all"],
        ]
        for command in commands {
            let r = try lib.ptk(command)
            #expect(r.status == 0, "ptk \(command): \(r.status) \(r.stderr)")
            switch command.first {
            case "web-sessions" where command.count == 1:
                #expect(r.stdout.contains("kept") && !r.stdout.contains("planted"), "\(r.stdout)")
            case "app-password" where command.count == 2:
                #expect(r.stdout.contains("phone") && !r.stdout.contains("created0"), "\(r.stdout)")
            default: break
            }
        }
        let watch = try lib.ptk(["watch", "--since", "all"], timeout: 3)
        #expect(watch.stdout.contains("pic.png"), "\(watch.stdout) \(watch.stderr)")
    }

    // MARK: 20. Unbounded export

    @Test(
        "20: a huge sparse file, or other bytes of the same size, in place of a photo: export fails at once, writes nothing, leaves no staging"
    )
    func finding20HugeOrChangedPhoto() throws {
        let lib = try ServiceLibrary.owned()
        let photo = lib.photos + "/pic.png"
        let size = lib.photoBytes.count
        for (label, plant) in [
            ("a 1 GiB sparse file", "rm -f \"$1\" && truncate -s 1G \"$1\""),
            ("other bytes of the same size", "rm -f \"$1\" && head -c \(size) /dev/urandom > \"$1\""),
        ] {
            try asServiceUser(plant, [photo])
            let out = lib.rootOnlyFolder("out-\(label.count)")
            let started = Date()
            let r = try lib.ptk(["export", "pic", "-o", out], timeout: 60)
            let took = Date().timeIntervalSince(started)
            #expect(
                r.status == 65 && r.stderr.contains("not the photo the index holds"),
                "\(label): \(r.status) \(r.stderr)")
            #expect(took < 10, "\(label): export took \(took) s")
            #expect(listDirectory(out).isEmpty, "\(label): left in \(out): \(listDirectory(out))")
        }
        // The photo back: it exports.
        writeFile(photo, lib.photoBytes)
        chownTree(photo, serviceUID, serviceGID)
        let out = lib.rootOnlyFolder("out-good")
        let r = try lib.ptk(["export", "pic", "-o", out])
        #expect(r.status == 0 && readFile(out + "/pic.ptk/photo.data") == lib.photoBytes, "\(r.status) \(r.stderr)")
    }

    // MARK: 21. Thumbnails on a terminal, and FILE on a failure

    @Test("21a: ptk thumbnail with standard output a terminal writes no image there, -o - included")
    func finding21Terminal() throws {
        let lib = try ServiceLibrary.owned()
        let script = findProgram("script") ?? "/usr/bin/script"
        for output in [["-o", "-"], []] {
            let command = ([binDirectory + "/ptk"] + lib.ptkArguments + ["thumbnail", "pic"] + output).map {
                "'" + $0 + "'"
            }.joined(separator: " ")
            let r = try run(script, ["-q", "-e", "-c", command, "/dev/null"], absolute: true)
            #expect(r.status == 64, "thumbnail \(output): \(r.status) \(r.stdout.debugDescription)")
            #expect(
                r.stdout.contains("standard output is a terminal"), "thumbnail \(output): \(r.stdout.debugDescription)")
            #expect(
                !r.stdout.contains("JFIF") && !r.stdout.contains("PNG") && r.stdout.utf8.count < 400,
                "thumbnail \(output) wrote the image: \(r.stdout.utf8.count) bytes")
        }
        // Redirected, it is written.
        let file = lib.top + "/redirected"
        let piped = try run(
            "/bin/sh",
            ["-c", "\"$@\" > \(file)", "sh", binDirectory + "/ptk"] + lib.ptkArguments + [
                "thumbnail", "pic", "-o", "-",
            ], absolute: true)
        #expect(piped.status == 0 && readFile(file) == readFile(lib.thumbnail), "\(piped.status) \(piped.stderr)")
    }

    @Test(
        "21b: ptk thumbnail -o FILE that fails leaves no FILE (and an existing one as it was), in root's folder and in the service user's"
    )
    func finding21FailedOutput() throws {
        let lib = try ServiceLibrary.owned()
        try asServiceUser("rm -f \"$1\"", [lib.thumbnail])
        let rootFolder = lib.rootOnlyFolder("out")
        let theirs = lib.base + "/out"
        try asServiceUser("mkdir -m 0755 \"$1\"", [theirs])
        for folder in [rootFolder, theirs] {
            let r = try lib.ptk(["thumbnail", "pic", "-o", folder + "/t.jpg"])
            #expect(r.status != 0 && !r.stderr.isEmpty, "\(folder): \(r.status) \(r.stderr)")
            #expect(listDirectory(folder).isEmpty, "\(folder): left \(listDirectory(folder))")
        }
        writeFile(rootFolder + "/t.jpg", Array("the previous one".utf8))
        let r = try lib.ptk(["thumbnail", "pic", "-o", rootFolder + "/t.jpg"])
        #expect(r.status != 0)
        #expect(readFile(rootFolder + "/t.jpg") == Array("the previous one".utf8))
        #expect(listDirectory(rootFolder) == ["t.jpg"], "\(listDirectory(rootFolder))")
    }
}
