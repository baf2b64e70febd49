import PTKCLI
import PTKClient
import PTKDiscovery
import PTKProtocol
import PTKSystem

let version = "0.1.0"

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
        die("cannot send \(error.path): \(error.reason)", SendExitCode.localFile)
    }
}

ignoreBrokenPipeSignal()
let addresses = resolvePeer(peerText, defaultPort: defaultPort)

/// Prints what the sessions report (Delivery serialises the calls) and draws the progress bar,
/// so a line about a file never lands in the middle of the bar.
final class Report: @unchecked Sendable {
    // Touched only from Delivery's progress calls, which never overlap, and after `run` returns.
    private let files: [LocalFile]
    private let bar: ProgressBar?
    private var resumedAt: [Int: Int64] = [:]

    init(files: [LocalFile], bar: ProgressBar?) {
        self.files = files
        self.bar = bar
    }

    func handle(_ event: SendProgress) {
        switch event {
        case .started(let index, let offset):
            bar?.handle(event, file: index)
            if offset > 0 { resumedAt[index] = offset }
        case .acknowledged(let index, _):
            bar?.handle(event, file: index)
        case .finished(let index, let outcome):
            bar?.handle(event, file: index)
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
        case .connected:
            break
        }
    }

    func clearBar() { bar?.clear() }
}

let showBar = !parsed.has("quiet") && FileDescriptor.standardError.isTerminal
let report = Report(files: files, bar: showBar ? ProgressBar(files: files) : nil)
let delivery = Delivery(files: files, options: sendOptions, parallel: parallel,
                        connect: sendOptions.tcpConnector(to: addresses)) { report.handle($0) }
let result = delivery.run()
report.clearBar()
for i in result.unsent { print("\(files[i].path): not sent") }
let (status, message) = result.exitStatus(peer: peerText)
if let message { die(message, status) }
exitProcess(status)

/// Finds the addresses of `<peer>`: an address or host:port directly; otherwise first a
/// `_ptk._tcp` instance of that name (case-insensitive), then a host name on the default port.
func resolvePeer(_ text: String, defaultPort: UInt16) -> [SocketAddress] {
    let direct = parsePeer(text, defaultPort: defaultPort)
    if let (host, port) = direct {
        let isNumeric = SocketAddress(numericHost: host, port: port) != nil
        if isNumeric || port != defaultPort || text.contains(":") {
            do { return try SocketAddress.resolve(host, port: port) } catch { die("\(error)", SendExitCode.unreachable) }
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
    die(message, SendExitCode.unreachable)
}

/// `--list`: the receivers found over mDNS, one per line or as JSON.
func listReceivers(json: Bool) -> Never {
    let services: [DiscoveredService]
    do { services = try Browser.browse(timeout: 2).sorted { $0.name.lowercased() < $1.name.lowercased() } } catch {
        die(error.description, SendExitCode.unreachable)
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
    exitProcess(0)
}

