import PTKHTTP
import PTKLog
import PTKProtocol
import PTKSystem

/// Who is served when many senders come at once, at every door alike. Every connection takes a
/// connection slot when it is accepted (at most `maxSessions` plus `handshakeRoom`, and
/// `maxSessionsPerAddress` per address, an IPv6 /64 counted as one; when all are taken, a
/// newcomer from an address holding fewer displaces the oldest connection of the address
/// holding most that is not working: `ConnectionTable`; beyond that it is refused, answered by
/// its door on a short-lived refusal thread). Once its handshake says who the sender is,
/// `turns` decides whether it is served now, and with what share of the sessions, or refused
/// with its place in line. The connections' threads are `threads`, joined when ptkd stops.
public final class Admission: @unchecked Sendable {
    // `slots`, `displacers`, `turns`, `stopping`, `lingering` and `nextID` are guarded by
    // `lock`; everything else is fixed at init.
    private let lock = Lock()
    /// Connections being handled (in their handshake, or served), in all and per address, and
    /// where each is in its life.
    private var slots: ConnectionTable
    /// For each connection in `slots`, a duplicate of its socket: shutting it down ends a
    /// displaced connection's reads and writes at once (the duplicate keeps the descriptor
    /// number from being reused while the connection's own thread closes its copy).
    private var displacers: [Int: FileDescriptor] = [:]
    /// The sessions served, by sender, and the senders waiting for one.
    private var turns: Turns
    /// `stop` was called: `report` is not called again.
    private var stopping = false
    /// Refusals being answered on their own threads.
    private var lingering = 0
    private var nextID = 0
    /// The lines a minute per address about connections that never became a session, or were
    /// refused (`connectionLog`): a peer connecting in a loop cannot fill the journal.
    private let connectionLogBudget = LogBudget(perMinute: 30)
    /// Told the number of connections whenever it changes (systemd's STATUS), under the lock.
    private let report: @Sendable (Int) -> Void

    /// The most sessions served at once.
    public let maxSessions: Int
    /// The most connections from one address.
    public let maxSessionsPerAddress: Int
    /// How long a connection has for its handshake (TLS, HELLO, a first request).
    public let handshakeTimeout: Duration
    /// The threads serving connections and answering refusals, joined when the doors stop.
    public let threads = ThreadGroup()

    /// Slots for `maxSessions` sessions (and `handshakeRoom` more in their handshake), at most
    /// `perAddress` from one address; `report` is told the number of connections as it changes.
    public init(
        maxSessions: Int, perAddress: Int, handshakeTimeout: Duration,
        report: @escaping @Sendable (Int) -> Void = { _ in }
    ) {
        self.maxSessions = maxSessions
        self.maxSessionsPerAddress = perAddress
        self.handshakeTimeout = handshakeTimeout
        self.report = report
        turns = Turns(capacity: maxSessions, perSender: perAddress)
        slots = ConnectionTable(
            capacity: maxSessions + Self.handshakeRoom(maxSessions: maxSessions), perAddress: perAddress)
    }

    /// Connections that may be in their handshake beyond the sessions served: room for a sender
    /// whose turn has come to be heard while others are being turned away.
    public static func handshakeRoom(maxSessions: Int) -> Int { max(4, maxSessions / 4) }

    /// Connections now being handled: sessions, and connections in their handshake.
    public var count: Int { lock.withLock { slots.count } }

    /// No more reports: `last` runs under the lock (systemd's STOPPING=1), so that no report
    /// can follow it.
    public func stop(_ last: () -> Void) {
        lock.withLock {
            stopping = true
            last()
        }
    }

    /// Tells `report` how many connections there are, unless stopping. Call under `lock`.
    private func reportCount() {
        if !stopping { report(slots.count) }
    }

    /// Why a connection was refused as it was accepted.
    public struct Refusal: Sendable {
        /// For the refusal's answer and the log.
        public var reason: String
        /// The refusal was for lack of sessions, so the sender joins the line for one; not
        /// when its address is at its own limit (a place at the front it could not take would
        /// hold a free session back from everyone behind it).
        public var joinsLine: Bool
    }

    /// Takes a connection slot for a connection from `host`, whose socket's second descriptor
    /// `displacer` is (kept with the slot, closed here when refused): its number, and why it is
    /// refused when the limits are reached (then no slot is taken). When every slot is taken, it
    /// may displace a connection that is not working (`ConnectionTable`), which is shut down here.
    public func takeSlot(_ displacer: FileDescriptor, _ host: String) -> (Int, Refusal?) {
        lock.withLock {
            nextID += 1
            switch slots.admit(nextID, from: host, now: .now) {
            case .full:
                displacer.close()
                return (
                    nextID, Refusal(reason: "the receiver is at its limit of \(maxSessions) sessions", joinsLine: true)
                )
            case .addressFull:
                displacer.close()
                return (
                    nextID,
                    Refusal(reason: "\(host) already has \(maxSessionsPerAddress) sessions open", joinsLine: false)
                )
            case .admitDisplacing(let victim):
                if let other = displacers.removeValue(forKey: victim) {
                    connectionLog(
                        host,
                        "connection \(victim) displaced by connection \(nextID) from \(host): every slot is taken, and it had not finished its handshake or shown its right to a request"
                    )
                    Socket.shutdownBoth(other)
                    other.close()
                }
            case .admit:
                break
            }
            displacers[nextID] = displacer
            reportCount()
            return (nextID, nil)
        }
    }

    /// Connection `id` ended: its slot is free.
    public func releaseSlot(_ id: Int) {
        lock.withLock {
            slots.remove(id)
            displacers.removeValue(forKey: id)?.close()
            reportCount()
        }
    }

    /// Connection `id` moved on to `stage` (`ConnectionTable`).
    public func setStage(_ id: Int, _ stage: ConnectionStage) {
        lock.withLock { slots.set(id, stage, now: .now) }
    }

    /// Whether connection `id` may work for `owner` (`ConnectionTable.claim`).
    public func claimSlot(_ id: Int, for owner: String) -> Bool {
        lock.withLock { slots.claim(id, owner: owner, now: .now) }
    }

    /// Runs `body` on the turns, under the lock.
    public func withTurns<T>(_ body: (inout Turns) -> T) -> T {
        lock.withLock { body(&turns) }
    }

    /// Logs `line` about a connection from `host`, within `connectionLogBudget` (the next
    /// line written after some were left out says how many).
    public func connectionLog(_ host: String, _ line: String) {
        let (allowed, left) = connectionLogBudget.take(host, now: .now)
        guard allowed else { return }
        Log.info(line + (left > 0 ? " (\(left) more from this address not logged)" : ""))
    }

    /// A connection refused as it was accepted: `answer` (the door's busy answer, within a
    /// second) runs on a short-lived thread; at most 64 at once, beyond which the connection is
    /// simply closed (and logged as a `kind` connection: "session", "https").
    public func refuse(
        _ socket: FileDescriptor, peer: SocketAddress, id: Int, _ refusal: Refusal, kind: String,
        answer: @escaping @Sendable () -> Void
    ) {
        let ok = lock.withLock { () -> Bool in
            if lingering >= 64 { return false }
            lingering += 1
            return true
        }
        guard ok else {
            connectionLog(
                peer.host, "\(kind) \(id) from \(peer): refused, \(refusal.reason) (closed: too many refusals at once)")
            socket.close()
            return
        }
        do {
            try threads.start(name: "refusal") { [self] in
                answer()
                lock.withLock { lingering -= 1 }
            }
        } catch {
            socket.close()
            lock.withLock { lingering -= 1 }
        }
    }

    /// A connection in a slot of its own: the slot taken, then `serve` (told the connection's
    /// number and its handshake deadline) on a thread named `thread`, the slot freed after it;
    /// over the limits, `busy` answers with the reason on a refusal thread instead (a `kind`
    /// connection in the log).
    public func admit(
        _ socket: FileDescriptor, displacer: FileDescriptor, peer: SocketAddress, thread: String, kind: String,
        busy: @escaping @Sendable (Int, Refusal) -> Void, serve: @escaping @Sendable (Int, Instant) -> Void
    ) {
        let (id, refusal) = takeSlot(displacer, peer.host)
        let deadline = Instant.now + handshakeTimeout
        if let refusal {
            refuse(socket, peer: peer, id: id, refusal, kind: kind) { busy(id, refusal) }
            return
        }
        do {
            try threads.start(name: thread) { [self] in
                serve(id, deadline)
                releaseSlot(id)
            }
        } catch {
            Log.warning("cannot start a session thread: \(error)")
            socket.close()
            releaseSlot(id)
        }
    }
}
