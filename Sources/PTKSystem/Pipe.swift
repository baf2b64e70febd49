import Glibc

/// A pipe used to wake pollers: once `signal()` is called its read end stays readable.
public final class WakePipe: @unchecked Sendable {
    // Both descriptors are fixed at init and closed only in deinit; write(2) is thread-safe.
    public let readEnd: FileDescriptor
    private let writeEnd: FileDescriptor

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

/// Writes lines to a descriptor (standard error: the journal, under systemd) from a thread of
/// its own, so that a reader that stalls never stalls the threads that log. Up to `capacity`
/// lines wait; beyond that lines are dropped and counted, and once the reader catches up a line
/// says how many were lost.
public final class BackgroundLineWriter: @unchecked Sendable {
    // `queue`, `dropped`, `writing`, `started` and `stopped` are guarded by `state`.
    private let state = ConditionLock()
    private let fd: FileDescriptor
    private let capacity: Int
    private var queue: [String] = []
    private var dropped = 0
    private var writing = false
    private var started = false
    /// After `stop`: lines are written at once, by the thread that logs them.
    private var stopped = false

    /// The writing thread is one of `group`'s.
    private let group: ThreadGroup

    public init(fd: FileDescriptor = .standardError, capacity: Int = 1000, group: ThreadGroup = .process) {
        self.fd = fd
        self.capacity = capacity
        self.group = group
    }

    /// Queues one line (a newline is added); never waits for the reader. If no thread can be
    /// started, or the writer has stopped, writes it at once instead.
    public func write(_ line: String) {
        let startNow: Bool = state.withLock {
            if stopped {
                queue.append(line)
                return false
            }
            if queue.count >= capacity {
                dropped += 1
                return false
            }
            queue.append(line)
            state.broadcast()
            if started { return false }
            started = true
            return true
        }
        if startNow {
            do { try group.start(name: "log") { [self] in run() } } catch {
                state.withLock { started = false }
                writeQueued()
            }
        } else if state.withLock({ stopped }) {
            writeQueued()
        }
    }

    /// Writes what is queued (until `deadline`) and ends the writing thread, so that the process
    /// can join it; later lines are written at once. True when all were written in time.
    @discardableResult
    public func stop(until deadline: Instant) -> Bool {
        let written = flush(until: deadline)
        state.withLock {
            stopped = true
            state.broadcast()
        }
        return written
    }

    /// Waits until every queued line is written or `deadline` passes; true when all are out.
    @discardableResult
    public func flush(until deadline: Instant) -> Bool {
        state.withLock {
            while !queue.isEmpty || writing {
                if !state.wait(until: deadline) { return queue.isEmpty && !writing }
            }
            return true
        }
    }

    private func run() {
        while true {
            let ending = state.withLock { () -> Bool in
                while queue.isEmpty && dropped == 0 && !stopped { state.wait() }
                return stopped
            }
            // What is still queued is written by whoever logs next.
            if ending { return }
            writeQueued()
        }
    }

    /// Writes what is queued in one write (lines never interleave with another writer's).
    private func writeQueued() {
        let (lines, lost): ([String], Int) = state.withLock {
            defer {
                queue.removeAll(keepingCapacity: true)
                dropped = 0
                writing = true
            }
            return (queue, dropped)
        }
        var text = lines.map { $0.hasSuffix("\n") ? $0 : $0 + "\n" }.joined()
        if lost > 0 { text += "warning: \(lost) log line(s) dropped: standard error was not being read\n" }
        // Standard error is where failures are told: a failure to write there has nowhere to go.
        try? fd.writeAll(Array(text.utf8))
        state.withLock {
            writing = false
            state.broadcast()
        }
    }
}
