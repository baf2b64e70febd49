import Glibc
import PTKCLI
import PTKClient
import PTKDiscovery
import PTKProtocol
import PTKSystem

let version = "0.1.0"

enum ExitCode {
    static let ok: Int32 = 0
    static let notAllSaved: Int32 = 1
    static let usage: Int32 = 64
    static let localFile: Int32 = 66
    static let unreachable: Int32 = 69
    static let protocolError: Int32 = 76
}

let options: [OptionSpec] = [
    OptionSpec("port", value: "N", help: "receiver's port when <peer> names none (default 47850)"),
    OptionSpec("window", value: "N", help: "chunks in flight before waiting for acks, 1-64 (default 64)"),
    OptionSpec("name", value: "NAME", help: "name to introduce this sender with (default: the host name)"),
    OptionSpec("timeout", value: "SECONDS", help: "give up connecting, or on a silent receiver, after this long (default 30)"),
    OptionSpec("parallel", value: "N", help: "sessions at once, 1-8 (default \(defaultParallelSessions); 1: one session, files in order)"),
    OptionSpec("quiet", short: "q", help: "no progress bar"),
    OptionSpec("list", help: "list the receivers found over mDNS and exit"),
    OptionSpec("json", help: "with --list: print them as JSON"),
    OptionSpec("help", short: "h", help: "show this help and exit"),
    OptionSpec("version", help: "show the version and exit"),
]

let usage = """
    Usage: ptk-send [OPTIONS] <peer> FILE...
           ptk-send --list [--json]

    Sends PNG photos to a ptkd receiver, over up to \(defaultParallelSessions) sessions at once
    (--parallel). Files that would get the same name there go in order in one session.
    <peer> is a receiver's mDNS name (as --list shows it), a host name,
    host:port, an IPv4 address, or [IPv6]:port.

    Options:
    \(helpLines(for: options))

    Exit status:
      0   every file was saved
      1   some file was refused or failed (each is reported)
      64  usage error
      66  a local file is missing, unreadable, not a regular file or not a PNG
      69  the receiver is unreachable, busy, shutting down, or went silent
      76  the peer does not speak ptk protocol v1 (or answered ERROR)
    With --list: 0 listed (even none), 69 avahi-daemon is not running.
    """

func usageError(_ message: String) -> Never {
    exitWithUsageError(message, program: "ptk-send", usageLine: "ptk-send [OPTIONS] <peer> FILE...")
}

func die(_ message: String, _ code: Int32) -> Never { exitWithError(message, code: code) }

let parsed = parseCommandLineOrExit(options: options, program: "ptk-send", version: version, usage: usage,
                                    usageLine: "ptk-send [OPTIONS] <peer> FILE...")

var sendOptions = SendOptions()
var parallel = defaultParallelSessions
var defaultPort = ProtocolLimits.defaultPort
for (name, value) in parsed.options {
    let v = value ?? ""
    switch name {
    case "port":
        guard let p = parseInteger(v, in: 1...65535) else { usageError("invalid value '\(v)' for --port: expected 1-65535") }
        defaultPort = UInt16(p)
    case "window":
        guard let w = parseInteger(v, in: 1...ProtocolLimits.maxWindow) else { usageError("invalid value '\(v)' for --window: expected 1-\(ProtocolLimits.maxWindow)") }
        sendOptions.window = w
    case "name":
        guard !v.isEmpty else { usageError("--name must not be empty") }
        sendOptions.name = v
    case "parallel":
        guard let n = parseInteger(v, in: 1...8) else { usageError("invalid value '\(v)' for --parallel: expected 1-8") }
        parallel = n
    case "timeout":
        guard let t = parseDuration(v), t > 0 else { usageError("invalid value '\(v)' for --timeout: expected seconds") }
        sendOptions.timeout = t
    default:
        break
    }
}
if parsed.has("list") {
    listReceivers(json: parsed.has("json"))
}
if parsed.has("json") { usageError("--json goes with --list") }
guard parsed.positionals.count >= 2 else {
    usageError(parsed.positionals.isEmpty ? "missing <peer> and FILE" : "missing FILE: name at least one photo to send")
}
let peerText = parsed.positionals[0]
guard !peerText.isEmpty else { usageError("<peer> is empty") }
if parsePeer(peerText, defaultPort: defaultPort) == nil {
    // Anything else may be an mDNS instance name, but these are mistyped addresses.
    let afterColon = peerText.split(separator: ":", omittingEmptySubsequences: false).last ?? ""
    let looksLikePort = peerText.filter { $0 == ":" }.count == 1 && !afterColon.isEmpty && afterColon.allSatisfy(\.isNumber)
    if peerText.hasPrefix("[") || looksLikePort {
        usageError("'\(peerText)' is not a host, host:port or [IPv6]:port")
    }
}

// Every file is checked before any connection is made.
var files: [LocalFile] = []
for path in parsed.positionals.dropFirst() {
    do { files.append(try LocalFile.check(path)) } catch {
        die("cannot send \(error.path): \(error.reason)", ExitCode.localFile)
    }
}

signal(SIGPIPE, SIG_IGN)
let addresses = resolvePeer(peerText, defaultPort: defaultPort)

/// What the sessions report, collected from their threads; it also draws the progress bar, so
/// a line about a file never lands in the middle of the bar.
final class Report: @unchecked Sendable {
    // Every field is guarded by `lock`; lines are printed under it so they never interleave.
    private let lock = Lock()
    private let files: [LocalFile]
    private let bar: ProgressBar?
    init(files: [LocalFile], bar: ProgressBar?) {
        self.files = files
        self.bar = bar
    }
    private var resumedAt: [Int: Int64] = [:]
    /// Files the receiver accepted (their transfer began).
    private var started: Set<Int> = []
    private(set) var outcomes: [Int: FileOutcome] = [:]
    /// The failure of each session that failed, by its index in the dealing.
    private var failureOfSession: [Int: SendFailure] = [:]
    var failures: [SendFailure] { lock.withLock { failureOfSession.sorted { $0.key < $1.key }.map(\.value) } }

    func handle(_ event: SendProgress, file index: Int) {
        lock.withLock {
            bar?.handle(event, file: index)
            switch event {
            case .started(_, let offset):
                started.insert(index)
                if offset > 0 { resumedAt[index] = offset }
            case .finished(_, let outcome):
                outcomes[index] = outcome
                let f = files[index]
                bar?.clear()
                switch outcome {
                case .saved(let s):
                    let resumed = resumedAt[index].map { " (resumed at byte \($0))" } ?? ""
                    print("\(f.path): saved as \"\(s.name)\"\(resumed)")
                case .rejected(let p): print("\(f.path): refused: \(p)")
                case .failed(let p): print("\(f.path): failed: \(p)")
                }
                bar?.redraw()
            default:
                break
            }
        }
    }

    func failed(_ failure: SendFailure, session: Int) {
        lock.withLock { failureOfSession[session] = failure }
    }

    func clearBar() { lock.withLock { bar?.clear() } }

    /// When some session got through: forgets the failures of sessions that got nowhere (no
    /// file of theirs started) because the receiver was busy, silent or not reachable, and
    /// returns their files, to go again in one more session once the others are done. A
    /// receiver may serve one session at a time and leave the others waiting unanswered.
    func takeLeftovers(_ sessions: [[Int]]) -> [Int] {
        guard lock.withLock({ failureOfSession.count }) < sessions.count else { return [] }
        return sessions.indices.filter { forgetRefusal(of: $0, files: sessions[$0], busyOnly: false) }
            .flatMap { sessions[$0] }.sorted()
    }

    /// If session `session` got nowhere (no file of `files` started) because the receiver
    /// answered ERROR busy (or, unless `busyOnly`, was silent or unreachable), forgets that
    /// failure and returns true.
    func forgetRefusal(of session: Int, files: [Int], busyOnly: Bool) -> Bool {
        lock.withLock {
            guard let failure = failureOfSession[session], files.allSatisfy({ !started.contains($0) }) else { return false }
            switch failure {
            case .remoteError(let p): guard p.code == ErrorCode.busy.rawValue else { return false }
            case .connectionLost, .unreachable: guard !busyOnly else { return false }
            case .protocolError, .localFile: return false
            }
            failureOfSession[session] = nil
            return true
        }
    }
}

/// Runs one session over the files `plan` picks, reporting to `report` as session number `session`.
@Sendable func runSession(_ plan: SessionFiles, of files: [LocalFile], session: Int, options: SendOptions,
                addresses: [SocketAddress], report: Report) {
    let sender = Sender(files: files, plan: plan, options: options) { event in
        switch event {
        case .started(let i, _), .acknowledged(let i, _), .finished(let i, _): report.handle(event, file: i)
        case .connected: break
        }
    }
    do throws(SendFailure) { try sender.send(to: addresses) } catch { report.failed(error, session: session) }
}

/// The sessions' file lists, set once the first session's WELCOME came.
final class SessionPlan: @unchecked Sendable {
    // `groups` is guarded by `lock`.
    private let lock = Lock()
    private var planned: [[Int]]?
    var groups: [[Int]]? {
        get { lock.withLock { planned } }
        set { lock.withLock { planned = newValue } }
    }
}

// The first session runs alone. Its WELCOME says how many sessions the receiver serves at once
// for us (protocol-v1.md §4): the files are then dealt (planSessions), the first session keeps
// the first share, and the others start at once, never more than the receiver allows.
let showBar = !parsed.has("quiet") && FileDescriptor.standardError.isTerminal
let report = Report(files: files, bar: showBar ? ProgressBar(files: files) : nil)
let plan = SessionPlan()
let finished = Semaphore()
let firstSession = SessionFiles.afterWelcome { [files, sendOptions, addresses] welcome in
    let groups = planSessions(files, parallel: parallel, receiverSessions: welcome.sessionsAllowed)
    plan.groups = groups
    for (g, indices) in groups.enumerated().dropFirst() {
        do {
            try startThread {
                runSession(.fixed(indices), of: files, session: g, options: sendOptions, addresses: addresses, report: report)
                finished.signal()
            }
        } catch {
            // Its files then go in the session that follows the others (takeLeftovers).
            report.failed(.unreachable("cannot start a thread for another session: \(error)"), session: g)
            finished.signal()
        }
    }
    return groups[0]
}
runSession(firstSession, of: files, session: 0, options: sendOptions, addresses: addresses, report: report)
// A first session that failed before its WELCOME planned nothing: it held every file.
let sessions = plan.groups ?? [Array(files.indices)]
for _ in sessions.dropFirst() { finished.wait() }
// A receiver with fewer free session slots than we opened answers the rest ERROR busy (or, one
// that serves a session at a time, leaves them unanswered). Their files go in one more
// session; the receiver may take a moment to free the slots of the sessions that just ended,
// so a busy answer there is retried for up to about 5 seconds.
let leftovers = report.takeLeftovers(sessions)
var attempt = 0
while !leftovers.isEmpty {
    let id = sessions.count + attempt
    runSession(.fixed(leftovers), of: files, session: id, options: sendOptions, addresses: addresses, report: report)
    attempt += 1
    guard attempt < 10, report.forgetRefusal(of: id, files: leftovers, busyOnly: true) else { break }
    usleep(UInt32(attempt) * 100_000)
}
report.clearBar()

if let error = report.failures.first {
    let unfinished = files.indices.filter { report.outcomes[$0] == nil }
    if unfinished.count < files.count {
        for i in unfinished { print("\(files[i].path): not sent") }
    }
    switch error {
    case .unreachable(let m): die("cannot connect to \(peerText): \(m)", ExitCode.unreachable)
    case .connectionLost(let m): die("\(peerText): \(m)", ExitCode.unreachable)
    case .localFile(let m): die(m, ExitCode.localFile)
    case .remoteError(let p):
        let code = (p.code == ErrorCode.busy.rawValue || p.code == ErrorCode.shuttingDown.rawValue) ? ExitCode.unreachable : ExitCode.protocolError
        die("\(peerText): the receiver answered ERROR \(p)", code)
    case .protocolError: die("\(peerText): \(error)", ExitCode.protocolError)
    }
}
var status = ExitCode.ok
for i in files.indices {
    if case .saved = report.outcomes[i] { continue }
    status = ExitCode.notAllSaved
}
exit(status)

/// Finds the addresses of `<peer>`: an address or host:port directly; otherwise first a
/// `_ptk._tcp` instance of that name (case-insensitive), then a host name on the default port.
func resolvePeer(_ text: String, defaultPort: UInt16) -> [SocketAddress] {
    let direct = parsePeer(text, defaultPort: defaultPort)
    if let (host, port) = direct {
        let isNumeric = SocketAddress(numericHost: host, port: port) != nil
        if isNumeric || port != defaultPort || text.contains(":") {
            do { return try SocketAddress.resolve(host, port: port) } catch { die("\(error)", ExitCode.unreachable) }
        }
    }
    var found: [DiscoveredService] = []
    var browseProblem: String? = nil
    do {
        found = try Browser.browse(timeout: 2) { $0.name.lowercased() == text.lowercased() }
    } catch {
        browseProblem = error.description
    }
    if let match = found.first(where: { $0.name.lowercased() == text.lowercased() }) {
        let addresses = match.addresses.compactMap { SocketAddress(numericHost: $0, port: match.port) }
        if !addresses.isEmpty { return addresses }
    }
    if let (host, port) = direct, let addresses = try? SocketAddress.resolve(host, port: port), !addresses.isEmpty {
        return addresses
    }
    var message = "no receiver named '\(text)': "
    if let browseProblem {
        message += browseProblem
    } else if found.isEmpty {
        message += "no _ptk._tcp receivers were found over mDNS"
    } else {
        message += "the receivers found over mDNS are " + found.map { "'\($0.name)'" }.joined(separator: ", ")
    }
    message += ", and no host has that name"
    die(message, ExitCode.unreachable)
}

/// `--list`: the receivers found over mDNS, one per line or as JSON.
func listReceivers(json: Bool) -> Never {
    let services: [DiscoveredService]
    do { services = try Browser.browse(timeout: 2).sorted { $0.name.lowercased() < $1.name.lowercased() } } catch {
        die(error.description, ExitCode.unreachable)
    }
    if json {
        let items = services.map { s -> String in
            let addrs = s.addresses.map { jsonString($0) }.joined(separator: ",")
            return "{\"name\":\(jsonString(s.name)),\"host\":\(jsonString(s.hostName)),\"addresses\":[\(addrs)],\"port\":\(s.port),\"version\":\(jsonString(s.protocolVersion ?? ""))}"
        }
        print("[" + items.joined(separator: ",") + "]")
    } else if services.isEmpty {
        writeToStandardError("No ptk receivers found over mDNS.")
    } else {
        let width = services.map(\.name.count).max()!
        for s in services {
            let address = s.addresses.first.map { $0.contains(":") ? "[\($0)]" : $0 } ?? "?"
            print(s.name + String(repeating: " ", count: width - s.name.count) + "  \(address):\(s.port)  protocol v\(s.protocolVersion ?? "?")")
        }
    }
    exit(0)
}

