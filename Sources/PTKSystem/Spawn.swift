import CLinux
import Glibc

/// A program started by `Child.spawn`: its process ID, which leads a process group of its own
/// (so that a signal reaches whatever it started too), and the read end of a pipe carrying its
/// standard output and standard error.
public final class Child {
    /// Its process ID, also its process group's ID; reaped by `ended()`, so not reused before that.
    public let pid: pid_t
    /// Its standard output and standard error, together; non-blocking.
    public let output: FileDescriptor
    private var reaped = false

    private init(pid: pid_t, output: FileDescriptor) {
        self.pid = pid
        self.output = output
    }

    deinit {
        output.close()
        // Never left a zombie: a child not waited for is killed and reaped.
        if !reaped {
            kill(-pid, SIGKILL)
            var status: Int32 = 0
            while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        }
    }

    /// Starts `arguments[0]` (an absolute path) with `arguments` and exactly `environment`
    /// ("KEY=value"), standard input from /dev/null, standard output and error into `output`,
    /// in a process group of its own, with every signal at its default and none blocked (ptkd
    /// ignores SIGPIPE and blocks signals on its threads; a hook must not inherit that). The
    /// corresponding C functions are `pipe2` and `posix_spawn`.
    public static func spawn(_ arguments: [String], environment: [String]) throws(SystemError) -> Child {
        precondition(!arguments.isEmpty)
        var fds: [CInt] = [0, 0]
        // Close-on-exec from the start: a child another thread spawns meanwhile must not keep
        // this pipe's write end (this reader would wait for that child's end, not its own).
        _ = try syscall("pipe2") { pipe2(&fds, O_CLOEXEC) }
        let readEnd = FileDescriptor(rawValue: fds[0])
        let writeEnd = fds[1]
        defer { Glibc.close(writeEnd) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, writeEnd, 1)
        posix_spawn_file_actions_adddup2(&actions, writeEnd, 2)
        var pid: pid_t = 0
        let code = withDefaultSignals(newGroup: true) { spawnProcess(&pid, arguments, environment, &actions, &$0) }
        guard code == 0 else {
            readEnd.close()
            throw SystemError(call: "posix_spawn", object: arguments[0], errno: code)
        }
        readEnd.setNonBlockingAndCloseOnExec()
        return Child(pid: pid, output: readEnd)
    }

    /// How a child ended.
    public enum Ending: Equatable, Sendable, CustomStringConvertible {
        case exited(Int32)
        case signalled(Int32)
        /// "exit status 3" or "killed by signal 9 (SIGKILL)", for messages.
        public var description: String {
            switch self {
            case .exited(let code): return "exit status \(code)"
            case .signalled(let signal):
                return
                    "killed by signal \(signal)\(signal == SIGKILL ? " (SIGKILL)" : signal == SIGTERM ? " (SIGTERM)" : "")"
            }
        }
    }

    /// How it ended, if it has (without waiting). The corresponding C function is `waitpid`.
    public func ended() -> Ending? {
        guard !reaped else { return nil }
        var status: Int32 = 0
        var r: pid_t
        repeat { r = waitpid(pid, &status, WNOHANG) } while r == -1 && errno == EINTR
        guard r == pid else { return nil }
        reaped = true
        return Ending(waitStatus: status)
    }

    /// Sends `signal` to its process group. The corresponding C function is `kill`.
    public func signalGroup(_ signal: Int32) {
        if !reaped { kill(-pid, signal) }
    }

    /// SIGTERM and SIGKILL, for `signalGroup`.
    public static let terminateSignal = SIGTERM
    /// SIGKILL, for a child that did not end after `terminateSignal`.
    public static let killSignal = SIGKILL
}

/// This process's environment, "KEY=value" each. The corresponding C variable is `environ`.
public func processEnvironment() -> [String] {
    var out: [String] = []
    var p = environ
    while let entry = p.pointee {
        out.append(String(cString: entry))
        p += 1
    }
    return out
}

/// Runs `arguments[0]` (an absolute path) with `arguments` and exactly `environment`, sharing
/// this process's standard input, output and error and every descriptor not marked
/// close-on-exec, in the same process group (a terminal's ^C reaches both), and waits for it.
/// While it runs, SIGINT, SIGQUIT, SIGHUP and SIGTERM do not end this process: the first ends
/// the child (SIGKILL, which ends a stopped child too; it is not reaped before, so its pid is
/// not anyone else's) and is returned as `interruptedBy`, so that the caller removes what the
/// child left before it ends itself (`endBySignal`). The child starts with every signal at its
/// default and none blocked. The corresponding C functions are `sigprocmask`, `posix_spawn`,
/// `sigtimedwait`, `kill` and `waitpid`.
public func runAndWait(_ arguments: [String], environment: [String]) throws(SystemError) -> (
    ending: Child.Ending, interruptedBy: Int32?
) {
    precondition(!arguments.isEmpty)
    let stopping = [SIGINT, SIGQUIT, SIGHUP, SIGTERM]
    var held = sigset_t()
    sigemptyset(&held)
    for signal in stopping + [SIGCHLD] { sigaddset(&held, signal) }
    var previous = sigset_t()
    sigprocmask(SIG_BLOCK, &held, &previous)
    defer {
        // What came after the first is taken here, not delivered once unblocked.
        var now = timespec()
        while sigtimedwait(&held, nil, &now) > 0 {}
        sigprocmask(SIG_SETMASK, &previous, nil)
    }
    var pid: pid_t = 0
    let code = withDefaultSignals(newGroup: false) { spawnProcess(&pid, arguments, environment, nil, &$0) }
    guard code == 0 else { throw SystemError(call: "posix_spawn", object: arguments[0], errno: code) }
    var interruptedBy: Int32?
    var status: Int32 = 0
    while true {
        let reaped = waitpid(pid, &status, WNOHANG)
        if reaped == pid { break }
        if reaped == -1 && errno != EINTR { throw SystemError(call: "waitpid", object: arguments[0], errno: errno) }
        // SIGCHLD (held too) ends the wait at once; the pause only covers one that came before it was held.
        var pause = timespec(tv_sec: 1, tv_nsec: 0)
        let signal = sigtimedwait(&held, nil, &pause)
        if signal > 0, stopping.contains(signal), interruptedBy == nil {
            interruptedBy = signal
            kill(pid, SIGKILL)
        }
    }
    return (Child.Ending(waitStatus: status), interruptedBy)
}

/// `posix_spawn` of `arguments[0]` with `arguments` and `environment` as C strings for the call.
private func spawnProcess(
    _ pid: inout pid_t, _ arguments: [String], _ environment: [String],
    _ actions: UnsafePointer<posix_spawn_file_actions_t>?, _ attributes: UnsafePointer<posix_spawnattr_t>?
) -> Int32 {
    let argv = arguments.map { strdup($0) } + [nil]
    let envp = environment.map { strdup($0) } + [nil]
    defer {
        for p in argv { free(p) }
        for p in envp { free(p) }
    }
    return posix_spawn(&pid, arguments[0], actions, attributes, argv, envp)
}

extension Child.Ending {
    /// How a child ended, from `waitpid`'s status: WIFEXITED / WEXITSTATUS / WTERMSIG, which
    /// the Glibc overlay does not export.
    init(waitStatus status: Int32) {
        self = status & 0x7f == 0 ? .exited((status >> 8) & 0xff) : .signalled(status & 0x7f)
    }
}

/// The path of this program's executable. The corresponding C function is `readlink`
/// (of /proc/self/exe).
public func executablePath() throws(SystemError) -> String {
    var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
    let n = try syscall("readlink", "/proc/self/exe") { readlink("/proc/self/exe", &buffer, Int(PATH_MAX)) }
    return String(decoding: buffer[..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

/// Runs `body` with spawn attributes that start a child with every signal at its default and
/// none blocked, in a process group of its own when `newGroup`.
private func withDefaultSignals<T>(newGroup: Bool, _ body: (inout posix_spawnattr_t) -> T) -> T {
    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    var none = sigset_t()
    sigemptyset(&none)
    var all = sigset_t()
    sigfillset(&all)
    posix_spawnattr_setsigmask(&attributes, &none)
    posix_spawnattr_setsigdefault(&attributes, &all)
    var flags = POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF
    if newGroup {
        posix_spawnattr_setpgroup(&attributes, 0)
        flags |= POSIX_SPAWN_SETPGROUP
    }
    posix_spawnattr_setflags(&attributes, Int16(flags))
    return body(&attributes)
}
