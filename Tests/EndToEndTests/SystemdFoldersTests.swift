import Foundation
import Glibc
import PTKSystem
import PTKTestSupport
import PTKTestTags
import Testing

/// The generator as `make install` writes it, calling the `ptkd` in `bin`.
private func installedGenerator(bin: String) -> String {
    String(decoding: readFile(repositoryRoot() + "/systemd/ptkd-folders.in") ?? [], as: UTF8.self)
        .replacingOccurrences(of: "@BINDIR@", with: bin)
}

/// The files below `dir`, as paths below it.
private func filesBelow(_ dir: String) -> [String] {
    (FileManager.default.enumerator(atPath: dir)?.allObjects as? [String] ?? []).sorted()
}

/// `ptkd --unit-paths` and the generator ptkd-folders, run on this host (issue 56): what the
/// drop-in holds, what is refused, and that the generator never fails.
@Suite("The unit's folders: ptkd --unit-paths and the generator", .tags(.endToEnd))
struct UnitPathsTests {
    @Test(
        "ptkd --unit-paths prints the drop-in for ptkd.conf's folders and exits 0; a folder the unit cannot open is said on stderr"
    )
    func unitPaths() throws {
        let dir = makeTemporaryDirectory("ptk-unit-paths")
        defer { removeTree(dir) }
        writeFile(
            dir + "/ptkd.conf",
            Array("inbox = /home/anna/Sync\ndrop-folder = \"/srv/drop box 50%\"\ninbox = /tmp/inbox\n".utf8))
        let r = try run("ptkd", ["--unit-paths", "--config", dir + "/ptkd.conf"])
        #expect(r.status == 0, "\(r.stderr)")
        let fingerprint = r.stdout.split(separator: "\n").first { $0.hasPrefix("Environment=") }
        #expect(
            r.stdout.split(separator: "\n").filter { !$0.hasPrefix("#") && !$0.hasPrefix("Environment=") } == [
                "[Service]", "ReadWritePaths=-\"/srv/drop box 50%%\"", "ProtectHome=tmpfs",
                "BindReadOnlyPaths=-\"/home/anna/Sync\"",
            ], "\(r.stdout)")
        #expect(fingerprint?.hasPrefix("Environment=PTK_UNIT_FOLDERS=") == true, "\(r.stdout)")
        #expect(
            r.stderr
                == "ptkd: inbox /tmp/inbox: the service sees its own /tmp (PrivateTmp=yes), not this one: choose a folder elsewhere, such as /srv/ptk; not opened to the service\n"
        )

        writeFile(dir + "/bad.conf", Array("inbox = relative/path\n".utf8))
        let bad = try run("ptkd", ["--unit-paths", "--config", dir + "/bad.conf"])
        #expect(bad.status == 64 && bad.stdout.isEmpty)
        #expect(
            bad.stderr.hasPrefix(
                "ptkd: \(dir)/bad.conf:1: invalid value 'relative/path' for inbox: expected an absolute path\n"),
            "\(bad.stderr)")
    }

    @Test(
        "the generator writes ptkd.service.d/50-folders.conf; on a bad ptkd.conf it writes nothing, says one line and exits 0"
    )
    func generator() throws {
        let dir = makeTemporaryDirectory("ptk-generator")
        defer { removeTree(dir) }
        // A ptkd that reads this test's ptkd.conf: the generator itself reads /etc/ptk/ptkd.conf.
        mkdir(dir + "/bin", 0o755)
        writeFile(
            dir + "/bin/ptkd", Array("#!/bin/sh\nexec \(binDirectory)/ptkd \"$@\" --config \(dir)/ptkd.conf\n".utf8))
        chmod(dir + "/bin/ptkd", 0o755)
        writeFile(dir + "/ptkd-folders", Array(installedGenerator(bin: dir + "/bin").utf8))
        chmod(dir + "/ptkd-folders", 0o755)
        func generate(_ out: String, environment: [String: String] = [:]) throws -> Finished {
            mkdir(out, 0o755)
            // Not run by systemd (no SYSTEMD_SCOPE): it speaks on stderr, not in the kernel log.
            return try run(
                dir + "/ptkd-folders", [out, out + ".early", out + ".late"], absolute: true,
                environment: ["SYSTEMD_SCOPE": ""].merging(environment) { _, new in new })
        }

        writeFile(dir + "/ptkd.conf", Array("drop-folder = /srv/drop\n".utf8))
        let good = try generate(dir + "/good")
        #expect(good.status == 0 && good.stdout.isEmpty && good.stderr.isEmpty, "\(good.stderr)")
        #expect(filesBelow(dir + "/good") == ["ptkd.service.d", "ptkd.service.d/50-folders.conf"])
        let expected = try run("ptkd", ["--unit-paths", "--config", dir + "/ptkd.conf"]).stdout
        #expect(readFile(dir + "/good/ptkd.service.d/50-folders.conf") == Array(expected.utf8))
        #expect(expected.contains("\nReadWritePaths=-\"/srv/drop\"\n"))

        writeFile(dir + "/ptkd.conf", Array("inbox = /tmp/x\ndrop-folder = /srv/drop\n".utf8))
        let refused = try generate(dir + "/refused")
        #expect(refused.status == 0)
        #expect(
            refused.stderr.hasPrefix("ptkd-folders: ptkd: inbox /tmp/x: the service sees its own /tmp")
                && refused.stderr.filter { $0 == "\n" }.count == 1, "\(refused.stderr)")
        #expect(filesBelow(dir + "/refused") == ["ptkd.service.d", "ptkd.service.d/50-folders.conf"])

        writeFile(dir + "/ptkd.conf", Array("inbox = /srv/a\nbogus = 1\n".utf8))
        let bad = try generate(dir + "/bad")
        #expect(bad.status == 0)
        #expect(bad.stderr == "ptkd-folders: ptkd: \(dir)/ptkd.conf:2: unknown key 'bogus'\n", "\(bad.stderr)")
        #expect(filesBelow(dir + "/bad").isEmpty)

        let initrd = try generate(dir + "/initrd", environment: ["SYSTEMD_IN_INITRD": "1"])
        #expect(initrd.status == 0 && initrd.stderr.isEmpty && filesBelow(dir + "/initrd").isEmpty)
        removeTree(dir + "/bin")
        let gone = try generate(dir + "/gone")
        #expect(gone.status == 0 && gone.stderr.isEmpty && filesBelow(dir + "/gone").isEmpty)
    }
}

/// The generator under a real systemd (issue 56): ptkd.conf's folders opened to the service by
/// `systemctl daemon-reload`, and nothing else.
@Suite(
    "The unit's folders under a real systemd (systemd-nspawn)",
    .enabled(
        if: canBootSystem || systemTestRequired,
        "needs root, systemd-nspawn (Debian package systemd-container) and the Debian root that scripts/system-root.sh builds"
    ),
    .serialized, .tags(.endToEnd, .root, .slow))
struct SystemdFoldersTests {
    @Test(
        "edit ptkd.conf, daemon-reload, restart: an inbox below /home and a drop folder with spaces and % are served, a missing one is said, other homes stay hidden; before the reload ptkd says it is owed",
        arguments: ["make install"] + (builtPackages.isEmpty ? [] : [".debs"]))
    func foldersFromConfiguration(installedBy: String) throws {
        try #require(
            canBootSystem, "no Debian root at \(systemRoot): run scripts/system-root.sh as root (it needs debootstrap)")
        let inboxPhoto = readFile(pngSuiteDirectory() + "/basn6a08.png")!
        let dropPhoto = readFile(pngSuiteDirectory() + "/basn2c08.png")!
        let drop = "/srv/ptk/drop box: 50% \"q\""
        // As `make install` leaves it, and from the packages when `make deb` has built them.
        let system = try BootedSystem(
            hostname: "folders", installation: installedBy == ".debs" ? .packages(builtPackages) : .makeInstall)
        let dropIn = "/run/systemd/generator/ptkd.service.d/50-folders.conf"

        // At boot, with no folder configured: the drop-in opens nothing.
        #expect(try system.exec(["systemctl", "is-active", "ptkd"]).stdout == "active\n", "\(system.journal("ptkd"))")
        let empty = try system.exec(["cat", dropIn]).stdout
        #expect(empty.hasSuffix("[Service]\nEnvironment=PTK_UNIT_FOLDERS=cbf29ce484222325\n"), "\(empty)")

        // The folders, as an administrator makes them: the inbox readable by ptk, the drop folder writable.
        for folder in ["/home/anna/Sync/phone", drop, "/home/bob/private"] {
            #expect(try system.exec(["mkdir", "-p", folder]).status == 0)
        }
        #expect(try system.exec(["chown", "ptk:ptk", drop]).status == 0)
        writeFile(system.root + "/home/bob/private/secret.png", inboxPhoto)
        let conf = system.root + "/etc/ptk/ptkd.conf"
        let added = """

            inbox = /home/anna/Sync
            drop-folder = "\(drop)"
            drop-folder = /srv/ptk/not-made-yet
            inbox-settle = 1s

            """
        writeFile(conf, readFile(conf)! + Array(added.utf8))

        // Restarted without the reload: the unit still opens nothing, and ptkd says what to run.
        #expect(try system.exec(["systemctl", "restart", "ptkd"]).status == 0)
        #expect(
            eventually(10) {
                system.journal("ptkd").contains("run `systemctl daemon-reload`, then `systemctl restart ptkd`")
            },
            "\(system.journal("ptkd"))")

        // The documented flow.
        #expect(try system.exec(["systemctl", "daemon-reload"]).status == 0)
        #expect(try system.exec(["systemctl", "restart", "ptkd"]).status == 0)
        #expect(try system.exec(["systemctl", "is-active", "ptkd"]).stdout == "active\n", "\(system.journal("ptkd"))")
        let written = try system.exec(["cat", dropIn]).stdout
        #expect(written.contains("\nReadWritePaths=-\"/srv/ptk/drop box: 50%% \\\"q\\\"\"\n"), "\(written)")
        let shown = try system.exec([
            "systemctl", "show", "ptkd", "-p", "ReadWritePaths", "-p", "BindReadOnlyPaths", "-p", "ProtectHome",
        ]).stdout
        #expect(
            Set(shown.split(separator: "\n")) == [
                "ReadWritePaths=\"-/srv/ptk/drop box: 50% \\\"q\\\"\" -/srv/ptk/not-made-yet",
                "BindReadOnlyPaths=-/home/anna/Sync:/home/anna/Sync:rbind", "ProtectHome=tmpfs",
            ], "\(shown)")

        // Still as closed as shipped (ProtectHome=tmpfs costs 0.1 against ProtectHome=yes).
        let security = try system.exec(["systemd-analyze", "security", "ptkd", "--no-pager"]).stdout
        let exposure = security.split(separator: "\n").last { $0.contains("Overall exposure level") }
        let figure = exposure.flatMap { Double($0.split(separator: ":").last!.split(separator: " ").first!) }
        #expect(figure.map { $0 <= 1.5 } == true, "\(exposure ?? "no exposure line")")

        // Photos dropped in each are taken: the drop folder's moved, the inbox's copied.
        writeFile(system.root + "/home/anna/Sync/phone/in.png", inboxPhoto)
        writeFile(system.root + drop + "/dropped.png", dropPhoto)
        let received = system.root + "/var/lib/ptk/received"
        #expect(
            eventually(30) {
                readFile(received + "/in.png") == inboxPhoto && readFile(received + "/dropped.png") == dropPhoto
            },
            "\(listDirectory(received)) \(system.journal("ptkd"))")
        #expect(eventually(10) { !FileManager.default.fileExists(atPath: system.root + drop + "/dropped.png") })
        #expect(readFile(system.root + "/home/anna/Sync/phone/in.png") == inboxPhoto)

        // The missing folder is said, and the others served; no reload is owed now.
        let journal = system.journal("ptkd")
        #expect(journal.contains("drop-folder /srv/ptk/not-made-yet: cannot be read"), "\(journal)")
        let restarts = journal.components(separatedBy: "run `systemctl daemon-reload`").count - 1
        #expect(restarts == 1, "\(journal)")

        // Inside the service, /home holds only the folder configured; bob's home is not there.
        let pid = try system.exec(["systemctl", "show", "ptkd", "-p", "MainPID", "--value"]).stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let seen = try system.exec(["nsenter", "-t", pid, "-m", "--", "find", "/home"]).stdout
        #expect(
            seen == "/home\n/home/anna\n/home/anna/Sync\n/home/anna/Sync/phone\n/home/anna/Sync/phone/in.png\n",
            "\(seen)")
        #expect(
            try system.exec(["nsenter", "-t", pid, "-m", "--", "touch", "/home/anna/Sync/x"]).status != 0,
            "the inbox is writable inside the service")

        // A broken ptkd.conf: the reload writes no drop-in and does not fail; the generator says
        // why in one line (here, run by hand: the container has no kernel log to say it in).
        let good = readFile(conf)!
        writeFile(conf, good + Array("bogus = 1\n".utf8))
        #expect(try system.exec(["systemctl", "daemon-reload"]).status == 0)
        #expect(try system.exec(["test", "-e", dropIn]).status != 0)
        #expect(try system.exec(["systemctl", "is-active", "ptkd"]).stdout == "active\n")
        let byHand = try system.exec(["/usr/lib/systemd/system-generators/ptkd-folders", "/run/by-hand"])
        #expect(byHand.status == 0)
        let badLine = good.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).count
        #expect(
            byHand.stderr == "ptkd-folders: ptkd: /etc/ptk/ptkd.conf:\(badLine): unknown key 'bogus'\n",
            "\(byHand.stderr)")
        writeFile(conf, good)
        #expect(try system.exec(["systemctl", "daemon-reload"]).status == 0)
        #expect(try system.exec(["cat", dropIn]).stdout == written)
    }
}
