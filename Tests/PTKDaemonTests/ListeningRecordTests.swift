import PTKConfiguration
import PTKDoor
import PTKSystem
import PTKTestSupport
import PTKTestTags
import PTKTransport
import Testing

@testable import PTKDaemon

/// A door that only listens (on the loopback addresses it is given).
private final class ListeningDoorStub: Door, @unchecked Sendable {
    let name: String
    let listener: Listener
    init(_ name: String, _ hosts: [String]) throws {
        self.name = name
        listener = try Listener(
            addresses: hosts.map { SocketAddress(numericHost: $0, port: 0)! }, skipUnavailable: true)
    }
    func serve(_ socket: FileDescriptor, displacer: FileDescriptor, peer: SocketAddress) {
        socket.close()
        displacer.close()
    }
}

@Suite("STATE/listening lists every door", .tags(.unit))
struct ListeningRecordTests {
    @Test("each address of each door, under the door's name, in the doors' order; the file is written and removed")
    func doors() throws {
        let doors = try [
            ListeningDoorStub("v1", ["127.0.0.1"]), ListeningDoorStub("inbox", ["127.0.0.1", "::1"]),
            ListeningDoorStub("web", ["127.0.0.1"]),
        ]
        defer { for door in doors { door.stop() } }
        let listed = ListeningRecord.doors(doors)
        let expected = doors.flatMap { door in
            door.listener.addresses.map { ListeningDoor(door: door.name, address: $0.host, port: $0.port) }
        }
        #expect(listed == expected)
        #expect(listed.map(\.door).first == "v1" && listed.map(\.door).last == "web")
        #expect(Set(listed.filter { $0.door == "inbox" }.map(\.port)) == [doors[1].listener.port])

        let state = makeTemporaryDirectory("ptk-listening")
        defer { removeTree(state) }
        let record = try ListeningRecord(stateDirectory: state, doors: listed)
        let text = String(decoding: readFile(ListeningFile.path(stateDirectory: state)) ?? [], as: UTF8.self)
        #expect(text.contains("inbox"))
        record.remove()
        #expect(!fileExists(ListeningFile.path(stateDirectory: state)))
    }
}
