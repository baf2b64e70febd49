import Foundation
import Glibc
import PTKSystem
import PTKTestSupport

// What the harnesses of the tools that feed an inbox or a drop folder share (issue 56:
// SyncthingPair, SambaShare, SFTPServer): a server or client process in a process group of its
// own with its output in a log file, a way to cut a transfer once the far side holds enough
// bytes, and checks of what a process keeps open (files, sockets). Everything stays on loopback.

/// Set by .ci/run: there syncthing, smbd, smbclient, sshd and sftp are installed, so a missing
/// one fails its test instead of skipping.
let inboxToolsRequired = environment("PTK_REQUIRE_INBOX_TOOLS") == "1"

/// A program the inbox harnesses start: in a process group of its own (a signal reaches what it
/// starts too: syncthing's monitor and its child, smbd's workers, sftp's ssh), standard input
/// from /dev/null, standard output and error appended to `logPath`.
final class ToolProcess: @unchecked Sendable {
    /// Its process ID, also its process group's ID. Not reaped before `stop`/`kill`, so the ID
    /// names no other process (or group) while this object lives.
    let pid: pid_t
    let logPath: String
    private let lock = Lock()
    private var reapedStatus: Int32?

    /// Starts `arguments` (the first found on PATH unless absolute); `environment` adds to (or
    /// replaces in) this process's environment.
    init(_ arguments: [String], log: String, environment: [String: String] = [:]) throws {
        guard let program = arguments[0].hasPrefix("/") ? arguments[0] : findProgram(arguments[0]) else {
            throw HarnessError("\(arguments[0]) not found on PATH")
        }
        logPath = log
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, log, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t()
        sigemptyset(&none)
        var all = sigset_t()
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(
            &attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP))
        let argv: [UnsafeMutablePointer<CChar>?] = ([program] + arguments.dropFirst()).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var env = ProcessInfo.processInfo.environment
        env.merge(environment) { _, new in new }
        let envp: [UnsafeMutablePointer<CChar>?] = env.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { envp.forEach { free($0) } }
        var child: pid_t = 0
        // Under `run`'s lock: its pipes are not close-on-exec until it has set them so.
        spawnLock.lock()
        let rc = posix_spawn(&child, program, &actions, &attributes, argv, envp)
        spawnLock.unlock()
        guard rc == 0 else { throw HarnessError("cannot run \(program): \(String(cString: strerror(rc)))") }
        pid = child
    }

    /// Whether it has ended (it is then a zombie until `stop` or `kill` reaps it).
    var hasEnded: Bool {
        if lock.withLock({ reapedStatus }) != nil { return true }
        var info = siginfo_t()
        return waitid(P_PID, id_t(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0
            && info._sifields._sigchld.si_pid == pid
    }

    /// Its exit status (128 + the signal when a signal ended it), once reaped.
    var status: Int32? { lock.withLock { reapedStatus } }

    /// Sends `signal` to its process group (not after it was reaped: the ID may be another's then).
    func signalGroup(_ signal: Int32) {
        if lock.withLock({ reapedStatus }) == nil { Glibc.kill(-pid, signal) }
    }

    /// Waits up to `timeout` seconds for it to end by itself; whether it did.
    func waitForEnd(timeout: Double) -> Bool { eventually(timeout) { hasEnded } }

    /// SIGTERM to the group, up to `timeout` seconds for the leader to end, then SIGKILL to
    /// whatever of the group is left, and reaps the leader. Returns its exit status.
    @discardableResult
    func stop(timeout: Double = 5) -> Int32 {
        if let done = status { return done }
        signalGroup(SIGTERM)
        _ = waitForEnd(timeout: timeout)
        return kill()
    }

    /// SIGKILL to the whole group, then reaps the leader and waits (up to 5 s) until no other
    /// member of the group is left running. Returns the leader's exit status.
    @discardableResult
    func kill() -> Int32 {
        lock.withLock {
            if let done = reapedStatus { return done }
            Glibc.kill(-pid, SIGKILL)
            var raw: Int32 = 0
            while waitpid(pid, &raw, 0) == -1 && errno == EINTR {}
            let code: Int32 = (raw & 0x7F) == 0 ? (raw >> 8) & 0xFF : 128 + (raw & 0x7F)
            reapedStatus = code
            _ = eventually(5) { liveProcesses(inGroup: pid).isEmpty }
            return code
        }
    }

    /// Lets it run in slices of `slice` seconds, its group stopped (SIGSTOP) between them, until
    /// the file at `path` holds at least `bytes` bytes, then kills the group (SIGKILL) and
    /// returns. So a fast transfer on an idle machine and a slow one on a busy machine are both
    /// cut midway: the client never runs unwatched for long. Throws if it ends first (the
    /// transfer was not cut) or after `timeout` seconds.
    func cut(when path: String, holds bytes: Int, slice: Double = 0.002, timeout: Double = 60) throws {
        let deadline = Date() + timeout
        defer { kill() }
        while true {
            signalGroup(SIGCONT)
            usleep(UInt32(slice * 1_000_000))
            signalGroup(SIGSTOP)
            if (fileSize(path) ?? 0) >= bytes { return }
            if hasEnded {
                throw HarnessError(
                    "the transfer into \(path) ended (\(kill())) before it held \(bytes) bytes (it holds "
                        + "\(fileSize(path).map(String.init) ?? "nothing")); its log:\n\(log)")
            }
            if Date() > deadline {
                throw HarnessError(
                    "\(path) held \(fileSize(path) ?? 0) of \(bytes) bytes after \(timeout) s; the log:\n\(log)")
            }
        }
    }

    /// The whole log.
    var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    /// Its process and every descendant (read from /proc now).
    var processTree: [pid_t] { hasEnded ? [] : [pid] + descendants(of: pid) }

    deinit { kill() }
}

/// The last `count` lines of `text`, for failure messages.
func lastLines(_ text: String, _ count: Int = 40) -> String {
    text.split(separator: "\n", omittingEmptySubsequences: false).suffix(count).joined(separator: "\n")
}

/// The size of the file at `path`, or nil when there is none.
func fileSize(_ path: String) -> Int? {
    var st = stat()
    return lstat(path, &st) == 0 ? Int(st.st_size) : nil
}

/// The bytes the file at `path` has on disk (st_blocks × 512): how much of a sparse file
/// (Syncthing's temporary file has its final size from the start) was written.
func allocatedBytes(_ path: String) -> Int? {
    var st = stat()
    return lstat(path, &st) == 0 ? Int(st.st_blocks) * 512 : nil
}

/// `count` random bytes (nothing repeats, so no tool can skip a block it has seen).
func randomBytes(_ count: Int) -> [UInt8] {
    var out = [UInt8](repeating: 0, count: count)
    let fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC)
    precondition(fd >= 0, "cannot open /dev/urandom")
    defer { close(fd) }
    var done = 0
    while done < count {
        let n = out.withUnsafeMutableBytes { read(fd, $0.baseAddress! + done, count - done) }
        precondition(n > 0 || errno == EINTR, "cannot read /dev/urandom")
        if n > 0 { done += n }
    }
    return out
}

/// Every process's state, parent and process group, from /proc/PID/stat.
private func processTable() -> [(pid: pid_t, state: Substring, parent: pid_t, group: pid_t)] {
    listDirectory("/proc").compactMap { name in
        guard let pid = pid_t(name),
            let stat = try? String(contentsOfFile: "/proc/\(name)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return nil }
        // After "(comm)": state, parent, process group.
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 2, let parent = pid_t(fields[1]), let group = pid_t(fields[2]) else { return nil }
        return (pid, fields[0], parent, group)
    }
}

/// The processes of process group `group` that have not ended (zombies left out).
func liveProcesses(inGroup group: pid_t) -> [pid_t] {
    processTable().filter { $0.group == group && $0.state != "Z" }.map(\.pid)
}

/// Whether `pid` is gone or a zombie (ended, not yet reaped by its parent).
func hasEnded(_ pid: pid_t) -> Bool {
    processTable().first { $0.pid == pid }.map { $0.state == "Z" } ?? true
}

/// The processes (by /proc) whose parent, grandparent, ... is `pid`.
func descendants(of pid: pid_t) -> [pid_t] {
    var parent: [pid_t: pid_t] = [:]
    for process in processTable() { parent[process.pid] = process.parent }
    var found: [pid_t] = []
    var frontier = [pid]
    while let next = frontier.popLast() {
        let children = parent.filter { $0.value == next }.map(\.key)
        found += children
        frontier += children
    }
    return found
}

/// The processes that hold `path` open (read from /proc/*/fd now).
func processesHolding(_ path: String) -> [pid_t] {
    listDirectory("/proc").compactMap { name in
        guard let pid = pid_t(name) else { return nil }
        let held = listDirectory("/proc/\(name)/fd").contains { fd in
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(name)/fd/\(fd)")) == path
        }
        return held ? pid : nil
    }
}

/// Waits up to `timeout` seconds until no process holds `path` open (a server closes a file
/// some time after its client is killed); whether none does.
func waitUntilClosed(_ path: String, timeout: Double = 10) -> Bool {
    eventually(timeout) { processesHolding(path).isEmpty }
}

/// The TCP and UDP sockets of the processes `pids` bound to or connected with an address that
/// is not loopback, as "tcp 0.0.0.0:445 LISTEN": what must never appear (the harnesses keep
/// every tool on loopback). A socket not bound yet (address 0, port 0) is not counted.
func nonLoopbackSockets(of pids: [pid_t]) -> [String] {
    var inodes = Set<String>()
    for pid in pids {
        for fd in listDirectory("/proc/\(pid)/fd") {
            guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\(fd)"),
                target.hasPrefix("socket:[")
            else { continue }
            inodes.insert(String(target.dropFirst(8).dropLast()))
        }
    }
    var found: [String] = []
    for table in ["tcp", "tcp6", "udp", "udp6"] {
        let text = (try? String(contentsOfFile: "/proc/net/\(table)", encoding: .utf8)) ?? ""
        for line in text.split(separator: "\n").dropFirst() {
            let fields = line.split(separator: " ")
            guard fields.count > 9, inodes.contains(String(fields[9])) else { continue }
            let local = String(fields[1])
            let remote = String(fields[2])
            let listening = table.hasPrefix("tcp") && fields[3] == "0A"
            let unbound = local.hasSuffix(":0000") && isUnspecified(local)
            let fine = unbound || (isLoopback(local) && (listening || isLoopback(remote) || isUnspecified(remote)))
            if !fine { found.append("\(table) \(local) -> \(remote) state \(fields[3]) (hex, as /proc/net shows it)") }
        }
    }
    return found
}

/// Whether a /proc/net address ("0100007F:1F90", IPv6 as four little-endian words) is loopback:
/// 127.0.0.0/8, ::1 or ::ffff:127.x.x.x.
private func isLoopback(_ address: String) -> Bool {
    let host = address.split(separator: ":")[0]
    if host.count == 8 { return host.hasSuffix("7F") }
    return host == "00000000000000000000000001000000"
        || (host.hasPrefix("0000000000000000FFFF0000") && host.hasSuffix("7F"))
}

/// Whether a /proc/net address is all zeros (0.0.0.0 or ::).
private func isUnspecified(_ address: String) -> Bool {
    address.split(separator: ":")[0].allSatisfy { $0 == "0" }
}

/// `text` quoted for a tool's command line of its own (smbclient -c, an sftp batch file):
/// in double quotes. Names with a double quote, a backslash, a semicolon, a newline or a glob
/// character are refused (each tool reads them its own way).
func toolQuoted(_ text: String) throws -> String {
    if text.contains(where: { "\"\\;\n*?[".contains($0) }) {
        throw HarnessError("a name the tools' command lines cannot carry: \(text)")
    }
    return "\"" + text + "\""
}
