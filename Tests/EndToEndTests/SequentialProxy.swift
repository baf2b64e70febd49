import Foundation
import Glibc
import PTKProtocol
import PTKSystem
import PTKTransport

/// Stands in for a receiver that serves one session at a time: it relays each accepted
/// connection to `target` until both sides are done, while later connections wait in the
/// backlog unanswered. After the first connection it pauses `pauseAfterFirst` seconds. With
/// `dropWelcomeSessions` it takes `sessions` out of ptkd's WELCOME, as a receiver that
/// predates that key would send it.
final class SequentialProxy: @unchecked Sendable {
    let port: UInt16
    private let listener: FileDescriptor
    private let target: SocketAddress
    private let pauseAfterFirst: Double
    private let dropWelcomeSessions: Bool
    // `stopped` and `served` are guarded by `stopLock`: set by one thread, read by the other.
    private let stopLock = Lock()
    private var stopped = false
    private var served = 0
    private var sent = 0

    /// Bytes relayed from senders to the receiver so far: what went over the wire to it.
    var bytesSent: Int { stopLock.withLock { sent } }

    init(to targetPort: UInt16, pauseAfterFirst: Double, dropWelcomeSessions: Bool = false) throws {
        target = SocketAddress(numericHost: "127.0.0.1", port: targetPort)!
        listener = try Socket.listen(on: SocketAddress(numericHost: "127.0.0.1", port: 0)!)
        port = try Socket.localAddress(listener).port
        self.pauseAfterFirst = pauseAfterFirst
        self.dropWelcomeSessions = dropWelcomeSessions
        try startThread(name: "test") { [self] in serve() }
    }

    private func serve() {
        while !stopLock.withLock({ stopped }) {
            guard let revents = try? poll([(listener, .readable)], until: .now + .seconds(0.2)), !revents[0].isEmpty,
                let (client, peer) = try? Socket.accept(listener)
            else { continue }
            relay(TCPStream(socket: client, peer: peer))
            let count = stopLock.withLock {
                served += 1
                return served
            }
            if count == 1 { usleep(UInt32(pauseAfterFirst * 1_000_000)) }
        }
    }

    /// Stops serving and returns how many connections were ever made to it: those it served
    /// and those still waiting in its backlog.
    func stopAndCountConnections() -> Int {
        stopLock.withLock { stopped = true }
        usleep(300_000)
        var waiting = 0
        while let (sock, _) = (try? Socket.accept(listener)) ?? nil {
            sock.close()
            waiting += 1
        }
        listener.close()
        return stopLock.withLock { served } + waiting
    }

    /// Relays the receiver's first frame (WELCOME) with its `sessions` key taken out.
    private func relayWelcomeWithoutSessions(from: TCPStream, to: TCPStream) -> Bool {
        var header = [UInt8](repeating: 0, count: 5)
        guard readExactly(from, &header) else { return false }
        var payload = [UInt8](
            repeating: 0, count: Int(header[1]) << 24 | Int(header[2]) << 16 | Int(header[3]) << 8 | Int(header[4]))
        guard readExactly(from, &payload) else { return false }
        if header[0] == FrameType.welcome.rawValue,
            var object = (try? JSONSerialization.jsonObject(with: Data(payload))) as? [String: Any]
        {
            object["sessions"] = nil
            payload = Array(
                (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data(payload))
            let n = UInt32(payload.count)
            header = [header[0], UInt8(n >> 24), UInt8((n >> 16) & 0xFF), UInt8((n >> 8) & 0xFF), UInt8(n & 0xFF)]
        }
        let frame = header + payload
        return (try? frame.withUnsafeBytes { try to.write($0, deadline: .now + .seconds(30)) }) != nil
    }

    private func readExactly(_ stream: TCPStream, _ buffer: inout [UInt8]) -> Bool {
        var got = 0
        while got < buffer.count {
            let n = buffer.withUnsafeMutableBytes { b in
                (try? stream.read(
                    into: UnsafeMutableRawBufferPointer(rebasing: b[got...]), deadline: .now + .seconds(30))) ?? 0
            }
            if n == 0 { return false }
            got += n
        }
        return true
    }

    /// Copies bytes both ways until each side has closed its half.
    private func relay(_ a: TCPStream) {
        guard let sock = try? Socket.connect(to: target, deadline: .now + .seconds(5)) else {
            a.close()
            return
        }
        let b = TCPStream(socket: sock, peer: target)
        let done = Semaphore()
        try? startThread(name: "test") { [self] in
            if !dropWelcomeSessions || relayWelcomeWithoutSessions(from: b, to: a) {
                pump(from: b, to: a)
            } else {
                a.shutdownWrite()
            }
            done.signal()
        }
        pump(from: a, to: b, counting: true)
        done.wait()
        a.close()
        b.close()
    }

    /// How long a side may stay quiet before the relay gives up on it: longer than any
    /// timeout of ptk-send's or ptkd's, so that a wait under load (a flush behind gigabytes of
    /// another test's writes) ends in the product's own message, not in the relay closing.
    /// It was 30 s, ptk-send's default timeout: a side quiet that long while the other waited
    /// made the relay close the session ("the receiver closed the connection").
    static let idleLimit = 300.0

    private func pump(from: TCPStream, to: TCPStream, counting: Bool = false) {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 65_536, alignment: 1)
        defer { buffer.deallocate() }
        while let n = try? from.read(into: buffer, deadline: .now + .seconds(Self.idleLimit)), n > 0 {
            if counting { stopLock.withLock { sent += n } }
            guard (try? to.write(UnsafeRawBufferPointer(rebasing: buffer[..<n]), deadline: .now + .seconds(30))) != nil
            else { break }
        }
        to.shutdownWrite()
    }

    func stop() { _ = stopAndCountConnections() }
}
