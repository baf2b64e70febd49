import PTKCLI

import PTKProtocol
import PTKSystem
import PTKVocabulary

/// One of ptkd's settings, declared once: its flag and configuration-file key, value parser,
/// default (read from `DaemonConfiguration()`, so help cannot drift from the code) and help.
public struct DaemonOption: Sendable {
    /// The long flag name, which is also the configuration-file key.
    public let name: String
    /// The value's name in help ("N"), or nil for a flag without value.
    public let valueName: String?
    /// What it sets, without the default.
    public let help: String
    /// Where it can be given.
    public let onCommandLine: Bool
    public let inConfigFile: Bool
    /// The default as help shows it, from a default configuration.
    public let defaultText: @Sendable (DaemonConfiguration) -> String
    /// True when `defaultText` is a value the setting accepts (not a description such as "the host name").
    public let defaultIsValue: Bool
    /// Parses `value` ("" for a flag) into the configuration.
    let set: @Sendable (inout DaemonConfiguration, String) throws(UsageError) -> Void
    /// The value is words (a command line), so the file's quotes are the words' own, not the value's.
    let words: Bool

    init(_ name: String, value: String?, help: String, commandLine: Bool = true, configFile: Bool = true,
         defaultIsValue: Bool = true, words: Bool = false, default defaultText: @escaping @Sendable (DaemonConfiguration) -> String,
         set: @escaping @Sendable (inout DaemonConfiguration, String) throws(UsageError) -> Void) {
        self.words = words
        self.name = name
        self.valueName = value
        self.help = help
        self.onCommandLine = commandLine
        self.inConfigFile = configFile
        self.defaultIsValue = defaultIsValue
        self.defaultText = defaultText
        self.set = set
    }

    /// What completes its value: the words of "on|off"-style values, a directory for a PATH, a
    /// file for a FILE.
    public var completion: Completion {
        guard let valueName else { return .text }
        if valueName == "PATH" { return .directory }
        if valueName == "FILE" { return .file(extensions: []) }
        let words = valueName.split(separator: "|").map(String.init)
        return words.count > 1 ? .values(words) : .text
    }
}

private func invalid(_ value: String, _ key: String, _ what: String) -> UsageError {
    UsageError("invalid value '\(value)' for \(key): \(what)")
}

/// An on|off setting's value (yes/true and no/false too, any case).
private func onOff(_ value: String, _ key: String) throws(UsageError) -> Bool {
    switch value.lowercased() {
    case "on", "yes", "true": return true
    case "off", "no", "false": return false
    default: throw invalid(value, key, "expected on or off")
    }
}

/// "512M" for 512 MiB: the largest K/M/G/T unit that divides the size.
func sizeText(_ n: Int64) -> String {
    for (shift, unit) in [(40, "T"), (30, "G"), (20, "M"), (10, "K")] where n > 0 && n % (Int64(1) << shift) == 0 {
        return "\(n >> shift)\(unit)"
    }
    return "\(n)"
}

/// Splits a command line into words as a shell does, without expanding anything: words are
/// separated by spaces and tabs; '...' keeps everything inside as it is; "..." too, except
/// that \" and \\ stand for " and \; outside quotes, \ keeps the next character as it is.
public func splitWords(_ text: String) throws(UsageError) -> [String] {
    var words: [String] = []
    var word = ""
    var inWord = false
    var chars = text.unicodeScalars.makeIterator()
    while let c = chars.next() {
        switch c {
        case " ", "\t":
            if inWord { words.append(word); word = ""; inWord = false }
        case "'":
            inWord = true
            while true {
                guard let d = chars.next() else { throw UsageError("a ' without its closing '") }
                if d == "'" { break }
                word.unicodeScalars.append(d)
            }
        case "\"":
            inWord = true
            while true {
                guard let d = chars.next() else { throw UsageError("a \" without its closing \"") }
                if d == "\"" { break }
                if d == "\\" {
                    guard let e = chars.next() else { throw UsageError("a \" without its closing \"") }
                    if e != "\"" && e != "\\" { word.unicodeScalars.append(d) }
                    word.unicodeScalars.append(e)
                } else {
                    word.unicodeScalars.append(d)
                }
            }
        case "\\":
            inWord = true
            guard let d = chars.next() else { throw UsageError("a \\ at the end") }
            word.unicodeScalars.append(d)
        default:
            inWord = true
            word.unicodeScalars.append(c)
        }
    }
    if inWord { words.append(word) }
    return words
}

/// What ptkd's command line can name besides the settings.
public enum DaemonFlag: Hashable, Sendable {
    /// A setting of `DaemonOptions.settings`, by its name.
    case setting(String)
    /// `--config FILE`.
    case config
}

/// ptkd's exit statuses.
public enum DaemonExitStatus: Int32, ExitStatusCode {
    case stopped = 0
    case usage = 64
    case acceptFailed = 70
    case cannotStart = 71
    case directoryUnusable = 73
    case identityDamaged = 78

    public var meaning: String {
        switch self {
        case .stopped: return "stopped cleanly (SIGINT or SIGTERM)"
        case .usage: return "usage or configuration error"
        case .acceptFailed: return "the accept loop failed (systemd's `Restart=on-failure` restarts it)"
        case .cannotStart: return "cannot listen or start a thread"
        case .directoryUnusable: return "received-photos or state directory not usable"
        case .identityDamaged: return "the device identity's key (or the LocalSend certificate) is damaged or unreadable; the message names the file and the fix"
        }
    }
}

/// ptkd's command line and configuration file.
public enum DaemonOptions {
    /// Every setting, in help order.
    public static let settings: [DaemonOption] = [
        DaemonOption("dir", value: "PATH", help: "received-photos directory", defaultIsValue: false,
                     default: { _ in "received in the state directory" }) { c, v throws(UsageError) in
            guard !v.isEmpty else { throw invalid(v, "dir", "expected a directory path") }
            c.directory = v
        },
        DaemonOption("state-dir", value: "PATH", help: "state directory: device identity, trust list, pending senders", defaultIsValue: false,
                     default: { _ in "$STATE_DIRECTORY under systemd, /var/lib/ptk as root, else ~/.local/share/ptk" }) { c, v throws(UsageError) in
            guard !v.isEmpty else { throw invalid(v, "state-dir", "expected a directory path") }
            c.stateDirectory = v
        },
        DaemonOption("plaintext", value: "refuse|allow", help: "serve senders without TLS, or answer them ERROR tls-required",
                     default: { $0.plaintext.rawValue }) { c, v throws(UsageError) in
            guard let p = DaemonConfiguration.PlaintextPolicy(rawValue: v.lowercased()) else { throw invalid(v, "plaintext", "expected refuse or allow") }
            c.plaintext = p
        },
        DaemonOption("senders", value: "anyone|trusted", help: "who may send: any device, or those on the trust list (`ptk trust`)",
                     default: { $0.senders.rawValue }) { c, v throws(UsageError) in
            guard let p = DaemonConfiguration.SenderPolicy(rawValue: v.lowercased()) else { throw invalid(v, "senders", "expected anyone or trusted") }
            c.senders = p
        },
        DaemonOption("library", value: "on|off", help: "index saved photos and make their thumbnails in .ptk/ of the directory (`ptk list`)",
                     default: { $0.library ? "on" : "off" }) { c, v throws(UsageError) in
            c.library = try onOff(v, "library")
        },
        DaemonOption("thumbnail-max-megapixels", value: "N", help: "photos with more pixels are indexed without a thumbnail",
                     default: { "\($0.thumbnailMaxMegapixels)" }) { c, v throws(UsageError) in
            guard let n = parseInteger(v, in: 1...100_000) else { throw invalid(v, "thumbnail-max-megapixels", "expected 1 to 100000") }
            c.thumbnailMaxMegapixels = n
        },
        DaemonOption("localsend", value: "on|off", help: "receive from LocalSend apps (HTTPS, and multicast discovery unless mDNS is off)",
                     default: { $0.localSend ? "on" : "off" }) { c, v throws(UsageError) in
            c.localSend = try onOff(v, "localsend")
        },
        DaemonOption("localsend-port", value: "N", help: "TCP port of the LocalSend endpoint; 0 picks a free port and logs it",
                     default: { "\($0.localSendPort)" }) { c, v throws(UsageError) in
            guard let n = parseInteger(v, in: 0...65535) else { throw invalid(v, "localsend-port", "expected 0 to 65535") }
            c.localSendPort = UInt16(n)
        },
        DaemonOption("localsend-pin", value: "PIN", help: "a PIN LocalSend apps must give (3 wrong tries lock an address out for 5 minutes); "
                        + "as a flag it is visible to local users (ps): ptkd warns, use this key or localsend-pin-file",
                     defaultIsValue: false, default: { $0.localSendPIN == nil ? "none" : "set" }) { c, v throws(UsageError) in
            c.localSendPIN = try checkedPIN(v, "localsend-pin")
        },
        DaemonOption("localsend-pin-file", value: "FILE", help: "read the LocalSend PIN from FILE's first line at start (a regular file, not a symlink, "
                        + "owned by root or ptkd's user and writable by its owner only; e.g. root:ptk mode 0640)",
                     defaultIsValue: false, default: { $0.localSendPINFile ?? "none" }) { c, v throws(UsageError) in
            guard !v.isEmpty else { throw invalid(v, "localsend-pin-file", "expected a file name") }
            c.localSendPINFile = v
        },
        DaemonOption("web", value: "on|off", help: "serve the gallery and upload pages to browsers, and WebDAV at /dav/ (HTTPS; log in with `ptk web-link` or `ptk web-password`; WebDAV with `ptk app-password`)",
                     default: { $0.web ? "on" : "off" }) { c, v throws(UsageError) in
            c.web = try onOff(v, "web")
        },
        DaemonOption("web-port", value: "N", help: "TCP port of the web pages; 0 picks a free port and logs it",
                     default: { "\($0.webPort)" }) { c, v throws(UsageError) in
            guard let n = parseInteger(v, in: 0...65535) else { throw invalid(v, "web-port", "expected 0 to 65535") }
            c.webPort = UInt16(n)
        },
        DaemonOption("types", value: "TYPES",
                     help: "media types kept, from ptk-send and LocalSend apps alike, comma-separated: image/png, image/jpeg, image/heic, image/heif",
                     default: { $0.types.joined(separator: ",") }) { c, v throws(UsageError) in
            c.types = try parseTypes(v, key: "types")
        },
        DaemonOption("localsend-types", value: "TYPES", help: "the old name of --types, still read",
                     default: { $0.types.joined(separator: ",") }) { c, v throws(UsageError) in
            c.types = try parseTypes(v, key: "localsend-types")
        },
        DaemonOption("layout", value: "LAYOUT",
                     help: "where photos are filed: flat, sender, date, sender/date, or a pattern such as {sender}/{year}-{month}",
                     default: { $0.layout.description }) { c, v throws(UsageError) in
            do throws(LayoutError) { c.layout = try FolderLayout(parsing: v) } catch { throw invalid(v, "layout", error.description) }
        },
        DaemonOption("duplicates", value: "skip|keep", help: "a photo whose bytes the library already keeps: store nothing new (skip), or store it again",
                     default: { $0.duplicates.rawValue }) { c, v throws(UsageError) in
            guard let p = DaemonConfiguration.DuplicatePolicy(rawValue: v.lowercased()) else { throw invalid(v, "duplicates", "expected skip or keep") }
            c.duplicates = p
        },
        DaemonOption("on-saved", value: "PROGRAM [ARG...]",
                     help: "run PROGRAM for each photo saved, with the photo's path as its last argument and PTK_* variables (words split as a shell would, without expanding anything)",
                     commandLine: false, defaultIsValue: false, words: true, default: { $0.onSaved == nil ? "none" : "set" }) { c, v throws(UsageError) in
            let words: [String]
            do throws(UsageError) { words = try splitWords(v) } catch { throw invalid(v, "on-saved", error.message) }
            guard let program = words.first else { c.onSaved = nil; return }
            guard program.hasPrefix("/") else { throw invalid(v, "on-saved", "the program must be an absolute path") }
            c.onSaved = words
        },
        DaemonOption("on-saved-timeout", value: "DURATION", help: "stop a hook running this long (SIGTERM, then SIGKILL 5 s later); s, m, h suffixes",
                     commandLine: false, default: { durationText($0.onSavedTimeout) }) { c, v throws(UsageError) in
            guard let d = parseDuration(v), d > .zero else { throw invalid(v, "on-saved-timeout", "expected a duration, such as 60s") }
            c.onSavedTimeout = d
        },
        DaemonOption("port", value: "N", help: "TCP port; 0 picks a free port and logs it", default: { "\($0.port)" }) { c, v throws(UsageError) in
            guard let p = parseInteger(v, in: 0...65535) else { throw invalid(v, "port", "expected a port number 0-65535") }
            c.port = UInt16(p)
        },
        DaemonOption("listen", value: "ADDR", help: "address to listen on; repeatable", defaultIsValue: false,
                     default: { _ in "every IPv6 and IPv4 address" }) { c, v throws(UsageError) in
            guard !v.isEmpty else { throw invalid(v, "listen", "expected an IP address") }
            c.listen.append(v)
        },
        DaemonOption("name", value: "NAME", help: "display name sent to senders and advertised over mDNS", defaultIsValue: false,
                     default: { _ in "the host name" }) { c, v throws(UsageError) in
            guard !v.isEmpty, v.utf8.count <= 63 else { throw invalid(v, "name", "expected 1 to 63 bytes") }
            c.name = v
        },
        DaemonOption("window", value: "N", help: "chunks a sender may have unacknowledged, 1-\(ProtocolLimits.maxWindow)",
                     default: { "\($0.window)" }) { c, v throws(UsageError) in
            guard let w = parseInteger(v, in: 1...ProtocolLimits.maxWindow) else { throw invalid(v, "window", "expected 1 to \(ProtocolLimits.maxWindow)") }
            c.window = w
        },
        DaemonOption("max-file-size", value: "SIZE", help: "largest photo accepted; K, M, G suffixes",
                     default: { sizeText($0.maxFileSize) }) { c, v throws(UsageError) in
            guard let s = parseSize(v), s >= 8 else { throw invalid(v, "max-file-size", "expected a size such as 512M") }
            c.maxFileSize = s
        },
        DaemonOption("max-sessions", value: "N", help: "sessions served at once; beyond it ERROR busy",
                     default: { "\($0.maxSessions)" }) { c, v throws(UsageError) in
            guard let n = parseInteger(v, in: 1...10_000) else { throw invalid(v, "max-sessions", "expected 1 to 10000") }
            c.maxSessions = n
        },
        DaemonOption("max-sessions-per-address", value: "N", help: "sessions one IP address may hold; beyond it ERROR busy",
                     default: { "\($0.maxSessionsPerAddress)" }) { c, v throws(UsageError) in
            guard let n = parseInteger(v, in: 1...10_000) else { throw invalid(v, "max-sessions-per-address", "expected 1 to 10000") }
            c.maxSessionsPerAddress = n
        },
        DaemonOption("file-mode", value: "MODE", help: "permission bits of saved photos, octal",
                     default: { "0" + String($0.fileMode, radix: 8) }) { c, v throws(UsageError) in
            guard let m = UInt32(v, radix: 8), m <= 0o777, m & 0o600 == 0o600 else {
                throw invalid(v, "file-mode", "expected octal permission bits that let the owner read and write, such as 0644")
            }
            c.fileMode = m
        },
        DaemonOption("min-free", value: "SIZE", help: "free space to keep on the file system; offers that would eat into it are refused",
                     default: { sizeText($0.minFree) }) { c, v throws(UsageError) in
            guard let s = parseSize(v) else { throw invalid(v, "min-free", "expected a size such as 100M") }
            c.minFree = s
        },
        DaemonOption("idle-timeout", value: "SECONDS", help: "close a session silent this long",
                     default: { durationText($0.idleTimeout, plainSeconds: true) }) { c, v throws(UsageError) in
            guard let d = parseDuration(v), d > .zero else { throw invalid(v, "idle-timeout", "expected seconds, such as 30") }
            c.idleTimeout = d
        },
        DaemonOption("handshake-timeout", value: "SECONDS", help: "time a new connection has to finish the TLS handshake and send HELLO",
                     default: { durationText($0.handshakeTimeout, plainSeconds: true) }) { c, v throws(UsageError) in
            guard let d = parseDuration(v), d > .zero else { throw invalid(v, "handshake-timeout", "expected seconds, such as 10") }
            c.handshakeTimeout = d
        },
        DaemonOption("partial-max-age", value: "DURATION", help: "delete unfinished uploads older than this; s, m, h, d suffixes",
                     default: { durationText($0.partialMaxAge) }) { c, v throws(UsageError) in
            guard let d = parseDuration(v), d > .zero else { throw invalid(v, "partial-max-age", "expected a duration, such as 24h") }
            c.partialMaxAge = d
        },
        DaemonOption("mdns", value: "yes|no", help: "advertise over mDNS (_ptk._tcp) through avahi-daemon", commandLine: false,
                     default: { $0.mdns ? "yes" : "no" }) { c, v throws(UsageError) in
            switch v.lowercased() {
            case "yes", "true", "on", "1": c.mdns = true
            case "no", "false", "off", "0": c.mdns = false
            default: throw invalid(v, "mdns", "expected yes or no")
            }
        },
        DaemonOption("no-mdns", value: nil, help: "do not advertise over mDNS; in the file: mdns = no", configFile: false,
                     defaultIsValue: false, default: { $0.mdns ? "advertise through avahi-daemon" : "do not advertise" }) { c, _ throws(UsageError) in
            c.mdns = false
        },
    ]

    /// The default configuration file, read when it exists and `--config` is not given.
    public static let defaultConfigFile = "/etc/ptk/ptkd.conf"

    /// ptkd's command line: the settings that are flags, then --config.
    public static let table = CommandTable<DaemonFlag>(
        program: "ptkd",
        summary: "receive photos over the LAN from ptk-send and LocalSend apps",
        description: """
            Receives PNG photos from ptk-send over protocol v1 (TLS 1.3 by default) and from
            LocalSend apps (HTTPS, port 53317), and saves them in the received-photos directory.
            `ptk id` shows its device ID, `ptk trust` manages who may send.
            """,
        options: settings.filter(\.onCommandLine).map {
            Option(.setting($0.name), $0.name, value: $0.valueName, help: $0.help,
                   default: $0.defaultText(DaemonConfiguration()), defaultIsValue: $0.defaultIsValue, completion: $0.completion)
        } + [
            Option(.config, "config", value: "FILE", help: "read settings from FILE ('key = value' lines; flags override it)",
                   default: "\(defaultConfigFile) if it exists", defaultIsValue: false, completion: .file(extensions: ["conf"])),
        ],
        exitStatuses: ExitStatus.all(DaemonExitStatus.self),
        examples: [
            Example("ptkd --dir ~/Pictures/received --no-mdns", "receive into a directory of your own, without advertising"),
            Example("sudo systemctl enable --now ptkd", "run it as the installed service"),
        ])

    /// ptkd.conf(5) in mdoc, from `template` (see PTKCLI's `Mdoc`; `@KEYS@` is replaced by
    /// every setting the file takes, with its value, help and default).
    public static func configurationManPage(date: String, template: String) -> String {
        let defaults = DaemonConfiguration()
        let keys = settings.filter(\.inConfigFile).map { setting -> (String, String) in
            let head = "Cm \(setting.name) No = " + (setting.valueName.map { "Ar \(Mdoc.argument($0))" } ?? "")
            let text = setting.help.prefix(1).uppercased() + setting.help.dropFirst() + "."
            return (head, Mdoc.text(text) + "\n" + Mdoc.text("Default: \(setting.defaultText(defaults))."))
        }
        return template.split(separator: "\n", omittingEmptySubsequences: false).map { line -> String in
            switch line {
            case "@HEADER@": return ".Dd \(date)\n.Dt PTKD.CONF 5\n.Os"
            case "@KEYS@": return Mdoc.tagList(keys)
            default: return String(line)
            }
        }.joined(separator: "\n")
    }

    /// Sets one setting from its name and text value ("" or nil for a flag without value).
    public static func apply(_ name: String, _ value: String?, to configuration: inout DaemonConfiguration) throws(UsageError) {
        guard let option = settings.first(where: { $0.name == name }) else { throw UsageError("unknown setting '\(name)'") }
        try option.set(&configuration, value ?? "")
    }

    /// Applies the `key = value` lines of a configuration file. Blank lines and lines starting
    /// with `#` are skipped. A bad line is an error naming the file and the line.
    public static func apply(configFile text: String, path: String, to configuration: inout DaemonConfiguration) throws(UsageError) {
        var lineNumber = 0
        // "\r\n" is one Character in Swift: a file with CRLF line ends splits on it too.
        for raw in text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" }) {
            lineNumber += 1
            let line = String(raw).trimmingSpaces
            if line.isEmpty || line.hasPrefix("#") { continue }
            guard let eq = line.firstIndex(of: "=") else {
                throw UsageError("\(path):\(lineNumber): expected 'key = value', got '\(line)'")
            }
            let key = String(line[..<eq]).trimmingSpaces
            var value = String(line[line.index(after: eq)...]).trimmingSpaces
            guard let option = settings.first(where: { $0.name == key && $0.inConfigFile }) else {
                throw UsageError("\(path):\(lineNumber): unknown key '\(key)'")
            }
            if !option.words, value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") { value = String(value.dropFirst().dropLast()) }
            do { try option.set(&configuration, value) } catch {
                throw UsageError("\(path):\(lineNumber): \(error.message)")
            }
        }
    }

    /// The configuration a command line asks for: the configuration file (`--config`, else
    /// the default one if it exists), then the flags in order.
    public static func configuration(from invocation: Invocation<DaemonFlag>,
                                     readFile: (String) throws(SystemError) -> String = readConfigurationFile) throws(UsageError) -> DaemonConfiguration {
        let settings = invocation.options.compactMap { given -> (String, String?)? in
            guard case .setting(let name) = given.key else { return nil }
            return (name, given.value)
        }
        return try configuration(configFile: invocation.value(.config), settings: settings, readFile: readFile)
    }

    /// The configuration file `configFile` (else the default one, if it exists) with `settings`
    /// applied over it in order. `readFile` reads the file.
    public static func configuration(configFile: String?, settings: [(name: String, value: String?)],
                                     readFile: (String) throws(SystemError) -> String = readConfigurationFile) throws(UsageError) -> DaemonConfiguration {
        var configuration = DaemonConfiguration()
        var path = configFile
        if path == nil && fileExists(defaultConfigFile) { path = defaultConfigFile }
        if let path {
            let text: String
            do { text = try readFile(path) } catch {
                throw UsageError(error.code == .tooManySymlinks
                                 ? "cannot read configuration file \(path): it is a symbolic link, which is not followed (name the file itself)"
                                 : error.code == .noSuchDeviceOrAddress ? "cannot read configuration file \(path): not a regular file"
                                 : "cannot read configuration file: \(error)")
            }
            try apply(configFile: text, path: path, to: &configuration)
        }
        for (name, value) in settings { try apply(name, value, to: &configuration) }
        return configuration
    }
}

/// The configuration file's text: opened without following a symbolic link or waiting on a
/// FIFO, only a regular file, at most 1 MiB (root's ptk reads it before it takes on the
/// service user). `/dev/null` reads as empty: no settings.
public func readConfigurationFile(_ path: String) throws(SystemError) -> String {
    if path == "/dev/null" { return "" }
    let (fd, _) = try FileDescriptor.openRegularFile(path)
    defer { fd.close() }
    return String(decoding: try fd.readAll(limit: 1 << 20, name: path), as: UTF8.self)
}

/// A LocalSend PIN as `key` gives it: 1 to 64 characters without spaces or controls.
func checkedPIN(_ v: String, _ key: String) throws(UsageError) -> String {
    guard !v.isEmpty, v.utf8.count <= 64, v.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value != 0x7F }) else {
        // The value is a secret: never echoed (errors reach the journal).
        throw UsageError(key == "localsend-pin" ? "invalid value for localsend-pin: expected 1 to 64 characters without spaces"
                                                : "\(key): the PIN in it is not 1 to 64 characters without spaces")
    }
    return v
}

extension DaemonConfiguration {
    /// This configuration with the PIN of `localsend-pin-file` read (it overrides `localsend-pin`).
    /// The file must be a regular file, not a symlink (opened without following one, nor
    /// waiting on a FIFO), owned by root or by ptkd's own user, that neither group nor others may
    /// write: a PIN someone else could change is refused. It is read through the descriptor
    /// that was checked, never opened by name again.
    public func readingPINFile() throws(UsageError) -> DaemonConfiguration {
        guard let path = localSendPINFile else { return self }
        var c = self
        let bytes: [UInt8]
        do {
            let (fd, status) = try FileDescriptor.openRegularFile(path)
            defer { fd.close() }
            guard status.owner == 0 || status.owner == geteuidValue() else {
                throw UsageError("localsend-pin-file \(path) belongs to user \(status.owner), neither root nor ptkd's own: chown it")
            }
            guard status.permissions & 0o022 == 0 else {
                throw UsageError("localsend-pin-file \(path) may be written by group or others (mode \(String(status.permissions, radix: 8))): chmod go-w it")
            }
            bytes = try fd.readAll(limit: 4096, name: path)
        } catch let error as UsageError {
            throw error
        } catch let error as SystemError where error.code == .tooManySymlinks {
            throw UsageError("localsend-pin-file \(path) is a symlink: give the file itself")
        } catch let error as SystemError where error.code == .noSuchDeviceOrAddress {
            throw UsageError("localsend-pin-file \(path) is not a regular file")
        } catch {
            throw UsageError("cannot read localsend-pin-file: \(error)")
        }
        let line = String(decoding: bytes, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).first ?? ""
        c.localSendPIN = try checkedPIN(String(line).trimmingSpaces, "localsend-pin-file \(path)")
        return c
    }
}

/// A comma-separated list of media types the store keeps ("image/png, IMAGE/JPEG"), sorted,
/// each once; a usage error naming `key` for anything else.
func parseTypes(_ v: String, key: String) throws(UsageError) -> [String] {
    let types = v.lowercased().split(separator: ",").map { String($0).trimmingSpaces }.filter { !$0.isEmpty }
    guard !types.isEmpty, types.allSatisfy({ PhotoType(mediaType: $0) != nil }) else {
        throw invalid(v, key, "expected some of image/png, image/jpeg, image/heic, image/heif, comma-separated")
    }
    return Array(Set(types)).sorted()
}
