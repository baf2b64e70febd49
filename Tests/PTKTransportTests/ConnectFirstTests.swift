import Glibc
import PTKSystem
import PTKTestTags
import Testing

private func v4(_ port: UInt16) -> SocketAddress { SocketAddress(numericHost: "127.0.0.1", port: port)! }
private func v6(_ host: String, _ port: UInt16) -> SocketAddress { SocketAddress(numericHost: host, port: port)! }

/// A listener on loopback whose accept queue is full, so the kernel drops further SYNs: an
/// address that neither answers nor refuses, made without root or packet filters.
private final class SilentListener {
    let listener: FileDescriptor
    let port: UInt16
    private var fillers: [FileDescriptor] = []

    init() throws {
        listener = try Socket.listen(on: v4(0), backlog: 0)
        port = try Socket.localAddress(listener).port
        // Connections nobody accepts fill the queue; each completes its handshake first.
        for _ in 0..<2 {
            let (sock, _) = try Socket.startConnect(to: v4(port))
            fillers.append(sock)
            usleep(50_000)
        }
    }

    func close() {
        for f in fillers { f.close() }
        listener.close()
    }
}

/// A port on 127.0.0.1 with nothing listening: connecting is refused at once.
private func refusingPort() throws -> UInt16 {
    let l = try Socket.listen(on: v4(0))
    let port = try Socket.localAddress(l).port
    l.close()
    return port
}

@Suite("Connecting the way RFC 8305 says (Happy Eyeballs v2)", .tags(.unit))
struct ConnectFirstTests {
    @Test("addresses are interleaved by family, starting with the first address's family, each family in order")
    func interleave() {
        let a = v6("2001:db8::1", 1)
        let b = v6("2001:db8::2", 1)
        let c = v6("fe80::1", 1)
        let x = v4(1)
        let y = SocketAddress(numericHost: "192.0.2.2", port: 1)!
        #expect(Socket.interleaveByFamily([a, b, c, x, y]) == [a, x, b, y, c])
        #expect(Socket.interleaveByFamily([x, y, a]) == [x, a, y])
        #expect(Socket.interleaveByFamily([x, y]) == [x, y])
        #expect(Socket.interleaveByFamily([]) == [])
    }

    @Test("an address that drops SYNs costs one attempt delay, not the timeout: the next one wins")
    func droppedThenGood() throws {
        let silent = try SilentListener()
        defer { silent.close() }
        let good = try Socket.listen(on: v4(0))
        defer { good.close() }
        let goodAddress = v4(try Socket.localAddress(good).port)
        let start = Instant.now
        let (sock, winner) = try Socket.connectFirst(to: [v4(silent.port), goodAddress], deadline: .now + .seconds(5))
        sock.close()
        #expect(winner == goodAddress)
        // The second attempt waits for the Connection Attempt Delay and no longer: with one
        // attempt after another, the silent address would have used the whole 5 s.
        #expect(Instant.now - start >= Socket.connectionAttemptDelay * 0.9)
    }

    @Test("a refused address makes the next attempt start at once")
    func refusedThenGood() throws {
        let good = try Socket.listen(on: v4(0))
        defer { good.close() }
        let goodAddress = v4(try Socket.localAddress(good).port)
        let (sock, winner) = try Socket.connectFirst(
            to: [v4(try refusingPort()), goodAddress], attemptDelay: .seconds(30), deadline: .now + .seconds(5))
        sock.close()
        // With a 30 s attempt delay, only the refusal can have started the second attempt in time.
        #expect(winner == goodAddress)
    }

    @Test("the timeout bounds the whole attempt; every address is named with its error")
    func allSilent() throws {
        let one = try SilentListener()
        let two = try SilentListener()
        defer {
            one.close()
            two.close()
        }
        let refused = try refusingPort()
        let start = Instant.now
        do {
            _ = try Socket.connectFirst(to: [v4(one.port), v4(two.port), v4(refused)], deadline: .now + .seconds(1))
            Issue.record("connected to an address that drops SYNs")
        } catch {
            let elapsed = Instant.now - start
            #expect(elapsed >= .milliseconds(900))
            #expect(elapsed < .seconds(3), "the deadline is for the whole attempt, not per address")
            #expect(
                error.description
                    == "127.0.0.1:\(one.port): connection timed out; 127.0.0.1:\(two.port): connection timed out; 127.0.0.1:\(refused): connection refused"
            )
        }
    }

    @Test("one address: its error alone; none: says so")
    func messages() throws {
        let refused = try refusingPort()
        #expect(throws: ConnectFailure.self) {
            try Socket.connectFirst(to: [v4(refused)], deadline: .now + .seconds(2))
        }
        do { _ = try Socket.connectFirst(to: [v4(refused)], deadline: .now + .seconds(2)) } catch {
            #expect(error.description == "connection refused")
        }
        do { _ = try Socket.connectFirst(to: [], deadline: .now + .seconds(2)) } catch {
            #expect(error.description == "no address to connect to")
        }
    }
}
