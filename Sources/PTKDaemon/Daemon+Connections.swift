import PTKHTTP
import PTKConfiguration
import PTKDiscovery
import PTKLibrary
import PTKNotify
import PTKProtocol
import PTKStore
import PTKSystem
import PTKTLS
import PTKTransport
import PTKTrust

/// The connections: a slot taken at accept, the sender admitted after its handshake (or told
/// to wait its turn), a thread per session; and the refusals answered on bounded threads.
extension Daemon {
    /// Tells systemd how many sessions are open, unless STOPPING=1 has gone out. Call under `lock`.
    private func reportSessions() {
        if !stopping { ServiceNotifier.status("listening on port \(listener.port); \(slots.count) session(s)") }
    }

    /// Why a connection was refused as it was accepted.
    private struct Refusal {
        var reason: String
        /// The refusal was for lack of sessions, so the sender joins the line for one; not
        /// when its address is at its own limit (a place at the front it could not take would
        /// hold a free session back from everyone behind it).
        var joinsLine: Bool
    }

    /// Takes a connection slot for a connection from `host`, whose socket's second descriptor
    /// `displacer` is (kept with the slot, closed here when refused): its number, and why it is
    /// refused when the limits are reached (then no slot is taken). When every slot is taken, it
    /// may displace a connection that is not working (`ConnectionTable`), which is shut down here.
    private func takeSlot(_ displacer: FileDescriptor, _ host: String) -> (Int, Refusal?) {
        lock.withLock {
            nextID += 1
            switch slots.admit(nextID, from: host, now: .now) {
            case .full:
                displacer.close()
                return (nextID, Refusal(reason: "the receiver is at its limit of \(configuration.maxSessions) sessions", joinsLine: true))
            case .addressFull:
                displacer.close()
                return (nextID, Refusal(reason: "\(host) already has \(configuration.maxSessionsPerAddress) sessions open", joinsLine: false))
            case .admitDisplacing(let victim):
                if let other = displacers.removeValue(forKey: victim) {
                    connectionLog(host, "connection \(victim) displaced by connection \(nextID) from \(host): every slot is taken, and it had not finished its handshake or shown its right to a request")
                    Socket.shutdownBoth(other)
                    other.close()
                }
            case .admit:
                break
            }
            displacers[nextID] = displacer
            reportSessions()
            return (nextID, nil)
        }
    }

    private func releaseSlot(_ id: Int) {
        lock.withLock {
            slots.remove(id)
            displacers.removeValue(forKey: id)?.close()
            reportSessions()
        }
    }

    /// Connection `id` moved on to `stage` (`ConnectionTable`).
    func setStage(_ id: Int, _ stage: ConnectionStage) {
        lock.withLock { slots.set(id, stage, now: .now) }
    }

    /// Logs `line` about a connection from `host`, within `connectionLogBudget` (the next
    /// line written after some were left out says how many).
    func connectionLog(_ host: String, _ line: String) {
        let (allowed, left) = connectionLogBudget.take(host, now: .now)
        guard allowed else { return }
        Log.info(line + (left > 0 ? " (\(left) more from this address not logged)" : ""))
    }

    /// Whether connection `id` may work for `owner` (`ConnectionTable.claim`).
    func claimSlot(_ id: Int, for owner: String) -> Bool {
        lock.withLock { slots.claim(id, owner: owner, now: .now) }
    }

    /// A LocalSend connection: served in a session slot on a thread of its own; over the
    /// limits its first request is answered 429 (see `refuseBusy`).
    func serveLocalSend(_ socket: FileDescriptor, displacer: FileDescriptor, peer: SocketAddress) {
        guard let localSend else { socket.close(); displacer.close(); return }
        let host = peer.host
        serveHTTPS(socket, displacer: displacer, peer: peer, thread: "localsend", busy: { id, reason in
            localSend.serve(socket, peer: peer, id: id, deadline: .now + .seconds(1), busy: reason)
        }) { [self] id, deadline in
            // LocalSend apps retry a 429 on their own: they take a session only from those
            // no sender in line is owed, and do not wait in line.
            let key = "localsend \(host)"
            if lock.withLock({ turns.take(key, now: .now) }) {
                localSend.serve(socket, peer: peer, id: id, deadline: deadline) { self.setStage(id, $0) }
                lock.withLock { turns.release(key) }
            } else {
                let reason = "the receiver is serving its limit of \(configuration.maxSessions) sessions, or owes the free ones to senders waiting"
                localSend.serve(socket, peer: peer, id: id, deadline: .now + .seconds(1), busy: reason)
            }
        }
    }

    /// A browser's connection to the web interface: served in a session slot (counted in the
    /// limits like any sender's, so slow or idle browsers cannot take more than their share) on a
    /// thread of its own; over the limits its first request is answered 429.
    func serveWeb(_ socket: FileDescriptor, displacer: FileDescriptor, peer: SocketAddress) {
        guard let web else { socket.close(); displacer.close(); return }
        serveHTTPS(socket, displacer: displacer, peer: peer, thread: "web", busy: { id, reason in
            web.serve(socket, peer: peer, id: id, deadline: .now + .seconds(1), busy: reason)
        }) { [self] id, deadline in
            web.serve(socket, peer: peer, id: id, deadline: deadline, stage: { self.setStage(id, $0) }, claim: { self.claimSlot(id, for: $0) })
        }
    }

    /// An HTTPS connection: a session slot taken, then `serve` (told the connection's number
    /// and its handshake deadline) on a thread of its own, the slot freed after it; over the
    /// limits, `busy` answers 429 with the reason on a refusal thread instead.
    private func serveHTTPS(_ socket: FileDescriptor, displacer: FileDescriptor, peer: SocketAddress, thread: String,
                            busy: @escaping @Sendable (Int, String) -> Void, serve: @escaping @Sendable (Int, Instant) -> Void) {
        let (id, refusal) = takeSlot(displacer, peer.host)
        if let refusal {
            refuseBusy(socket, peer: peer, id: id, refusal) { busy(id, refusal.reason) }
            return
        }
        let deadline = Instant.now + configuration.handshakeTimeout
        do {
            try sessionThreads.start(name: thread) { [self] in
                serve(id, deadline)
                releaseSlot(id)
            }
        } catch {
            Log.warning("cannot start a session thread: \(error)")
            socket.close()
            releaseSlot(id)
        }
    }

    func serve(_ socket: FileDescriptor, displacer: FileDescriptor, peer: SocketAddress) {
        let host = peer.host
        let (id, refusal) = takeSlot(displacer, host)
        let deadline = Instant.now + configuration.handshakeTimeout
        if let refusal {
            refuseBusy(socket, peer: peer, id: id, refusal)
            return
        }
        let release: @Sendable () -> Void = { [self] in releaseSlot(id) }
        do {
            try sessionThreads.start(name: "session") { [self] in
                // The handshake runs on the session's thread, inside its slot: a connection stuck
                // there counts against the limits until the handshake deadline frees it.
                if let (stream, sender) = open(socket, peer: peer, id: id, deadline: deadline) {
                    let key = sender.turnKey(address: host)
                    switch lock.withLock({ turns.admit(key, now: .now) }) {
                    case .busy(let ahead):
                        answerBusy(stream, sender: sender, peer: peer, id: id, reason: servingAll(ahead: ahead), ahead: ahead)
                    case .serve(let sessions):
                        // Past its handshake and admitted: a sender that may send is working; an
                        // untrusted one under `senders = trusted` is refused at its HELLO, and
                        // until then may still be displaced.
                        if case .tls(_, let trusted) = sender, trusted || !settings.trustedSendersOnly { setStage(id, .working) }
                        if case .plaintext = sender, settings.plaintextAllowed && !settings.trustedSendersOnly { setStage(id, .working) }
                        var settings = settings
                        settings.sessions = sessions
                        let connection = FramedConnection(stream: stream, timeout: configuration.idleTimeout)
                        let driver = ReceiverDriver(id: id, connection: connection, peer: peer, sender: sender, store: store,
                                                    trust: trust, arrivals: arrivals, settings: settings, shutdown: shutdown, handshakeDeadline: deadline)
                        driver.run()
                        lock.withLock { turns.release(key) }
                    }
                }
                release()
            }
        } catch {
            Log.warning("cannot start a session thread: \(error)")
            socket.close()
            release()
        }
    }

    /// Tells a TLS session from a plaintext one by its first byte (protocol §6) and runs the TLS
    /// handshake, by `deadline`. Returns the stream and who the sender is, or nil (logged, and
    /// the socket closed) when the connection is not a ptk session.
    private func open(_ socket: FileDescriptor, peer: SocketAddress, id: Int, deadline: Instant,
                      quiet: Bool = false) -> (ByteStream, SenderCredentials)? {
        func drop(_ why: String) -> (ByteStream, SenderCredentials)? {
            if !quiet { connectionLog(peer.host, "session \(id) from \(peer): \(why); closed") }
            return nil
        }
        let first: UInt8
        switch peekFirstByte(socket, interrupt: shutdown.pipe.readEnd, deadline: deadline) {
        case .byte(let b): first = b
        case .closed: socket.close(); return drop("closed before saying anything")
        case .interrupted: socket.close(); return drop("shutting down")
        case .timedOut: socket.close(); return drop("sent nothing within the handshake timeout")
        case .failed(let error): socket.close(); return drop("connection failed (\(error))")
        }
        switch first {
        case FrameType.hello.rawValue:
            return (TCPStream(socket: socket, peer: peer, interrupt: shutdown.pipe.readEnd), .plaintext)
        case 0x16:
            let stream: TLSStream
            do {
                stream = try TLSStream(socket: socket, peer: peer, context: tls, interrupt: shutdown.pipe.readEnd, deadline: deadline)
            } catch {
                switch error {
                case .timedOut: return drop("TLS handshake not finished within the handshake timeout")
                case .interrupted: return drop("shutting down during the TLS handshake")
                case .peerClosed: return drop("closed during the TLS handshake")
                default: return drop("TLS handshake failed (\(error))")
                }
            }
            let deviceID = stream.peerIdentity.deviceID
            return (stream, .tls(deviceID, trusted: deviceID.map(trust.isTrusted) ?? false))
        default:
            socket.close()
            return drop("not a ptk session (first byte 0x\(String(first, radix: 16)))")
        }
    }

    /// Answers ERROR busy (inside TLS when the sender starts it, with a deadline of a second)
    /// and closes gracefully, on a short-lived thread; at most 64 at once, beyond which the
    /// connection is simply closed. `answer`, when given, answers instead (LocalSend's 429).
    private func refuseBusy(_ socket: FileDescriptor, peer: SocketAddress, id: Int, _ refusal: Refusal,
                            answer: (@Sendable () -> Void)? = nil) {
        let ok = lock.withLock { () -> Bool in
            if lingering >= 64 { return false }
            lingering += 1
            return true
        }
        guard ok else {
            connectionLog(peer.host, "\(answer == nil ? "session" : "https") \(id) from \(peer): refused, \(refusal.reason) (closed: too many refusals at once)")
            socket.close()
            return
        }
        let body: @Sendable () -> Void = { [self] in
            if let answer {
                answer()
                lock.withLock { lingering -= 1 }
                return
            }
            if let (stream, sender) = open(socket, peer: peer, id: id, deadline: .now + .seconds(1), quiet: true) {
                let key = sender.turnKey(address: peer.host)
                let now = Instant.now
                let ahead = lock.withLock { refusal.joinsLine ? turns.refused(key, now: now) : turns.waiting(now: now).count }
                answerBusy(stream, sender: sender, peer: peer, id: id, reason: refusal.reason, ahead: ahead)
            } else {
                connectionLog(peer.host, "session \(id) from \(peer): refused, \(refusal.reason) (closed)")
            }
            lock.withLock { lingering -= 1 }
        }
        do { try sessionThreads.start(name: "refusal", body) } catch {
            socket.close()
            lock.withLock { lingering -= 1 }
        }
    }
}

extension Daemon {
    /// Why a sender is not served now, for ERROR busy and the log.
    fileprivate func servingAll(ahead: Int) -> String {
        "the receiver is serving its limit of \(configuration.maxSessions) sessions"
            + (ahead > 0 ? " and \(ahead) sender\(ahead == 1 ? " waits" : "s wait") ahead of this one" : "")
    }

    /// Answers ERROR busy with the sender's place in line (`waiting`), logs it, and closes.
    fileprivate func answerBusy(_ stream: ByteStream, sender: SenderCredentials, peer: SocketAddress, id: Int, reason: String, ahead: Int) {
        connectionLog(peer.host, "session \(id) from \(peer) (\(sender.logText)): refused, \(reason) (ERROR busy, \(ahead) ahead)")
        let connection = FramedConnection(stream: stream, timeout: .seconds(1))
        // The refused sender may already have gone: it is refused either way.
        try? connection.send(.error(Problem(.busy, reason + "; try again later", waiting: ahead)))
        connection.closeGracefully(linger: .seconds(1))
    }
}

extension SenderCredentials {
    /// Who a sender is for taking turns: its device ID over TLS (several devices behind one
    /// address are several senders), else its address.
    func turnKey(address: String) -> String {
        if case .tls(let id?, _) = self { return "device \(id.compact)" }
        return "address \(address)"
    }

    /// How log lines name the sender: its device ID, or "plaintext".
    var logText: String {
        switch self {
        case .plaintext: return "plaintext"
        case .tls(let id?, _): return "device \(id)"
        case .tls(nil, _): return "TLS, no device ID"
        }
    }
}

extension ReceiverDriver: @unchecked Sendable {}
// A driver is handed to exactly one thread, which alone touches it afterwards.
