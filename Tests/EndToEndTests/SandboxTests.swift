import Foundation
import Glibc
import PTKTestSupport
import PTKTestTags
import Testing

let canCheckSandbox =
    canRunAvahi
    && FileManager.default.fileExists(atPath: "/usr/bin/strace")
    && FileManager.default.fileExists(atPath: "/usr/bin/systemd-analyze")
    && FileManager.default.fileExists(atPath: "/usr/bin/setpriv")

/// The system calls in a systemd syscall group, nested groups expanded.
func syscallGroup(_ group: String) throws -> Set<String> {
    let r = try run("/usr/bin/systemd-analyze", ["syscall-filter", group], absolute: true)
    var names = Set<String>()
    for line in r.stdout.split(separator: "\n").dropFirst() {
        let item = line.trimmingCharacters(in: .whitespaces)
        if item.isEmpty || item.hasPrefix("#") { continue }
        if item.hasPrefix("@") { names.formUnion(try syscallGroup(item)) } else { names.insert(item) }
    }
    return names
}

/// The unit file as `make install` writes it.
func installedUnit() -> String {
    let text = String(decoding: readFile(repositoryRoot() + "/systemd/ptkd.service.in") ?? [], as: UTF8.self)
    return text.replacingOccurrences(of: "@BINDIR@", with: binDirectory).replacingOccurrences(
        of: "@DOCDIR@", with: "/usr/share/doc/ptk")
}

/// The checks a booted container cannot make: the unit file itself, and every system call ptkd
/// makes against the unit's filters. SystemdTests runs the installed unit under a real systemd.
@Suite("The systemd unit and its sandbox", .serialized, .tags(.endToEnd))
struct SandboxTests {
    @Test(
        "systemd/ptkd.service passes systemd-analyze verify and rates an exposure of 1.5 or lower",
        .enabled(
            if: FileManager.default.fileExists(atPath: "/usr/bin/systemd-analyze"),
            "needs systemd-analyze (Debian package systemd)"))
    func unitVerifies() throws {
        let dir = makeTemporaryDirectory()
        defer { removeTree(dir) }
        writeFile(dir + "/ptkd.service", Array(installedUnit().utf8))
        let verify = try run("/usr/bin/systemd-analyze", ["verify", dir + "/ptkd.service"], absolute: true)
        #expect(verify.status == 0, "\(verify.stderr)")
        #expect(verify.stderr.isEmpty, "\(verify.stderr)")
        let security = try run(
            "/usr/bin/systemd-analyze", ["security", "--offline=true", dir + "/ptkd.service"], absolute: true)
        let line = try #require(security.stdout.split(separator: "\n").last { $0.contains("Overall exposure level") })
        let figure = try #require(Double(line.split(separator: ":").last!.split(separator: " ").first!))
        print("systemd-analyze security: \(line)")
        #expect(figure <= 1.5)
        // A dynamic user cannot reach Avahi on Debian 12 (SystemdTests boots the unit for real).
        #expect(!installedUnit().split(separator: "\n").contains("DynamicUser=yes"))
        for option in [
            "Type=notify", "User=ptk", "Group=ptk", "StateDirectory=ptk", "ProtectSystem=strict", "NoNewPrivileges=yes",
            "RestrictAddressFamilies=AF_INET AF_INET6 AF_UNIX AF_NETLINK", "MemoryDenyWriteExecute=yes",
            "SystemCallFilter=@system-service",
            "Restart=on-failure", "MemoryMax=2G", "TasksMax=512",
        ] {
            #expect(installedUnit().contains(option + "\n"), "\(option)")
        }
    }

    @Test(
        "every system call ptkd makes (serving, mDNS, hostile input, shutdown) is allowed by the unit's filters",
        .enabled(if: canCheckSandbox, "needs root, strace, systemd-analyze, avahi-daemon"), .tags(.root))
    func syscallsAllowed() throws {
        let allowed = try syscallGroup("@system-service")
        let privileged = try syscallGroup("@privileged")
        #expect(allowed.count > 100)
        let host = try MDNSHost()
        let trace = host.work + "/trace"
        let d = try DaemonProcess(
            ["--name", "traced"],
            wrapper: [
                "/usr/bin/nsenter", "-t", String(host.pid), "-n", "-m", "--",
                "/usr/bin/strace", "-f", "-qq", "-y", "-o", trace,
            ], mdns: true)
        #expect(eventually(10) { d.log.contains("advertising \"traced\"") })
        let src = pngSuiteDirectory() + "/basn6a16.png"
        #expect(try host.ptk("ptk-send", ["traced", src]).status == 0)
        _ = try? host.sh(
            "printf 'GET / HTTP/1.0\\r\\n\\r\\n' | timeout 3 socat - TCP:127.0.0.1:\(d.port) >/dev/null 2>&1 || true")
        let first = String(decoding: readFile(trace) ?? [], as: UTF8.self).prefix { $0 != " " }
        kill(pid_t(first) ?? 0, SIGTERM)
        #expect(eventually(10) { !d.process.isRunning })
        let lines = String(decoding: readFile(trace) ?? [], as: UTF8.self).split(separator: "\n")
        var used = Set<String>()
        let pattern = try NSRegularExpression(pattern: #"^\d+\s+(?:<\.\.\. )?([a-z0-9_]+)[( ]"#)
        for line in lines {
            let s = String(line)
            // SQLite, when it runs as root (as ptkd does under this test, never under the unit's
            // User=ptk), hands its -journal, -wal and -shm files to the database's owner with fchown.
            if s.contains(" fchown("),
                ["-journal>", "-wal>", "-shm>"].contains(where: { s.contains("/.ptk/index.sqlite" + $0) })
            {
                continue
            }
            if let m = pattern.firstMatch(in: s, range: NSRange(s.startIndex..., in: s)),
                let r = Range(m.range(at: 1), in: s)
            {
                used.insert(String(s[r]))
            }
        }
        print("ptkd used \(used.count) distinct system calls: \(used.sorted().joined(separator: " "))")
        #expect(used.contains("sendto") && used.contains("renameat2"))
        #expect(used.subtracting(allowed).isEmpty, "outside @system-service: \(used.subtracting(allowed).sorted())")
        #expect(
            used.intersection(privileged).isEmpty,
            "in @privileged: \(used.intersection(privileged).sorted()): \(lines.filter { used.intersection(privileged).contains(where: $0.contains) }.prefix(5))"
        )
        // MemoryDenyWriteExecute: no writable+executable mapping, no mprotect adding PROT_EXEC.
        let mdwe = lines.filter {
            ($0.contains("mmap(") && $0.contains("PROT_WRITE") && $0.contains("PROT_EXEC"))
                || ($0.contains("mprotect(") && $0.contains("PROT_EXEC"))
        }
        #expect(mdwe.isEmpty, "\(mdwe.prefix(3))")
        // RestrictAddressFamilies: only AF_INET, AF_INET6 and AF_UNIX sockets.
        let families = lines.filter { $0.contains(" socket(") }.compactMap {
            $0.split(separator: "(")[1].split(separator: ",").first.map(String.init)
        }
        #expect(Set(families).isSubset(of: ["AF_INET", "AF_INET6", "AF_UNIX"]), "\(Set(families))")
    }
}
