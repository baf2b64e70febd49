import Foundation
import Glibc
import PTKSystem
import PTKTestSupport
import PTKTestTags
import Testing

/// What a new user trips on (issue 47, section 2): each test fails on the binaries before it.
@Suite(
    "New user: web-link's real port, export's directory, a host without ptkd, the PIN file, error messages",
    .serialized, .tags(.endToEnd))
struct NewUserTests {
    /// Waits until ptkd has written STATE/listening (just after it logs its ports).
    static func waitForListening(_ d: DaemonProcess) -> Bool {
        eventually { fileExists(d.stateDir + "/listening") }
    }

    @Test(
        "ptk web-link prints the port ptkd really listens on (--web-port 0) and the link logs in; stopped or killed, ptk says it uses the configuration's"
    )
    func webLinkPort() throws {
        let d = try DaemonProcess.withWeb()
        #expect(Self.waitForListening(d))
        let r = try library(d, ["web-link", "--host", "127.0.0.1", "--name", "phone"])
        let first = r.stdout.split(separator: "\n").first.map(String.init) ?? ""
        let prefix = "https://127.0.0.1:\(d.webPort)/login/"
        #expect(r.status == 0 && first.hasPrefix(prefix), "\(first) \(r.stderr)")
        #expect(!r.stderr.contains("not running"), "\(r.stderr)")
        let login = try WebBrowser(port: d.webPort).request("GET", "/login/" + first.dropFirst(prefix.count))
        #expect(login.status == 303, "\(login.status)")
        // A clean stop removes the file; ptk falls back to the configuration and says so.
        _ = d.stop()
        #expect(!fileExists(d.stateDir + "/listening"))
        let after = try library(d, ["web-link", "--host", "127.0.0.1"])
        #expect(
            after.stderr.contains(
                "ptk: ptkd is not running here; the link uses web-port from the configuration (47851)\n"),
            "\(after.stderr)")
        #expect(after.stdout.hasPrefix("https://127.0.0.1:47851/login/"), "\(after.stdout)")
        // A ptkd killed leaves its file, but not its lock: ptk tells it is stale.
        let killed = try DaemonProcess.withWeb()
        #expect(Self.waitForListening(killed))
        _ = killed.stop(signal: SIGKILL)
        #expect(fileExists(killed.stateDir + "/listening"))
        let stale = try library(killed, ["web-link", "--host", "127.0.0.1"])
        #expect(stale.stderr.contains("ptkd is not running here"), "\(stale.stderr)")
    }

    @Test("ptk export -o DIR makes DIR (mode 0755, with its parents) as gallery does; a file at DIR is said to be one")
    func exportMakesDirectory() throws {
        let (d, png) = try DaemonProcess.withWeb(photo: "a.png", size: 2000, seed: 3)
        let out = d.root + "/new/exports"
        let r = try library(d, ["export", "a", "-o", out])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(readFile(out + "/a.ptk/photo.data") == png)
        #expect(try fileStatus(out).permissions & 0o777 == 0o755)
        writeFile(d.root + "/file", [1])
        let file = try library(d, ["export", "a", "-o", d.root + "/file"])
        #expect(file.status == 73)
        #expect(file.stderr == "ptk: \(d.root)/file exists and is not a directory\n", "\(file.stderr)")
    }

    @Test(
        "ptk list where ptkd has never run says what it means and what to do (root's ptk refuses it: it decides whom to act as from what it opens)"
    )
    func neverRan() throws {
        let root = makeTemporaryDirectory()
        defer { removeTree(root) }
        chmod(root, 0o755)
        let args = ["--config", "/dev/null", "--dir", root + "/received", "list"]
        // Any user but root (run as one when the tests are root's).
        let user =
            geteuid() != 0
            ? try run("ptk", args)
            : try run(
                findProgram("setpriv") ?? "/usr/bin/setpriv",
                ["--reuid=4242", "--regid=4242", "--clear-groups", "--", binDirectory + "/ptk"] + args, absolute: true)
        #expect(user.status == 66)
        #expect(
            user.stderr
                == "ptk: the received-photos directory \(root)/received does not exist: ptkd has not run on this host yet (start it: sudo systemctl start ptkd), or give --dir\n",
            "\(user.stderr)")
        guard geteuid() == 0 else { return print("neverRan: not root, so root's refusal is not tried") }
        let r = try run("ptk", args)
        #expect(r.status == 64)
        #expect(
            r.stderr
                == "ptk: the received-photos directory \"\(root)/received\" does not exist (has ptkd run on this host? start it: sudo systemctl start ptkd; or give --dir); "
                + "root's ptk decides whom to act as from the folders it opens on the way (one by one, by descriptor), so it refuses a way it cannot open: "
                + "at the next look it could lead elsewhere; refused\n", "\(r.stderr)")
    }

    @Test(
        "localsend-pin-file: the PIN read from a file works; a group-writable file or a symlink is refused; --localsend-pin warns that ps shows it"
    )
    func pinFile() throws {
        let root = makeTemporaryDirectory()
        defer { removeTree(root) }
        writeFile(root + "/pin", Array("4711\n".utf8))
        chmod(root + "/pin", 0o640)
        let d = try DaemonProcess.withLocalSend(["--localsend-pin-file", root + "/pin"])
        let app = try LocalSendApp(port: d.localSendPort)
        let f = pngFile("f", "f.png", size: 10_000)
        #expect(try app.prepare([f]).status == 401)
        #expect(try app.prepare([f], pin: "4711").status == 200)
        #expect(!d.log.contains("puts the PIN where local users can read it"))

        chmod(root + "/pin", 0o660)
        let writable = try run("ptkd", ["--config", "/dev/null", "--localsend-pin-file", root + "/pin"])
        #expect(writable.status == 64)
        #expect(
            writable.stderr.hasPrefix(
                "ptkd: localsend-pin-file \(root)/pin may be written by group or others (mode 660)"),
            "\(writable.stderr)")
        chmod(root + "/pin", 0o600)
        symlink(root + "/pin", root + "/link")
        let linked = try run("ptkd", ["--config", "/dev/null", "--localsend-pin-file", root + "/link"])
        #expect(linked.status == 64)
        #expect(linked.stderr.hasPrefix("ptkd: localsend-pin-file \(root)/link is a symlink"), "\(linked.stderr)")

        let flag = try DaemonProcess.withLocalSend(["--localsend-pin", "4711"])
        #expect(
            flag.log.contains(
                "warning: --localsend-pin puts the PIN where local users can read it (ps); use localsend-pin in /etc/ptk/ptkd.conf or localsend-pin-file"
            ), "\(flag.log)")

        // A FIFO is refused at once, never waited on (the audit's ptkd hung there).
        mkfifo(root + "/fifo", 0o600)
        let fifo = try run("ptkd", ["--config", "/dev/null", "--localsend-pin-file", root + "/fifo"], timeout: 10)
        #expect(
            fifo.status == 64 && fifo.stderr.hasPrefix("ptkd: localsend-pin-file \(root)/fifo is not a regular file"),
            "\(fifo.status) \(fifo.stderr)")
        // A file another user owns is refused.
        chown(root + "/pin", 65534, 65534)
        let foreign = try run("ptkd", ["--config", "/dev/null", "--localsend-pin-file", root + "/pin"])
        #expect(foreign.status == 64 && foreign.stderr.contains("belongs to user 65534"), "\(foreign.stderr)")
        // A bad PIN is refused without being echoed (errors reach the journal).
        let bad = try run("ptkd", ["--config", "/dev/null", "--localsend-pin", "secret with spaces"])
        #expect(bad.status == 64 && !bad.stderr.contains("secret"), "\(bad.stderr)")
    }

    @Test(
        "STATE/listening planted as a FIFO or a symlink by the service user: root's ptk web-link neither waits nor follows it, and falls back to the configuration"
    )
    func listeningFilePlanted() throws {
        // A ptkd that made its web certificate, then stopped: its state directory as the service user leaves it.
        let d = try DaemonProcess(["--web", "on", "--web-port", "0"])
        #expect(d.stop() == 0)
        let root = d.root
        writeFile(root + "/secret", Array("web 192.0.2.2 4444\n".utf8))
        chmod(root + "/secret", 0o600)
        mkfifo(d.stateDir + "/listening", 0o644)
        let args = ["--config", "/dev/null", "--state-dir", d.stateDir, "--dir", d.dir, "web-link", "--host", "h"]
        let fifo = try run("ptk", args, timeout: 15)
        #expect(fifo.status == 0 && fifo.stderr.contains("ptkd is not running here"), "\(fifo.status) \(fifo.stderr)")
        _ = unlink(d.stateDir + "/listening")
        symlink(root + "/secret", d.stateDir + "/listening")
        let linked = try run("ptk", args, timeout: 15)
        #expect(
            linked.status == 0 && !linked.stdout.contains("4444") && linked.stderr.contains("ptkd is not running here"),
            "\(linked.stdout) \(linked.stderr)")
    }

    /// An error path: the program, its arguments, and the path or address its message must name.
    struct Case: CustomStringConvertible {
        var program: String
        var args: [String]
        var names: String
        var description: String { ([program] + args).joined(separator: " ") }
    }

    @Test(
        "every error message ends with a line end, starts with the program's name and names the file or address it is about"
    )
    func errorShape() throws {
        let t = makeTemporaryDirectory()
        defer { removeTree(t) }
        for sub in ["d", "s", "xdg"] { mkdir(t + "/" + sub, 0o755) }
        writeFile(t + "/bad.conf", Array("windw = 3\n".utf8))
        writeFile(t + "/file", [1])
        writeFile(t + "/a.png", makePNG(size: 2000, seed: 9))
        // Under /proc nothing can be made, even by root: ptkd cannot create it.
        let none = "/proc/ptk-47-none"
        let cases = [
            // ptk
            Case(program: "ptk", args: ["--config", none + "/ptkd.conf", "list"], names: none + "/ptkd.conf"),
            Case(program: "ptk", args: ["--config", t + "/bad.conf", "list"], names: t + "/bad.conf"),
            Case(program: "ptk", args: ["--config", "/dev/null", "--dir", none, "list"], names: none),
            Case(program: "ptk", args: ["--config", "/dev/null", "--dir", t + "/d", "list"], names: t + "/d"),
            Case(
                program: "ptk", args: ["--config", "/dev/null", "--dir", t + "/d", "import", none + "/p.ptk"],
                names: none + "/p.ptk"),
            Case(
                program: "ptk", args: ["--config", "/dev/null", "--dir", t + "/d", "show", "nosuch"], names: "'nosuch'"),
            Case(
                program: "ptk",
                args: ["--config", "/dev/null", "--dir", t + "/d", "export", "nosuch", "-o", t + "/out"],
                names: "'nosuch'"),
            Case(
                program: "ptk",
                args: ["--config", "/dev/null", "--dir", t + "/d", "export", "nosuch", "-o", t + "/file"],
                names: t + "/file"),
            Case(
                program: "ptk", args: ["--config", "/dev/null", "--dir", t + "/d", "thumbnail", "nosuch"],
                names: "'nosuch'"),
            Case(
                program: "ptk", args: ["--config", "/dev/null", "--dir", t + "/d", "gallery", "-o", t + "/file"],
                names: t + "/file"),
            Case(
                program: "ptk", args: ["--config", "/dev/null", "--state-dir", t + "/s", "id"], names: t + "/s/identity"
            ),
            Case(
                program: "ptk", args: ["--config", "/dev/null", "--state-dir", t + "/s", "web-link"],
                names: t + "/s/web/tls"),
            Case(
                program: "ptk", args: ["--config", "/dev/null", "--state-dir", t + "/s", "trust", "allow", "ABCDEF"],
                names: "'ABCDEF'"),
            Case(program: "ptk", args: ["--bogus", "list"], names: "'--bogus'"),
            // ptkd
            Case(program: "ptkd", args: ["--config", none + "/ptkd.conf"], names: none + "/ptkd.conf"),
            Case(program: "ptkd", args: ["--config", t + "/bad.conf"], names: t + "/bad.conf"),
            Case(program: "ptkd", args: ["--config", "/dev/null", "--window", "99"], names: "'99'"),
            Case(
                program: "ptkd",
                args: [
                    "--config", "/dev/null", "--dir", none + "/photos", "--state-dir", t + "/s", "--no-mdns", "--port",
                    "0",
                ], names: none),
            Case(
                program: "ptkd",
                args: ["--config", "/dev/null", "--dir", t + "/d", "--state-dir", none, "--no-mdns", "--port", "0"],
                names: none),
            Case(
                program: "ptkd",
                args: [
                    "--config", "/dev/null", "--dir", t + "/d", "--state-dir", t + "/s", "--no-mdns", "--listen",
                    "256.1.1.1", "--port", "0",
                ], names: "256.1.1.1"),
            Case(
                program: "ptkd", args: ["--config", "/dev/null", "--localsend-pin-file", none + "/pin"],
                names: none + "/pin"),
            Case(program: "ptkd", args: ["--bogus"], names: "'--bogus'"),
            // ptk-send
            Case(program: "ptk-send", args: ["127.0.0.1:1", none + "/a.png"], names: none + "/a.png"),
            Case(program: "ptk-send", args: ["127.0.0.1:1", t + "/file"], names: t + "/file"),
            Case(program: "ptk-send", args: ["127.0.0.1:1", t + "/a.png"], names: "127.0.0.1:1"),
            Case(program: "ptk-send", args: ["[::1]:1", t + "/a.png"], names: "[::1]:1"),
            Case(program: "ptk-send", args: ["nosuchhost.invalid:5000", t + "/a.png"], names: "'nosuchhost.invalid'"),
            Case(program: "ptk-send", args: ["[::1", t + "/a.png"], names: "'[::1'"),
            Case(program: "ptk-send", args: ["host:99999", t + "/a.png"], names: "'host:99999'"),
            Case(program: "ptk-send", args: ["--bogus", "h", t + "/a.png"], names: "'--bogus'"),
            Case(program: "ptk-send", args: ["--window", "0", "h", t + "/a.png"], names: "'0'"),
        ]
        for c in cases {
            let r = try run(c.program, c.args, environment: ["XDG_CONFIG_HOME": t + "/xdg"])
            #expect(r.status != 0, "\(c)")
            #expect(r.stderr.hasSuffix("\n"), "\(c): \(r.stderr)")
            #expect(r.stderr.hasPrefix(c.program + ": "), "\(c): \(r.stderr)")
            #expect(r.stderr.contains(c.names), "\(c): \(r.stderr)")
        }
        #expect(cases.count >= 30)
    }
}
