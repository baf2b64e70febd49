import Foundation
import Glibc
import PTKProtocol
import PTKSystem
import PTKTestSupport
import PTKTestTags
import PTKVocabulary
import Testing

/// The Debian 12 root that scripts/system-root.sh builds once per machine.
let systemRoot = environment("PTK_SYSTEM_ROOT") ?? "/var/cache/ptk/system-root"
/// Set by .ci/run: there the system test must run, so a missing root fails it instead of skipping.
let systemTestRequired = environment("PTK_REQUIRE_SYSTEM_TEST") == "1"
let canBootSystem =
    geteuid() == 0
    && FileManager.default.fileExists(atPath: "/usr/bin/systemd-nspawn")
    && FileManager.default.fileExists(atPath: systemRoot + "/.ptk-root")

/// The Debian packages `make deb` built (.ci/run builds them before the tests), if any.
let builtPackages: [String] = {
    let dir = repositoryRoot() + "/.build/deb"
    let names = listDirectory(dir).filter {
        ($0.hasPrefix("ptkd_") || $0.hasPrefix("ptk-send_")) && $0.hasSuffix(".deb")
    }.sorted()
    return names.count == 2 ? names.map { dir + "/" + $0 } : []
}()

/// How ptk gets into the booted system.
enum Installation {
    /// `make install-files DESTDIR=... PREFIX=/usr` of this build, and `systemctl enable ptkd`;
    /// the Swift runtime of the toolchain is bound in read-only.
    case makeInstall
    /// `apt-get install ./ptkd_*.deb ./ptk-send_*.deb` in the root before it boots, as a user
    /// installs them: no toolchain in the container.
    case packages([String])
}

/// A real systemd booted with systemd-nspawn on an overlay of the cached Debian root, with ptk
/// installed as a user installs it (`Installation`). Its network is private (only `lo`);
/// dbus-daemon, avahi-daemon and journald run in it as on any Debian host.
final class BootedSystem {
    let work = makeTemporaryDirectory("ptk-system")
    var root: String { work + "/root" }
    private let nspawn = Process()
    private(set) var pid1: Int32 = 0
    private var mounted = false
    /// With packages: what /opt holds and how many -dev packages are installed, in the root.
    private(set) var installLog = ""

    /// Installs ptk into a fresh overlay, names the host `hostname`, and boots it.
    init(hostname: String, installation: Installation = .makeInstall, prepare: (String) throws -> Void = { _ in })
        throws
    {
        for d in ["up", "work", "root"] { mkdir(work + "/" + d, 0o755) }
        _ = try checked(
            "/usr/bin/mount",
            [
                "-t", "overlay", "overlay", "-o",
                "lowerdir=\(systemRoot),upperdir=\(work)/up,workdir=\(work)/work", root,
            ])
        mounted = true
        writeFile(root + "/etc/hostname", Array("\(hostname)\n".utf8))
        var bindings: [String] = []
        switch installation {
        case .makeInstall:
            _ = try checked(
                "/usr/bin/make",
                [
                    "-s", "-C", repositoryRoot(), "install-files",
                    "DESTDIR=\(root)", "PREFIX=/usr", "BUILT=\(binDirectory)",
                ])
            _ = try checked("/usr/sbin/chroot", [root, "systemctl", "enable", "ptkd"])
            // These binaries link the Swift runtime from the toolchain.
            bindings = ["--bind-ro=/opt/swift"]
        case .packages(let debs):
            mkdir(root + "/root/debs", 0o755)
            for deb in debs { writeFile(root + "/root/debs/" + (deb as NSString).lastPathComponent, readFile(deb)!) }
            let local = debs.map { "/root/debs/" + ($0 as NSString).lastPathComponent }
            // Depends are resolved from the archive the root was built from (its package lists).
            _ = try checked(
                "/usr/sbin/chroot",
                [root, "env", "DEBIAN_FRONTEND=noninteractive", "apt-get", "install", "-y", "-q"] + local)
            installLog = try checked(
                "/usr/sbin/chroot", [root, "sh", "-c", "ls /opt 2>/dev/null; dpkg -l | grep -c -- '-dev ' || true"]
            ).stdout
        }
        try prepare(root)

        nspawn.executableURL = URL(fileURLWithPath: "/usr/bin/systemd-nspawn")
        // --register=no --keep-unit: the host runs no systemd.
        nspawn.arguments = ["-q", "-D", root, "--private-network", "--register=no", "--keep-unit"] + bindings + ["-b"]
        FileManager.default.createFile(atPath: work + "/console.log", contents: nil)
        nspawn.standardOutput = FileHandle(forWritingAtPath: work + "/console.log")!
        nspawn.standardError = nspawn.standardOutput
        nspawn.standardInput = FileHandle.nullDevice
        try nspawn.run()
        guard eventually(30, { self.findPID1() }) else {
            throw HarnessError("the container's systemd did not start: \(console)")
        }
        // Boot is done when is-system-running --wait answers "running" (or "degraded"); until
        // PID 1 has its bus socket it answers "offline" at once ("Failed to connect to bus").
        guard
            eventually(
                60,
                {
                    let state = (try? self.exec(["systemctl", "is-system-running", "--wait"]))?.stdout ?? ""
                    return state == "running\n" || state == "degraded\n"
                })
        else {
            throw HarnessError("the container did not finish booting: \(console)")
        }
    }

    var console: String { (try? String(contentsOfFile: work + "/console.log", encoding: .utf8)) ?? "" }

    /// The container's PID 1: the process named systemd whose parent is systemd-nspawn.
    private func findPID1() -> Bool {
        for entry in listDirectory("/proc") {
            guard let pid = Int32(entry),
                let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
                let close = stat.lastIndex(of: ")")
            else { continue }
            let comm = stat[stat.index(after: stat.firstIndex(of: "(")!)..<close]
            let fields = stat[stat.index(close, offsetBy: 2)...].split(separator: " ")
            if comm == "systemd", fields.count > 1, Int32(fields[1]) == nspawn.processIdentifier {
                pid1 = pid
                return true
            }
        }
        return false
    }

    /// Runs a command inside the container, in all its namespaces.
    func exec(_ args: [String], timeout: Double = 60) throws -> Finished {
        try run(
            "/usr/bin/nsenter", ["-t", String(pid1), "-a", "--"] + args, timeout: timeout, absolute: true,
            environment: ["XDG_CONFIG_HOME": "/root/.config", "HOME": "/root"])
    }

    /// The journal of `unit` (or of the whole boot), as plain messages; "" when unreadable.
    func journal(_ unit: String? = nil) -> String {
        let args = ["journalctl", "-o", "cat", "--no-pager"] + (unit.map { ["-u", $0] } ?? ["-b"])
        return (try? exec(args))?.stdout ?? ""
    }

    private func checked(_ binary: String, _ args: [String]) throws -> Finished {
        let r = try run(binary, args, absolute: true)
        guard r.status == 0 else {
            throw HarnessError("\(binary) \(args.joined(separator: " ")) failed (\(r.status)): \(r.stderr)")
        }
        return r
    }

    deinit {
        if pid1 > 0 { _ = try? exec(["systemctl", "poweroff"], timeout: 10) }
        let deadline = Date() + 30
        while nspawn.isRunning && Date() < deadline { usleep(50_000) }
        if nspawn.isRunning {
            kill(nspawn.processIdentifier, SIGKILL)
            nspawn.waitUntilExit()
        }
        if mounted {
            if (try? run("/usr/bin/umount", [root], absolute: true))?.status != 0 {
                _ = try? run("/usr/bin/umount", ["-l", root], absolute: true)
            }
        }
        removeTree(work)
    }
}

@Suite(
    "The installed service under a real systemd (systemd-nspawn)",
    .enabled(
        if: canBootSystem || systemTestRequired,
        "needs root, systemd-nspawn (Debian package systemd-container) and the Debian root that scripts/system-root.sh builds"
    ),
    .serialized, .tags(.endToEnd, .root))
struct SystemdTests {
    @Test(
        "make install + systemctl enable: active after boot as user ptk, found by name, saves, logs, stops cleanly, keeps photos across a restart"
    )
    func installedService() throws {
        try #require(
            canBootSystem, "no Debian root at \(systemRoot): run scripts/system-root.sh as root (it needs debootstrap)")
        let photo = pngSuiteDirectory() + "/basn6a08.png"
        let system = try BootedSystem(hostname: "livingroom") { root in
            writeFile(root + "/root/photo.png", readFile(photo)!)
            writeFile(root + "/root/dav.png", readFile(pngSuiteDirectory() + "/basn2c08.png")!)
            // The on-saved hook, as a user would write one: it runs as ptk inside the sandbox,
            // where the state directory is writable.
            writeFile(
                root + "/usr/local/bin/ptk-test-hook",
                Array(
                    """
                    #!/bin/sh
                    echo "user=$(id -un) first=$1 path=$2 name=$PTK_NAME size=$PTK_SIZE sender=$PTK_SENDER_NAME duplicate=${PTK_DUPLICATE:-0}" >> /var/lib/ptk/hook-runs
                    echo "hello from the hook"

                    """.utf8))
            chmod(root + "/usr/local/bin/ptk-test-hook", 0o755)
        }
        let received = system.root + "/var/lib/ptk/received"

        // Active after boot, as the static user, not a dynamic one.
        let active = try system.exec(["systemctl", "is-active", "ptkd"])
        #expect(active.stdout == "active\n", "\(active.stderr) \(system.journal().suffix(3000)) \(system.console)")
        #expect(
            try system.exec(["systemctl", "show", "ptkd", "-p", "User", "-p", "DynamicUser"]).stdout
                == "User=ptk\nDynamicUser=no\n")
        // The ceilings systemd applies (issue 54): a leak restarts ptkd, not the host's OOM killer's choice.
        let ceilings = try system.exec([
            "systemctl", "show", "ptkd", "-p", "MemoryMax", "-p", "TasksMax", "-p", "Restart",
        ]).stdout
        #expect(
            Set(ceilings.split(separator: "\n")) == ["Restart=on-failure", "MemoryMax=2147483648", "TasksMax=512"],
            "\(ceilings)")
        let security = try system.exec(["systemd-analyze", "security", "ptkd", "--no-pager"]).stdout
        let exposure = security.split(separator: "\n").last { $0.contains("Overall exposure level") }
        let figure = exposure.flatMap { Double($0.split(separator: ":").last!.split(separator: " ").first!) }
        #expect(figure.map { $0 <= 1.5 } == true, "\(exposure ?? "no exposure line")")

        // Its identity, made on first start in the state directory, the key readable by ptk only;
        // `ptk id` (as root) finds it as ptkd does.
        #expect(try system.exec(["stat", "-c", "%U %G %a", "/var/lib/ptk/identity/key.pem"]).stdout == "ptk ptk 600\n")
        let shownID = try system.exec(["ptk", "id"])
        #expect(shownID.status == 0, "\(shownID.stderr)")
        let receiverID = try #require(
            DeviceID(parsing: shownID.stdout.trimmingCharacters(in: .whitespacesAndNewlines)), "\(shownID.stdout)")

        // Advertised over mDNS through the container's avahi-daemon, with TXT v=1, tls=1 and its id.
        #expect(
            eventually(15) {
                guard
                    let line = (try? system.exec(["avahi-browse", "-rtp", "_ptk._tcp"]))?.stdout.split(separator: "\n")
                        .first(where: {
                            $0.hasPrefix("=;lo;IPv4;livingroom;_ptk._tcp;local;livingroom.local;127.0.0.1;47850;")
                        })
                else { return false }
                return ["\"v=1\"", "\"tls=1\"", "\"id=\(receiverID.compact)\"", "\"web=47851\""].allSatisfy {
                    line.contains($0)
                }
            }, "\(system.journal("ptkd"))")

        // The LocalSend endpoint listens under the sandbox, and its multicast announcements get
        // out once an interface can multicast (the container's lo, made so here).
        #expect(
            system.journal("ptkd").contains("LocalSend receiver on port 53317 (HTTPS)"), "\(system.journal("ptkd"))")
        #expect(try system.exec(["bash", "-c", "exec 3<>/dev/tcp/127.0.0.1/53317"]).status == 0)
        #expect(
            try system.exec(["sh", "-c", "ip link set lo multicast on && ip route add 224.0.0.0/4 dev lo"]).status == 0)
        #expect(
            eventually(15) { system.journal("ptkd").contains("LocalSend: announced on lo") },
            "\(system.journal("ptkd"))")
        #expect(!system.journal("ptkd").contains("cannot announce"))

        // Sent by name over TLS, as the README's quick start does; lands byte-identical, owned by ptk.
        let sent = try system.exec(["ptk-send", "livingroom", "/root/photo.png"])
        #expect(sent.status == 0, "\(sent.stderr)")
        #expect(sent.stderr.contains("first contact with livingroom: its device ID is \(receiverID)"), "\(sent.stderr)")
        #expect(sent.stdout == "/root/photo.png: saved as \"photo.png\"\n")
        #expect(readFile(received + "/photo.png") == readFile(photo))
        #expect(
            try system.exec(["stat", "-c", "%U %G %a", "/var/lib/ptk/received/photo.png"]).stdout == "ptk ptk 644\n")
        #expect(eventually(5) { system.journal("ptkd").contains("saved \"photo.png\"") })

        // A clean stop: SIGTERM, exit status 0, Result=success.
        let stop = try system.exec(["systemctl", "stop", "ptkd"])
        #expect(stop.status == 0, "\(stop.stderr)")
        #expect(
            try system.exec(["systemctl", "show", "ptkd", "-p", "Result", "-p", "ExecMainCode", "-p", "ExecMainStatus"])
                .stdout
                == "Result=success\nExecMainCode=1\nExecMainStatus=0\n")

        // After a restart the photo is still there, and sending it again stores nothing new:
        // the receiver keeps those bytes already (duplicates = skip, the default).
        #expect(try system.exec(["systemctl", "restart", "ptkd"]).status == 0)
        #expect(try system.exec(["systemctl", "is-active", "ptkd"]).stdout == "active\n")
        #expect(readFile(received + "/photo.png") == readFile(photo))
        var again = try system.exec(["ptk-send", "livingroom", "/root/photo.png"])
        if again.status != 0 {
            // The advertisement may not be back yet: ptk-send browses for 2 s.
            _ = eventually(10) {
                (try? system.exec(["avahi-browse", "-rtp", "_ptk._tcp"]))?.stdout.contains("livingroom") == true
            }
            again = try system.exec(["ptk-send", "livingroom", "/root/photo.png"])
        }
        #expect(again.status == 0, "\(again.stderr)")
        #expect(again.stdout == "/root/photo.png: already there as \"photo.png\"\n")
        #expect(listDirectory(received) == [".incoming", ".ptk", "photo.png"])

        // Trusted senders only: this sender is refused and listed as pending; `ptk trust allow`
        // by a prefix of its ID (as root, while ptkd runs) lets it in without a restart, and the
        // files ptk writes stay the service user's.
        let senderID = try #require(
            DeviceID(
                parsing: try system.exec(["ptk-send", "--id"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)))
        writeFile(
            system.root + "/etc/ptk/ptkd.conf",
            Array(
                """
                senders = trusted
                duplicates = keep
                on-saved = /usr/local/bin/ptk-test-hook "two words"

                """.utf8))
        #expect(try system.exec(["systemctl", "restart", "ptkd"]).status == 0)
        let refused = try system.exec(["ptk-send", "127.0.0.1", "/root/photo.png"])
        #expect(refused.status == 76)
        #expect(refused.stderr.contains("ERROR unauthorized: device \(senderID) is not trusted"), "\(refused.stderr)")
        let pending = try system.exec(["ptk", "trust", "pending"])
        #expect(
            pending.stdout.hasPrefix("ptk        \(senderID)  \"livingroom\" from 127.0.0.1:"),
            "\(pending.stdout) \(pending.stderr)")
        let allowed = try system.exec([
            "ptk", "trust", "allow", String(senderID.compact.prefix(6)).lowercased(), "laptop",
        ])
        #expect(allowed.stdout == "trusted \(senderID) as \"laptop\"\n", "\(allowed.stderr)")
        #expect(
            try system.exec(["stat", "-c", "%U %G", "/var/lib/ptk/trusted-senders", "/var/lib/ptk/pending-senders"])
                .stdout == "ptk ptk\nptk ptk\n")
        #expect(try system.exec(["ptk", "trust", "pending"]).stdout == "")
        // As the service user too (its home is the state directory).
        #expect(
            try system.exec(["runuser", "-u", "ptk", "--", "ptk", "trust", "list"]).stdout
                == "ptk        \(senderID)  laptop\n")
        let trusted = try system.exec(["ptk-send", "127.0.0.1", "/root/photo.png"])
        #expect(trusted.status == 0, "\(trusted.stderr) \(system.journal("ptkd"))")
        #expect(trusted.stdout == "/root/photo.png: saved as \"photo (2).png\"\n")
        #expect(eventually(5) { system.journal("ptkd").contains("(device \(senderID)): saved \"photo (2).png\"") })
        // The hook ran for it, as ptk, with its words, the path and the PTK_ variables; its
        // output went to the journal under the photo's name.
        #expect(eventually(10) { readFile(system.root + "/var/lib/ptk/hook-runs") != nil }, "\(system.journal("ptkd"))")
        #expect(
            String(decoding: readFile(system.root + "/var/lib/ptk/hook-runs") ?? [], as: UTF8.self)
                == "user=ptk first=two words path=/var/lib/ptk/received/photo (2).png name=photo (2).png size=\(readFile(photo)!.count) sender=livingroom duplicate=0\n",
            "\(system.journal("ptkd"))")
        #expect(
            eventually(5) { system.journal("ptkd").contains("on-saved \"photo (2).png\": hello from the hook") },
            "\(system.journal("ptkd"))")

        // The photo library, kept by the sandboxed service: `ptk` as root lists and edits it, and
        // every file in the directory stays the service user's, so ptkd can go on writing them.
        #expect(eventually(10) { (try? system.exec(["ptk", "list"]))?.stdout.split(separator: "\n").count == 2 })
        // Listed as soon as it is saved; its thumbnail follows when the indexer has made it.
        let shown =
            try eventuallyValue(30) {
                (try? system.exec(["ptk", "show", "photo (2)"])).flatMap {
                    $0.stdout.contains("thumbnail: (not indexed yet)") ? nil : $0
                }
            } ?? system.exec(["ptk", "show", "photo (2)"])
        #expect(
            shown.stdout.contains("\"livingroom\" from 127.0.0.1:") && shown.stdout.contains("device \(senderID)"),
            "\(shown.stdout) \(shown.stderr)")
        #expect(shown.stdout.contains("thumbnail: /var/lib/ptk/received/.ptk/thumbnails/"), "\(shown.stdout)")
        #expect(try system.exec(["ptk", "note", "photo (2)", "from the laptop"]).status == 0)
        #expect(try system.exec(["ptk", "rename", "photo", "first"]).status == 0)
        #expect(try system.exec(["ptk", "gallery"]).status == 0)
        #expect(
            try system.exec([
                "find", "/var/lib/ptk/received", "(", "-not", "-user", "ptk", "-o", "-not", "-group", "ptk", ")",
            ]).stdout == "")
        #expect(try system.exec(["runuser", "-u", "ptk", "--", "ptk", "list"]).stdout.contains("first.png"))
        let fourth = try system.exec(["ptk-send", "127.0.0.1", "/root/photo.png"])
        #expect(fourth.stdout == "/root/photo.png: saved as \"photo.png\"\n", "\(fourth.stderr)")
        #expect(eventually(10) { (try? system.exec(["ptk", "list"]))?.stdout.split(separator: "\n").count == 3 })
        // No library trouble. A photo saved just before a stop may be indexed at the next start
        // (the low-priority indexer had not reached it: a loaded machine); that line is no trouble.
        let libraryLines = system.journal("ptkd").split(separator: "\n").filter {
            $0.contains("library: ") && !$0.contains("library: indexed the ")
        }
        #expect(libraryLines.isEmpty, "\(system.journal("ptkd"))")

        // The web interface under the sandbox: `ptk web-link` (as root) makes a link whose files
        // stay the service user's; a browser (curl here) logs in with it and sees the library.
        #expect(system.journal("ptkd").contains("web interface on port 47851 (HTTPS)"), "\(system.journal("ptkd"))")
        let link = try system.exec(["ptk", "web-link", "--host", "127.0.0.1", "--name", "phone"])
        let url = try #require(link.stdout.split(separator: "\n").first.map(String.init), "\(link.stderr)")
        #expect(url.hasPrefix("https://127.0.0.1:47851/login/"), "\(link.stdout)")
        let login = try system.exec([
            "curl", "-sk", "-o", "/dev/null", "-c", "/root/jar", "-w", "%{http_code} %{redirect_url}", url,
        ])
        #expect(
            login.stdout == "303 https://127.0.0.1:47851/", "\(login.stdout) \(login.stderr) \(system.journal("ptkd"))")
        let page = try system.exec(["curl", "-sk", "-b", "/root/jar", "https://127.0.0.1:47851/"])
        #expect(page.stdout.contains("first.png") && page.stdout.contains("3 photos"), "\(page.stdout)")
        #expect(
            try system.exec([
                "stat", "-c", "%U %G %a", "/var/lib/ptk/web/sessions", "/var/lib/ptk/web/links",
                "/var/lib/ptk/web/tls/key.pem",
            ]).stdout
                == "ptk ptk 600\nptk ptk 600\nptk ptk 600\n")
        #expect(try system.exec(["ptk", "web-sessions"]).stdout.contains("\"phone\" from 127.0.0.1"))

        // WebDAV under the sandbox: an app password made by root's ptk stays the service user's
        // file; a PUT with it (curl, as a script or iOS Shortcut would) lands under /var/lib/ptk as ptk.
        let made = try system.exec(["ptk", "app-password", "add", "box", "--json"])
        let fields = try #require(
            try? JSONSerialization.jsonObject(with: Data(made.stdout.utf8)) as? [String: Any],
            "\(made.stdout) \(made.stderr)")
        let password = try #require(fields["password"] as? String)
        #expect(
            fields["url"] as? String == "https://livingroom:47851/dav/"
                || (fields["url"] as? String ?? "").hasSuffix(":47851/dav/"), "\(fields)")
        let put = try system.exec([
            "curl", "-sk", "-u", "box:" + password, "-T", "/root/dav.png", "-o", "/dev/null", "-w", "%{http_code}",
            "https://127.0.0.1:47851/dav/from-dav.png",
        ])
        #expect(put.stdout == "201", "\(put.stdout) \(put.stderr) \(system.journal("ptkd"))")
        #expect(readFile(received + "/from-dav.png") == readFile(pngSuiteDirectory() + "/basn2c08.png"))
        #expect(
            try system.exec(["stat", "-c", "%U %G %a", "/var/lib/ptk/received/from-dav.png"]).stdout == "ptk ptk 644\n")
        let listed = try system.exec([
            "curl", "-sk", "-u", "box:" + password, "-X", "PROPFIND", "-H", "Depth: 1", "https://127.0.0.1:47851/dav/",
        ])
        #expect(listed.stdout.contains("/dav/from-dav.png") && !listed.stdout.contains("photo.png"), "\(listed.stdout)")
        #expect(try system.exec(["ptk", "app-password", "remove", "box"]).status == 0)
        let gone = try system.exec([
            "curl", "-sk", "-u", "box:" + password, "-o", "/dev/null", "-w", "%{http_code}",
            "https://127.0.0.1:47851/dav/",
        ])
        #expect(gone.stdout == "401")
    }

    @Test(
        "the .debs: installed with apt into a root without Swift, active as ptk and advertised, man pages and completion; an upgrade keeps photos, ID, trust and an edited ptkd.conf; remove keeps all but the programs; purge keeps the photos",
        .enabled(
            if: !builtPackages.isEmpty || systemTestRequired, "no packages in .build/deb: run make deb (.ci/run does)"))
    func packages() throws {
        try #require(
            canBootSystem, "no Debian root at \(systemRoot): run scripts/system-root.sh as root (it needs debootstrap)")
        try #require(!builtPackages.isEmpty, "no packages in .build/deb: run make deb")
        let photo = pngSuiteDirectory() + "/basn6a08.png"
        let system = try BootedSystem(hostname: "attic", installation: .packages(builtPackages)) { root in
            writeFile(root + "/root/photo.png", readFile(photo)!)
        }
        #expect(system.installLog == "0\n", "the root has a toolchain in /opt or -dev packages: \(system.installLog)")
        let received = system.root + "/var/lib/ptk/received"

        // Installed: the user made, the service enabled and started at boot, advertised.
        #expect(
            try system.exec(["systemctl", "is-active", "ptkd"]).stdout == "active\n", "\(system.journal().suffix(3000))"
        )
        #expect(try system.exec(["systemctl", "show", "ptkd", "-p", "User"]).stdout == "User=ptk\n")
        // The generator that opens ptkd.conf's folders to the unit ran at boot (SystemdFoldersTests).
        #expect(
            try system.exec(["cat", "/run/systemd/generator/ptkd.service.d/50-folders.conf"]).stdout.hasSuffix(
                "\nEnvironment=PTK_UNIT_FOLDERS=cbf29ce484222325\n"))
        #expect(
            eventually(15) {
                (try? system.exec(["avahi-browse", "-rtp", "_ptk._tcp"]))?.stdout.contains(
                    "=;lo;IPv4;attic;_ptk._tcp;local;") == true
            }, "\(system.journal("ptkd"))")
        let sent = try system.exec(["ptk-send", "attic", "/root/photo.png"])
        #expect(sent.status == 0 && sent.stdout == "/root/photo.png: saved as \"photo.png\"\n", "\(sent.stderr)")
        #expect(readFile(received + "/photo.png") == readFile(photo))
        let version = try run("/bin/sh", [repositoryRoot() + "/scripts/version.sh"], absolute: true).stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)
        for program in ["ptkd", "ptk", "ptk-send"] {
            #expect(try system.exec([program, "--version"]).stdout == "\(program) \(version) (protocol v1)\n")
        }

        // The man pages open; bash completes `ptk sh` to show, and a photo name after it.
        for (page, title) in [
            ("ptkd", "PTKD(8)"), ("ptk-send", "PTK-SEND(1)"), ("ptk", "PTK(8)"), ("ptkd.conf", "PTKD.CONF(5)"),
        ] {
            let man = try system.exec(["man", "-P", "cat", page])
            #expect(man.status == 0 && man.stdout.hasPrefix(title) && man.stderr.isEmpty, "man \(page): \(man.stderr)")
        }
        #expect(eventually(10) { (try? system.exec(["ptk", "list"]))?.stdout.contains("photo.png") == true })
        let completed = try system.exec([
            "bash", "-c",
            """
            source /usr/share/bash-completion/completions/ptk
            COMP_WORDS=(ptk sh); COMP_CWORD=1; _ptk; echo "${COMPREPLY[*]}"
            COMP_WORDS=(ptk show ''); COMP_CWORD=2; COMPREPLY=(); _ptk; echo "${COMPREPLY[*]}"
            """,
        ])
        #expect(completed.stdout == "show\nphoto.png\n", "\(completed.stderr)")
        #expect(try system.exec(["test", "-f", "/usr/share/zsh/vendor-completions/_ptk-send"]).status == 0)
        #expect(try system.exec(["test", "-f", "/usr/share/fish/vendor_completions.d/ptkd.fish"]).status == 0)

        // What an upgrade must keep: a trusted sender, an edited ptkd.conf, the identity, the photo.
        let senderID = try system.exec(["ptk-send", "--id"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(try system.exec(["ptk", "trust", "allow", senderID, "laptop"]).status == 0)
        let conf = system.root + "/etc/ptk/ptkd.conf"
        let edited = String(decoding: readFile(conf)!, as: UTF8.self) + "name = attic-box\n"
        writeFile(conf, Array(edited.utf8))
        #expect(try system.exec(["systemctl", "restart", "ptkd"]).status == 0)
        let id = try system.exec(["ptk", "id"]).stdout
        let pidBefore = try system.exec(["systemctl", "show", "ptkd", "-p", "MainPID"]).stdout

        // The upgrade: the same packages with a higher version, installed with apt in the running system.
        let newer = try builtPackages.map { deb -> String in
            let name = (deb as NSString).lastPathComponent.replacingOccurrences(
                of: "_\(version)_", with: "_\(version)+1_")
            let tree = system.work + "/repack-" + name
            _ = try run("/usr/bin/dpkg-deb", ["-R", deb, tree], absolute: true)
            let control = tree + "/DEBIAN/control"
            writeFile(
                control,
                Array(
                    String(decoding: readFile(control)!, as: UTF8.self)
                        .replacingOccurrences(of: "Version: \(version)\n", with: "Version: \(version)+1\n").utf8))
            // Compressing a static build takes a while on a busy machine: its own limit.
            let built = try run(
                "/usr/bin/dpkg-deb", ["--root-owner-group", "-b", tree, system.root + "/root/debs/" + name],
                timeout: 300, absolute: true)
            #expect(built.status == 0, "\(built.stderr)")
            return "/root/debs/" + name
        }
        let upgrade = try system.exec(
            ["env", "DEBIAN_FRONTEND=noninteractive", "apt-get", "install", "-y", "-q"] + newer, timeout: 120)
        #expect(upgrade.status == 0, "\(upgrade.stdout) \(upgrade.stderr)")
        #expect(try system.exec(["dpkg-query", "-W", "-f", "${Version}", "ptkd"]).stdout == "\(version)+1")
        #expect(try system.exec(["systemctl", "is-active", "ptkd"]).stdout == "active\n")
        #expect(
            try system.exec(["systemctl", "show", "ptkd", "-p", "MainPID"]).stdout != pidBefore,
            "the upgrade did not restart ptkd")
        #expect(readFile(received + "/photo.png") == readFile(photo))
        #expect(try system.exec(["ptk", "id"]).stdout == id)
        #expect(try system.exec(["ptk", "trust", "list"]).stdout.contains("\(senderID)  laptop"))
        #expect(String(decoding: readFile(conf)!, as: UTF8.self) == edited, "the edited ptkd.conf was replaced")
        #expect(system.journal("ptkd").contains("as \"attic-box\""))

        // apt remove: the service stopped, the programs gone, everything else kept.
        let remove = try system.exec(
            ["env", "DEBIAN_FRONTEND=noninteractive", "apt-get", "remove", "-y", "-q", "ptkd"], timeout: 120)
        #expect(remove.status == 0, "\(remove.stderr)")
        #expect(try system.exec(["systemctl", "is-active", "ptkd"]).stdout != "active\n")
        #expect(!FileManager.default.fileExists(atPath: system.root + "/usr/bin/ptkd"))
        #expect(
            !FileManager.default.fileExists(atPath: system.root + "/usr/lib/systemd/system-generators/ptkd-folders"))
        #expect(FileManager.default.fileExists(atPath: conf))
        #expect(FileManager.default.fileExists(atPath: system.root + "/var/lib/ptk/identity/key.pem"))
        #expect(readFile(received + "/photo.png") == readFile(photo))

        // apt purge: the configuration and ptk's own state go, the photos and their library stay, and it says so.
        let purge = try system.exec(
            ["env", "DEBIAN_FRONTEND=noninteractive", "apt-get", "purge", "-y", "-q", "ptkd"], timeout: 120)
        #expect(purge.status == 0, "\(purge.stderr)")
        #expect(
            purge.stdout.contains("the received photos and their library are kept in /var/lib/ptk/received"),
            "\(purge.stdout)")
        #expect(!FileManager.default.fileExists(atPath: conf))
        for gone in ["/var/lib/ptk/identity", "/var/lib/ptk/trusted-senders", "/var/lib/ptk/pending-senders"] {
            #expect(!FileManager.default.fileExists(atPath: system.root + gone), "\(gone) is still there")
        }
        #expect(readFile(received + "/photo.png") == readFile(photo))
        #expect(FileManager.default.fileExists(atPath: received + "/.ptk/index.sqlite"))
    }

    @Test(
        "upgrading from the old DynamicUser=yes unit keeps the photos: systemd moves them to /var/lib/ptk, owned by ptk"
    )
    func upgradeFromDynamicUser() throws {
        try #require(
            canBootSystem, "no Debian root at \(systemRoot): run scripts/system-root.sh as root (it needs debootstrap)")
        let photo = pngSuiteDirectory() + "/basn0g08.png"
        let unitPath = "/usr/lib/systemd/system/ptkd.service"
        var newUnit = ""
        let system = try BootedSystem(hostname: "den") { root in
            writeFile(root + "/root/photo.png", readFile(photo)!)
            // The unit as ptk shipped it before: the same, with a dynamic user.
            newUnit = String(decoding: readFile(root + unitPath)!, as: UTF8.self)
            let old = newUnit.replacingOccurrences(of: "User=ptk\nGroup=ptk\n", with: "DynamicUser=yes\n")
            try #require(old != newUnit)
            writeFile(root + unitPath, Array(old.utf8))
        }
        // Over TCP by address: a dynamic user's ptkd is not found by name.
        let first = try system.exec(["ptk-send", "127.0.0.1", "/root/photo.png"])
        #expect(first.status == 0, "\(first.stderr) \(system.journal("ptkd"))")
        #expect(readFile(system.root + "/var/lib/private/ptk/received/photo.png") == readFile(photo))

        writeFile(system.root + unitPath, Array(newUnit.utf8))
        #expect(try system.exec(["systemctl", "daemon-reload"]).status == 0)
        #expect(try system.exec(["systemctl", "restart", "ptkd"]).status == 0)
        #expect(try system.exec(["systemctl", "is-active", "ptkd"]).stdout == "active\n")
        #expect(readFile(system.root + "/var/lib/ptk/received/photo.png") == readFile(photo))
        #expect(
            try system.exec([
                "stat", "-c", "%U %G", "/var/lib/ptk", "/var/lib/ptk/received", "/var/lib/ptk/received/photo.png",
            ]).stdout
                == "ptk ptk\nptk ptk\nptk ptk\n")
        let second = try system.exec(["ptk-send", "127.0.0.1", "/root/photo.png"])
        #expect(second.stdout == "/root/photo.png: already there as \"photo.png\"\n", "\(second.stderr)")
    }
}
