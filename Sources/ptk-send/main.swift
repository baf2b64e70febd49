import PTKCLI
import PTKClient
import PTKDiscovery
import PTKProtocol
import PTKSendCommandLine
import PTKSystem
import PTKTLS
import PTKVocabulary

/// `$XDG_CONFIG_HOME/ptk`, else `~/.config/ptk`: the sender's identity and known receivers.
let configDirectory: String = {
    if let xdg = environment("XDG_CONFIG_HOME"), xdg.hasPrefix("/") { return xdg + "/ptk" }
    return (environment("HOME") ?? ".") + "/.config/ptk"
}()

// Everything printed goes through `escapedForTerminal`: a receiver's name, message or saved
// name (and a file name found in a folder) may hold an escape sequence, a NUL or a bell, which
// must reach the user's terminal as visible text.
func usageError(_ message: String) -> Never {
    exitWithUsageError(escapedForTerminal(message), program: "ptk-send", usageLine: sendCommandLine.usageLine)
}

func die(_ message: String, _ status: SendExitCode) -> Never {
    exitWithError(escapedForTerminal(message), code: status.rawValue)
}

/// A line on standard error, escaped.
func say(_ message: String) { writeToStandardError(escapedForTerminal(message)) }

// `ptk-send __complete receivers`: the receivers remembered in known-receivers, one a line, for
// shell completion (mDNS is not browsed on Tab: it would stall the shell). Nothing on an error.
if CommandLine.arguments.dropFirst().first == "__complete" {
    if CommandLine.arguments.dropFirst(2).first == "receivers",
        // An unreadable file offers nothing: a Tab must never print an error.
        let known = try? KnownReceivers(path: configDirectory + "/known-receivers")
    {
        var seen: Set<String> = []
        for entry in known.entries where seen.insert(entry.name).inserted { print(entry.name) }
    }
    exitProcess(0)
}

let invocation = sendCommandLine.parseOrExit()
let settings: SendSettings
do { settings = try SendSettings(invocation) } catch { usageError(error.message) }
let defaultPort = settings.defaultPort
let knownPath = configDirectory + "/known-receivers"
func loadKnown() -> KnownReceivers {
    do { return try KnownReceivers(path: knownPath) } catch { die("cannot read \(knownPath): \(error)", .localFile) }
}
func loadIdentity() -> Identity {
    do {
        try makeDirectories(configDirectory, mode: 0o700)
        return try Identity.loadOrCreate(in: configDirectory + "/identity", commonName: "ptk-send \(hostName())")
    } catch let error as IdentityError {
        die(error.description, .localFile)
    } catch {
        die("cannot create \(configDirectory): \(error)", .localFile)
    }
}
if invocation.has(.id) {
    print(loadIdentity().deviceID)
    exitProcess(0)
}
if let name = invocation.value(.forget) {
    var known = loadKnown()
    let n = known.forget(name)
    guard n > 0 else { die("no receiver remembered as '\(name)' in \(knownPath)", .notAllSaved) }
    do { try known.save() } catch { die("cannot write \(knownPath): \(error)", .localFile) }
    print(escapedForTerminal("forgot \(name): its next contact is trusted as a first contact"))
    exitProcess(0)
}
if invocation.has(.list) {
    listReceivers(json: invocation.has(.json))
}
let peerText = invocation.arguments[0]
guard !peerText.isEmpty else { usageError("<peer> is empty") }
if parsePeer(peerText, defaultPort: defaultPort) == nil {
    // Anything else may be an mDNS instance name, but these are mistyped addresses.
    let afterColon = peerText.split(separator: ":", omittingEmptySubsequences: false).last ?? ""
    let looksLikePort =
        peerText.filter { $0 == ":" }.count == 1 && !afterColon.isEmpty && afterColon.allSatisfy(\.isNumber)
    if peerText.hasPrefix("[") || looksLikePort {
        usageError("'\(peerText)' is not a host, host:port or [IPv6]:port")
    }
}

// Every file is checked, and every folder walked, before any connection is made. The paths
// are the bytes the command line passed: a name that is not UTF-8 still names its file, which
// is sent with U+FFFD for those bytes in the name offered (said on standard error).
let collection: SendList
do {
    collection = try SendList.collect(
        BytePath.commandLine(Array(invocation.arguments.dropFirst())),
        keepFolders: settings.options.keepFolders, follow: settings.follow)
} catch {
    die("cannot send \(error.path): \(error.reason)", .localFile)
}
let files = collection.files
for file in files where file.nameReplaced {
    say("ptk-send: \"\(file.path)\" is sent as \"\(file.name)\" (its name is not UTF-8)")
}
if files.isEmpty {
    // Folders without a photo: nothing to connect for; what was left out is still listed.
    let report = Report(
        files: [], showBar: !settings.quiet && FileDescriptor.standardError.isTerminal, quiet: settings.quiet,
        json: settings.json, peer: peerText, waitLimit: settings.waitPolicy.limit)
    report.finish(unsent: [], leftOut: collection.leftOut)
    exitProcess(0)
}

ignoreBrokenPipeSignal()
// Photos are hashed and sent from memory maps: one truncated meanwhile by another program
// ends the run with a message, not a crash.
exitOnBusError(
    message: "ptk-send: a photo being sent was truncated by another program; nothing more was sent",
    code: SendExitCode.localFile.rawValue)
let (addresses, advertisedID) = resolvePeer(peerText, defaultPort: defaultPort)

let report = Report(
    files: files, showBar: !settings.quiet && FileDescriptor.standardError.isTerminal, quiet: settings.quiet,
    json: settings.json, peer: peerText, waitLimit: settings.waitPolicy.limit)
let connector: Connector
if settings.plaintext {
    connector = settings.options.tcpConnector(to: addresses)
} else {
    let identity = loadIdentity()
    let context: TLSContext
    do { context = try TLSContext(server: false, identity: identity) } catch { die(error.description, .localFile) }
    var expected: [ExpectedReceiver] = []
    let known = loadKnown()
    let entry = known.entry(named: peerText)
    if let expectedID = settings.expectedID {
        expected.append(ExpectedReceiver(id: expectedID, source: .pinned))
    } else if let entry {
        expected.append(
            ExpectedReceiver(id: entry.id, source: .remembered(path: knownPath, firstSeen: entry.firstSeen)))
    }
    if let advertisedID { expected.append(ExpectedReceiver(id: advertisedID, source: .advertised)) }
    let remember = settings.expectedID == nil && entry == nil
    connector = settings.options.tlsConnector(to: addresses, context: context, expected: expected) { id, address in
        guard remember else { return }
        var known = loadKnown()
        known.remember(KnownReceiver(id: id, name: peerText, address: address.description, firstSeen: .now))
        do {
            try known.save()
            say("ptk-send: first contact with \(peerText): its device ID is \(id); remembered in \(knownPath)")
        } catch {
            say(
                "ptk-send: first contact with \(peerText) (device ID \(id)); cannot remember it in \(knownPath): \(error)"
            )
        }
    }
}
let delivery = Delivery(
    files: files, options: settings.options, parallel: settings.parallel, connect: connector,
    waiting: settings.waitPolicy
) { report.handle($0) }
let result = delivery.run()
report.finish(unsent: result.unsent, leftOut: collection.leftOut)
let (status, message) = result.exitStatus(peer: peerText)
// Every session's thread and hashing thread has said it is done, but a thread that used OpenSSL
// runs OpenSSL's clean-up of the thread as it ends, and OpenSSL's exit handler would free what
// that uses (a SIGSEGV in libcrypto's thread stop, seen once in bench/run): so no exit handlers.
if let message { say("ptk-send: \(message)") }
exitProcessNow(status.rawValue)

/// Finds the addresses of `<peer>`: an address or host:port directly; otherwise first a
/// `_ptk._tcp` instance of that name (case-insensitive), with the device ID its TXT record
/// gives, then a host name on the default port.
func resolvePeer(_ text: String, defaultPort: UInt16) -> ([SocketAddress], DeviceID?) {
    let direct = parsePeer(text, defaultPort: defaultPort)
    if let (host, port) = direct {
        let isNumeric = SocketAddress(numericHost: host, port: port) != nil
        if isNumeric || port != defaultPort || text.contains(":") {
            do { return (try SocketAddress.resolve(host, port: port), nil) } catch { die("\(error)", .unreachable) }
        }
    }
    var found: [DiscoveredService] = []
    var browseProblem: String? = nil
    do {
        found = try Browser.browse(timeout: .seconds(2)) { $0.name.lowercased() == text.lowercased() }
    } catch {
        browseProblem = error.description
    }
    if let match = found.first(where: { $0.name.lowercased() == text.lowercased() }) {
        let addresses = match.addresses.compactMap { SocketAddress(numericHost: $0, port: match.port) }
        if !addresses.isEmpty { return (addresses, match.txt["id"].flatMap { DeviceID(parsing: $0) }) }
    }
    // Not a host name either: the message below says what was tried.
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
    die(message, .unreachable)
}

/// `--list`: the receivers found over mDNS, one per line or as JSON.
func listReceivers(json: Bool) -> Never {
    let services: [DiscoveredService]
    do {
        services = try Browser.browse(timeout: .seconds(2)).sorted { $0.name.lowercased() < $1.name.lowercased() }
    } catch {
        die(error.description, .unreachable)
    }
    let known = loadKnown()
    let receivers = services.map {
        ReceiverListing(
            name: $0.name, host: $0.hostName, addresses: $0.addresses, port: Int($0.port), txt: $0.txt, known: known)
    }
    if json {
        print(ReceiverListing.json(receivers))
    } else if receivers.isEmpty {
        say("No ptk receivers found over mDNS.")
    } else {
        print(ReceiverListing.text(receivers))
    }
    exitProcess(0)
}
