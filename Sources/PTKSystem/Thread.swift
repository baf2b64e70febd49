import CLinux
import Glibc

private final class ThreadBody {
    let body: @Sendable () -> Void
    init(_ body: @escaping @Sendable () -> Void) { self.body = body }
}

/// Starts a detached thread running `body`. Blocking I/O runs on threads like this one, never
/// on Swift's cooperative pool. The corresponding C function is `pthread_create`.
public func startThread(_ body: @escaping @Sendable () -> Void) throws(SystemError) {
    let box = Unmanaged.passRetained(ThreadBody(body)).toOpaque()
    var thread = pthread_t()
    let rc = pthread_create(&thread, nil, { arg in
        let body = Unmanaged<ThreadBody>.fromOpaque(arg!).takeRetainedValue()
        body.body()
        return nil
    }, box)
    if rc != 0 {
        Unmanaged<ThreadBody>.fromOpaque(box).release()
        throw SystemError(call: "pthread_create", errno: rc)
    }
    pthread_detach(thread)
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
