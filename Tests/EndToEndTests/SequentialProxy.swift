import Glibc
import PTKSystem
import PTKTransport

/// Stands in for a receiver that serves one session at a time: it relays each accepted
/// connection to `target` until both sides are done, while later connections wait in the
/// backlog unanswered. After the first connection it pauses `pauseAfterFirst` seconds.
final class SequentialProxy: @unchecked Sendable {
    let port: UInt16
    private let listener: FileDescriptor
    private let target: SocketAddress
    private let pauseAfterFirst: Double
    // Set by the test thread, read by the proxy thread between connections.
    private let stopLock = Lock()
    private var stopped = false

    init(to targetPort: UInt16, pauseAfterFirst: Double) throws {
        target = SocketAddress(numericHost: "127.0.0.1", port: targetPort)!
        listener = try Socket.listen(on: SocketAddress(numericHost: "127.0.0.1", port: 0)!)
        port = try Socket.localAddress(listener).port
        self.pauseAfterFirst = pauseAfterFirst
        try startThread { [self] in serve() }
    }

    private func serve() {
        var served = 0
        while !stopLock.withLock({ stopped }) {
            guard let revents = try? poll([(listener, Int16(POLLIN))], until: .now + 0.2), revents[0] != 0,
                  let (client, peer) = try? Socket.accept(listener) else { continue }
            relay(TCPStream(socket: client, peer: peer))
            served += 1
            if served == 1 { usleep(UInt32(pauseAfterFirst * 1_000_000)) }
        }
    }

    /// Copies bytes both ways until each side has closed its half.
    private func relay(_ a: TCPStream) {
        guard let sock = try? Socket.connect(to: target, deadline: .now + 5) else { a.close(); return }
        let b = TCPStream(socket: sock, peer: target)
        let done = Semaphore()
        try? startThread { [self] in
            pump(from: b, to: a)
            done.signal()
        }
        pump(from: a, to: b)
        done.wait()
        a.close()
        b.close()
    }

    private func pump(from: TCPStream, to: TCPStream) {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 65_536, alignment: 1)
        defer { buffer.deallocate() }
        while let n = try? from.read(into: buffer, deadline: .now + 30), n > 0 {
            guard (try? to.write(UnsafeRawBufferPointer(rebasing: buffer[..<n]), deadline: .now + 30)) != nil else { break }
        }
        to.shutdownWrite()
    }

    func stop() {
        stopLock.withLock { stopped = true }
        usleep(300_000)
        listener.close()
    }
}
