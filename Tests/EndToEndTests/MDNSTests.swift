import Foundation
import Glibc
import PTKProtocol
import PTKSystem
import PTKTestSupport
import PTKTestTags
import Testing

let canRunAvahi =
    geteuid() == 0
    && FileManager.default.fileExists(atPath: "/usr/sbin/avahi-daemon")
    && FileManager.default.fileExists(atPath: "/usr/bin/dbus-daemon")
    && FileManager.default.fileExists(atPath: "/usr/bin/nsenter")

/// A private network and mount namespace holding only `lo`, with its own D-Bus and
/// avahi-daemon, so mDNS never touches the machine's real interfaces.
final class MDNSHost: @unchecked Sendable {
    // Used from one test at a time.
    let work = makeTemporaryDirectory("ptk-mdns")
    let holder = Process()
    var pid: Int32 { holder.processIdentifier }

    init(startAvahi: Bool = true) throws {
        holder.executableURL = URL(fileURLWithPath: "/usr/bin/unshare")
        holder.arguments = ["--net", "--mount", "--propagation", "private", "sleep", "600"]
        try holder.run()
        // Wait until unshare has exec'd sleep inside the new namespaces.
        guard
            eventually(
                5,
                {
                    (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(self.pid)/exe"))?.hasSuffix(
                        "sleep") == true
                })
        else {
            throw HarnessError("the namespace did not start")
        }
        writeFile(
            work + "/avahi.conf",
            Array(
                """
                [server]
                allow-interfaces=lo
                use-ipv6=no
                enable-dbus=yes
                [wide-area]
                enable-wide-area=no
                [publish]
                publish-hinfo=no
                publish-workstation=no

                """.utf8))
        try sh(
            """
            ip link set lo up
            mkdir -p /run/dbus /run/avahi-daemon
            mount -t tmpfs tmpfs /run/dbus
            mount -t tmpfs tmpfs /run/avahi-daemon
            dbus-daemon --system --fork >/dev/null 2>&1 </dev/null
            """)
        if startAvahi { try self.startAvahi() }
    }

    /// Runs a shell command inside the namespace; throws when it fails.
    @discardableResult
    func sh(_ command: String) throws -> Finished {
        let r = try run(
            "/usr/bin/nsenter", ["-t", String(pid), "-n", "-m", "--", "/bin/sh", "-c", command], timeout: 30,
            absolute: true)
        guard r.status == 0 else { throw HarnessError("'\(command)' failed (\(r.status)): \(r.stderr)") }
        return r
    }

    /// Runs one of our binaries inside the namespace.
    /// Runs one of ptk's programs inside the namespace; ptk-send keeps its identity and known
    /// receivers in this host's own directory.
    func ptk(_ binary: String, _ args: [String]) throws -> Finished {
        try run(
            "/usr/bin/nsenter", ["-t", String(pid), "-n", "-m", "--", binDirectory + "/" + binary] + args, timeout: 30,
            absolute: true,
            environment: ["XDG_CONFIG_HOME": work + "/sender-config"])
    }

    func startAvahi() throws {
        try sh("avahi-daemon -D -f \(work)/avahi.conf >/dev/null 2>&1 </dev/null")
        guard eventually(10, { (try? self.sh("avahi-daemon -c")) != nil }) else {
            throw HarnessError("avahi-daemon did not start")
        }
    }

    func stopAvahi() throws {
        try sh("avahi-daemon -k")
        _ = eventually(10) { (try? self.sh("avahi-daemon -c")) == nil }
    }

    /// `avahi-browse -rtp _ptk._tcp`'s resolved lines: (name, port, txt).
    func browse() -> [(name: String, port: String, txt: String)] {
        guard let r = try? sh("avahi-browse -rtp _ptk._tcp") else { return [] }
        return r.stdout.split(separator: "\n").filter { $0.hasPrefix("=") }.map {
            let f = $0.split(separator: ";", omittingEmptySubsequences: false).map(String.init)
            return (
                f[3].replacingOccurrences(of: "\\032", with: " ").replacingOccurrences(of: "\\035", with: "#"), f[8],
                f[9]
            )
        }
    }

    /// A ptkd inside the namespace, advertising `name`.
    func daemon(name: String, root: String? = nil) throws -> DaemonProcess {
        try DaemonProcess(
            ["--name", name], root: root, wrapper: ["/usr/bin/nsenter", "-t", String(pid), "-n", "-m", "--"], mdns: true
        )
    }

    deinit {
        _ = try? sh("avahi-daemon -k; kill $(cat /run/dbus/pid) 2>/dev/null; true")
        kill(pid, SIGKILL)
        holder.waitUntilExit()
        removeTree(work)
    }
}

@Suite(
    "End to end: mDNS in a private network namespace",
    .enabled(if: canRunAvahi, "needs root, avahi-daemon, dbus-daemon and nsenter"), .serialized, .tags(.endToEnd, .root)
)
struct MDNSTests {
    @Test(
        "ptkd's service appears with its port and TXT v=1, tls=1 and its id, and ptk-send delivers by name over TLS and lists it"
    )
    func publishAndSendByName() throws {
        let host = try MDNSHost()
        let d = try host.daemon(name: "Living Room")
        let shown = try run("ptk", ["--config", "/dev/null", "--state-dir", d.stateDir, "id"])
        #expect(shown.status == 0, "\(shown.stderr)")
        let id = try #require(DeviceID(parsing: shown.stdout.trimmingCharacters(in: .whitespacesAndNewlines)))
        #expect(
            eventually(10) {
                host.browse().contains {
                    $0.name == "Living Room" && $0.port == String(d.port)
                        && Set($0.txt.split(separator: " ")) == ["\"v=1\"", "\"tls=1\"", "\"id=\(id.compact)\""]
                }
            }, "\(host.browse())")
        let src = pngSuiteDirectory() + "/basn3p08.png"
        let before = try host.ptk("ptk-send", ["--list"])
        #expect(before.stdout == "Living Room  127.0.0.1:\(d.port)  protocol v1  \(id.short)  new\n")
        let sent = try host.ptk("ptk-send", ["living room", src])
        #expect(sent.status == 0, "\(sent.stderr)")
        #expect(sent.stdout == "\(src): saved as \"basn3p08.png\"\n")
        #expect(sent.stderr.contains("first contact with living room: its device ID is \(id)"), "\(sent.stderr)")
        #expect(readFile(d.dir + "/basn3p08.png") == readFile(src))
        #expect(eventually { d.log.contains("(device ") && d.log.contains("saved \"basn3p08.png\"") })

        let list = try host.ptk("ptk-send", ["--list"])
        #expect(list.status == 0)
        #expect(list.stdout == "Living Room  127.0.0.1:\(d.port)  protocol v1  \(id.short)  known\n")
        let json = try host.ptk("ptk-send", ["--list", "--json"])
        #expect(
            json.stdout
                == "[{\"addresses\":[\"127.0.0.1\"],\"host\":\"\(hostName()).local\",\"id\":\"\(id.compact)\",\"name\":\"Living Room\",\"port\":\(d.port),\"status\":\"known\",\"version\":\"1\"}]\n"
        )

        let missing = try host.ptk("ptk-send", ["kitchen", src])
        #expect(missing.status == 69)
        #expect(
            missing.stderr
                == "ptk-send: no receiver named 'kitchen': the receivers found over mDNS are 'Living Room', and no host has that name\n"
        )
    }

    @Test("a receiver found over mDNS must present the ID its TXT record advertises: another one stops the call (77)")
    func advertisedIDPinned() throws {
        let host = try MDNSHost()
        let d = try host.daemon(name: "real")
        #expect(eventually(10) { host.browse().contains { $0.name == "real" } })
        // Someone else advertises a name for the same port, with an id= that is not ptkd's.
        let wrong = DeviceID(sha256: Array(repeating: 0x5A, count: 32))
        _ = try host.sh(
            "avahi-publish -s 'Fake Room' _ptk._tcp \(d.port) v=1 tls=1 id=\(wrong.compact) >/dev/null 2>&1 </dev/null & echo $! > \(d.root)/publish.pid"
        )
        defer { _ = try? host.sh("kill $(cat \(d.root)/publish.pid)") }
        #expect(eventually(10) { host.browse().contains { $0.name == "Fake Room" } })
        let src = pngSuiteDirectory() + "/basn0g01.png"
        let r = try host.ptk("ptk-send", ["Fake Room", src])
        #expect(r.status == 77)
        #expect(r.stderr.contains("its mDNS record (id=) says \(wrong)"), "\(r.stderr)")
        #expect(d.visible.isEmpty)
        let list = try host.ptk("ptk-send", ["--list"])
        #expect(
            list.stdout.contains("Fake Room  127.0.0.1:\(d.port)  protocol v1  \(wrong.short)  new"), "\(list.stdout)")
        #expect(try host.ptk("ptk-send", ["real", src]).status == 0)
    }

    @Test("killing and restarting avahi-daemon makes ptkd publish again")
    func avahiRestart() throws {
        let host = try MDNSHost()
        let d = try host.daemon(name: "den")
        #expect(eventually(10) { host.browse().contains { $0.name == "den" } })
        try host.stopAvahi()
        #expect(eventually(10) { d.log.contains("avahi-daemon went away") })
        try host.startAvahi()
        #expect(eventually(15) { host.browse().contains { $0.name == "den" && $0.port == String(d.port) } })
        #expect(d.process.isRunning)
    }

    @Test("two ptkd with the same name end up with two distinct names")
    func collision() throws {
        let host = try MDNSHost()
        let a = try host.daemon(name: "twin")
        #expect(eventually(10) { a.log.contains("advertising \"twin\"") })
        let b = try host.daemon(name: "twin")
        #expect(eventually(10) { b.log.contains("advertising as \"twin #2\"") }, "\(b.log)")
        #expect(eventually(10) { Set(host.browse().map(\.name)) == ["twin", "twin #2"] })
    }

    @Test("ptkd started without avahi-daemon serves TCP and publishes once avahi-daemon comes up")
    func lateAvahi() throws {
        let host = try MDNSHost(startAvahi: false)
        let d = try host.daemon(name: "late")
        #expect(eventually(5) { d.log.contains("avahi-daemon is not running") })
        let src = pngSuiteDirectory() + "/basn0g02.png"
        #expect(try host.ptk("ptk-send", ["127.0.0.1:\(d.port)", src]).status == 0)
        let list = try host.ptk("ptk-send", ["--list"])
        #expect(list.status == 69)
        #expect(list.stderr == "ptk-send: avahi-daemon is not running, so receivers cannot be found by name\n")
        try host.startAvahi()
        #expect(eventually(15) { host.browse().contains { $0.name == "late" } })
    }

    @Test("stopping ptkd withdraws its advertisement")
    func withdraw() throws {
        let host = try MDNSHost()
        let d = try host.daemon(name: "gone")
        #expect(eventually(10) { host.browse().contains { $0.name == "gone" } })
        #expect(d.stop() == 0)
        #expect(eventually(10) { !host.browse().contains { $0.name == "gone" } })
    }
}
