import CLinux
import Glibc

private final class ThreadBody {
    let body: @Sendable () -> Void
    init(_ body: @escaping @Sendable () -> Void) { self.body = body }
}

/// Starts a thread named `name` running `body`, in `ThreadGroup.process`. Blocking I/O runs
/// on threads like this one, never on Swift's cooperative pool.
public func startThread(name: String, _ body: @escaping @Sendable () -> Void) throws(SystemError) {
    try ThreadGroup.process.start(name: name, body)
}

/// Threads started together and joined together: a service's threads, which its `stop` joins,
/// so that once it says it stopped none of them is still running, not even the thread-local
/// clean-up that runs as a thread ends (OpenSSL's among it, which the C library's exit handlers
/// would otherwise pull from under it). A thread whose work is done is joined by the group's
/// next `start` or `join`, so a long-lived group holds no more than the threads running.
/// The corresponding C functions are `pthread_create`, `pthread_tryjoin_np` and
/// `pthread_clockjoin_np`.
public final class ThreadGroup: @unchecked Sendable {
    /// The threads started by `startThread`, which the process joins before it exits.
    public static let process = ThreadGroup()

    // `handles`, `ended` and `nextID` are guarded by `state`.
    private let state = ConditionLock()
    /// Every thread started and not yet joined.
    private var handles: [Int: pthread_t] = [:]
    /// Those of `handles` whose body has returned.
    private var ended: Set<Int> = []
    private var nextID = 0

    /// An empty group, for one part's threads, which that part joins itself when it stops (`join(until:)`).
    public init() {}

    /// A running thread holds its group, so a group goes only once all its threads have
    /// returned; those not joined yet are let go (detached) so their resources are freed.
    deinit {
        for thread in handles.values { pthread_detach(thread) }
    }

    /// Starts a thread named `name` running `body`. The name (its first 15 bytes) is what `ps
    /// -L`, `top -H`, gdb and /proc/PID/task/TID/comm show for the thread: its role.
    public func start(name: String, _ body: @escaping @Sendable () -> Void) throws(SystemError) {
        reap(until: nil)
        // The lock is held until the thread is recorded, so its `finished` always finds it.
        var failure: CInt = 0
        state.withLock {
            let id = nextID
            nextID += 1
            let box = Unmanaged.passRetained(
                ThreadBody { [self] in
                    // Named by the thread itself before its work, so every call it makes is under it.
                    _ = pthread_setname_np(pthread_self(), String(decoding: name.utf8.prefix(15), as: UTF8.self))
                    body()
                    finished(id)
                }
            ).toOpaque()
            var thread = pthread_t()
            let rc = pthread_create(
                &thread, nil,
                { arg in
                    let body = Unmanaged<ThreadBody>.fromOpaque(arg!).takeRetainedValue()
                    body.body()
                    return nil
                }, box)
            if rc == 0 {
                handles[id] = thread
            } else {
                Unmanaged<ThreadBody>.fromOpaque(box).release()
                failure = rc
            }
        }
        if failure != 0 { throw SystemError(call: "pthread_create", errno: failure) }
    }

    private func finished(_ id: Int) {
        state.withLock {
            ended.insert(id)
            state.broadcast()
        }
    }

    /// Threads started and not yet joined: those running, and those just ending.
    public var count: Int { state.withLock { handles.count } }

    /// Waits until every thread of the group has ended (its thread-local clean-up included) or
    /// `deadline` passes (nil: for as long as it takes), joining each; true when none is left.
    /// Threads still running at the deadline stay in the group. A thread must not join its own
    /// group.
    @discardableResult
    public func join(until deadline: Instant?) -> Bool {
        state.withLock {
            while ended.count < handles.count {
                if !state.wait(until: deadline) { break }
            }
        }
        reap(until: deadline, waiting: true)
        return count == 0
    }

    /// Joins the threads whose body has returned: those that have ended, and when `waiting`,
    /// the others as they end, until `deadline` (nil: no limit). Those not joined stay for
    /// next time.
    private func reap(until deadline: Instant?, waiting: Bool = false) {
        let ending: [(Int, pthread_t)] = state.withLock {
            let taken = ended.compactMap { id in handles.removeValue(forKey: id).map { (id, $0) } }
            ended.removeAll()
            return taken
        }
        guard !ending.isEmpty else { return }
        var left: [(Int, pthread_t)] = []
        for (id, thread) in ending {
            let rc: CInt
            if !waiting {
                rc = pthread_tryjoin_np(thread, nil)
            } else if let deadline {
                var ts = deadline.timespecValue
                rc = pthread_clockjoin_np(thread, nil, CLOCK_MONOTONIC, &ts)
            } else {
                rc = pthread_join(thread, nil)
            }
            if rc != 0 { left.append((id, thread)) }
        }
        if !left.isEmpty {
            state.withLock {
                for (id, thread) in left {
                    handles[id] = thread
                    ended.insert(id)
                }
            }
        }
    }
}

/// How many CPUs this process may run on (its affinity mask: `taskset`, systemd's
/// `CPUAffinity=`), at least 1. The corresponding C function is `sched_getaffinity`.
public func availableProcessorCount() -> Int {
    var mask = [UInt64](repeating: 0, count: 16)  // 1024 CPUs, glibc's cpu_set_t
    let rc = mask.withUnsafeMutableBytes { sched_getaffinity(0, UInt($0.count), $0.baseAddress) }
    guard rc == 0 else { return max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))) }
    return max(1, mask.reduce(0) { $0 + $1.nonzeroBitCount })
}

/// The host's name. The corresponding C function is `gethostname`.
public func hostName() -> String {
    var buf = [CChar](repeating: 0, count: 256)
    guard gethostname(&buf, buf.count - 1) == 0 else { return "ptk" }
    return String(decoding: buf.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

/// An environment variable. The corresponding C function is `getenv`.
public func environment(_ name: String) -> String? {
    guard let p = getenv(name) else { return nil }
    return String(cString: p)
}

/// Lowers the calling thread's scheduling priority to the least (nice 19), for background work
/// that must not slow anything else. The corresponding C functions are `gettid` and `setpriority`.
public func lowerThreadPriority() {
    _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), id_t(gettid()), 19)
}
