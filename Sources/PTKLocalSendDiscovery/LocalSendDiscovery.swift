import PTKDoor
import PTKHTTP
import PTKLocalSend
import PTKLog
import PTKSystem
import PTKTLS
import PTKTransport

/// LocalSend's multicast discovery (docs/PROTOCOL.md, "LocalSend"): ptkd announces itself on
/// every multicast interface `--listen` allows, on the IPv4 group 224.0.0.167 and the IPv6 group
/// ff12::fd3a:e420, when it starts and when an interface appears, and answers the apps'
/// announcements with a `register` call over the family they came by (or, when that is not
/// possible, a multicast answer), so a phone lists it at once.
///
/// One socket per interface and family, as the apps have (issue 47): each is bound to its group
/// (no unicast datagram reaches it) and joined on its interface only; the kernel ties each to its
/// interface (IPv4: IP_MULTICAST_ALL off and the membership names the interface, which the kernel
/// compares with the datagram's; IPv6: bound with the interface as scope, which makes it the
/// socket's device), so which interface a datagram came in on is known, and a link-local source
/// carries that interface as its zone.
///
/// Anyone on the link can send to the group with any source address, so (issue 41): what is
/// answered, with whom ptkd registers and how often are `DiscoveryScheduler`'s decisions
/// (PTKLocalSend); registers are made by one worker thread from a short queue, over HTTPS only,
/// and ptkd's info is sent only to a server whose certificate has the announced fingerprint.
/// Two threads of its own until shutdown: the receiving one and the worker.
public final class LocalSendDiscovery: Service, @unchecked Sendable {
    static let group = "224.0.0.167"
    static let group6 = "ff12::fd3a:e420"
    static let port: UInt16 = 53317
    /// When the three announcements go out after an interface appears.
    static let announceDelays: [Duration] = [.milliseconds(100), .milliseconds(600), .milliseconds(2600)]
    /// How often the interfaces are looked at again.
    static let interfaceCheck: Duration = .seconds(5)
    /// How long a register may take, connection and TLS handshake included.
    static let registerTimeout: Duration = .seconds(2)

    /// An interface and family discovery is on: one socket each.
    struct Door: Hashable, CustomStringConvertible {
        var name: String
        var ipv6: Bool
        /// IPv4: the interface's address, which names it for joins and sends. IPv6: its index.
        var address: String
        var index: UInt32
        var description: String { ipv6 ? "\(name) (IPv6)" : name }
    }

    // Fixed at init.
    /// How ptkd describes itself to the apps (`announce`: nil for a register, true or false
    /// in an announcement or an answer).
    private let info: @Sendable (Bool?) -> DeviceInfo
    /// The client side of the receiver's LocalSend certificate, for registers.
    private let client: TLSContext
    private let shutdown: ShutdownSignal
    /// The receiving thread and the worker.
    private let threads = ThreadGroup()
    /// Only these IPv4 interface addresses are used (from `--listen`); nil: all.
    private let allowed: Set<String>?
    /// Only interfaces with these IPv6 addresses are used; nil: all (no `--listen`, or `::`);
    /// empty: none (a `--listen` of IPv4 addresses only).
    private let allowed6: Set<DiscoveryAddress>?
    /// ptkd's multicast answer (`announce` false).
    private let reply: [UInt8]

    /// The decisions, shared by both threads; `state.broadcast()` wakes the worker.
    private let state = ConditionLock()
    private var scheduler: DiscoveryScheduler
    /// Set when the second thread could not start: the first one ends.
    private var abandoned = false
    /// Guards `sockets` (changed by the receiving thread only, under this lock) and each
    /// socket's outgoing interface between the two threads.
    private let sending = Lock()
    private var sockets: [Door: FileDescriptor] = [:]

    /// Starts discovery for the receiver `info` describes, whose certificate's SHA-256 is
    /// `fingerprint` and whose ports are `ownPorts` (its own announcements are not answered),
    /// registering through `client`; on the interfaces `listen` allows (empty: all). Nil, with
    /// the reason logged, when the UDP port or its threads cannot be had.
    public init?(
        info: @escaping @Sendable (Bool?) -> DeviceInfo, client: TLSContext, fingerprint: String, ownPorts: Set<Int>,
        shutdown: ShutdownSignal, listen: [String]
    ) {
        self.info = info
        self.client = client
        self.shutdown = shutdown
        let wildcard = listen.isEmpty || listen.contains("0.0.0.0") || listen.contains("::")
        allowed = wildcard ? nil : Set(listen)
        allowed6 =
            listen.isEmpty || listen.contains("::")
            ? nil
            : Set(listen.compactMap { DiscoveryAddress($0) }.filter(\.isIPv6))
        scheduler = DiscoveryScheduler(ownFingerprint: fingerprint, ownPorts: ownPorts)
        reply = LocalSendJSON.encode(info(false))
        // The port is tried once at start, so that a host where it cannot be had says so at once.
        do {
            let probe = try Multicast.openGroup(Self.group, port: Self.port)
            probe.close()
        } catch {
            Log.warning(
                "LocalSend discovery is off: cannot open UDP port \(Self.port): \(error); apps can still send to this host's address"
            )
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
            closeAll()
            Log.warning("LocalSend discovery is off: \(error)")
            return nil
        }
    }

    /// Joins (until `deadline`) the receiving thread, which sees the shutdown at its next poll,
    /// and the worker (its register ends within its 2 seconds, or at once when the shutdown
    /// interrupts it); true when both ended. The sockets are closed then.
    public func stop(until deadline: Instant) -> Bool {
        guard threads.join(until: deadline) else { return false }
        closeAll()
        return true
    }

    /// "LocalSend discovery", as the log names it when it is late to stop.
    public var serviceName: String { "LocalSend discovery" }

    private func closeAll() {
        sending.withLock {
            for socket in sockets.values { socket.close() }
            sockets = [:]
        }
    }

    /// Wakes the worker so it sees the shutdown (also when the receiving thread could not start).
    private func shutdownWorker() {
        state.withLock { state.broadcast() }
    }

    /// The interfaces and families to be on now, and the addresses served there; nil when the
    /// interfaces cannot be listed (said once).
    private func lookAround(_ listFailed: inout Bool) -> ([Door], [ServedAddress])? {
        let v4: [MulticastNetwork]
        let v6: [IPv6MulticastInterface]
        do {
            v4 = try ipv4MulticastNetworks()
            v6 = allowed6?.isEmpty == true ? [] : try ipv6MulticastInterfaces()
        } catch {
            if !listFailed { Log.warning("LocalSend discovery cannot list the network interfaces: \(error)") }
            listFailed = true
            return nil
        }
        var doors: [Door] = []
        var served: [ServedAddress] = []
        for n in v4 where allowed == nil || allowed!.contains(n.interface.address) {
            guard let a = DiscoveryIPv4(n.interface.address) else { continue }
            served.append(ServedAddress(address: a, prefixLength: n.prefixLength, interface: n.interface.name))
            // One socket per interface: its first address allowed names it.
            if !doors.contains(where: { !$0.ipv6 && $0.name == n.interface.name }) {
                doors.append(Door(name: n.interface.name, ipv6: false, address: n.interface.address, index: 0))
            }
        }
        // Not IPv6 on loopback: no phone is there (a LocalSend app on this host hears ptkd on the
        // other interfaces), and lo has no IPv6 multicast route, so announcing there would fail.
        for interface in v6 where !interface.isLoopback {
            let addresses = interface.addresses.compactMap { p in
                DiscoveryAddress(p.address).map {
                    ServedAddress(address: $0, prefixLength: p.prefixLength, interface: interface.name)
                }
            }
            .filter { allowed6 == nil || allowed6!.contains($0.address) }
            guard !addresses.isEmpty else { continue }
            served += addresses
            doors.append(Door(name: interface.name, ipv6: true, address: Self.group6, index: interface.index))
        }
        return (doors, served)
    }

    /// A socket for `door`, joined on its interface.
    private func open(_ door: Door) throws(SystemError) -> FileDescriptor {
        if door.ipv6 { return try Multicast.openGroup6(Self.group6, port: Self.port, interface: door.index) }
        let socket = try Multicast.openGroup(Self.group, port: Self.port)
        do throws(SystemError) {
            try Multicast.join(socket, group: Self.group, interface: door.address)
        } catch {
            socket.close()
            throw error
        }
        return socket
    }

    /// Sends `bytes` to `door`'s group out of its interface (the caller holds `sending`).
    private func send(_ bytes: [UInt8], _ door: Door, _ socket: FileDescriptor) throws(SystemError) {
        if door.ipv6 {
            try Multicast.send6(socket, bytes, group: Self.group6, port: Self.port, interface: door.index)
        } else {
            try Multicast.send(socket, bytes, group: Self.group, port: Self.port, interface: door.address)
        }
    }

    private func run() {
        defer { shutdownWorker() }
        var announced: Set<Door> = []
        // Doors that could not be opened: said once, tried again at each look.
        var refused: Set<Door> = []
        var listFailed = false
        var nextCheck = Instant.now
        var announcements: [(Instant, Door)] = []
        var pollFailures = 0
        // One byte over the limit: a longer datagram arrives cut to this and is refused unread.
        let limit = state.withLock { scheduler.limits.datagramLimit }
        var buffer = [UInt8](repeating: 0, count: limit + 1)
        let announcement = LocalSendJSON.encode(info(true))
        while !shutdown.isRequested && !state.withLock({ abandoned }) {
            let now = Instant.now
            if now >= nextCheck {
                // When the list cannot be had, the interfaces known stay as they were.
                if let (doors, served) = lookAround(&listFailed) {
                    let current = Set(doors)
                    refused.formIntersection(current)
                    let known = Set(sending.withLock { sockets.keys })
                    for door in known.subtracting(current) {
                        sending.withLock { sockets.removeValue(forKey: door)?.close() }
                        announced.remove(door)
                        Log.info("LocalSend discovery off \(door): the interface is gone or changed")
                    }
                    for door in doors where !known.contains(door) {
                        do {
                            let socket = try open(door)
                            sending.withLock { sockets[door] = socket }
                            refused.remove(door)
                            Log.info(
                                door.ipv6
                                    ? "LocalSend discovery on \(door.name) (IPv6, \(Self.group6))"
                                    : "LocalSend discovery on \(door.name) (\(door.address))")
                            announcements += Self.announceDelays.map { (now + $0, door) }
                        } catch {
                            guard refused.insert(door).inserted else { continue }
                            Log.warning(
                                "LocalSend discovery: cannot join \(door.ipv6 ? Self.group6 : Self.group) on \(door.name): \(error)"
                            )
                        }
                    }
                    state.withLock { scheduler.serve(served) }
                }
                nextCheck = now + Self.interfaceCheck
            }
            // The receiving thread is the only one that changes `sockets`: its own reads need no lock.
            let openNow = sockets
            for (_, door) in announcements.filter({ $0.0 <= now }) {
                guard let socket = openNow[door] else { continue }
                // The first announcement on an interface is logged, sent or not (a sandbox that
                // does not allow the group shows here).
                let first = !announced.contains(door)
                announced.insert(door)
                let failure: SystemError? = sending.withLock { () -> SystemError? in
                    do throws(SystemError) {
                        try send(announcement, door, socket)
                        return nil
                    } catch { return error }
                }
                if first {
                    if let failure {
                        Log.warning("LocalSend: cannot announce on \(door): \(failure)")
                    } else {
                        Log.info("LocalSend: announced on \(door)")
                    }
                }
            }
            announcements.removeAll { $0.0 <= now }
            if let line = state.withLock({ scheduler.report(now: now) }) { Log.info(line) }
            let wake = announcements.map(\.0).min().map { min($0, nextCheck) } ?? nextCheck
            let doors = Array(openNow)
            let revents: [PollEvents]
            do {
                revents = try poll(
                    [(shutdown.pipe.readEnd, .readable)] + doors.map { ($0.value, .readable) }, until: wake)
            } catch {
                // poll fails only when the kernel is short of memory or the descriptors are
                // broken: say so once, and try again a second later rather than stop answering.
                pollFailures += 1
                if pollFailures == 1 {
                    Log.warning(
                        "LocalSend: discovery cannot wait for announcements (\(error)); trying again every second")
                }
                sleep(for: .seconds(1))
                continue
            }
            if pollFailures > 0 {
                Log.info("LocalSend: discovery waits for announcements again (after \(pollFailures) failed wait(s))")
                pollFailures = 0
            }
            if !revents[0].isEmpty { break }
            for (i, (door, socket)) in doors.enumerated() where !revents[i + 1].isEmpty {
                // A receive that fails (nothing more queued, or a datagram the kernel dropped) ends
                // this round; the next poll says when there is more. At most 256 datagrams a round
                // per socket, so the interfaces and the shutdown are looked at during a flood too.
                var round = 0
                while round < 256,
                    let (n, from) =
                        // a failed receive ends the round (above)
                        (try? buffer.withUnsafeMutableBytes { b throws(SystemError) in
                            try Multicast.receive(socket, into: b)
                        }) ?? nil
                {
                    round += 1
                    let outcome = state.withLock {
                        let outcome = scheduler.receive(
                            Array(buffer[..<n]), from: from.host, arrivedOn: door.name, now: .now)
                        if case .queued = outcome { state.broadcast() }
                        return outcome
                    }
                    if case .answerByMulticast(let alias, let host, let port, let why) = outcome {
                        answerByMulticast()
                        Log.info(
                            "LocalSend: \(quoted(alias)) at \(DiscoveryAddress(host)?.withPort(port) ?? "\(host):\(port)") announced itself; not registered (\(why)), answered by multicast"
                        )
                    }
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
            let name = "\(quoted(job.alias)) at \(job.host.withPort(job.port))"
            switch register(host: job.host.description, port: UInt16(job.port), fingerprint: job.fingerprint) {
            case .success:
                Log.info("LocalSend: \(name) announced itself; registered with it")
            case .failure(let why):
                // On the sockets open now, as the receiving thread last left them.
                if state.withLock({ scheduler.mayAnswerByMulticast(now: .now) }) {
                    answerByMulticast()
                    Log.info("LocalSend: \(name) announced itself; register failed (\(why)), answered by multicast")
                } else {
                    Log.info("LocalSend: \(name) announced itself; register failed (\(why))")
                }
            }
        }
    }

    /// ptkd's multicast answer, on each interface and family discovery is on.
    private func answerByMulticast() {
        sending.withLock {
            for (door, socket) in sockets {
                // An interface that refuses it (gone, no multicast) is told by the announcement's own log line.
                try? send(reply, door, socket)
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
        guard let address = SocketAddress(numericHost: host, port: port) else {
            return .failure(RegisterError(description: "bad address"))
        }
        let deadline = Instant.now + Self.registerTimeout
        let stream: TLSStream
        do {
            let sock = try Socket.connect(to: address, deadline: deadline)
            stream = try TLSStream(
                socket: sock, peer: address, context: client, interrupt: shutdown.pipe.readEnd, deadline: deadline)
        } catch {
            return .failure(RegisterError(description: "\(error)"))
        }
        defer { stream.close() }
        guard stream.peerCertificateFingerprint?.uppercased() == fingerprint.uppercased() else {
            return .failure(
                RegisterError(
                    description: stream.peerCertificateFingerprint == nil
                        ? "its server showed no certificate"
                        : "its server's certificate is not the announced fingerprint"))
        }
        let http = HTTPConnection(stream: stream, kind: .response, bufferSize: 16 << 10)
        let body = LocalSendJSON.encode(info(nil))
        let request =
            "POST /api/localsend/v2/register HTTP/1.1\r\nHost: \(address)\r\nContent-Type: application/json\r\nContent-Length: \(body.count)\r\nConnection: close\r\n\r\n"
        do throws(HTTPError) {
            try http.write(Array(request.utf8) + body, deadline: deadline)
            guard let head = try http.nextHead(deadline: deadline) else {
                return .failure(RegisterError(description: "no answer"))
            }
            _ = try http.readBody(limit: 64 << 10, deadline: { deadline })
            return head.status == 200 ? .success(()) : .failure(RegisterError(description: "HTTP \(head.status)"))
        } catch {
            return .failure(RegisterError(description: "\(error)"))
        }
    }
}
