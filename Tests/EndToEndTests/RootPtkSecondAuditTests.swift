import Foundation
import Glibc
import PTKDigest
import PTKSystem
import PTKTestSupport
import Testing

@testable import PTKLibrary

// Issue 54, the second audit of root's `ptk` (after findings 16 to 21 were fixed): the decision
// whom to act as was made on paths before anything was opened, and a swap of a folder for a
// moment kept root's uid 0 in the service user's library; planted sparse thumbnails and a
// matching index row amplified what root's gallery and export wrote; file leases held root's
// ptk silently; an ACL's refusal named the wrong group. The races are made to happen at one
// exact step with `OpenGate` (fanotify holds ptk's open of a chosen file while the tree is
// changed), not by timing.

/// Which swaps a gate made: each done once, in order.
final class SwapSteps: @unchecked Sendable {
    // `done` is read and written under `lock`.
    private let lock = NSLock()
    private var done: Set<String> = []

    /// Runs `body` the first time `step` is asked for; true if it ran.
    @discardableResult
    func once(_ step: String, _ body: () -> Void) -> Bool {
        lock.lock()
        let first = done.insert(step).inserted
        lock.unlock()
        if first { body() }
        return first
    }

    func happened(_ step: String) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        return done.contains(step)
    }
}

/// A hot rollback journal naming `superJournal`, which SQLite deletes when it replays it (as in
/// RootBoundaryTests' finding 1).
func hotJournal(naming superJournal: String) -> [UInt8] {
    let name = Array(superJournal.utf8)
    let sum = name.reduce(0) { $0 + Int($1) }
    return [UInt8](repeating: 0x01, count: 512) + name + bigEndian32(name.count) + bigEndian32(sum)
        + [0xD9, 0xD5, 0x05, 0xF9, 0x20, 0xA1, 0x63, 0xD7]
}

/// Runs python3 with `script` (and `args`), as root.
func python(_ script: String, _ args: [String] = []) throws -> Finished {
    let python = fileExists("/usr/bin/python3") ? "/usr/bin/python3" : findProgram("python3") ?? "/usr/bin/python3"
    return try run(python, ["-c", script] + args, absolute: true)
}

/// The bytes the regular files below `path` take, by their sizes and by the blocks they use.
func bytesBelow(_ path: String) -> (size: Int, allocated: Int) {
    var size = 0
    var allocated = 0
    walkTree(path) { _, st in
        if isRegular(st) {
            size += Int(st.st_size)
            allocated += Int(st.st_blocks) * 512
        }
    }
    return (size, allocated)
}

extension RootPtkHostileStateTests {
    // MARK: Second audit, 1. The decision on paths

    @Test(
        "second audit 1: the photos directory as root's link into the service user's folder, swapped for a moment while ptk decides (at its opening of ptkd.conf): root's ptk never works there as root",
        .tags(.root))
    func secondAuditSwappedWhileDeciding() throws {
        let lib = try ServiceLibrary()
        // A library of root's, where the service user's link will point for a moment.
        let roots = lib.top + "/rootlib"
        #expect(try run("/bin/cp", ["-a", lib.photos, roots], absolute: true).status == 0)
        lib.giveToServiceUser()
        let s = Sentinel(lib.top + "/sentinel", ["secret": sentinelText()])
        // The service user's journal names the sentinel: replayed by SQLite as root, it deletes it.
        writeFile(lib.top + "/journal", hotJournal(naming: s.path("secret")))
        try asServiceUser(
            "cp \"$1\" \"$2-journal\" && ln -s \"$3\" \"$4/decoy\"", [lib.top + "/journal", lib.index, roots, lib.base])
        let link = lib.top + "/photos"
        #expect(symlink(lib.photos, link) == 0)
        let decoy = lib.base + "/decoy"
        let photos = lib.photos
        let args = ["--config", lib.top + "/ptkd.conf", "--dir", link, "--state-dir", lib.state]

        // Swapped as ptk reads its configuration (just before it decides), back as it opens root's library.
        let steps = SwapSteps()
        let gate = try OpenGate([lib.top + "/ptkd.conf", roots]) { index, _ in
            if index == 0 {
                steps.once("away") { exchangeNames(photos, decoy) }
            } else if steps.happened("away") {
                steps.once("back") { exchangeNames(photos, decoy) }
            }
        }
        let r = try run("ptk", args + ["list"])
        gate.stop()
        if steps.happened("away") && !steps.happened("back") { exchangeNames(lib.photos, decoy) }
        #expect(steps.happened("away"), "ptk never opened its configuration")
        let problems = s.problems([r.stdout, r.stderr])
        #expect(problems.isEmpty, "root's ptk worked on the service user's library as root: \(problems)")
        #expect(
            r.status == refusedStatus && r.stderr.contains("leads to another directory"),
            "\(r.status) \(r.stdout) \(r.stderr)")
        #expect(isDirectory(linkStatus(lib.photos)) && isSymlink(linkStatus(decoy)), "the tree was not put back")

        // The auditor's decoy: a dangling link. A way that cannot be opened is refused, never root's.
        _ = unlink(decoy)
        try asServiceUser("ln -s /nonexistent-ptk-decoy \"$1\"", [decoy])
        let dangling = SwapSteps()
        let second = try OpenGate([lib.top + "/ptkd.conf"]) { _, _ in
            dangling.once("away") { exchangeNames(photos, decoy) }
        }
        let d = try run("ptk", args + ["note", "pic", "as root"])
        second.stop()
        if dangling.happened("away") { exchangeNames(lib.photos, decoy) }
        #expect(
            d.status == refusedStatus && d.stderr.contains("/nonexistent-ptk-decoy") && d.stderr.contains("refused"),
            "\(d.status) \(d.stderr)")
        #expect(s.problems([d.stdout, d.stderr]).isEmpty)

        // Left alone (its journal gone), the same link works, as the service user.
        try asServiceUser("rm -f \"$1-journal\"", [lib.index])
        let ok = try run("ptk", args + ["note", "pic", "through root's link"])
        #expect(ok.status == 0, "\(ok.status) \(ok.stderr)")
        let show = try run("ptk", args + ["show", "pic"])
        #expect(show.status == 0 && show.stdout.contains("through root's link"), "\(show.status) \(show.stderr)")
        var notTheirs: [String] = []
        walkTree(lib.photos) { path, st in if st.st_uid != serviceUID { notTheirs.append(path) } }
        #expect(notTheirs.isEmpty, "made by root in the service user's library: \(notTheirs)")
        #expect(s.problems().isEmpty)
    }

    // MARK: Second audit, 2 and 3. Amplified copies

    @Test(
        "second audit 2: planted sparse thumbnails (16 MiB - 1, and a small one) are left out of root's gallery -o and refused by thumbnail -o, saying why; what is copied is the real thumbnail only"
    )
    func secondAuditSparseThumbnails() throws {
        let lib = try ServiceLibrary()
        // Rows for big0..2.png (copies of pic.png) whose 360-pixel thumbnails are sparse files of
        // 16 MiB - 1, and small.png whose thumbnail is a sparse 200 kB: no room on disk, any size copied.
        let plant = try python(
            """
            import sqlite3, sys, os, shutil
            d = sys.argv[1]
            db = sqlite3.connect(d + "/.ptk/index.sqlite")
            # The stored columns only: SQLite derives the generated ones (hidden 2 or 3).
            names = [c[1] for c in db.execute("pragma table_xinfo(photos)") if c[6] == 0]
            row = dict(zip(names, db.execute("select %s from photos where id = 1" % ",".join(names)).fetchone()))
            # The thumbnails' format is pic.png's (a small PNG's are PNG, others' JPEG).
            ending = [f for f in os.listdir(d + "/.ptk/thumbnails") if f.startswith("1-360.")][0].split(".")[-1]
            for name, size in [("big0.png", 16 * 1024 * 1024 - 1), ("big1.png", 16 * 1024 * 1024 - 1), ("big2.png", 16 * 1024 * 1024 - 1), ("small.png", 200000)]:
                shutil.copyfile(d + "/pic.png", d + "/" + name)
                r = dict(row); r["id"] = None; r["name"] = name
                cur = db.execute("insert into photos(%s) values(%s)" % (",".join(r), ",".join("?" * len(r))), list(r.values()))
                with open(d + "/.ptk/thumbnails/%d-360.%s" % (cur.lastrowid, ending), "wb") as f:
                    f.truncate(size)
            db.commit()
            """, [lib.photos])
        #expect(plant.status == 0, "\(plant.stderr)")
        lib.giveToServiceUser()
        let out = lib.rootOnlyFolder("galout")
        let g = try lib.ptk(["gallery", "-o", out], timeout: 120)
        #expect(g.status == 0, "\(g.status) \(g.stderr)")
        #expect(g.stderr.components(separatedBy: "left out of the gallery").count - 1 == 4, "\(g.stderr)")
        #expect(g.stderr.contains("more than the library makes there") && g.stderr.contains("sparse"), "\(g.stderr)")
        let written = bytesBelow(out)
        #expect(
            written.size < 1 << 20 && written.allocated < 2 << 20,
            "root's gallery wrote \(written) bytes into \(out): \(listDirectory(out + "/thumbnails"))")
        #expect(listDirectory(out + "/thumbnails") == [lib.thumbnailName], "\(listDirectory(out + "/thumbnails"))")
        // ptk thumbnail -o FILE of one: refused, nothing written.
        let files = lib.rootOnlyFolder("thumbout")
        for name in ["big0", "small"] {
            let t = try lib.ptk(["thumbnail", name, "-o", files + "/t.jpg"])
            #expect(
                t.status != 0
                    && (t.stderr.contains("more than the library makes there") || t.stderr.contains("sparse")),
                "\(name): \(t.status) \(t.stderr)")
            #expect(listDirectory(files).isEmpty, "\(name): \(listDirectory(files))")
        }
    }

    @Test(
        "second audit 3: export of a sparse file with an index row that agrees (size and SHA-256 of zeros) writes nothing: larger than max-file-size, or no PNG"
    )
    func secondAuditExportAgreeingRow() throws {
        let lib = try ServiceLibrary()
        writeFile(lib.top + "/ptkd.conf", Array("max-file-size = 1M\n".utf8))
        // The row of pic.png made to agree with z.png, zeros of `size` bytes (sparse).
        func plant(_ size: Int) throws {
            let p = try python(
                """
                import sqlite3, sys, os, hashlib
                d, size = sys.argv[1], int(sys.argv[2])
                with open(d + "/z.png", "wb") as f: f.truncate(size)
                h = hashlib.sha256(); z = bytes(1 << 16)
                for _ in range(size >> 16): h.update(z)
                h.update(bytes(size & 0xFFFF))
                st = os.stat(d + "/z.png")
                db = sqlite3.connect(d + "/.ptk/index.sqlite")
                db.execute("update photos set name='z.png', size=?, sha256=?, inode=?, mtime=? where id=1", (size, h.hexdigest(), st.st_ino, int(st.st_mtime * 1000)))
                db.commit()
                """, [lib.photos, "\(size)"])
            #expect(p.status == 0, "\(p.stderr)")
            chownTree(lib.base, serviceUID, serviceGID)
        }
        for (size, says) in [(4 << 20, "max-file-size"), (64 << 10, "not a well-formed PNG")] {
            try plant(size)
            let out = lib.rootOnlyFolder("out-\(size)")
            let r = try lib.ptk(["export", "z", "-o", out], timeout: 60)
            #expect(r.status == 65 && r.stderr.contains(says), "\(size) bytes: \(r.status) \(r.stdout) \(r.stderr)")
            #expect(listDirectory(out).isEmpty, "\(size) bytes: left in \(out): \(listDirectory(out))")
        }
    }

    // MARK: Second audit, 4. Leases

    @Test(
        "second audit 4: read leases the service user holds on the index's files and a lock file stop library commands after 30 s and lock-file commands after 10 s (exit 74), saying what they wait for"
    )
    func secondAuditLeases() throws {
        let lib = try ServiceLibrary.owned()
        try asServiceUser("touch \"$1-wal\" \"$1-shm\" \"$2\"", [lib.index, lib.web + "/.lock"])
        let script = """
            import fcntl, os, signal, sys, time
            signal.signal(signal.SIGIO, lambda *a: None)  # told to let go: it does not
            fds = []
            for path in sys.argv[1:]:
                fd = os.open(path, os.O_RDONLY)
                fcntl.fcntl(fd, 1024, fcntl.F_RDLCK)  # F_SETLEASE
                fds.append(fd)
            print("ready", flush=True)
            time.sleep(600)
            """
        let python = fileExists("/usr/bin/python3") ? "/usr/bin/python3" : findProgram("python3") ?? "/usr/bin/python3"
        let holder = try Background(
            findProgram("setpriv") ?? "/usr/bin/setpriv",
            [
                "--reuid=\(serviceUID)", "--regid=\(serviceGID)", "--clear-groups", "--", python, "-c", script,
                lib.index, lib.index + "-wal", lib.index + "-shm", lib.web + "/.lock",
            ], in: lib.top)
        guard eventuallyValue(20, { holder.stdout.contains("ready") ? true : nil }) == true else {
            Issue.record("the lease holder did not start: \(holder.stderr)")
            return
        }
        let commands: [[String]] = [["list"], ["web-sessions", "revoke", "all"]]
        let results = ptkConcurrently(lib, commands, timeout: 100)
        if let r = results[0].0 {
            let took = results[0].1
            #expect(r.status == 74 && took >= 25 && took < 45, "list: \(r.status) after \(took) s: \(r.stderr)")
            #expect(
                r.stderr.contains("lease") && r.stderr.contains("index.sqlite") && r.stderr.contains("30 seconds"),
                "list: \(r.stderr)")
        } else {
            Issue.record("list could not be run")
        }
        if let r = results[1].0 {
            let took = results[1].1
            #expect(
                r.status == 74 && took >= 8 && took < 25,
                "web-sessions revoke: \(r.status) after \(took) s: \(r.stderr)")
            #expect(
                r.stderr.contains("lease") && r.stderr.contains("web/.lock") && r.stderr.contains("10 seconds"),
                "web-sessions revoke: \(r.stderr)")
        } else {
            Issue.record("web-sessions revoke could not be run")
        }
        kill(holder.pid, SIGKILL)
        _ = holder.wait(10)
        // Let go, both work.
        let list = try lib.ptk(["list"])
        #expect(list.status == 0, "\(list.stderr)")
        let revoke = try lib.ptk(["web-sessions", "revoke", "all"])
        #expect(revoke.status == 0, "\(revoke.stderr)")
    }

    @Test(
        "second audit, the same shape: a root-owned state directory or .ptk holding files of the service user: root's ptk acts as that user, never writes them as root",
        .tags(.root))
    func secondAuditFilesOfTheServiceUserInRootsFolders() throws {
        let lib = try ServiceLibrary()
        // The administrator gave the folders to root, not what is in them (chown without -R).
        let trusted = lib.state + "/trusted-senders"
        writeFile(trusted, Array("\(String(repeating: "ab", count: 32)) planted by the service user\n".utf8))
        #expect(chown(trusted, serviceUID, serviceGID) == 0)
        let before = readFile(trusted)
        let r = try lib.ptk(["trust", "allow", String(repeating: "cd", count: 32), "root's laptop"])
        #expect(
            r.status != 0 && r.stderr.contains("denied"),
            "trust allow as root over the service user's file: \(r.status) \(r.stdout) \(r.stderr)")
        #expect(readFile(trusted) == before && linkStatus(trusted)?.st_uid == serviceUID, "written as root")
        // The index of the service user in a .ptk of root's: read and written only as that user.
        #expect(chown(lib.index, serviceUID, serviceGID) == 0)
        for suffix in ["-wal", "-shm"] { _ = unlink(lib.index + suffix) }
        let note = try lib.ptk(["note", "pic", "as root"])
        #expect(note.status != 0 && !note.stderr.isEmpty, "\(note.status) \(note.stderr)")
        #expect(!fileExists(lib.index + "-wal") && !fileExists(lib.index + "-shm"), "made in root's .ptk as root")
    }

    // MARK: Second audit, 5. The refusal of an ACL

    @Test(
        "second audit 5: a root-owned 0755 photos directory with an access ACL granting the service user write is refused, and the message says it is the ACL"
    )
    func secondAuditAccessACL() throws {
        let lib = try ServiceLibrary()
        let acl = try python(
            """
            import os, struct, sys
            e = lambda tag, perm, id=0xFFFFFFFF: struct.pack("<HHI", tag, perm, id)
            os.setxattr(sys.argv[1], "system.posix_acl_access", struct.pack("<I", 2) + e(1, 7) + e(2, 7, int(sys.argv[2])) + e(4, 5) + e(0x10, 7) + e(0x20, 5))
            """, [lib.photos, "\(serviceUID)"])
        try #require(acl.status == 0, "cannot set an ACL here: \(acl.stderr)")
        let before = indexFingerprint(lib)
        let r = try lib.ptk(["list"])
        #expect(r.status == refusedStatus, "\(r.status) \(r.stderr)")
        #expect(
            r.stderr.contains("access ACL") && r.stderr.contains("getfacl") && r.stderr.contains("setfacl"),
            "\(r.stderr)")
        #expect(!r.stderr.contains("lets the users of group root"), "\(r.stderr)")
        #expect(indexFingerprint(lib) == before)
    }
}
