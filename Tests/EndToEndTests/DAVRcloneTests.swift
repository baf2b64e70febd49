import Foundation
import PTKTestSupport
import PTKTestTags
import Testing

/// rclone against the door: its webdav backend, configured by environment variables only (no
/// rclone.conf read or written), trusting the door's certificate, on loopback.
struct Rclone {
    let daemon: DaemonProcess
    let password: AppPassword
    let home = makeTemporaryDirectory("ptk-rclone")

    /// Runs rclone with `args`; `stdin`: a file its standard input reads (`rcat`), else none.
    func run(_ args: [String], stdin: String? = nil) throws -> Finished {
        let obscured = try EndToEndTests.run(
            findProgram("rclone") ?? "/usr/bin/rclone", ["obscure", password.password], absolute: true)
        guard obscured.status == 0 else { throw HarnessError("rclone obscure: \(obscured.stderr)") }
        let rclone = findProgram("rclone") ?? "/usr/bin/rclone"
        // A shell only to give rclone a file as its standard input: its arguments pass through as they are.
        let (binary, prefix) =
            stdin == nil ? (rclone, []) : ("/bin/sh", ["-c", "exec \"$0\" \"$@\" < \"$PTK_STDIN\"", rclone])
        return try EndToEndTests.run(
            binary,
            prefix + args + [
                "--config", home + "/rclone.conf", "--webdav-vendor", "other", "--ca-cert", daemon.webCertificate,
                "--retries", "1", "--low-level-retries", "1", "--contimeout", "5s", "--timeout", "20s",
            ],
            timeout: 60, absolute: true,
            environment: [
                "HOME": home, "XDG_CACHE_HOME": home + "/cache",
                "RCLONE_CONFIG_PTK_TYPE": "webdav", "RCLONE_CONFIG_PTK_URL": daemon.davURL,
                "RCLONE_CONFIG_PTK_VENDOR": "other", "RCLONE_CONFIG_PTK_USER": password.user,
                "RCLONE_CONFIG_PTK_PASS": obscured.stdout.trimmingCharacters(in: .whitespacesAndNewlines),
                "PTK_STDIN": stdin ?? "/dev/null",
            ])
    }

    /// The files a `copy -v` run says it copied (its "Copied (new)" / "Copied (replaced ...)" lines).
    static func copied(_ log: String) -> [String] {
        log.split(separator: "\n").compactMap { line -> String? in
            guard let r = line.range(of: #"INFO  : (.+): Copied \("#, options: .regularExpression) else { return nil }
            let s = String(line[r])
            return String(s.dropFirst("INFO  : ".count).dropLast(": Copied (".count))
        }
    }

    /// The figures of a run's last stats block: "Transferred: N / M" (files), and "Checks: N / M".
    static func figures(_ log: String, _ label: String) -> (Int, Int)? {
        let lines = log.split(separator: "\n").filter {
            $0.hasPrefix(label + ":") && !$0.contains(" B /") && !$0.contains("Bytes")
        }
        guard let last = lines.last,
            let r = last.range(of: #"(\d+) / (\d+)"#, options: .regularExpression)
        else { return nil }
        let parts = last[r].split(separator: "/").map { Int($0.trimmingCharacters(in: .whitespaces))! }
        return (parts[0], parts[1])
    }

    func cleanUp() { removeTree(home) }
}

@Suite(
    "End to end: WebDAV door with rclone (issue 44)", .serialized,
    .enabled(if: haveProgram("rclone") || davClientsRequired, "needs rclone"), .tags(.endToEnd))
struct DAVRcloneTests {
    /// Copies `tree` with rclone to `remote`, checks it, copies again, and returns the runs'
    /// logs; every step is asserted here.
    func copyTwice(_ rclone: Rclone, _ tree: [String: [UInt8]], remote: String) throws {
        let source = rclone.home + "/Pictures"
        writeTree(tree, in: source)
        // Finder's and Explorer's litter rides along, as it does in a real Pictures folder.
        writeFile(source + "/.DS_Store", Array("Bud1 not a photo".utf8))
        writeFile(source + "/2024/Thumbs.db", Array(repeating: 7, count: 300))
        let first = try rclone.run(["copy", "-v", source, remote])
        #expect(first.status == 0, "\(first.stderr)")
        let names = Set(tree.keys).union([".DS_Store", "2024/Thumbs.db"])
        #expect(Set(Rclone.copied(first.stderr)) == names, "\(first.stderr)")
        let check = try rclone.run(["check", source, remote])
        #expect(check.status == 0, "\(check.stderr)")
        #expect(check.stderr.contains("0 differences found"), "\(check.stderr)")
        #expect(check.stderr.contains("\(names.count) matching files"), "\(check.stderr)")
        // The second run finds everything there: nothing copied, every file checked.
        let second = try rclone.run(["copy", "-v", source, remote])
        #expect(second.status == 0, "\(second.stderr)")
        #expect(Rclone.copied(second.stderr).isEmpty, "\(second.stderr)")
        #expect(Rclone.figures(second.stderr, "Transferred").map { $0.0 } ?? 0 == 0, "\(second.stderr)")
        #expect(
            Rclone.figures(second.stderr, "Checks").map { $0.0 == names.count && $0.1 == names.count } == true,
            "\(second.stderr)")
        // What rclone lists is what it sent, litter included (listed back to this client).
        let listed = try rclone.run(["lsf", "-R", "--files-only", remote])
        #expect(
            Set(listed.stdout.split(separator: "\n").map(String.init)) == names, "\(listed.stdout) \(listed.stderr)")
    }

    @Test(
        "upload access: rclone copy of folders of PNG, JPEG and HEIC, rclone check, a second copy sends nothing; the photos land byte-identical in the sender's folder (layout sender), the litter never among them"
    )
    func uploadAccess() throws {
        let d = try DaemonProcess.withDAV(["--layout", "sender"])
        // Someone else's photo, which this password never sees.
        let other = makePNG(size: 5_000, seed: 9)
        writeFile(d.root + "/other.png", other)
        #expect(try send(d, [d.root + "/other.png"], ["--name", "alice"]).status == 0)
        let pw = try d.appPassword("rclone", access: "upload")
        let rclone = Rclone(daemon: d, password: pw)
        defer { rclone.cleanUp() }
        let before = try rclone.run(["lsf", "-R", "ptk:"])
        #expect(before.status == 0 && before.stdout.isEmpty, "\(before.stdout) \(before.stderr)")
        let tree = davPhotoTree(seed: 1)
        try copyTwice(rclone, tree, remote: "ptk:")
        var expected = ["alice/other.png": other]
        for (path, bytes) in tree { expected["dav: rclone/" + path] = bytes }
        #expect(d.photoFiles == expected, "\(d.photoFiles.keys.sorted())")
        #expect(d.photoFiles.keys.allSatisfy { !isClientLitter($0) })
        // The library indexes them, sent by "dav: rclone".
        #expect(
            eventually(30) {
                (try? listed(d)).map { Set($0.compactMap { $0["Name"] as? String }) == Set(expected.keys) } ?? false
            },
            "\((try? listed(d)) ?? [])")
        let senders = try listed(d).filter { ($0["Name"] as? String)?.hasPrefix("dav: rclone/") == true }.map {
            $0["SenderName"] as? String
        }
        #expect(senders.count == tree.count && senders.allSatisfy { $0 == "dav: rclone" }, "\(senders)")
        #expect(d.stop() == 0)
    }

    @Test(
        "full access: the received-photos directory is the share; rclone copies a tree into a folder of it and checks it, a second copy sends nothing, and it sees the photos others sent"
    )
    func fullAccess() throws {
        let d = try DaemonProcess.withDAV()
        let other = makePNG(size: 5_000, seed: 8)
        writeFile(d.root + "/other.png", other)
        #expect(try send(d, [d.root + "/other.png"], ["--name", "alice"]).status == 0)
        let pw = try d.appPassword("nas", access: "full")
        let rclone = Rclone(daemon: d, password: pw)
        defer { rclone.cleanUp() }
        let before = try rclone.run(["lsf", "-R", "ptk:"])
        #expect(before.status == 0 && before.stdout == "other.png\n", "\(before.stdout) \(before.stderr)")
        let tree = davPhotoTree(seed: 2)
        try copyTwice(rclone, tree, remote: "ptk:Backup")
        var expected = ["other.png": other]
        for (path, bytes) in tree { expected["Backup/" + path] = bytes }
        #expect(d.photoFiles == expected, "\(d.photoFiles.keys.sorted())")
        // rclone reads back what another sender sent, byte for byte.
        let back = rclone.home + "/back"
        let pulled = try rclone.run(["copy", "ptk:other.png", back])
        #expect(pulled.status == 0 && readFile(back + "/other.png") == other, "\(pulled.stderr)")
        #expect(d.stop() == 0)
    }
}
