import Foundation
import Glibc
import PTKProtocol
import PTKSystem
import PTKTestSupport
import PTKTransport

/// Where the built ptkd and ptk-send are: $PTK_BIN_DIR, else beside the test binary.
let binDirectory: String = {
    if let dir = ProcessInfo.processInfo.environment["PTK_BIN_DIR"] { return dir }
    let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? ""
    var dir = (exe as NSString).deletingLastPathComponent
    // Swift Testing may run from inside the .xctest bundle on some layouts.
    while !dir.isEmpty && dir != "/" && !FileManager.default.fileExists(atPath: dir + "/ptkd") {
        dir = (dir as NSString).deletingLastPathComponent
    }
    return dir
}()

/// What a finished process left.
struct Finished {
    var status: Int32
    var stdout: String
    var stderr: String
}

/// ptk-send's configuration directory ($XDG_CONFIG_HOME) for runs that name none: one per test
/// process, so no test touches the user's own identity or known receivers.
let testConfigHome = makeTemporaryDirectory("ptk-config")

/// Held by `run` while it makes its pipes and spawns (and by `ToolProcess` while it spawns).
let spawnLock = NSLock()

/// Runs a binary to completion (killing it after `timeout` seconds). posix_spawn and waitpid
/// are used directly: Foundation's Process sometimes missed a quick child's exit and hung.
/// `environment` adds to (or replaces in) this process's environment; XDG_CONFIG_HOME is
/// `testConfigHome` unless given.
func run(
    _ binary: String, _ args: [String], timeout: Double = 60, absolute: Bool = false,
    environment: [String: String] = [:]
) throws -> Finished {
    let path = absolute ? binary : binDirectory + "/" + binary
    var outPipe: [CInt] = [0, 0]
    var errPipe: [CInt] = [0, 0]
    // From the pipes until the spawn: a child another test thread spawns meanwhile must not
    // inherit this run's pipes (their reader here would wait for that child's end too).
    spawnLock.lock()
    guard pipe(&outPipe) == 0, pipe(&errPipe) == 0 else {
        spawnLock.unlock()
        throw HarnessError("pipe failed")
    }
    for fd in outPipe + errPipe { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_adddup2(&actions, outPipe[1], 1)
    posix_spawn_file_actions_adddup2(&actions, errPipe[1], 2)
    for fd in outPipe + errPipe { posix_spawn_file_actions_addclose(&actions, fd) }
    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    var none = sigset_t()
    sigemptyset(&none)
    posix_spawnattr_setsigmask(&attributes, &none)
    posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK))
    let argv: [UnsafeMutablePointer<CChar>?] = ([path] + args).map { strdup($0) } + [nil]
    defer { argv.forEach { free($0) } }
    var env = ProcessInfo.processInfo.environment
    env["XDG_CONFIG_HOME"] = testConfigHome
    env.merge(environment) { _, new in new }
    let envp: [UnsafeMutablePointer<CChar>?] = env.map { strdup("\($0.key)=\($0.value)") } + [nil]
    defer { envp.forEach { free($0) } }
    var pid: pid_t = 0
    let rc = posix_spawn(&pid, path, &actions, &attributes, argv, envp)
    spawnLock.unlock()
    close(outPipe[1])
    close(errPipe[1])
    guard rc == 0 else {
        close(outPipe[0])
        close(errPipe[0])
        throw HarnessError("cannot run \(path): \(String(cString: strerror(rc)))")
    }
    var out: [UInt8] = []
    var err: [UInt8] = []
    var open = [outPipe[0], errPipe[0]]
    let deadline = Date() + timeout
    var buffer = [UInt8](repeating: 0, count: 65536)
    while !open.isEmpty {
        var fds = open.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        let left = Int32(max(0, deadline.timeIntervalSinceNow * 1000))
        if poll(&fds, nfds_t(fds.count), min(left, 1000)) == 0 && Date() >= deadline {
            kill(pid, SIGKILL)
            deadline.timeIntervalSinceNow < -5 ? open.removeAll() : ()
            continue
        }
        for f in fds where f.revents != 0 {
            let n = read(f.fd, &buffer, buffer.count)
            if n > 0 {
                if f.fd == outPipe[0] { out += buffer[..<n] } else { err += buffer[..<n] }
            } else {
                close(f.fd)
                open.removeAll { $0 == f.fd }
            }
        }
    }
    var status: CInt = 0
    while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
    let code: Int32 = (status & 0x7F) == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
    return Finished(
        status: code, stdout: String(decoding: out, as: UTF8.self), stderr: String(decoding: err, as: UTF8.self))
}

/// Runs ptk-send against `daemon`, with the daemon's own sender configuration directory (so
/// its known receivers never meet another test's daemon on a reused port). Its `--timeout` is
/// 60 s: with the whole suite on two cores a ptkd's answer was once more than 20 s late (the
/// hooks' restart test, stop 66); a sender that hangs still fails within a minute.
func send(_ daemon: DaemonProcess, _ files: [String], _ extra: [String] = []) throws -> Finished {
    try run(
        "ptk-send", extra + ["--timeout", "60", "127.0.0.1:\(daemon.port)"] + files,
        environment: ["XDG_CONFIG_HOME": daemon.senderConfig])
}

/// `stderr` without ptk-send's line about a first contact with a receiver (printed once per
/// receiver, with its device ID).
func withoutFirstContact(_ stderr: String) -> String {
    stderr.split(separator: "\n", omittingEmptySubsequences: false)
        .filter { !$0.hasPrefix("ptk-send: first contact with ") }.joined(separator: "\n")
}

/// A ptkd started for one test, in its own temporary directory, on a free port.
final class DaemonProcess: @unchecked Sendable {
    // Used from one test at a time.
    let root: String
    private let ownsRoot: Bool
    var dir: String { root + "/photos" }
    /// ptkd's state directory (identity, trust list), given with --state-dir.
    var stateDir: String { root + "/state" }
    /// XDG_CONFIG_HOME for ptk-send runs against this daemon (`send`).
    var senderConfig: String { root + "/sender-config" }
    var logPath: String { root + "/ptkd-\(ObjectIdentifier(self).hashValue).log" }
    let process = Process()
    private(set) var port: UInt16 = 0

    /// Starts ptkd with `extra` flags. `root` reuses another instance's folder (it is then not
    /// removed here); `wrapper` runs ptkd through another command (unshare, setpriv). Unless
    /// `extra` says otherwise, plaintext sessions are allowed (the raw-protocol tests speak it),
    /// the LocalSend endpoint and the web interface are off and the state directory is `stateDir`.
    init(
        _ extra: [String] = [], root: String? = nil, wrapper: [String] = [], mdns: Bool = false, dirFlag: Bool = true,
        environment: [String: String] = [:]
    ) throws {
        self.root = root ?? makeTemporaryDirectory("ptk-e2e")
        ownsRoot = root == nil
        let ptkd = binDirectory + "/ptkd"
        let args =
            ["--config", "/dev/null"] + (dirFlag ? ["--dir", self.root + "/photos"] : []) + [
                "--port", "0", "--listen", "127.0.0.1",
            ]
            + (mdns ? [] : ["--no-mdns"])
            + (extra.contains("--plaintext") ? [] : ["--plaintext", "allow"])
            // The LocalSend endpoint only where a test asks for it (its fixed port would collide).
            + (extra.contains("--localsend") ? [] : ["--localsend", "off"])
            + (extra.contains("--web") ? [] : ["--web", "off"])
            + (extra.contains("--state-dir") || !dirFlag ? [] : ["--state-dir", self.root + "/state"]) + extra
        if let first = wrapper.first {
            process.executableURL = URL(fileURLWithPath: first)
            process.arguments = Array(wrapper.dropFirst()) + [ptkd] + args
        } else {
            process.executableURL = URL(fileURLWithPath: ptkd)
            process.arguments = args
        }
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        }
        FileManager.default.createFile(atPath: logPath, contents: nil)
        process.standardError = FileHandle(forWritingAtPath: logPath)!
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        // 30 s: a whole run of the tests on two cores (ptkd under a fault library's recording
        // among them) once took more than 15 s to start one.
        let started = Date()
        while Date() < started + 30 {
            if let range = log.range(of: #"listening on port (\d+)"#, options: .regularExpression) {
                port = UInt16(log[range].split(separator: " ").last!)!
                return
            }
            if !process.isRunning { break }
            usleep(20_000)
        }
        let state =
            process.isRunning
            ? "still running after \(Int(Date().timeIntervalSince(started))) s, not listening"
            : "ended (\(process.terminationReason == .exit ? "exit status" : "signal") \(process.terminationStatus))"
        throw HarnessError("ptkd did not start: \(state); its log: \(log)")
    }

    var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    /// The process's open descriptors, counted in /proc.
    var openDescriptors: Int { listDirectory("/proc/\(process.processIdentifier)/fd").count }

    /// The process's resident memory in kB, from /proc.
    var residentKB: Int {
        let status = (try? String(contentsOfFile: "/proc/\(process.processIdentifier)/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
        return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
    }

    /// Names visible in the received-photos directory (not .incoming, nor the library's .ptk).
    var visible: [String] { listDirectory(dir).filter { $0 != ".incoming" && $0 != ".ptk" } }
    /// Names in .incoming.
    var incoming: [String] { listDirectory(dir + "/.incoming") }

    /// Sends `signal` and waits up to `timeout` seconds; returns the exit status, or nil if it hung.
    func stop(signal: Int32 = SIGTERM, timeout: Double = 10) -> Int32? {
        guard process.isRunning else { return process.terminationStatus }
        kill(process.processIdentifier, signal)
        let deadline = Date() + timeout
        while process.isRunning && Date() < deadline { usleep(10_000) }
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            return nil
        }
        return process.terminationStatus
    }

    deinit {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        if ownsRoot { removeTree(root) }
    }
}

struct HarnessError: Error, CustomStringConvertible {
    var description: String
    init(_ d: String) { description = d }
}

/// A hand-driven protocol peer for hostile cases: raw bytes out, frames in.
final class RawPeer {
    let connection: FramedConnection

    init(port: UInt16, host: String = "127.0.0.1", timeout: Double = 10) throws {
        let address = SocketAddress(numericHost: host, port: port)!
        let sock = try Socket.connect(to: address, deadline: .now + .seconds(5))
        connection = FramedConnection(stream: TCPStream(socket: sock, peer: address), timeout: .seconds(timeout))
    }

    func send(_ frame: Frame) throws { try connection.send(frame) }
    func sendRaw(_ bytes: [UInt8]) throws { try connection.writeRaw(bytes) }
    func receive() throws -> Frame? { try connection.receive() }

    /// Says HELLO and returns the WELCOME.
    @discardableResult
    func hello(window: Int = 16) throws -> Welcome {
        try send(.hello(Hello(name: "raw", window: window)))
        guard case .welcome(let w)? = try receive() else { throw HarnessError("no WELCOME") }
        return w
    }

    /// Reads frames until ERROR or the end of the stream; returns the ERROR, if any.
    func expectError() throws -> Problem? {
        while let frame = try receive() {
            if case .error(let p) = frame { return p }
        }
        return nil
    }

    private var closed = false
    func close() {
        if !closed { connection.close() }
        closed = true
    }
    deinit { close() }
}

/// Writes a test photo into `dir` and returns its path.
func photo(_ dir: String, _ name: String, size: Int, seed: UInt64 = 7) -> String {
    let path = dir + "/" + name
    writeFile(path, makePNG(size: size, seed: seed))
    return path
}

/// Waits until ptkd's library has indexed every photo it lists (so that no indexing holds a
/// descriptor or memory when a test measures them).
func waitForIndexing(_ d: DaemonProcess, timeout: Double = 30) -> Bool {
    eventually(timeout) {
        guard let list = try? listed(d) else { return false }
        return list.allSatisfy { $0["Indexed"] as? Bool == true }
            && d.visible.filter { $0.hasSuffix(".png") || $0.hasSuffix(".jpg") }.count <= list.count
    }
}
