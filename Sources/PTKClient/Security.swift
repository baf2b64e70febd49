import PTKProtocol
import PTKSystem
import PTKTLS
import PTKTransport
import PTKVocabulary

/// A receiver ID the sender requires, and where that requirement comes from (for the message
/// that a different ID gets, and the fix it suggests).
public struct ExpectedReceiver: Sendable, Equatable {
    /// The device ID the receiver must present in the TLS handshake.
    public var id: DeviceID
    /// Where the requirement comes from, so the mismatch message can say what to fix.
    public var source: Source
    /// Takes both as given; the TLS connector checks the handshake's ID against `id`.
    public init(id: DeviceID, source: Source) {
        self.id = id
        self.source = source
    }

    /// Where an expected ID comes from: the user, the known-receivers file, mDNS, or this call's first session.
    public enum Source: Sendable, Equatable, CustomStringConvertible {
        /// `--expect-id`.
        case pinned
        /// The known-receivers file: its path and when the receiver was first seen (seconds since the epoch).
        case remembered(path: String, firstSeen: WallTime)
        /// The `id=` of the receiver's mDNS record.
        case advertised
        /// The first session of this call.
        case firstSession

        /// Where, in words for the mismatch message.
        public var description: String {
            switch self {
            case .pinned: return "--expect-id"
            case .remembered(let path, let firstSeen): return "\(path) (first seen \(firstSeen))"
            case .advertised: return "its mDNS record (id=)"
            case .firstSession: return "the first session of this call"
            }
        }
    }
}

extension SendOptions {
    /// A connector that connects over TCP, runs the TLS 1.3 handshake as `context`'s client and
    /// checks the receiver's device ID against every one of `expected` before a frame is sent.
    /// The first session's ID is reported to `learned`; with none expected, it is required of
    /// every later session of the call.
    public func tlsConnector(
        to addresses: [SocketAddress], context: TLSContext, expected: [ExpectedReceiver],
        learned: @escaping @Sendable (DeviceID, SocketAddress) -> Void
    ) -> Connector {
        let timeout = self.timeout
        let state = LearnedReceiver(expected: expected)
        return { () throws(SendFailure) in
            let deadline = Instant.now + timeout
            let socket: FileDescriptor
            let address: SocketAddress
            do throws(ConnectFailure) {
                (socket, address) = try Socket.connectFirst(to: addresses, deadline: deadline)
            } catch {
                throw .unreachable(error.description)
            }
            let stream: TLSStream
            do throws(TransportError) {
                stream = try TLSStream(socket: socket, peer: address, context: context, deadline: deadline)
            } catch {
                switch error {
                case .notTLS(let m): throw .notTLS(m)
                case .timedOut:
                    throw .connectionLost(
                        "the receiver did not finish the TLS handshake within \(formatSeconds(timeout))")
                case .peerClosed: throw .connectionLost("the receiver closed the connection during the TLS handshake")
                default: throw .tlsFailed(error.description)
                }
            }
            guard let id = stream.peerIdentity.deviceID else {
                stream.close()
                throw .tlsFailed("the receiver presented \(stream.peerIdentity), not an Ed25519 device identity")
            }
            if let wrong = state.check(id) {
                // Nothing of ptk's has been sent yet: not even HELLO.
                stream.close()
                throw .identityMismatch(expected: wrong, presented: id)
            }
            if state.learn(id) { learned(id, address) }
            return (stream, address.description)
        }
    }
}

/// The ID pinned for the rest of a call once the first session has seen one.
final class LearnedReceiver: @unchecked Sendable {
    // Guarded by `lock`.
    private let lock = Lock()
    private var expected: [ExpectedReceiver]
    private var reported = false

    init(expected: [ExpectedReceiver]) { self.expected = expected }

    /// The first expectation that `id` breaks, if any.
    func check(_ id: DeviceID) -> ExpectedReceiver? {
        lock.withLock { expected.first { $0.id != id } }
    }

    /// Requires `id` from now on (when nothing was expected); true for the first session that
    /// got this far, whose ID is the one to report.
    func learn(_ id: DeviceID) -> Bool {
        lock.withLock {
            if expected.isEmpty { expected = [ExpectedReceiver(id: id, source: .firstSession)] }
            defer { reported = true }
            return !reported
        }
    }
}

/// One line of the sender's `known-receivers` file: a receiver met before, as SSH's
/// known_hosts remembers hosts.
public struct KnownReceiver: Sendable, Equatable {
    /// The receiver's device ID, from its certificate.
    public var id: DeviceID
    /// The peer as the user named it (mDNS name, host or host:port).
    public var name: String
    /// The address it answered on.
    public var address: String
    /// When it was first met (seconds since 1970).
    public var firstSeen: WallTime

    /// Takes the fields as given.
    public init(id: DeviceID, name: String, address: String, firstSeen: WallTime) {
        self.id = id
        self.name = name
        self.address = address
        self.firstSeen = firstSeen
    }
}

/// The `known-receivers` file: one receiver a line, `ID<TAB>name<TAB>address<TAB>first-seen`,
/// `#` comments. Lines it cannot parse are kept as they are.
public struct KnownReceivers: Sendable {
    /// The file's path, as given; it may not exist yet.
    public let path: String
    /// The receivers read from the file, with `remember` and `forget` applied since; `save` writes them.
    public private(set) var entries: [KnownReceiver] = []
    private var otherLines: [String] = []

    /// Reads `path`; a missing file is an empty list.
    public init(path: String) throws(SystemError) {
        self.path = path
        let text: String
        do { text = try readTextFile(path) } catch {
            if error.code == .noSuchFile { return }
            throw error
        }
        for line in text.split(separator: "\n", omittingEmptySubsequences: true) {
            if let entry = Self.parse(String(line)) { entries.append(entry) } else { otherLines.append(String(line)) }
        }
    }

    static func parse(_ line: String) -> KnownReceiver? {
        if line.hasPrefix("#") { return nil }
        let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
        guard fields.count >= 4, let id = DeviceID(parsing: fields[0]), let seen = Int64(fields[3]) else { return nil }
        return KnownReceiver(id: id, name: fields[1], address: fields[2], firstSeen: WallTime(seconds: seen))
    }

    /// The entry for the peer the user names `name` (case-insensitive).
    public func entry(named name: String) -> KnownReceiver? {
        entries.first { $0.name.lowercased() == name.lowercased() }
    }

    /// Adds or replaces the entry of `entry.name`.
    public mutating func remember(_ entry: KnownReceiver) {
        entries.removeAll { $0.name.lowercased() == entry.name.lowercased() }
        entries.append(entry)
    }

    /// Drops the entries whose name or address is `name` (case-insensitive); how many went.
    public mutating func forget(_ name: String) -> Int {
        let before = entries.count
        entries.removeAll { $0.name.lowercased() == name.lowercased() || $0.address.lowercased() == name.lowercased() }
        return before - entries.count
    }

    /// Writes the file (atomically, mode 0600).
    public func save() throws(SystemError) {
        var text = "# Receivers ptk-send has met: device ID, name as given, address, first seen (Unix time).\n"
        text += "# `ptk-send --forget NAME` drops a line, so that a receiver's new ID is accepted.\n"
        for line in otherLines where !line.hasPrefix("# Receivers ptk-send") && !line.hasPrefix("# `ptk-send --forget")
        {
            text += line + "\n"
        }
        for e in entries { text += "\(e.id.compact)\t\(e.name)\t\(e.address)\t\(e.firstSeen.seconds)\n" }
        try writeFileAtomically(path, Array(text.utf8), mode: 0o600)
    }
}
