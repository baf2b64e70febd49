import Glibc

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

    /// Writes to `fd` with at most `capacity` lines waiting, on a thread of `group`'s started with the first line.
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

/// Writes `message` to standard error in one call, so lines from threads do not interleave.
public func writeToStandardError(_ message: String) {
    var bytes = Array(message.utf8)
    if bytes.last != 0x0A { bytes.append(0x0A) }
    // Standard error is where failures are told: a failure to write there has nowhere to go.
    try? FileDescriptor.standardError.writeAll(bytes)
}
