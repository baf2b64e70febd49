import Foundation
import Glibc
import PTKTestSupport
import PTKTestTags
import Testing

let canFilterPackets = canRunAvahi && FileManager.default.fileExists(atPath: "/usr/sbin/nft")

/// A private network namespace whose host names resolve to several addresses (its own
/// /etc/hosts), where SYNs to 2001:db8::1 and 127.0.0.2 are dropped and nothing listens on
/// 2001:db8::2. ptkd listens on 127.0.0.1. Nothing here leaves the namespace.
final class MultiAddressHost {
    let host: MDNSHost
    let daemon: DaemonProcess

    init() throws {
        host = try MDNSHost(startAvahi: false)
        writeFile(
            host.work + "/hosts",
            Array(
                """
                127.0.0.1 localhost
                2001:db8::1 dropfirst
                127.0.0.1 dropfirst
                2001:db8::2 refusefirst
                127.0.0.1 refusefirst
                2001:db8::1 nowhere
                127.0.0.2 nowhere

                """.utf8))
        try host.sh(
            """
            ip addr add 2001:db8::1/128 dev lo nodad
            ip addr add 2001:db8::2/128 dev lo nodad
            nft add table inet ptktest
            nft add chain inet ptktest input '{ type filter hook input priority 0; }'
            nft add rule inet ptktest input ip6 daddr 2001:db8::1 tcp flags syn drop
            nft add rule inet ptktest input ip daddr 127.0.0.2 tcp flags syn drop
            mount --bind \(host.work)/hosts /etc/hosts
            """)
        daemon = try DaemonProcess([], wrapper: ["/usr/bin/nsenter", "-t", String(host.pid), "-n", "-m", "--"])
    }

    /// The addresses `name` resolves to, in the resolver's order.
    func resolve(_ name: String) throws -> [String] {
        // getaddrinfo as ptk-send calls it (AF_UNSPEC, SOCK_STREAM, no flags); getent ahosts adds flags.
        let script = "import socket; [print(a[4][0]) for a in socket.getaddrinfo('\(name)', 1, 0, socket.SOCK_STREAM)]"
        return try host.sh("python3 -c \"\(script)\"").stdout.split(separator: "\n").map(String.init)
    }

    /// Runs ptk-send in the namespace; returns what it left and how long it took.
    func send(_ args: [String]) throws -> (Finished, Double) {
        let start = Date()
        let r = try host.ptk("ptk-send", args)
        return (r, Date().timeIntervalSince(start))
    }
}

@Suite(
    "End to end: connecting to a peer with several addresses (RFC 8305)",
    .enabled(if: canFilterPackets, "needs root, nsenter and nft (Debian package nftables)"), .serialized,
    .tags(.endToEnd, .root))
struct ConnectTests {
    @Test("an address whose SYNs are dropped does not stall the send: the next address is tried 250 ms later")
    func droppedAddress() throws {
        let h = try MultiAddressHost()
        // The dropped address is the one tried first; otherwise this test would prove nothing.
        try #require(try h.resolve("dropfirst") == ["2001:db8::1", "127.0.0.1"])
        let src = photo(h.daemon.root, "he.png", size: 40_000)
        let (r, seconds) = try h.send(["--timeout", "20", "dropfirst:\(h.daemon.port)", src])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout == "\(src): saved as \"he.png\"\n")
        #expect(readFile(h.daemon.dir + "/he.png") == readFile(src))
        // One address after another, the first would have taken the whole 20 s timeout.
        #expect(seconds < 10, "took \(seconds) s")
    }

    @Test("an address that refuses is passed over at once")
    func refusedAddress() throws {
        let h = try MultiAddressHost()
        try #require(try h.resolve("refusefirst") == ["2001:db8::2", "127.0.0.1"])
        let src = photo(h.daemon.root, "rf.png", size: 5_000)
        let (r, _) = try h.send(["--timeout", "20", "refusefirst:\(h.daemon.port)", src])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(readFile(h.daemon.dir + "/rf.png") == readFile(src))
    }

    @Test("--timeout bounds the whole attempt when no address answers; the error names each address")
    func noAddressAnswers() throws {
        let h = try MultiAddressHost()
        try #require(try h.resolve("nowhere") == ["2001:db8::1", "127.0.0.2"])
        let src = photo(h.daemon.root, "nw.png", size: 5_000)
        let port = h.daemon.port
        let (r, seconds) = try h.send(["--timeout", "3", "nowhere:\(port)", src])
        #expect(r.status == 69)
        #expect(
            r.stderr
                == "ptk-send: cannot connect to nowhere:\(port): [2001:db8::1]:\(port): connection timed out; 127.0.0.2:\(port): connection timed out\n"
        )
        // Two addresses, one after another, would have taken 6 s.
        #expect(seconds < 5.5, "took \(seconds) s")
    }
}
