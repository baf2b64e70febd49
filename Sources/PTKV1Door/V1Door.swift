import PTKDoor
import PTKLog
import PTKProtocol
import PTKStore
import PTKSystem
import PTKTLS
import PTKTransport
import PTKTrust

/// Protocol v1's door (docs/PROTOCOL.md): its port, and each connection taken in a slot
/// (`Admission`), on a thread of its own: the first byte peeked to tell TLS from plaintext
/// (protocol §6), the TLS handshake by the handshake deadline, the sender admitted by its turn
/// (or answered ERROR busy with its place in line), then one session (`ReceiverDriver`).
public final class V1Door: Door, @unchecked Sendable {
    // Everything is fixed at init; `admission` and each part are thread-safe.
    /// "v1".
    public let name = "v1"
    /// The protocol v1 port's sockets.
    public let listener: Listener
    private let tls: TLSContext
    private let store: PhotoStore
    private let trust: TrustStore
    private let arrivals: Arrivals
    /// WELCOME's settings (`sessions` is each session's share, set when it starts).
    private let settings: ReceiverSettings
    private let shutdown: ShutdownSignal
    private let admission: Admission
    /// How long a session waits for its sender's next frame.
    private let idleTimeout: Duration

    /// The door on `listener` (bound by the caller, or a test), with the receiver's TLS
    /// context (its device identity), what it saves into, and the slots it shares with the
    /// other doors.
    public init(
        listener: Listener, tls: TLSContext, store: PhotoStore, trust: TrustStore, arrivals: Arrivals,
        settings: ReceiverSettings,
        shutdown: ShutdownSignal, admission: Admission, idleTimeout: Duration
    ) {
        self.listener = listener
        self.tls = tls
        self.store = store
        self.trust = trust
        self.arrivals = arrivals
        self.settings = settings
        self.shutdown = shutdown
        self.admission = admission
        self.idleTimeout = idleTimeout
    }

    /// A sender's connection: a slot taken, then the handshake and its session on a thread of
    /// its own; over the limits it is answered ERROR busy on a refusal thread.
    public func serve(_ socket: FileDescriptor, displacer: FileDescriptor, peer: SocketAddress) {
        let host = peer.host
        admission.admit(
            socket, displacer: displacer, peer: peer, thread: "session", kind: "session",
            busy: { [self] id, refusal in
                refuse(socket, peer: peer, id: id, refusal)
            }
        ) { [self] id, deadline in
            // The handshake runs on the session's thread, inside its slot: a connection stuck
            // there counts against the limits until the handshake deadline frees it.
            guard let (stream, sender) = open(socket, peer: peer, id: id, deadline: deadline) else { return }
            let key = sender.turnKey(address: host)
            switch admission.withTurns({ $0.admit(key, now: .now) }) {
            case .busy(let ahead):
                answerBusy(stream, sender: sender, peer: peer, id: id, reason: servingAll(ahead: ahead), ahead: ahead)
            case .serve(let sessions):
                // Past its handshake and admitted: a sender that may send is working; an
                // untrusted one under `senders = trusted` is refused at its HELLO, and
                // until then may still be displaced.
                if case .tls(_, let trusted) = sender, trusted || !settings.trustedSendersOnly {
                    admission.setStage(id, .working)
                }
                if case .plaintext = sender, settings.plaintextAllowed && !settings.trustedSendersOnly {
                    admission.setStage(id, .working)
                }
                var settings = settings
                settings.sessions = sessions
                let connection = FramedConnection(stream: stream, timeout: idleTimeout)
                let driver = ReceiverDriver(
                    id: id, connection: connection, peer: peer, sender: sender, store: store,
                    trust: trust, arrivals: arrivals, settings: settings, shutdown: shutdown,
                    handshakeDeadline: deadline)
                driver.run()
                admission.withTurns { $0.release(key) }
            }
        }
    }

    /// Answers ERROR busy to a connection refused as it was accepted (inside TLS when the
    /// sender starts it, with a deadline of a second), with its place in line.
    private func refuse(_ socket: FileDescriptor, peer: SocketAddress, id: Int, _ refusal: Admission.Refusal) {
        if let (stream, sender) = open(socket, peer: peer, id: id, deadline: .now + .seconds(1), quiet: true) {
            let key = sender.turnKey(address: peer.host)
            let now = Instant.now
            let ahead = admission.withTurns {
                refusal.joinsLine ? $0.refused(key, now: now) : $0.waiting(now: now).count
            }
            answerBusy(stream, sender: sender, peer: peer, id: id, reason: refusal.reason, ahead: ahead)
        } else {
            admission.connectionLog(peer.host, "session \(id) from \(peer): refused, \(refusal.reason) (closed)")
        }
    }

    /// Tells a TLS session from a plaintext one by its first byte (protocol §6) and runs the TLS
    /// handshake, by `deadline`. Returns the stream and who the sender is, or nil (logged, and
    /// the socket closed) when the connection is not a ptk session.
    private func open(
        _ socket: FileDescriptor, peer: SocketAddress, id: Int, deadline: Instant,
        quiet: Bool = false
    ) -> (ByteStream, SenderCredentials)? {
        func drop(_ why: String) -> (ByteStream, SenderCredentials)? {
            if !quiet { admission.connectionLog(peer.host, "session \(id) from \(peer): \(why); closed") }
            return nil
        }
        let first: UInt8
        switch peekFirstByte(socket, interrupt: shutdown.pipe.readEnd, deadline: deadline) {
        case .byte(let b): first = b
        case .closed:
            socket.close()
            return drop("closed before saying anything")
        case .interrupted:
            socket.close()
            return drop("shutting down")
        case .timedOut:
            socket.close()
            return drop("sent nothing within the handshake timeout")
        case .failed(let error):
            socket.close()
            return drop("connection failed (\(error))")
        }
        switch first {
        case FrameType.hello.rawValue:
            return (TCPStream(socket: socket, peer: peer, interrupt: shutdown.pipe.readEnd), .plaintext)
        case 0x16:
            let stream: TLSStream
            do {
                stream = try TLSStream(
                    socket: socket, peer: peer, context: tls, interrupt: shutdown.pipe.readEnd, deadline: deadline)
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

    /// Why a sender is not served now, for ERROR busy and the log.
    private func servingAll(ahead: Int) -> String {
        "the receiver is serving its limit of \(admission.maxSessions) sessions"
            + (ahead > 0 ? " and \(ahead) sender\(ahead == 1 ? " waits" : "s wait") ahead of this one" : "")
    }

    /// Answers ERROR busy with the sender's place in line (`waiting`), logs it, and closes.
    private func answerBusy(
        _ stream: ByteStream, sender: SenderCredentials, peer: SocketAddress, id: Int, reason: String, ahead: Int
    ) {
        admission.connectionLog(
            peer.host, "session \(id) from \(peer) (\(sender.logText)): refused, \(reason) (ERROR busy, \(ahead) ahead)"
        )
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
