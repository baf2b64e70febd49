import PTKConfiguration
import PTKDoor
import PTKProtocol
import PTKStore
import PTKSystem
import PTKTLS
import PTKTestSupport
import PTKTestTags
import PTKTransport
import PTKTrust
import Testing

@testable import PTKV1Door

/// Protocol v1's door alone: a listener of its own on the loopback address, a store in a
/// temporary directory, its own slots; no daemon, no other door.
private final class V1DoorFixture {
    let directory = makeTemporaryDirectory("ptk-v1door")
    let shutdown: ShutdownSignal
    let admission: Admission
    let door: V1Door
    private let threads = ThreadGroup()

    init(maxSessions: Int = 4, perAddress: Int = 4) throws {
        let store = try PhotoStore(settings: StoreSettings(directory: directory + "/photos"))
        let identity = try Identity.loadOrCreate(in: directory + "/identity", commonName: "door test")
        let trust = TrustStore(directory: directory)
        shutdown = try ShutdownSignal()
        admission = Admission(maxSessions: maxSessions, perAddress: perAddress, handshakeTimeout: .seconds(5))
        let listener = try Listener(
            addresses: [SocketAddress(numericHost: "127.0.0.1", port: 0)!], skipUnavailable: false)
        door = V1Door(
            listener: listener, tls: try TLSContext(server: true, identity: identity), store: store, trust: trust,
            arrivals: Arrivals(
                directory: directory + "/photos", layout: .flat, trust: trust, library: nil, held: nil, hooks: nil),
            settings: ReceiverSettings(name: "door test", window: 4, maxFileSize: 1 << 20), shutdown: shutdown,
            admission: admission, idleTimeout: .seconds(5))
        nonisolated(unsafe) let loop = AcceptLoop(doors: [door], shutdown: shutdown)  // run on one thread, then left
        try threads.start(name: "accept") { _ = loop.run() }
    }

    /// A sender's plaintext connection to the door.
    func connect() throws -> FramedConnection {
        let socket = try Socket.connect(to: door.listener.addresses[0], deadline: .now + .seconds(5))
        return FramedConnection(
            stream: TCPStream(socket: socket, peer: door.listener.addresses[0]), timeout: .seconds(5))
    }

    deinit {
        shutdown.request()
        _ = ServingDoors([door], threads: admission.threads).stop(until: .now + .seconds(5))
        _ = threads.join(until: .now + .seconds(5))
        removeTree(directory)
    }
}

@Suite("Protocol v1's door, built alone", .tags(.unit))
struct V1DoorTests {
    @Test("a plaintext HELLO is welcomed with the receiver's name, in a slot given back when the sender leaves")
    func welcome() throws {
        let f = try V1DoorFixture()
        let sender = try f.connect()
        try sender.send(.hello(Hello(name: "phone", window: 4)))
        guard case .welcome(let welcome)? = try sender.receive() else {
            Issue.record("no WELCOME")
            return
        }
        #expect(welcome.name == "door test")
        #expect(f.admission.count == 1)
        sender.close()
        #expect(eventually(5) { f.admission.count == 0 })
    }

    @Test("over its address's limit a sender is answered ERROR busy, while the first connection keeps its slot")
    func busy() throws {
        let f = try V1DoorFixture(maxSessions: 4, perAddress: 1)
        let first = try f.connect()
        #expect(eventually(5) { f.admission.count == 1 })
        let second = try f.connect()
        try second.send(.hello(Hello(name: "phone", window: 4)))
        guard case .error(let problem)? = try second.receive() else {
            Issue.record("no ERROR")
            return
        }
        #expect(problem.code == "busy")
        #expect(problem.message.contains("127.0.0.1 already has 1 sessions open"))
        #expect(f.admission.count == 1)
        second.close()
        first.close()
        #expect(eventually(5) { f.admission.count == 0 })
    }

    @Test("a connection that is not a ptk session (an HTTP request) is closed, its slot given back")
    func notPTK() throws {
        let f = try V1DoorFixture()
        let socket = try Socket.connect(to: f.door.listener.addresses[0], deadline: .now + .seconds(5))
        let stream = TCPStream(socket: socket, peer: f.door.listener.addresses[0])
        defer { stream.close() }
        let request = Array("GET / HTTP/1.1\r\n\r\n".utf8)
        try request.withUnsafeBytes { try stream.write($0, deadline: .now + .seconds(5)) }
        // Closed with the request unread: an end of stream, or a reset.
        var buffer = [UInt8](repeating: 0, count: 64)
        // a reset is a close too
        let n = try? buffer.withUnsafeMutableBytes { try stream.read(into: $0, deadline: .now + .seconds(5)) }
        #expect(n == nil || n == 0)
        #expect(eventually(5) { f.admission.count == 0 })
    }
}
