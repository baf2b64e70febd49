import PTKCLI
import PTKSystem
import PTKTestTags
import Testing

@testable import PTKConfiguration

/// The systemd drop-in that opens ptkd.conf's inboxes and drop folders to the unit (issue 56):
/// its exact text, how paths are written so that systemd reads them back, and what is refused.
@Suite("The unit's folders, from the configuration", .tags(.unit))
struct ServiceFoldersTests {
    let header = """
        # Made by `ptkd --unit-paths` from ptkd.conf's inbox and drop-folder lines; the generator
        # ptkd-folders writes it at boot and at every `systemctl daemon-reload`. Edit ptkd.conf, not this.
        [Service]

        """

    func environmentLine(_ inboxes: [String], _ drops: [String]) -> String {
        "Environment=PTK_UNIT_FOLDERS=\(ServiceFolders.fingerprint(inboxes: inboxes, dropFolders: drops))\n"
    }

    @Test("no folder configured: only the fingerprint, nothing opened")
    func none() {
        let f = ServiceFolders(DaemonConfiguration())
        #expect(f.dropIn == header + environmentLine([], []))
        #expect(f.refused.isEmpty)
    }

    @Test("an inbox read-only, a drop folder writable, each ignored when missing (the \"-\")")
    func outsideHome() {
        let f = ServiceFolders(inboxes: ["/srv/ptk/inbox", "/mnt/sync"], dropFolders: ["/srv/ptk/drop"])
        #expect(
            f.dropIn
                == header + environmentLine(["/srv/ptk/inbox", "/mnt/sync"], ["/srv/ptk/drop"]) + """
                    ReadOnlyPaths=-"/srv/ptk/inbox"
                    ReadOnlyPaths=-"/mnt/sync"
                    ReadWritePaths=-"/srv/ptk/drop"

                    """)
        #expect(f.refused.isEmpty)
    }

    @Test("below /home, /root or /run/user: an empty read-only /home with only those folders bound into it")
    func underHome() {
        let f = ServiceFolders(
            inboxes: ["/home/anna/Sync", "/srv/inbox"], dropFolders: ["/root/drop", "/run/user/1000/x", "/homework"])
        #expect(
            f.dropIn
                == header
                + environmentLine(["/home/anna/Sync", "/srv/inbox"], ["/root/drop", "/run/user/1000/x", "/homework"])
                    + """
                    ReadOnlyPaths=-"/srv/inbox"
                    ReadWritePaths=-"/homework"
                    ProtectHome=tmpfs
                    BindReadOnlyPaths=-"/home/anna/Sync"
                    BindPaths=-"/root/drop"
                    BindPaths=-"/run/user/1000/x"

                    """)
    }

    @Test(
        "spaces, quotes, backslashes, % (a specifier), colons (BindPaths' separator) and non-ASCII are written so systemd reads them back"
    )
    func quoting() {
        #expect(ServiceFolders.quoted("/srv/a b") == "\"/srv/a b\"")
        #expect(ServiceFolders.quoted(#"/srv/say "hi"/back\slash"#) == #""/srv/say \"hi\"/back\\slash""#)
        #expect(ServiceFolders.quoted("/srv/100%/%n") == "\"/srv/100%%/%%n\"")
        #expect(ServiceFolders.quoted("/home/a:b/Été ☀︎") == "\"/home/a:b/Été ☀︎\"")
        #expect(ServiceFolders.quoted("/srv/'single'; # not a comment") == "\"/srv/'single'; # not a comment\"")
        let f = ServiceFolders(inboxes: [], dropFolders: ["/home/anna/Drop box: 50% \"x\""])
        #expect(f.dropIn.hasSuffix("ProtectHome=tmpfs\nBindPaths=-\"/home/anna/Drop box: 50%% \\\"x\\\"\"\n"))
    }

    @Test("a folder systemd cannot open to the service is refused, said, and left as a comment; the others are opened")
    func refused() {
        let long = "/srv/" + String(repeating: "n", count: 256)
        let longPath = String(repeating: "/abcdefg", count: 512)
        let f = ServiceFolders(
            inboxes: ["/tmp/inbox", long, "/srv/ok"], dropFolders: ["/var/tmp/drop", "/dev/shm/x", longPath])
        #expect(
            f.refused == [
                "inbox /tmp/inbox: the service sees its own /tmp (PrivateTmp=yes), not this one: choose a folder elsewhere, such as /srv/ptk; not opened to the service",
                "inbox \(long): a name in it is longer than systemd takes (255 bytes); not opened to the service",
                "drop-folder /var/tmp/drop: the service sees its own /var/tmp (PrivateTmp=yes), not this one: choose a folder elsewhere, such as /srv/ptk; not opened to the service",
                "drop-folder /dev/shm/x: the service sees its own /dev (PrivateDevices=yes), not this one: choose a folder elsewhere, such as /srv/ptk; not opened to the service",
                "drop-folder \(longPath): longer than systemd takes (4095 bytes); not opened to the service",
            ])
        let settings = f.dropIn.split(separator: "\n").filter { !$0.hasPrefix("#") }
        #expect(settings.dropFirst(2) == ["ReadOnlyPaths=-\"/srv/ok\""], "\(settings)")
        #expect(f.dropIn.contains("\n# not opened: inbox /tmp/inbox: the service sees its own /tmp"))
        // 255 bytes a name and 4095 a path are still taken.
        let fits = "/srv/" + String(repeating: "é", count: 127) + "x"
        #expect(fits.utf8.split(separator: UInt8(ascii: "/")).last?.count == 255)
        #expect(ServiceFolders(inboxes: [fits], dropFolders: []).refused.isEmpty)
        #expect(ServiceFolders.unexpressible(String(repeating: "/abcdefg", count: 511) + "/abcdef") == nil)
        #expect(ServiceFolders.unexpressible("/tmpfiles/x") == nil && ServiceFolders.unexpressible("/tmp") != nil)
    }

    @Test("a refused path as long as ptkd.conf allows is cut short in its comment: systemd reads the lines after it")
    func longRefusedComment() {
        // ptkd.conf holds up to 1 MiB; bytes that are not UTF-8 are read as U+FFFD (3 bytes each).
        let huge = "/srv/" + String(repeating: "\u{FFFD}", count: 400_000)
        let f = ServiceFolders(inboxes: [], dropFolders: [huge, "/srv/ok"])
        #expect(f.refused.count == 1)
        // systemd's LONG_LINE_MAX (1 MiB): a longer line ends its reading of the drop-in, silently.
        let longest = f.dropIn.split(separator: "\n").map(\.utf8.count).max() ?? 0
        #expect(longest < 4096, "longest line: \(longest) bytes")
        #expect(f.dropIn.hasSuffix("...: longer than systemd takes (4095 bytes)\nReadWritePaths=-\"/srv/ok\"\n"))
    }

    @Test("read with ptkd's own parser: ptkd.conf's quoted and repeated lines become the drop-in's")
    func fromConfigurationFile() throws {
        let text = """
            inbox = /srv/sync/
            drop-folder = "/srv/drop box"
            inbox = /home/anna/Sync
            """
        let c = try DaemonOptions.configuration(configFile: "/x/ptkd.conf", settings: []) { _ throws(SystemError) in
            text
        }
        #expect(c.inboxes == ["/srv/sync", "/home/anna/Sync"] && c.dropFolders == ["/srv/drop box"])
        let lines = ServiceFolders(c).dropIn.split(separator: "\n").dropFirst(4)
        #expect(
            Array(lines) == [
                "ReadOnlyPaths=-\"/srv/sync\"", "ReadWritePaths=-\"/srv/drop box\"", "ProtectHome=tmpfs",
                "BindReadOnlyPaths=-\"/home/anna/Sync\"",
            ])
    }

    @Test("the fingerprint names the folders and their kinds; ptkd at start says when daemon-reload is owed")
    func fingerprint() {
        let a = ServiceFolders.fingerprint(inboxes: ["/srv/a"], dropFolders: ["/srv/b"])
        #expect(a.count == 16 && a.allSatisfy(\.isHexDigit))
        #expect(a == ServiceFolders.fingerprint(inboxes: ["/srv/a"], dropFolders: ["/srv/b"]))
        #expect(a != ServiceFolders.fingerprint(inboxes: ["/srv/b"], dropFolders: ["/srv/a"]))
        #expect(a != ServiceFolders.fingerprint(inboxes: ["/srv/a", "/srv/b"], dropFolders: []))
        #expect(ServiceFolders.fingerprint(inboxes: [], dropFolders: []) == "cbf29ce484222325")

        var c = DaemonConfiguration()
        c.inboxes = ["/srv/a"]
        c.dropFolders = ["/srv/b"]
        #expect(ServiceFolders.startWarnings(c, unitFingerprint: nil).isEmpty)
        #expect(ServiceFolders.startWarnings(c, unitFingerprint: a).isEmpty)
        #expect(
            ServiceFolders.startWarnings(c, unitFingerprint: "cbf29ce484222325") == [
                "the service was set up for other inbox and drop-folder lines than ptkd.conf has now, and opens only those: run `systemctl daemon-reload`, then `systemctl restart ptkd`"
            ])
        c.inboxes.append("/tmp/x")
        #expect(
            ServiceFolders.startWarnings(
                c, unitFingerprint: ServiceFolders.fingerprint(inboxes: c.inboxes, dropFolders: c.dropFolders))
                == [
                    "inbox /tmp/x: the service sees its own /tmp (PrivateTmp=yes), not this one: choose a folder elsewhere, such as /srv/ptk; not opened to the service"
                ])
    }

    @Test("--unit-paths is a flag of ptkd's command line, with --config beside it")
    func flag() throws {
        let i = try DaemonOptions.table.parse(["--unit-paths", "--config", "/dev/null"])
        #expect(i.has(.unitPaths) && i.value(.config) == "/dev/null")
        #expect(DaemonOptions.table.help.contains("--unit-paths"))
    }
}
