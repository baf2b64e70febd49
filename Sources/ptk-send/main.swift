import PTKCLI
import PTKClient
import PTKDiscovery
import PTKProtocol
import PTKSystem
import PTKTLS

let version = "0.1.0"

/// `$XDG_CONFIG_HOME/ptk`, else `~/.config/ptk`: the sender's identity and known receivers.
let configDirectory: String = {
    if let xdg = environment("XDG_CONFIG_HOME"), xdg.hasPrefix("/") { return xdg + "/ptk" }
    return (environment("HOME") ?? ".") + "/.config/ptk"
}()
let configDirectoryDescription = "$XDG_CONFIG_HOME/ptk (else ~/.config/ptk)"

let options: [OptionSpec] = [
    OptionSpec("port", value: "N", help: "receiver's port when <peer> names none (default 47850)"),
    OptionSpec("window", value: "N", help: "chunks in flight before waiting for acks, 1-64 (default 64)"),
    OptionSpec("name", value: "NAME", help: "name to introduce this sender with (default: the host name)"),
    OptionSpec("timeout", value: "SECONDS", help: "give up connecting, or on a silent receiver, after this long (default 30)"),
    OptionSpec("parallel", value: "N", help: "sessions at once, 1-8 (default \(defaultParallelSessions); 1: one session, files in order)"),
    OptionSpec("wait", value: "DURATION", help: "how long to wait for a turn at a busy receiver; s, m, h suffixes; 0: give up at once (default \(durationText(WaitPolicy().limit)))"),
    OptionSpec("quiet", short: "q", help: "no progress bar"),
    OptionSpec("plaintext", help: "send without TLS, to a receiver that allows it (never done unasked)"),
    OptionSpec("expect-id", value: "ID", help: "the receiver's device ID must be this (its `ptk id`); stop before sending otherwise"),
    OptionSpec("id", help: "print this sender's device ID and exit"),
    OptionSpec("forget", value: "NAME", help: "forget the receiver remembered as NAME (to accept its new ID) and exit"),
    OptionSpec("list", help: "list the receivers found over mDNS and exit"),
    OptionSpec("json", help: "with --list: print them as JSON"),
    OptionSpec("help", short: "h", help: "show this help and exit"),
    OptionSpec("version", help: "show the version and exit"),
]

let usage = """
    Usage: ptk-send [OPTIONS] <peer> FILE...
           ptk-send --list [--json] | --id | --forget NAME

    Sends PNG photos to a ptkd receiver, over up to \(defaultParallelSessions) sessions at once
    (--parallel). Files that would get the same name there go in order in one session.
    A receiver that is busy serving others is asked again, with pauses of 0.25 to 5 s,
    until it has a turn for this sender (--wait).
    <peer> is a receiver's mDNS name (as --list shows it), a host name,
    host:port, an IPv4 address, or [IPv6]:port.

    Sessions use TLS 1.3. The first contact with a receiver records its device ID in
    \(configDirectoryDescription)/known-receivers; a later contact that presents another ID
    is stopped before anything is sent. This sender's identity is in \(configDirectoryDescription)/identity.

    Options:
    \(helpLines(for: options))

    Exit status:
      0   every file was saved
      1   some file was refused or failed (each is reported)
      64  usage error
      66  a local file is missing, unreadable, not a regular file or not a PNG,
          or was truncated by another program while it was being sent
      69  the receiver is unreachable, stayed busy for the whole --wait, is shutting
          down, or went silent
      76  the peer does not speak ptk protocol v1 or TLS, or answered ERROR
      77  the receiver's device ID is not the one expected (--expect-id, or remembered)
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
var waitPolicy = WaitPolicy()
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
    case "wait":
        guard let t = parseDuration(v) else { usageError("invalid value '\(v)' for --wait: expected a duration, such as 10m, or 0") }
        waitPolicy.limit = t
    case "timeout":
        guard let t = parseDuration(v), t > 0 else { usageError("invalid value '\(v)' for --timeout: expected seconds") }
        sendOptions.timeout = t
    default:
        break
    }
}
let knownPath = configDirectory + "/known-receivers"
func loadKnown() -> KnownReceivers {
    do { return try KnownReceivers(path: knownPath) } catch { die("cannot read \(knownPath): \(error)", SendExitCode.localFile) }
}
func loadIdentity() -> Identity {
    do {
        try makeDirectories(configDirectory, mode: 0o700)
        return try Identity.loadOrCreate(in: configDirectory + "/identity", commonName: "ptk-send \(hostName())")
    } catch let error as IdentityError {
        die(error.description, SendExitCode.localFile)
    } catch {
        die("cannot create \(configDirectory): \(error)", SendExitCode.localFile)
    }
}
if parsed.has("id") {
    print(loadIdentity().deviceID)
    exitProcess(0)
}
if let name = parsed.last("forget") {
    var known = loadKnown()
    let n = known.forget(name)
    guard n > 0 else { die("no receiver remembered as '\(name)' in \(knownPath)", 1) }
    do { try known.save() } catch { die("cannot write \(knownPath): \(error)", SendExitCode.localFile) }
    print("forgot \(name): its next contact is trusted as a first contact")
    exitProcess(0)
}
var expectedID: DeviceID? = nil
if let text = parsed.last("expect-id") {
    guard let id = DeviceID(parsing: text) else { usageError("invalid value '\(text)' for --expect-id: expected a device ID (52 characters A-Z, 2-7; dashes ignored)") }
    expectedID = id
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
// Photos are hashed and sent from memory maps: one truncated meanwhile by another program
// ends the run with a message, not a crash.
exitOnBusError(message: "ptk-send: a photo being sent was truncated by another program; nothing more was sent", code: SendExitCode.localFile)
let (addresses, advertisedID) = resolvePeer(peerText, defaultPort: defaultPort)

/// Prints what the sessions report (Delivery serialises the calls) and draws the progress bar,
/// so a line about a file never lands in the middle of the bar.
final class Report: @unchecked Sendable {
    // Touched only from Delivery's progress calls, which never overlap, and after `run` returns.
    private let files: [LocalFile]
    private let bar: ProgressBar?
    private var resumedAt: [Int: Int64] = [:]
    private let quiet: Bool
    /// The receiver as the user named it, and how long --wait lets the call wait.
    private let peer: String
    private let waitLimit: Double
    /// Without a bar, waiting for a busy receiver is said once.
    private var saidWaiting = false

    init(files: [LocalFile], bar: ProgressBar?, quiet: Bool, peer: String, waitLimit: Double) {
        self.files = files
        self.bar = bar
        self.quiet = quiet
        self.peer = peer
        self.waitLimit = waitLimit
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
            bar?.handle(event, file: 0)
        case .waiting(let ahead, _):
            if let bar {
                bar.showWaiting(for: peer, ahead: ahead)
            } else if !quiet && !saidWaiting {
                saidWaiting = true
                writeToStandardError("ptk-send: \(peer) is busy serving other senders; waiting for a turn (up to \(durationText(waitLimit)), --wait)")
            }
        }
    }

    func clearBar() { bar?.clear() }
}

let showBar = !parsed.has("quiet") && FileDescriptor.standardError.isTerminal
let report = Report(files: files, bar: showBar ? ProgressBar(files: files) : nil, quiet: parsed.has("quiet"),
                    peer: peerText, waitLimit: waitPolicy.limit)
let connector: Connector
if parsed.has("plaintext") {
    if expectedID != nil { usageError("--expect-id needs TLS: drop --plaintext") }
    connector = sendOptions.tcpConnector(to: addresses)
} else {
    let identity = loadIdentity()
    let context: TLSContext
    do { context = try TLSContext(server: false, identity: identity) } catch { die(error.description, SendExitCode.localFile) }
    var expected: [ExpectedReceiver] = []
    let known = loadKnown()
    let entry = known.entry(named: peerText)
    if let expectedID {
        expected.append(ExpectedReceiver(id: expectedID, source: "--expect-id"))
    } else if let entry {
        expected.append(ExpectedReceiver(id: entry.id, source: "\(knownPath) (first seen \(formatDate(entry.firstSeen)))"))
    }
    if let advertisedID { expected.append(ExpectedReceiver(id: advertisedID, source: "its mDNS record (id=)")) }
    let remember = expectedID == nil && entry == nil
    connector = sendOptions.tlsConnector(to: addresses, context: context, expected: expected) { id, address in
        guard remember else { return }
        var known = loadKnown()
        known.remember(KnownReceiver(id: id, name: peerText, address: address.description, firstSeen: wallClockSeconds()))
        do {
            try known.save()
            writeToStandardError("ptk-send: first contact with \(peerText): its device ID is \(id); remembered in \(knownPath)")
        } catch {
            writeToStandardError("ptk-send: first contact with \(peerText) (device ID \(id)); cannot remember it in \(knownPath): \(error)")
        }
    }
}
let delivery = Delivery(files: files, options: sendOptions, parallel: parallel, connect: connector, waiting: waitPolicy) { report.handle($0) }
let result = delivery.run()
report.clearBar()
for i in result.unsent { print("\(files[i].path): not sent") }
let (status, message) = result.exitStatus(peer: peerText)
// Every session's thread and hashing thread has said it is done, but a thread that used OpenSSL
// runs OpenSSL's clean-up of the thread as it ends, and OpenSSL's exit handler would free what
// that uses (a SIGSEGV in libcrypto's thread stop, seen once in bench/run): so no exit handlers.
if let message { writeToStandardError("Error: \(message)") }
exitProcessNow(status)

/// Finds the addresses of `<peer>`: an address or host:port directly; otherwise first a
/// `_ptk._tcp` instance of that name (case-insensitive), with the device ID its TXT record
/// gives, then a host name on the default port.
func resolvePeer(_ text: String, defaultPort: UInt16) -> ([SocketAddress], DeviceID?) {
    let direct = parsePeer(text, defaultPort: defaultPort)
    if let (host, port) = direct {
        let isNumeric = SocketAddress(numericHost: host, port: port) != nil
        if isNumeric || port != defaultPort || text.contains(":") {
            do { return (try SocketAddress.resolve(host, port: port), nil) } catch { die("\(error)", SendExitCode.unreachable) }
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
        if !addresses.isEmpty { return (addresses, match.txt["id"].flatMap { DeviceID(parsing: $0) }) }
    }
    if let (host, port) = direct, let addresses = try? SocketAddress.resolve(host, port: port), !addresses.isEmpty {
        return (addresses, nil)
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
    let known = loadKnown()
    /// "known", "new", "CHANGED" (the advertised ID is not the remembered one) or "no TLS".
    func status(_ s: DiscoveredService) -> (id: DeviceID?, status: String) {
        guard let id = s.txt["id"].flatMap({ DeviceID(parsing: $0) }) else { return (nil, "no TLS") }
        guard let entry = known.entry(named: s.name) else { return (id, "new") }
        return (id, entry.id == id ? "known" : "CHANGED")
    }
    if json {
        let items = services.map { s -> String in
            let addrs = s.addresses.map { jsonString($0) }.joined(separator: ",")
            let (id, st) = status(s)
            return "{\"name\":\(jsonString(s.name)),\"host\":\(jsonString(s.hostName)),\"addresses\":[\(addrs)],\"port\":\(s.port),\"version\":\(jsonString(s.protocolVersion ?? "")),\"id\":\(jsonString(id?.compact ?? "")),\"status\":\(jsonString(st))}"
        }
        print("[" + items.joined(separator: ",") + "]")
    } else if services.isEmpty {
        writeToStandardError("No ptk receivers found over mDNS.")
    } else {
        let width = services.map(\.name.count).max()!
        for s in services {
            let address = s.addresses.first.map { $0.contains(":") ? "[\($0)]" : $0 } ?? "?"
            let (id, st) = status(s)
            print(s.name + String(repeating: " ", count: width - s.name.count) + "  \(address):\(s.port)  protocol v\(s.protocolVersion ?? "?")  \(id?.short ?? "-")  \(st)")
        }
    }
    exitProcess(0)
}

