import PTKLocalSend
import PTKSystem
import PTKTLS
import PTKTransport

/// LocalSend's multicast discovery (docs/PROTOCOL.md, "LocalSend"): ptkd announces itself on
/// every IPv4 multicast interface `--listen` allows when it starts and when an interface
/// appears, and answers the apps' announcements with a `register` call (or, when that is not
/// possible, a multicast answer), so a phone lists it at once.
///
/// Anyone on the link can send to the group with any source address, so (issue 41): the socket
/// takes only datagrams to the group on the interfaces joined (no unicast, no other interface);
/// what is answered, with whom ptkd registers and how often are `DiscoveryScheduler`'s decisions
/// (PTKLocalSend); registers are made by one worker thread from a short queue, over HTTPS only,
/// and ptkd's info is sent only to a server whose certificate has the announced fingerprint.
/// Two threads of its own until shutdown: the receiving one and the worker.
final class LocalSendDiscovery: Service, @unchecked Sendable {
    static let group = "224.0.0.167"
    static let port: UInt16 = 53317
    /// When the three announcements go out after an interface appears.
    static let announceDelays: [Duration] = [.milliseconds(100), .milliseconds(600), .milliseconds(2600)]
    /// How often the interfaces are looked at again.
    static let interfaceCheck: Duration = .seconds(5)
    /// How long a register may take, connection and TLS handshake included.
    static let registerTimeout: Duration = .seconds(2)

    // Fixed at init.
    private let endpoint: LocalSendEndpoint
    private let shutdown: ShutdownSignal
    private let socket: FileDescriptor
    /// The receiving thread and the worker.
    private let threads = ThreadGroup()
    /// Only these interface addresses are used (from `--listen`); nil: all.
    private let allowed: Set<String>?
    /// ptkd's multicast answer (`announce` false).
    private let reply: [UInt8]

    /// The decisions, shared by both threads; `state.broadcast()` wakes the worker.
    private let state = ConditionLock()
    private var scheduler: DiscoveryScheduler
    /// Set when the second thread could not start: the first one ends.
    private var abandoned = false
    /// Guards the socket's outgoing interface (set per send) between the two threads.
    private let sending = Lock()

    init?(endpoint: LocalSendEndpoint, shutdown: ShutdownSignal, listen: [String]) {
        self.endpoint = endpoint
        self.shutdown = shutdown
        let wildcard = listen.isEmpty || listen.contains("0.0.0.0") || listen.contains("::")
        allowed = wildcard ? nil : Set(listen)
        let configuration = endpoint.configuration
        let ownPorts = Set([Int(endpoint.listener.port), Int(configuration.port), Int(configuration.webPort), Int(configuration.localSendPort)])
        scheduler = DiscoveryScheduler(ownFingerprint: endpoint.fingerprint, ownPorts: ownPorts)
        reply = LocalSendJSON.encode(endpoint.info(announce: false))
        do {
            socket = try Multicast.openGroup(Self.group, port: Self.port)
        } catch {
            Log.warning("LocalSend discovery is off: cannot open UDP port \(Self.port): \(error); apps can still send to this host's address")
            return nil
        }
        do {
            try threads.start(name: "ls-discovery") { [self] in run() }
            try threads.start(name: "ls-register") { [self] in work() }
        } catch {
            // The thread that did start ends at its next look (within the interface check).
            state.withLock { abandoned = true }
            shutdownWorker()
            _ = threads.join(until: .now + Self.interfaceCheck + .seconds(1))
            socket.close()
            Log.warning("LocalSend discovery is off: \(error)")
            return nil
        }
    }

    /// Joins (until `deadline`) the receiving thread, which sees the shutdown at its next poll,
    /// and the worker (its register ends within its 2 seconds, or at once when the shutdown
    /// interrupts it); true when both ended. The socket is closed then.
    func stop(until deadline: Instant) -> Bool {
        guard threads.join(until: deadline) else { return false }
        socket.close()
        return true
    }

    var serviceName: String { "LocalSend discovery" }

    /// Wakes the worker so it sees the shutdown (also when the receiving thread could not start).
    private func shutdownWorker() {
        state.withLock { state.broadcast() }
    }

    private func run() {
        defer { shutdownWorker() }
        var known: Set<MulticastInterface> = []
        var announced: Set<MulticastInterface> = []
        var listFailed = false
        var nextCheck = Instant.now
        var announcements: [(Instant, MulticastInterface)] = []
        var pollFailures = 0
        // One byte over the limit: a longer datagram arrives cut to this and is refused unread.
        let limit = state.withLock { scheduler.limits.datagramLimit }
        var buffer = [UInt8](repeating: 0, count: limit + 1)
        let announcement = LocalSendJSON.encode(endpoint.info(announce: true))
        while !shutdown.isRequested && !state.withLock({ abandoned }) {
            let now = Instant.now
            if now >= nextCheck {
                let listed: [MulticastNetwork]?
                do { listed = try ipv4MulticastNetworks() } catch {
                    if !listFailed { Log.warning("LocalSend discovery cannot list the network interfaces: \(error)") }
                    listFailed = true
                    listed = nil
                }
                // When the list cannot be had, the interfaces known stay as they were.
                if let listed {
                    let networks = listed.filter { allowed == nil || allowed!.contains($0.interface.address) }
                    let current = Set(networks.map(\.interface))
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
                    let served = networks.compactMap { n in DiscoveryIPv4(n.interface.address).map { ServedAddress(address: $0, prefixLength: n.prefixLength) } }
                    state.withLock { scheduler.serve(served) }
                }
                nextCheck = now + Self.interfaceCheck
            }
            for (_, interface) in announcements.filter({ $0.0 <= now }) where known.contains(interface) {
                // The first announcement on an interface is logged, sent or not (a sandbox that
                // does not allow the group shows here).
                let first = !announced.contains(interface)
                announced.insert(interface)
                let failure: SystemError? = sending.withLock { () -> SystemError? in
                    do throws(SystemError) {
                        try Multicast.send(socket, announcement, group: Self.group, port: Self.port, interface: interface.address)
                        return nil
                    } catch { return error }
                }
                if first {
                    if let failure { Log.warning("LocalSend: cannot announce on \(interface.name): \(failure)") } else { Log.info("LocalSend: announced on \(interface.name)") }
                }
            }
            announcements.removeAll { $0.0 <= now }
            if let line = state.withLock({ scheduler.report(now: now) }) { Log.info(line) }
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
            // round; the next poll says when there is more. At most 256 datagrams a round, so the
            // interfaces and the shutdown are looked at during a flood too.
            var round = 0
            while round < 256, let (n, from) = (try? buffer.withUnsafeMutableBytes { b throws(SystemError) in try Multicast.receive(socket, into: b) }) ?? nil {  // a failed receive ends the round (above)
                round += 1
                let outcome = state.withLock {
                    let outcome = scheduler.receive(Array(buffer[..<n]), from: from.host, now: .now)
                    if case .queued = outcome { state.broadcast() }
                    return outcome
                }
                if case .answerByMulticast(let alias, let host, let port, let why) = outcome {
                    answerByMulticast(interfaces: Array(known))
                    Log.info("LocalSend: \(quoted(alias)) at \(host):\(port) announced itself; not registered (\(why)), answered by multicast")
                }
            }
        }
    }

    /// The worker: makes the queued registers one at a time until shutdown.
    private func work() {
        while true {
            let job: RegisterJob? = state.withLock {
                while !shutdown.isRequested && !abandoned {
                    if let job = scheduler.next(now: .now) { return job }
                    state.wait(until: .now + .seconds(1))
                }
                return nil
            }
            guard let job else { return }
            let name = "\(quoted(job.alias)) at \(job.host):\(job.port)"
            switch register(host: job.host.description, port: UInt16(job.port), fingerprint: job.fingerprint) {
            case .success:
                Log.info("LocalSend: \(name) announced itself; registered with it")
            case .failure(let why):
                // The known interfaces, as the receiving thread last saw them, are those joined.
                if state.withLock({ scheduler.mayAnswerByMulticast(now: .now) }) {
                    // Interfaces that cannot be listed now get no answer this time; the app announces again.
                    answerByMulticast(interfaces: (try? ipv4MulticastInterfaces().filter { allowed == nil || allowed!.contains($0.address) }) ?? [])
                    Log.info("LocalSend: \(name) announced itself; register failed (\(why)), answered by multicast")
                } else {
                    Log.info("LocalSend: \(name) announced itself; register failed (\(why))")
                }
            }
        }
    }

    /// ptkd's multicast answer, on each interface.
    private func answerByMulticast(interfaces: [MulticastInterface]) {
        sending.withLock {
            for interface in interfaces {
                // An interface that refuses it (gone, no multicast) is told by the announcement's own log line.
                try? Multicast.send(socket, reply, group: Self.group, port: Self.port, interface: interface.address)
            }
        }
    }

    /// A peer's text for a log line: quoted, with quotes and backslashes escaped (the alias is
    /// already free of control characters).
    private func quoted(_ text: String) -> String {
        "\"" + text.replacing("\\", with: "\\\\").replacing("\"", with: "\\\"") + "\""
    }

    struct RegisterError: Error, CustomStringConvertible { var description: String }

    /// `POST /api/localsend/v2/register` with ptkd's info to `host`:`port` over HTTPS, within
    /// `registerTimeout`, and only once the server showed a certificate whose SHA-256 is
    /// `fingerprint` (as the apps identify each other): a port that is not that app's gets a
    /// TLS handshake and nothing else.
    func register(host: String, port: UInt16, fingerprint: String) -> Result<Void, RegisterError> {
        guard let address = SocketAddress(numericHost: host, port: port) else { return .failure(RegisterError(description: "bad address")) }
        let deadline = Instant.now + Self.registerTimeout
        let stream: TLSStream
        do {
            let sock = try Socket.connect(to: address, deadline: deadline)
            stream = try TLSStream(socket: sock, peer: address, context: endpoint.client, interrupt: shutdown.pipe.readEnd, deadline: deadline)
        } catch {
            return .failure(RegisterError(description: "\(error)"))
        }
        defer { stream.close() }
        guard stream.peerCertificateFingerprint?.uppercased() == fingerprint.uppercased() else {
            return .failure(RegisterError(description: stream.peerCertificateFingerprint == nil ? "its server showed no certificate"
                                                                                                  : "its server's certificate is not the announced fingerprint"))
        }
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
