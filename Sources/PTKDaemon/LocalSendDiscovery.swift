import PTKLocalSend
import PTKSystem
import PTKTLS
import PTKTransport

/// LocalSend's multicast discovery (docs/PROTOCOL.md, "LocalSend"): ptkd announces itself on
/// every IPv4 multicast interface when it starts and when an interface appears, and answers the
/// apps' announcements with a `register` call (or, when that fails, a multicast answer), so a
/// phone lists it at once. Runs on a thread of its own until shutdown.
final class LocalSendDiscovery: Service, @unchecked Sendable {
    static let group = "224.0.0.167"
    static let port: UInt16 = 53317
    /// When the three announcements go out after an interface appears.
    static let announceDelays: [Duration] = [.milliseconds(100), .milliseconds(600), .milliseconds(2600)]
    /// How often the interfaces are looked at again.
    static let interfaceCheck: Duration = .seconds(5)

    // Fixed at init.
    private let endpoint: LocalSendEndpoint
    private let shutdown: ShutdownSignal
    private let socket: FileDescriptor
    /// The discovery thread and the threads answering announcements.
    private let threads = ThreadGroup()
    /// Only these interface addresses are used (from `--listen`); nil: all.
    private let allowed: Set<String>?

    init?(endpoint: LocalSendEndpoint, shutdown: ShutdownSignal, listen: [String]) {
        self.endpoint = endpoint
        self.shutdown = shutdown
        let wildcard = listen.isEmpty || listen.contains("0.0.0.0") || listen.contains("::")
        allowed = wildcard ? nil : Set(listen)
        do {
            socket = try Multicast.open(port: Self.port)
        } catch {
            Log.warning("LocalSend discovery is off: cannot open UDP port \(Self.port): \(error); apps can still send to this host's address")
            return nil
        }
        do {
            try threads.start(name: "ls-discovery") { [self] in run() }
        } catch {
            socket.close()
            Log.warning("LocalSend discovery is off: \(error)")
            return nil
        }
    }

    /// Joins (until `deadline`) the discovery thread, which sees the shutdown at its next poll,
    /// and the answers going out (each within its 2-second deadline, or at once when the
    /// shutdown interrupts it); true when they all ended. The socket is closed then.
    func stop(until deadline: Instant) -> Bool {
        guard threads.join(until: deadline) else { return false }
        socket.close()
        return true
    }

    var serviceName: String { "LocalSend discovery" }

    private func run() {
        var known: Set<MulticastInterface> = []
        var announced: Set<MulticastInterface> = []
        var listFailed = false
        var nextCheck = Instant.now
        var announcements: [(Instant, MulticastInterface)] = []
        var answered: [String: Instant] = [:]
        var pollFailures = 0
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        let announcement = LocalSendJSON.encode(endpoint.info(announce: true))
        while !shutdown.isRequested {
            let now = Instant.now
            if now >= nextCheck {
                let listed: [MulticastInterface]
                do { listed = try ipv4MulticastInterfaces() } catch {
                    if !listFailed { Log.warning("LocalSend discovery cannot list the network interfaces: \(error)") }
                    listFailed = true
                    listed = Array(known)
                }
                let current = Set(listed.filter { allowed == nil || allowed!.contains($0.address) })
                for interface in current.subtracting(known) {
                    do {
                        try Multicast.join(socket, group: Self.group, interface: interface.address)
                        Log.info("LocalSend discovery on \(interface.name) (\(interface.address))")
                        announcements += Self.announceDelays.map { (now + $0, interface) }
                    } catch {
                        Log.warning("LocalSend discovery: cannot join \(Self.group) on \(interface.name): \(error)")
                    }
                }
                known = current
                nextCheck = now + Self.interfaceCheck
            }
            for (_, interface) in announcements.filter({ $0.0 <= now }) where known.contains(interface) {
                // The first announcement on an interface is logged, sent or not (a sandbox that
                // does not allow the group shows here).
                let first = !announced.contains(interface)
                announced.insert(interface)
                do {
                    try Multicast.send(socket, announcement, group: Self.group, port: Self.port, interface: interface.address)
                    if first { Log.info("LocalSend: announced on \(interface.name)") }
                } catch {
                    if first { Log.warning("LocalSend: cannot announce on \(interface.name): \(error)") }
                }
            }
            announcements.removeAll { $0.0 <= now }
            let wake = announcements.map(\.0).min().map { min($0, nextCheck) } ?? nextCheck
            let revents: [PollEvents]
            do { revents = try poll([(socket, .readable), (shutdown.pipe.readEnd, .readable)], until: wake) } catch {
                // poll fails only when the kernel is short of memory or the descriptors are
                // broken: say so once, and try again a second later rather than stop answering.
                pollFailures += 1
                if pollFailures == 1 { Log.warning("LocalSend: discovery cannot wait for announcements (\(error)); trying again every second") }
                sleep(for: .seconds(1))
                continue
            }
            if pollFailures > 0 {
                Log.info("LocalSend: discovery waits for announcements again (after \(pollFailures) failed wait(s))")
                pollFailures = 0
            }
            if !revents[1].isEmpty { break }
            guard !revents[0].isEmpty else { continue }
            // A receive that fails (nothing more queued, or a datagram the kernel dropped) ends this
            // round; the next poll says when there is more.
            while let (n, from) = (try? buffer.withUnsafeMutableBytes { b throws(SystemError) in try Multicast.receive(socket, into: b) }) ?? nil {
                // Announcements that are not LocalSend's JSON are someone else's: ignored.
                guard let info = try? LocalSendJSON.decode(DeviceInfo.self, from: Array(buffer[..<n])),
                      info.fingerprint != endpoint.fingerprint, info.asksForAnswers else { continue }
                // Apps announce a few times in a row: one answer is enough.
                let key = from.host + "/" + (info.fingerprint ?? "")
                if let last = answered[key], Instant.now - last < .seconds(5) { continue }
                answered[key] = .now
                answered = answered.filter { Instant.now - $0.value < .seconds(60) }
                let interfaces = Array(known)
                do { try threads.start(name: "ls-announce") { [self] in answer(info, from: from.host, interfaces: interfaces) } } catch {
                    Log.warning("LocalSend: cannot answer \(from.host) now (\(error)); it is answered when it announces itself again")
                }
            }
        }
    }

    /// Answers an announcement: `register` with the announcer over HTTP(S), else a multicast answer.
    private func answer(_ info: DeviceInfo, from host: String, interfaces: [MulticastInterface]) {
        let port = UInt16(clamping: info.port ?? Int(Self.port))
        let https = (info.protocol ?? "https") != "http"
        let name = "\"\(clean(info.alias))\" at \(host):\(port)"
        switch register(host: host, port: port, https: https) {
        case .success:
            Log.info("LocalSend: \(name) announced itself; registered with it")
        case .failure(let why):
            Log.info("LocalSend: \(name) announced itself; register failed (\(why)), answered by multicast")
            let reply = LocalSendJSON.encode(endpoint.info(announce: false))
            for interface in interfaces {
                // An interface that refuses it (gone, no multicast) is told by the announcement's own log line.
                try? Multicast.send(socket, reply, group: Self.group, port: Self.port, interface: interface.address)
            }
        }
    }

    struct RegisterError: Error, CustomStringConvertible { var description: String }

    /// `POST /api/localsend/v2/register` with ptkd's info to `host`:`port`, within 2 seconds.
    func register(host: String, port: UInt16, https: Bool) -> Result<Void, RegisterError> {
        guard let address = SocketAddress(numericHost: host, port: port) else { return .failure(RegisterError(description: "bad address")) }
        let deadline = Instant.now + .seconds(2)
        let stream: ByteStream
        do {
            let sock = try Socket.connect(to: address, deadline: deadline)
            let interrupt = shutdown.pipe.readEnd
            stream = https ? try TLSStream(socket: sock, peer: address, context: endpoint.client, interrupt: interrupt, deadline: deadline)
                           : TCPStream(socket: sock, peer: address, interrupt: interrupt)
        } catch {
            return .failure(RegisterError(description: "\(error)"))
        }
        defer { stream.close() }
        let http = HTTPConnection(stream: stream, kind: .response, bufferSize: 16 << 10)
        let body = LocalSendJSON.encode(endpoint.info())
        let request = "POST /api/localsend/v2/register HTTP/1.1\r\nHost: \(address)\r\nContent-Type: application/json\r\nContent-Length: \(body.count)\r\nConnection: close\r\n\r\n"
        do throws(HTTPFailure) {
            try http.write(Array(request.utf8) + body, deadline: deadline)
            guard let head = try http.nextHead(deadline: deadline) else { return .failure(RegisterError(description: "no answer")) }
            _ = try http.readBody(limit: 64 << 10, deadline: { deadline })
            return head.status == 200 ? .success(()) : .failure(RegisterError(description: "HTTP \(head.status)"))
        } catch {
            return .failure(RegisterError(description: "\(error)"))
        }
    }
}
