import PTKSystem
import PTKTestSupport
import PTKTestTags
import PTKTransport
import Testing

@testable import PTKDoor

/// A door on a loopback listener of its own that records what it is handed, and its stops.
private final class FakeDoor: Door, @unchecked Sendable {
    let name: String
    let listener: Listener
    // `peers` and `stops` are guarded by `lock`.
    private let lock = Lock()
    private var peers: [SocketAddress] = []
    private var stops = 0

    init(_ name: String) throws {
        self.name = name
        listener = try Listener(addresses: [SocketAddress(numericHost: "127.0.0.1", port: 0)!], skipUnavailable: false)
    }

    func serve(_ socket: FileDescriptor, displacer: FileDescriptor, peer: SocketAddress) {
        socket.close()
        displacer.close()
        lock.withLock { peers.append(peer) }
    }

    func stop() {
        lock.withLock { stops += 1 }
        listener.close()
    }

    var served: Int { lock.withLock { peers.count } }
    var stopped: Int { lock.withLock { stops } }

    /// A client's connection to this door.
    func connect() throws -> FileDescriptor {
        try Socket.connect(to: listener.addresses[0], deadline: .now + .seconds(5))
    }
}

@Suite("The accept loop over every door, and the doors' stop", .tags(.unit))
struct AcceptLoopTests {
    @Test(
        "each connection goes to the door whose socket accepted it, whichever door it is; the loop returns nil once shutdown is asked"
    )
    func dispatch() throws {
        let doors = try ["v1", "localsend", "web"].map(FakeDoor.init)
        let shutdown = try ShutdownSignal()
        nonisolated(unsafe) let loop = AcceptLoop(doors: doors, shutdown: shutdown)  // run on one thread, then left
        let threads = ThreadGroup()
        let result = Lock()
        nonisolated(unsafe) var returned: String?? = .none
        try threads.start(name: "accept") {
            let why = loop.run()
            result.withLock { returned = .some(why) }
        }
        let clients = try [doors[1].connect(), doors[1].connect(), doors[2].connect()]
        #expect(eventually(5) { doors[1].served == 2 && doors[2].served == 1 })
        let c = try doors[0].connect()
        #expect(eventually(5) { doors[0].served == 1 })
        #expect(doors.map(\.served) == [1, 2, 1])
        shutdown.request()
        #expect(threads.join(until: .now + .seconds(5)))
        #expect(result.withLock { returned } == .some(nil))
        for client in clients + [c] { client.close() }
        for door in doors { door.listener.close() }
    }

    @Test("the loop polls every door's sockets, each with its door, in the doors' order; a door closed has none")
    func sockets() throws {
        let doors = try ["a", "b", "c"].map(FakeDoor.init)
        let loop = AcceptLoop(doors: doors, shutdown: try ShutdownSignal())
        #expect(loop.sockets.map(\.door.name) == ["a", "b", "c"])
        #expect(loop.sockets.map(\.socket.rawValue) == doors.map { $0.listener.sockets[0].rawValue })
        doors[1].stop()
        #expect(loop.sockets.map(\.door.name) == ["a", "c"])
        for door in doors { door.listener.close() }
    }

    @Test(
        "stopping the doors stops each once and waits for the connections' threads; one that outlives the deadline makes it late"
    )
    func stopDoors() throws {
        let doors = try ["v1", "web"].map(FakeDoor.init)
        let threads = ThreadGroup()
        try threads.start(name: "connection") { sleep(for: .milliseconds(100)) }
        let serving = ServingDoors(doors, threads: threads)
        #expect(serving.serviceName == "sessions")
        #expect(serving.stop(until: .now + .seconds(5)))
        #expect(doors.map(\.stopped) == [1, 1])
        #expect(doors.allSatisfy { $0.listener.sockets.isEmpty })

        let slow = ThreadGroup()
        try slow.start(name: "connection") { sleep(for: .milliseconds(800)) }
        #expect(!ServingDoors(doors, threads: slow).stop(until: .now + .milliseconds(50)))
        #expect(doors.map(\.stopped) == [2, 2])
        #expect(slow.join(until: .now + .seconds(5)))
    }

    @Test("a door's default stop closes its listener")
    func defaultStop() throws {
        final class Plain: Door, @unchecked Sendable {
            let name = "plain"
            let listener: Listener
            init() throws {
                listener = try Listener(
                    addresses: [SocketAddress(numericHost: "127.0.0.1", port: 0)!], skipUnavailable: false)
            }
            func serve(_ socket: FileDescriptor, displacer: FileDescriptor, peer: SocketAddress) {}
        }
        let door = try Plain()
        #expect(door.listener.sockets.count == 1)
        door.stop()
        #expect(door.listener.sockets.isEmpty)
    }
}

@Suite("Admission: the slots every door shares", .tags(.unit))
struct AdmissionTests {
    private func descriptor() throws -> FileDescriptor { try FileDescriptor.open("/dev/null", flags: [.readOnly]) }

    @Test(
        "slots are taken and released with their count reported; an address over its limit is refused without joining the line; the whole receiver full joins it"
    )
    func slots() throws {
        let reports = Lock()
        nonisolated(unsafe) var counts: [Int] = []
        let admission = Admission(maxSessions: 1, perAddress: 1, handshakeTimeout: .seconds(1)) { n in
            reports.withLock { counts.append(n) }
        }
        let (first, none) = admission.takeSlot(try descriptor(), "192.0.2.1")
        #expect(none == nil)
        #expect(admission.count == 1)
        let (_, refusal) = admission.takeSlot(try descriptor(), "192.0.2.1")
        #expect(refusal?.reason == "192.0.2.1 already has 1 sessions open")
        #expect(refusal?.joinsLine == false)
        // One session, and room for four more connections in their handshake.
        #expect(Admission.handshakeRoom(maxSessions: 1) == 4)
        for n in 2...5 { #expect(admission.takeSlot(try descriptor(), "192.0.2.\(n)").1 == nil) }
        let (_, full) = admission.takeSlot(try descriptor(), "192.0.2.9")
        #expect(full?.reason == "the receiver is at its limit of 1 sessions")
        #expect(full?.joinsLine == true)
        admission.releaseSlot(first)
        #expect(admission.count == 4)
        admission.stop {}
        admission.releaseSlot(first + 2)
        #expect(reports.withLock { counts } == [1, 2, 3, 4, 5, 4])
    }
}
