import Foundation
import Glibc
import PTKSystem
import PTKTestSupport
import PTKTestTags
import Testing

/// A NOTIFY_SOCKET listener like systemd's: an AF_UNIX datagram socket.
final class NotifyListener {
    let path: String
    let fd: CInt

    init(path: String) throws {
        self.path = path
        fd = socket(AF_UNIX, CInt(SOCK_DGRAM.rawValue), 0)
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &addr.sun_path) { raw in
            for (i, b) in path.utf8.enumerated() { raw[i] = b }
        }
        let rc = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard rc == 0 else { throw HarnessError("bind \(path): \(errno)") }
    }

    /// The next message, or nil after `timeout` seconds.
    func receive(timeout: Double) -> String? {
        var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&p, 1, Int32(timeout * 1000)) == 1 else { return nil }
        var buf = [UInt8](repeating: 0, count: 4096)
        let n = recv(fd, &buf, buf.count, 0)
        return n > 0 ? String(decoding: buf[..<n], as: UTF8.self) : nil
    }

    deinit {
        close(fd)
        unlink(path)
    }
}

@Suite("End to end: systemd notifications", .tags(.endToEnd))
struct NotifyTests {
    @Test("READY=1 comes once the port accepts connections; STATUS= follows sessions; STOPPING=1 on SIGTERM")
    func readyAndStopping() throws {
        let dir = makeTemporaryDirectory()
        defer { removeTree(dir) }
        let listener = try NotifyListener(path: dir + "/notify.sock")
        let d = try DaemonProcess(environment: ["NOTIFY_SOCKET": dir + "/notify.sock"])
        let ready = try #require(listener.receive(timeout: 10))
        #expect(ready.hasPrefix("READY=1\nSTATUS=listening on port \(d.port)"))
        // READY=1 was sent after listen(): a connection right now must succeed.
        let address = SocketAddress(numericHost: "127.0.0.1", port: d.port)!
        let sock = try Socket.connect(to: address, deadline: .now + .seconds(2))
        sock.close()
        #expect(try send(d, [pngSuiteDirectory() + "/basn0g04.png"]).status == 0)
        var messages: [String] = []
        #expect(d.stop(signal: SIGTERM) == 0)
        while let m = listener.receive(timeout: 2) { messages.append(m) }
        #expect(messages.contains { $0.hasPrefix("STATUS=listening on port \(d.port); 1 session(s)") })
        #expect(messages.last?.hasPrefix("STOPPING=1") == true, "\(messages)")
    }

    @Test("without NOTIFY_SOCKET nothing is sent and ptkd runs as usual")
    func noSocket() throws {
        let d = try DaemonProcess()
        #expect(try send(d, [pngSuiteDirectory() + "/basn0g04.png"]).status == 0)
        #expect(d.stop() == 0)
    }
}
