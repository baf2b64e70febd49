import Foundation
import Glibc
import PTKTestSupport
import PTKTestTags
import Testing

// Issue 47, section 1: LocalSend discovery over IPv6. Two private network namespaces joined by a
// veth pair (va in ptkd's, vb in the phone's) that carries no IPv4 at all: no IPv4 address on
// either end, and nftables drops every IPv4 and ARP frame at both ends. Each end has only its
// link-local IPv6 address (DAD off, so it is usable at once). Nothing here leaves the namespaces.

/// ptkd's namespace and the phone's, linked.
private final class IPv6Link {
    let ptkdHost: MDNSHost
    let phone: MDNSHost

    init() throws {
        ptkdHost = try MDNSHost(startAvahi: false)
        phone = try MDNSHost(startAvahi: false)
        let noIPv4 = { (device: String) in
            """
            nft add table netdev nov4
            nft add chain netdev nov4 in '{ type filter hook ingress device \(device) priority 0; }'
            nft add rule netdev nov4 in meta protocol '{ ip, arp }' counter drop
            """
        }
        try ptkdHost.sh(
            """
            ip link add va type veth peer name vb netns \(phone.pid)
            sysctl -qw net.ipv6.conf.va.accept_dad=0
            ip link set va up
            \(noIPv4("va"))
            """)
        try phone.sh(
            """
            sysctl -qw net.ipv6.conf.vb.accept_dad=0
            ip link set vb up
            \(noIPv4("vb"))
            """)
        guard eventually(10, { self.linkLocal(self.ptkdHost, "va") != nil && self.linkLocal(self.phone, "vb") != nil })
        else {
            throw HarnessError("no link-local addresses on the veth pair")
        }
    }

    /// The device's link-local address, once usable.
    func linkLocal(_ host: MDNSHost, _ device: String) -> String? {
        guard let out = try? host.sh("ip -6 -o addr show dev \(device) scope link").stdout,
            !out.contains("tentative"), let range = out.range(of: #"fe80::[0-9a-f:]+"#, options: .regularExpression)
        else { return nil }
        return String(out[range])
    }

    func ipv4Addresses(_ host: MDNSHost, _ device: String) throws -> String {
        try host.sh("ip -4 -o addr show dev \(device)").stdout
    }

    /// The peer (Tests/Fixtures/localsend/peer6.py) on vb, in the background; its output goes to a file.
    func startPeer(timeout: Double) throws -> (Process, String) {
        let out = phone.work + "/peer-\(UInt32.random(in: 0...UInt32.max)).out"
        FileManager.default.createFile(atPath: out, contents: nil)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/nsenter")
        p.arguments = [
            "-t", String(phone.pid), "-n", "-m", "--", "/usr/bin/python3",
            repositoryRoot() + "/Tests/Fixtures/localsend/peer6.py",
            "--port", "53999", "--interface", "vb", "--timeout", String(timeout),
        ]
        p.standardOutput = FileHandle(forWritingAtPath: out)!
        p.standardError = FileHandle(forWritingAtPath: out)!
        try p.run()
        guard eventually(15, { self.read(out).contains(#""event": "ready""#) }) else {
            p.terminate()
            throw HarnessError("the peer did not start: \(read(out))")
        }
        return (p, out)
    }

    func read(_ path: String) -> String { (try? String(contentsOfFile: path, encoding: .utf8)) ?? "" }

    /// The peer's JSON lines.
    func events(_ path: String) -> [[String: Any]] {
        read(path).split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
    }

    /// ptkd's UDP sockets on port 53317 in its namespace, as `ss -uanp` lists them (local address column).
    func discoverySockets(pid: Int32) throws -> [String] {
        try ptkdHost.sh("ss -uanp").stdout.split(separator: "\n")
            .filter { $0.contains(":53317 ") && $0.contains("pid=\(pid),") }
            .map { String($0.split(separator: " ", omittingEmptySubsequences: true)[3]) }
            .sorted()
    }
}

/// Waits for `process` to end (at most `seconds`); its exit status, or nil when it is still running.
private func wait(_ process: Process, _ seconds: Double) -> Int32? {
    guard eventually(seconds, { !process.isRunning }) else {
        process.terminate()
        return nil
    }
    return process.terminationStatus
}

@Suite(
    "End to end: LocalSend discovery over IPv6 (issue 47)",
    .enabled(
        if: canFilterPackets && FileManager.default.isExecutableFile(atPath: "/usr/bin/openssl")
            && FileManager.default.isExecutableFile(atPath: "/usr/bin/ss"),
        "needs root, nsenter, unshare, nft, ss and openssl"),
    .serialized, .tags(.endToEnd, .root))
struct LocalSendIPv6Tests {
    @Test(
        "on a link with IPv6 only, a LocalSend app announcing on ff12::fd3a:e420 hears ptkd's announcement and gets a register over IPv6 to its link-local address; one socket per interface and family"
    )
    func ipv6OnlyLink() throws {
        let link = try IPv6Link()
        #expect(try link.ipv4Addresses(link.ptkdHost, "va").isEmpty)
        #expect(try link.ipv4Addresses(link.phone, "vb").isEmpty)
        // lo carries both families (127.0.0.1 from the harness's --listen, and ::1), multicast on:
        // ptkd is on it over IPv4 (no phone is on lo over IPv6, which has no multicast route there).
        try link.ptkdHost.sh("ip link set lo multicast on && ip route add 224.0.0.0/4 dev lo")
        let phoneAddress = try #require(link.linkLocal(link.phone, "vb"))
        let ptkdAddress = try #require(link.linkLocal(link.ptkdHost, "va"))
        let (peer, out) = try link.startPeer(timeout: 25)
        defer { if peer.isRunning { peer.terminate() } }
        let d = try DaemonProcess.withLocalSend(
            ["--name", "Attic", "--listen", "::"],
            wrapper: ["/usr/bin/nsenter", "-t", String(link.ptkdHost.pid), "-n", "-m", "--"], mdns: true)
        let status = wait(peer, 30)
        #expect(status == 0, "\(link.read(out)) \(d.log)")
        let events = link.events(out)
        let heard = events.filter { $0["event"] as? String == "heard" }
        let announcement = try #require(
            heard.first { ($0["message"] as? [String: Any])?["announce"] as? Bool == true }, "\(events) \(d.log)")
        let message = try #require(announcement["message"] as? [String: Any])
        #expect(message["alias"] as? String == "Attic")
        #expect(message["port"] as? Int == Int(d.localSendPort))
        #expect(message["protocol"] as? String == "https")
        // It came from ptkd's link-local address on the link.
        #expect(announcement["from"] as? String == ptkdAddress, "\(announcement)")
        let register = try #require(events.first { $0["event"] as? String == "register" }, "\(events) \(d.log)")
        #expect((register["message"] as? [String: Any])?["alias"] as? String == "Attic")
        #expect(
            register["from"] as? String == ptkdAddress,
            "registered over IPv6 from ptkd's link-local address: \(register)")
        #expect(d.log.contains("LocalSend discovery on va (IPv6, ff12::fd3a:e420)"), "\(d.log)")
        #expect(d.log.contains("LocalSend: announced on va (IPv6)"), "\(d.log)")
        #expect(
            d.log.contains("\"IPv6 Phone\" at [\(phoneAddress)%va]:53999 announced itself; registered with it"),
            "\(d.log)")
        #expect(!d.log.contains("cannot"), "\(d.log)")
        // One socket per interface and family: IPv4 on lo, IPv6 on va (bound to the group with
        // the interface as its scope, which ss shows after the address); none for IPv4 on va,
        // which has no IPv4 address, nor for IPv6 on lo.
        let sockets = try link.discoverySockets(pid: d.process.processIdentifier)
        #expect(sockets == ["224.0.0.167:53317", "[ff12::fd3a:e420]%va:53317"], "\(sockets)")
        #expect(
            d.log.contains("LocalSend discovery on lo (127.0.0.1)")
                && !d.log.contains("LocalSend discovery on lo (IPv6"), "\(d.log)")
        #expect(
            !d.log.split(separator: "\n").contains {
                $0.hasPrefix("LocalSend discovery on va (") && !$0.contains("(IPv6")
            }, "no IPv4 on va: \(d.log)")
        #expect(d.stop() == 0)
    }

    @Test(
        "a --listen of IPv4 addresses only keeps discovery off IPv6: no socket on the IPv6 group, nothing heard on the link"
    )
    func ipv4OnlyListenMeansNoIPv6() throws {
        let link = try IPv6Link()
        let (peer, out) = try link.startPeer(timeout: 6)
        defer { if peer.isRunning { peer.terminate() } }
        // The harness's --listen 127.0.0.1 only.
        let d = try DaemonProcess.withLocalSend(
            ["--name", "Attic"], wrapper: ["/usr/bin/nsenter", "-t", String(link.ptkdHost.pid), "-n", "-m", "--"],
            mdns: true)
        #expect(wait(peer, 12) == 1, "\(link.read(out))")
        #expect(link.events(out).filter { $0["event"] as? String != "ready" }.isEmpty, "\(link.read(out))")
        #expect(try link.discoverySockets(pid: d.process.processIdentifier).filter { $0.contains("ff12") }.isEmpty)
        #expect(!d.log.contains("IPv6"), "\(d.log)")
        #expect(d.stop() == 0)
    }
}
