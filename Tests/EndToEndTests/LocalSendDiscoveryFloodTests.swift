import Foundation
import Glibc
import PTKTestSupport
import PTKTestTags
import Testing

// Issue 41, finding 2: LocalSend discovery under spoofed announcements, in a private network
// namespace (only `lo`, with multicast on; nothing leaves it). Every announcer below sends from
// an address of its own on lo (127.1.x.y, 127.3.0.x, 10.99.0.1), so each datagram's source is
// "another device" as far as ptkd can tell.

/// The announcers, in Python: `flood`, `big`, `one` and `app` (see each function).
private let announcerScript = #"""
    import hashlib, json, os, socket, ssl, sys, threading, time
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    GROUP, PORT = "224.0.0.167", 53317

    def info(alias, fingerprint, port, protocol="https"):
        return {"alias": alias, "version": "2.1", "deviceModel": None, "deviceType": "mobile", "fingerprint": fingerprint,
                "port": port, "protocol": protocol, "download": False, "announce": True, "announcement": True}

    def send(source, message, to=GROUP):
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.bind((source, 0))
        s.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_IF, socket.inet_aton("127.0.0.1"))
        s.sendto(message if isinstance(message, bytes) else json.dumps(message).encode(), (to, PORT))
        s.close()

    def paced(count, rate, each):
        """Calls each(i) count times at about rate a second."""
        start = time.time()
        for i in range(count):
            each(i)
            ahead = start + (i + 1) / rate - time.time()
            if ahead > 0:
                time.sleep(ahead)
        return time.time() - start

    def flood(count, rate, port):
        """Announcements from fresh addresses 127.1.x.y, each with a fresh fingerprint, pointing at port."""
        took = paced(count, rate, lambda i: send("127.1.%d.%d" % (i // 250, i % 250 + 1), info("Flood %d" % i, os.urandom(32).hex(), port)))
        print(json.dumps({"sent": count, "seconds": round(took, 2)}), flush=True)

    def big(count, rate):
        """65,000-byte fingerprints from fresh addresses 127.2.x.y."""
        took = paced(count, rate, lambda i: send("127.2.%d.%d" % (i // 250, i % 250 + 1), info("Big", "A" * 65000, 40999)))
        print(json.dumps({"sent": count, "seconds": round(took, 2)}), flush=True)

    def one(source, port, protocol, to):
        send(source, info("Forged", os.urandom(32).hex(), port, protocol), to)

    def app(directory, timeout):
        """An HTTPS LocalSend app on 127.0.0.1:53998 that announces itself until ptkd registers, and a
        liar on 127.0.0.2:53997 whose announced fingerprint is not its certificate's."""
        cert, key = directory + "/cert.pem", directory + "/key.pem"
        fingerprint = hashlib.sha256(ssl.PEM_cert_to_DER_cert(open(cert).read())).hexdigest().upper()
        got = {"honest": [], "liar": []}
        done = threading.Event()
        def server(address, name):
            class Handler(BaseHTTPRequestHandler):
                def do_POST(self):
                    body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                    got[name].append({"path": self.path, "body": json.loads(body)})
                    answer = json.dumps(info("Honest Phone", fingerprint, 53998)).encode()
                    self.send_response(200)
                    self.send_header("Content-Length", str(len(answer)))
                    self.end_headers()
                    self.wfile.write(answer)
                    if name == "honest":
                        done.set()
                def log_message(self, *a):
                    pass
            s = ThreadingHTTPServer(address, Handler)
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(cert, key)
            s.socket = context.wrap_socket(s.socket, server_side=True)
            threading.Thread(target=s.serve_forever, daemon=True).start()
        server(("127.0.0.1", 53998), "honest")
        server(("127.0.0.2", 53997), "liar")
        start = time.time()
        while time.time() - start < timeout and not done.is_set():
            send("127.0.0.1", info("Honest Phone", fingerprint, 53998))
            send("127.0.0.2", info("Liar", os.urandom(32).hex(), 53997))
            done.wait(0.5)
        time.sleep(1)
        print(json.dumps({"after": round(time.time() - start, 2), "honest": got["honest"], "liar": got["liar"]}), flush=True)

    mode = sys.argv[1]
    if mode == "flood": flood(int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4]))
    elif mode == "big": big(int(sys.argv[2]), float(sys.argv[3]))
    elif mode == "one": one(sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5])
    elif mode == "app": app(sys.argv[2], float(sys.argv[3]))
    """#

/// Threads and resident memory of a process, sampled every 20 ms on a thread of its own
/// until `stop`.
private final class ProcessSampler: @unchecked Sendable {
    let pid: Int32
    private let samples = Locked<[(threads: Int, rssKB: Int)]>([])
    private let running = Locked(true)
    private let finished = DispatchSemaphore(value: 0)

    init(pid: Int32) {
        self.pid = pid
        let thread = Thread { [self] in
            while running.value {
                if let s = Self.read(pid) { samples.mutate { $0.append(s) } }
                usleep(20_000)
            }
            finished.signal()
        }
        thread.start()
    }

    /// Threads and VmRSS (kB) from /proc/PID/status.
    static func read(_ pid: Int32) -> (threads: Int, rssKB: Int)? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        // "Threads:\t6", "VmRSS:\t   12345 kB"
        func field(_ name: String) -> Int? {
            guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix(name + ":") }) else {
                return nil
            }
            let words = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            return words.count > 1 ? Int(words[1]) : nil
        }
        guard let threads = field("Threads"), let rss = field("VmRSS") else { return nil }
        return (threads, rss)
    }

    /// Stops sampling; the most threads and the largest RSS seen.
    func stop() -> (threads: Int, rssKB: Int, count: Int) {
        running.mutate { $0 = false }
        finished.wait()
        let all = samples.value
        return (all.map(\.threads).max() ?? 0, all.map(\.rssKB).max() ?? 0, all.count)
    }
}

/// The namespace: lo with multicast, 10.99.0.1/24 on lo as well (a network ptkd does not serve:
/// it listens on 127.0.0.1), and nftables rules that drop and count SYNs to the ports and the
/// address the announcements point at.
private func discoveryHost() throws -> MDNSHost {
    let host = try MDNSHost(startAvahi: false)
    writeFile(host.work + "/announce.py", Array(announcerScript.utf8))
    try host.sh(
        """
        ip link set lo multicast on
        ip route add 224.0.0.0/4 dev lo
        ip addr add 10.99.0.1/24 dev lo
        nft add table inet ls41
        nft add chain inet ls41 input '{ type filter hook input priority 0; }'
        nft add rule inet ls41 input tcp dport 40999 tcp flags syn counter drop
        nft add rule inet ls41 input ip daddr 10.99.0.1 tcp flags syn counter drop
        nft add rule inet ls41 input tcp dport 40997 tcp flags syn counter drop
        nft add rule inet ls41 input tcp dport 40996 tcp flags syn counter drop
        nft add rule inet ls41 input tcp dport 80 tcp flags syn counter drop
        openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 -subj /CN=LocalSend \
            -keyout \(host.work)/key.pem -out \(host.work)/cert.pem 2>/dev/null
        """)
    return host
}

/// The SYNs counted by the rule whose text contains `match`.
private func synsCounted(_ host: MDNSHost, _ match: String) throws -> Int {
    let rules = try host.sh("nft list chain inet ls41 input").stdout
    guard let line = rules.split(separator: "\n").first(where: { $0.contains(match) }),
        let range = line.range(of: #"packets \d+"#, options: .regularExpression)
    else { throw HarnessError("no rule for \(match): \(rules)") }
    return Int(line[range].dropFirst("packets ".count))!
}

private func announce(_ host: MDNSHost, _ args: [String]) throws -> Finished {
    let r = try run(
        "/usr/bin/nsenter",
        ["-t", String(host.pid), "-n", "-m", "--", "/usr/bin/python3", host.work + "/announce.py"] + args,
        timeout: 60, absolute: true)
    guard r.status == 0 else { throw HarnessError("announce.py \(args) failed: \(r.stderr)") }
    return r
}

@Suite(
    "End to end: LocalSend discovery under spoofed announcements (issue 41)",
    .enabled(
        if: canFilterPackets && FileManager.default.isExecutableFile(atPath: "/usr/bin/openssl"),
        "needs root, nsenter, unshare, nft and openssl"),
    .serialized, .tags(.endToEnd, .root))
struct LocalSendDiscoveryFloodTests {
    @Test(
        "a flood of announcements from fresh addresses and fingerprints at a port that drops SYNs, and 65,000-byte fingerprints, leave ptkd's threads and memory bounded; a real app then gets its register"
    )
    func floodStaysBounded() throws {
        let host = try discoveryHost()
        let d = try DaemonProcess.withLocalSend(
            ["--name", "Attic"], wrapper: ["/usr/bin/nsenter", "-t", String(host.pid), "-n", "-m", "--"], mdns: true)
        try #require(eventually(10) { d.log.contains("LocalSend: announced on lo") }, "\(d.log)")
        let pid = d.process.processIdentifier
        let before = try #require(ProcessSampler.read(pid))

        // 3,000 announcements at 2,000 a second, each from its own address with its own fingerprint.
        let sampler = ProcessSampler(pid: pid)
        let flood = try announce(host, ["flood", "3000", "2000", "40999"])
        // 200 datagrams of 65,000-byte fingerprints, each from its own address.
        let big = try announce(host, ["big", "200", "400"])
        usleep(500_000)
        let during = sampler.stop()
        let after = try #require(ProcessSampler.read(pid))
        print(
            "discovery flood: ptkd threads \(before.threads) before, at most \(during.threads) during (\(during.count) samples), \(after.threads) after; RSS \(before.rssKB) kB before, at most \(during.rssKB) kB during, \(after.rssKB) kB after; \(flood.stdout.trimmingCharacters(in: .newlines)) \(big.stdout.trimmingCharacters(in: .newlines))"
        )
        // One receiving thread and one worker, both there before the flood: no thread is added.
        #expect(during.threads <= before.threads + 1, "threads \(before.threads) -> \(during.threads)")
        #expect(during.rssKB - before.rssKB < 16_000, "RSS \(before.rssKB) -> \(during.rssKB) kB")
        #expect(after.rssKB - before.rssKB < 16_000)
        // Registers (each a SYN and its retransmit, dropped) at most one every 2 seconds: a handful.
        let syns = try synsCounted(host, "dport 40999")
        #expect(syns >= 1 && syns <= 16, "\(syns) SYNs to the dropping port")

        // Once the flood is over, a real app that announces itself is registered with, and an
        // app whose certificate is not its announced fingerprint gets no request at all.
        let r = try announce(host, ["app", host.work, "15"])
        let parsed = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any]
        let app = try #require(parsed, "\(r.stdout)")
        let honest = app["honest"] as? [[String: Any]] ?? []
        let path = honest.first?["path"] as? String
        let body = honest.first?["body"] as? [String: Any]
        let alias = body?["alias"] as? String
        let seconds = app["after"] as? Double ?? 99
        let liar = app["liar"] as? [Any] ?? [0]
        #expect(honest.count == 1, "\(r.stdout) \(d.log.suffix(3000))")
        #expect(path == "/api/localsend/v2/register")
        #expect(alias == "Attic")
        #expect(seconds < 8, "registered after \(seconds) s")
        #expect(liar.isEmpty, "\(r.stdout)")
        print("discovery flood: the app was registered with \(seconds) s after the flood")
        #expect(
            d.log.contains("\"Honest Phone\" at 127.0.0.1:53998 announced itself; registered with it"),
            "\(d.log.suffix(3000))")
        #expect(
            eventually(5) {
                d.log.contains(
                    "\"Liar\" at 127.0.0.2:53997 announced itself; register failed (its server's certificate is not the announced fingerprint)"
                )
            }, "\(d.log.suffix(3000))")
        // What was refused is said in a line, not one line per datagram.
        #expect(d.log.contains("LocalSend discovery: "), "\(d.log.suffix(3000))")
        #expect(
            d.log.components(separatedBy: "\n").count < 100, "\(d.log.components(separatedBy: "\n").count) log lines")
        #expect(d.stop() == 0)
    }

    @Test(
        "no register goes to a source on a network ptkd does not serve, to a unicast datagram's source, over plain HTTP, or to a port below 1024"
    )
    func forgedAnnouncementsGetNoRegister() throws {
        let host = try discoveryHost()
        let d = try DaemonProcess.withLocalSend(
            ["--name", "Attic"], wrapper: ["/usr/bin/nsenter", "-t", String(host.pid), "-n", "-m", "--"], mdns: true)
        try #require(eventually(10) { d.log.contains("LocalSend: announced on lo") }, "\(d.log)")
        // From 10.99.0.1: on lo, but not on the network of 127.0.0.1, which --listen names.
        _ = try announce(host, ["one", "10.99.0.1", "40998", "https", "224.0.0.167"])
        // Unicast to ptkd's address: not taken at all (the socket is bound to the group).
        _ = try announce(host, ["one", "127.3.0.1", "40997", "https", "127.0.0.1"])
        // Plain HTTP, and a privileged port: answered by multicast, never called.
        _ = try announce(host, ["one", "127.3.0.2", "40996", "http", "224.0.0.167"])
        _ = try announce(host, ["one", "127.3.0.3", "80", "https", "224.0.0.167"])
        // A sound announcement last: once its register is tried, the others would have been too.
        _ = try announce(host, ["one", "127.3.0.4", "40999", "https", "224.0.0.167"])
        #expect(eventually(10) { (try? synsCounted(host, "dport 40999")) ?? 0 >= 1 }, "\(d.log)")
        usleep(500_000)
        #expect(try synsCounted(host, "10.99.0.1") == 0)
        #expect(try synsCounted(host, "dport 40997") == 0)
        #expect(try synsCounted(host, "dport 40996") == 0)
        #expect(try synsCounted(host, "dport 80") == 0)
        #expect(
            d.log.contains(
                "\"Forged\" at 127.3.0.2:40996 announced itself; not registered (it serves plain HTTP; ptkd registers over HTTPS only), answered by multicast"
            ), "\(d.log)")
        #expect(
            eventually(5) {
                d.log.contains("LocalSend discovery: 1 announcement(s) not answered: 1 from a refused source")
            }, "\(d.log)")
        #expect(!d.log.contains("127.3.0.1"), "\(d.log)")
        #expect(d.stop() == 0)
    }
}
