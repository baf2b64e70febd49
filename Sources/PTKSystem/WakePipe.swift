import Glibc

/// A pipe used to wake pollers: once `signal()` is called its read end stays readable.
public final class WakePipe: @unchecked Sendable {
    // Both descriptors are fixed at init and closed only in deinit; write(2) is thread-safe.
    /// What pollers wait on (`.readable`); owned by the pipe, closed in its deinit: never close it.
    public let readEnd: FileDescriptor
    private let writeEnd: FileDescriptor

    /// A new pipe, empty. Throws when the process is out of descriptors (`pipe` fails).
    public init() throws(SystemError) {
        var fds: [CInt] = [0, 0]
        _ = try syscall("pipe") { pipe(&fds) }
        readEnd = FileDescriptor(rawValue: fds[0])
        writeEnd = FileDescriptor(rawValue: fds[1])
        readEnd.setNonBlockingAndCloseOnExec()
        writeEnd.setNonBlockingAndCloseOnExec()
    }

    /// Makes the read end readable (again). Safe to call from a signal handler's thread.
    public func signal() {
        var b: UInt8 = 1
        // EAGAIN: the pipe is full, so it is readable already.
        while Glibc.write(writeEnd.rawValue, &b, 1) == -1 && errno == EINTR {}
    }

    /// The raw write end, for an async-signal-safe handler that can only hold a C integer.
    public var writeEndForSignalHandler: CInt { writeEnd.rawValue }

    /// Waits until `signal()` has been called (at once if it was).
    public func waitUntilReadable() throws(SystemError) {
        _ = try poll([(readEnd, PollEvents.readable)], until: nil)
    }

    /// Empties the pipe.
    public func drain() {
        var buf = [UInt8](repeating: 0, count: 64)
        while true {
            let n = Glibc.read(readEnd.rawValue, &buf, buf.count)
            if n > 0 || (n == -1 && errno == EINTR) { continue }
            return
        }
    }

    deinit {
        readEnd.close()
        writeEnd.close()
    }
}
