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

/// Runs a binary to completion (killing it after `timeout` seconds).
func run(_ binary: String, _ args: [String], timeout: Double = 60, absolute: Bool = false) throws -> Finished {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: absolute ? binary : binDirectory + "/" + binary)
    p.arguments = args
    let out = Pipe(), err = Pipe()
    p.standardOutput = out
    p.standardError = err
    p.standardInput = FileHandle.nullDevice
    try p.run()
    let killer = DispatchWorkItem { if p.isRunning { p.terminate() } }
    DispatchQueue.global().asyncAfter(deadline: .now() + timeout, execute: killer)
    let o = out.fileHandleForReading.readDataToEndOfFile()
    let e = err.fileHandleForReading.readDataToEndOfFile()
    p.waitUntilExit()
    killer.cancel()
    return Finished(status: p.terminationStatus, stdout: String(decoding: o, as: UTF8.self), stderr: String(decoding: e, as: UTF8.self))
}

/// Runs ptk-send against `daemon`.
func send(_ daemon: DaemonProcess, _ files: [String], _ extra: [String] = []) throws -> Finished {
    try run("ptk-send", extra + ["--timeout", "20", "127.0.0.1:\(daemon.port)"] + files)
}

/// A ptkd started for one test, in its own temporary directory, on a free port.
final class DaemonProcess: @unchecked Sendable {
    // Used from one test at a time.
    let root: String
    private let ownsRoot: Bool
    var dir: String { root + "/photos" }
    var logPath: String { root + "/ptkd-\(ObjectIdentifier(self).hashValue).log" }
    let process = Process()
    private(set) var port: UInt16 = 0

    /// Starts ptkd with `extra` flags. `root` reuses another instance's folder (it is then not
    /// removed here); `wrapper` runs ptkd through another command (unshare, setpriv).
    init(_ extra: [String] = [], root: String? = nil, wrapper: [String] = []) throws {
        self.root = root ?? makeTemporaryDirectory("ptk-e2e")
        ownsRoot = root == nil
        let ptkd = binDirectory + "/ptkd"
        let args = ["--config", "/dev/null", "--dir", self.root + "/photos", "--port", "0", "--listen", "127.0.0.1", "--no-mdns"] + extra
        if let first = wrapper.first {
            process.executableURL = URL(fileURLWithPath: first)
            process.arguments = Array(wrapper.dropFirst()) + [ptkd] + args
        } else {
            process.executableURL = URL(fileURLWithPath: ptkd)
            process.arguments = args
        }
        FileManager.default.createFile(atPath: logPath, contents: nil)
        process.standardError = FileHandle(forWritingAtPath: logPath)!
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let deadline = Date() + 15
        while Date() < deadline {
            if let range = log.range(of: #"listening on port (\d+)"#, options: .regularExpression) {
                port = UInt16(log[range].split(separator: " ").last!)!
                return
            }
            if !process.isRunning { break }
            usleep(20_000)
        }
        throw HarnessError("ptkd did not start: \(log)")
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

    /// Names visible in the received-photos directory (not .incoming).
    var visible: [String] { listDirectory(dir).filter { $0 != ".incoming" } }
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

    init(port: UInt16, timeout: Double = 10) throws {
        let address = SocketAddress(numericHost: "127.0.0.1", port: port)!
        let sock = try Socket.connect(to: address, deadline: .now + 5)
        connection = FramedConnection(stream: TCPStream(socket: sock, peer: address), timeout: timeout)
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

/// Polls `condition` for up to `timeout` seconds.
func eventually(_ timeout: Double = 10, _ condition: () -> Bool) -> Bool {
    let deadline = Date() + timeout
    while Date() < deadline {
        if condition() { return true }
        usleep(20_000)
    }
    return condition()
}
