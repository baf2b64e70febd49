import PTKCLI
import PTKProtocol
import PTKSystem
import PTKVocabulary

/// One of ptkd's settings, declared once: its flag and configuration-file key, value parser,
/// default (read from `DaemonConfiguration()`, so help cannot drift from the code) and help.
public struct DaemonOption: Sendable {
    /// Which setting it is.
    public let key: DaemonSetting
    /// The long flag name, which is also the configuration-file key.
    public var name: String { key.rawValue }
    /// The value's name in help ("N"), or nil for a flag without value.
    public let valueName: String?
    /// What it sets, without the default.
    public let help: String
    /// Where it can be given.
    public let onCommandLine: Bool
    /// False for a flag the file does not take (`no-mdns`, say).
    public let inConfigFile: Bool
    /// The default as help shows it, from a default configuration.
    public let defaultText: @Sendable (DaemonConfiguration) -> String
    /// True when `defaultText` is a value the setting accepts (not a description such as "the host name").
    public let defaultIsValue: Bool
    /// Parses `value` ("" for a flag) into the configuration.
    let set: @Sendable (inout DaemonConfiguration, String) throws(UsageError) -> Void
    /// The value is words (a command line), so the file's quotes are the words' own, not the value's.
    let words: Bool

    init(
        _ key: DaemonSetting, value: String?, help: String, commandLine: Bool = true, configFile: Bool = true,
        defaultIsValue: Bool = true, words: Bool = false,
        default defaultText: @escaping @Sendable (DaemonConfiguration) -> String,
        set: @escaping @Sendable (inout DaemonConfiguration, String) throws(UsageError) -> Void
    ) {
        self.words = words
        self.key = key
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

/// What ptkd's command line can name besides the settings.
public enum DaemonFlag: Hashable, Sendable {
    /// A setting of `DaemonOptions.settings`.
    case setting(DaemonSetting)
    /// `--config FILE`.
    case config
    /// `--unit-paths`: print the systemd drop-in for the configured folders (`ServiceFolders`).
    case unitPaths
}

/// ptkd's exit statuses.
public enum DaemonExitStatus: Int32, ExitStatusCode {
    case stopped = 0
    case usage = 64
    case acceptFailed = 70
    case cannotStart = 71
    case directoryUnusable = 73
    case identityDamaged = 78

    /// What the status means, as help's "Exit status:" list says it.
    public var meaning: String {
        switch self {
        case .stopped: return "stopped cleanly (SIGINT or SIGTERM)"
        case .usage: return "usage or configuration error"
        case .acceptFailed: return "the accept loop failed (systemd's `Restart=on-failure` restarts it)"
        case .cannotStart: return "cannot listen or start a thread"
        case .directoryUnusable: return "received-photos or state directory not usable"
        case .identityDamaged:
            return
                "the device identity's key (or the LocalSend certificate) is damaged or unreadable; the message names the file and the fix"
        }
    }
}

/// ptkd's command line and configuration file.
public enum DaemonOptions {
    /// Every setting, in help order.
    public static let settings: [DaemonOption] =
        [
            DaemonOption(
                .directory, value: "PATH", help: "received-photos directory", defaultIsValue: false,
                default: { _ in "received in the state directory" }
            ) { c, v throws(UsageError) in
                guard !v.isEmpty else { throw invalid(v, .directory, "expected a directory path") }
                c.directory = v
            },
            DaemonOption(
                .stateDirectory, value: "PATH", help: "state directory: device identity, trust list, pending senders",
                defaultIsValue: false,
                default: { _ in "$STATE_DIRECTORY under systemd, /var/lib/ptk as root, else ~/.local/share/ptk" }
            ) { c, v throws(UsageError) in
                guard !v.isEmpty else { throw invalid(v, .stateDirectory, "expected a directory path") }
                c.stateDirectory = v
            },
            DaemonOption(
                .plaintext, value: "refuse|allow", help: "serve senders without TLS, or answer them ERROR tls-required",
                default: { $0.plaintext.rawValue }
            ) { c, v throws(UsageError) in
                guard let p = DaemonConfiguration.PlaintextPolicy(rawValue: v.lowercased()) else {
                    throw invalid(v, .plaintext, "expected refuse or allow")
                }
                c.plaintext = p
            },
            DaemonOption(
                .senders, value: "anyone|trusted",
                help: "who may send: any device, or those on the trust list (`ptk trust`)",
                default: { $0.senders.rawValue }
            ) { c, v throws(UsageError) in
                guard let p = DaemonConfiguration.SenderPolicy(rawValue: v.lowercased()) else {
                    throw invalid(v, .senders, "expected anyone or trusted")
                }
                c.senders = p
            },
            DaemonOption(
                .library, value: "on|off",
                help: "index saved photos and make their thumbnails in .ptk/ of the directory (`ptk list`)",
                default: { $0.library ? "on" : "off" }
            ) { c, v throws(UsageError) in
                c.library = try Parse.onOff(v, .library)
            },
            DaemonOption(
                .thumbnailMaxMegapixels, value: "N", help: "photos with more pixels are indexed without a thumbnail",
                default: { "\($0.thumbnailMaxMegapixels)" }
            ) { c, v throws(UsageError) in
                guard let n = parseInteger(v, in: 1...100_000) else {
                    throw invalid(v, .thumbnailMaxMegapixels, "expected 1 to 100000")
                }
                c.thumbnailMaxMegapixels = n
            },
            DaemonOption(
                .localSend, value: "on|off",
                help: "receive from LocalSend apps (HTTPS, and multicast discovery unless mDNS is off)",
                default: { $0.localSend ? "on" : "off" }
            ) { c, v throws(UsageError) in
                c.localSend = try Parse.onOff(v, .localSend)
            },
            DaemonOption(
                .localSendPort, value: "N", help: "TCP port of the LocalSend endpoint; 0 picks a free port and logs it",
                default: { "\($0.localSendPort)" }
            ) { c, v throws(UsageError) in
                c.localSendPort = try Parse.port(v, .localSendPort)
            },
            DaemonOption(
                .localSendPIN, value: "PIN",
                help: "a PIN LocalSend apps must give (3 wrong tries lock an address out for 5 minutes); "
                    + "as a flag it is visible to local users (ps): ptkd warns, use this key or localsend-pin-file",
                defaultIsValue: false, default: { $0.localSendPIN == nil ? "none" : "set" }
            ) { c, v throws(UsageError) in
                c.localSendPIN = try checkedPIN(v, "localsend-pin")
            },
            DaemonOption(
                .localSendPINFile, value: "FILE",
                help: "read the LocalSend PIN from FILE's first line at start (a regular file, not a symlink, "
                    + "owned by root or ptkd's user and writable by its owner only; e.g. root:ptk mode 0640)",
                defaultIsValue: false, default: { $0.localSendPINFile ?? "none" }
            ) { c, v throws(UsageError) in
                guard !v.isEmpty else { throw invalid(v, .localSendPINFile, "expected a file name") }
                c.localSendPINFile = v
            },
            DaemonOption(
                .web, value: "on|off",
                help:
                    "serve the gallery and upload pages to browsers, and WebDAV at /dav/ (HTTPS; log in with `ptk web-link` or `ptk web-password`; WebDAV with `ptk app-password`)",
                default: { $0.web ? "on" : "off" }
            ) { c, v throws(UsageError) in
                c.web = try Parse.onOff(v, .web)
            },
            DaemonOption(
                .webPort, value: "N", help: "TCP port of the web pages; 0 picks a free port and logs it",
                default: { "\($0.webPort)" }
            ) { c, v throws(UsageError) in
                c.webPort = try Parse.port(v, .webPort)
            },
            DaemonOption(
                .types, value: "TYPES",
                help:
                    "media types kept, from every door alike, comma-separated: image/png, image/jpeg, image/heic, image/heif, video/mp4, video/quicktime",
                default: { $0.mediaTypes.joined(separator: ",") }
            ) { c, v throws(UsageError) in
                c.types = try parseTypes(v, key: .types)
            },
            DaemonOption(
                .localSendTypes, value: "TYPES", help: "the old name of --types, still read",
                default: { $0.mediaTypes.joined(separator: ",") }
            ) { c, v throws(UsageError) in
                c.types = try parseTypes(v, key: .localSendTypes)
            },
            DaemonOption(
                .layout, value: "LAYOUT",
                help:
                    "where photos are filed: flat, sender, date, sender/date, or a pattern such as {sender}/{year}-{month}",
                default: { $0.layout.description }
            ) { c, v throws(UsageError) in
                do throws(LayoutError) { c.layout = try FolderLayout(parsing: v) } catch {
                    throw invalid(v, .layout, error.description)
                }
            },
            DaemonOption(
                .duplicates, value: "skip|keep",
                help: "a photo whose bytes the library already keeps: store nothing new (skip), or store it again",
                default: { $0.duplicates.rawValue }
            ) { c, v throws(UsageError) in
                guard let p = DaemonConfiguration.DuplicatePolicy(rawValue: v.lowercased()) else {
                    throw invalid(v, .duplicates, "expected skip or keep")
                }
                c.duplicates = p
            },
            DaemonOption(
                .onSaved, value: "PROGRAM [ARG...]",
                help:
                    "run PROGRAM for each photo saved, with the photo's path as its last argument and PTK_* variables (words split as a shell would, without expanding anything)",
                commandLine: false, defaultIsValue: false, words: true, default: { $0.onSaved == nil ? "none" : "set" }
            ) { c, v throws(UsageError) in
                let words: [String]
                do throws(UsageError) { words = try splitWords(v) } catch { throw invalid(v, .onSaved, error.message) }
                guard let program = words.first else {
                    c.onSaved = nil
                    return
                }
                guard program.hasPrefix("/") else { throw invalid(v, .onSaved, "the program must be an absolute path") }
                c.onSaved = words
            },
            DaemonOption(
                .onSavedTimeout, value: "DURATION",
                help: "stop a hook running this long (SIGTERM, then SIGKILL 5 s later); s, m, h suffixes",
                commandLine: false, default: { durationText($0.onSavedTimeout) }
            ) { c, v throws(UsageError) in
                c.onSavedTimeout = try Parse.duration(v, .onSavedTimeout, expected: "expected a duration, such as 60s")
            },
            DaemonOption(
                .port, value: "N", help: "TCP port; 0 picks a free port and logs it", default: { "\($0.port)" }
            ) {
                c, v throws(UsageError) in
                c.port = try Parse.port(v, .port, expected: "expected a port number 0-65535")
            },
            DaemonOption(
                .listen, value: "ADDR", help: "address to listen on; repeatable", defaultIsValue: false,
                default: { _ in "every IPv6 and IPv4 address" }
            ) { c, v throws(UsageError) in
                guard !v.isEmpty else { throw invalid(v, .listen, "expected an IP address") }
                c.listen.append(v)
            },
            DaemonOption(
                .name, value: "NAME", help: "display name sent to senders and advertised over mDNS",
                defaultIsValue: false,
                default: { _ in "the host name" }
            ) { c, v throws(UsageError) in
                guard !v.isEmpty, v.utf8.count <= 63 else { throw invalid(v, .name, "expected 1 to 63 bytes") }
                c.name = v
            },
            DaemonOption(
                .window, value: "N", help: "chunks a sender may have unacknowledged, 1-\(ProtocolLimits.maxWindow)",
                default: { "\($0.window)" }
            ) { c, v throws(UsageError) in
                guard let w = parseInteger(v, in: 1...ProtocolLimits.maxWindow) else {
                    throw invalid(v, .window, "expected 1 to \(ProtocolLimits.maxWindow)")
                }
                c.window = w
            },
            DaemonOption(
                .maxFileSize, value: "SIZE", help: "largest file accepted; K, M, G suffixes",
                default: { sizeText($0.maxFileSize) }
            ) { c, v throws(UsageError) in
                c.maxFileSize = try Parse.size(v, .maxFileSize, atLeast: 8, expected: "expected a size such as 512M")
            },
            DaemonOption(
                .maxSessions, value: "N", help: "sessions served at once; beyond it ERROR busy",
                default: { "\($0.maxSessions)" }
            ) { c, v throws(UsageError) in
                guard let n = parseInteger(v, in: 1...10_000) else {
                    throw invalid(v, .maxSessions, "expected 1 to 10000")
                }
                c.maxSessions = n
            },
            DaemonOption(
                .maxSessionsPerAddress, value: "N", help: "sessions one IP address may hold; beyond it ERROR busy",
                default: { "\($0.maxSessionsPerAddress)" }
            ) { c, v throws(UsageError) in
                guard let n = parseInteger(v, in: 1...10_000) else {
                    throw invalid(v, .maxSessionsPerAddress, "expected 1 to 10000")
                }
                c.maxSessionsPerAddress = n
            },
            DaemonOption(
                .fileMode, value: "MODE", help: "permission bits of saved photos, octal",
                default: { "0" + String($0.fileMode, radix: 8) }
            ) { c, v throws(UsageError) in
                guard let m = UInt32(v, radix: 8), m <= 0o777, m & 0o600 == 0o600 else {
                    throw invalid(
                        v, .fileMode, "expected octal permission bits that let the owner read and write, such as 0644")
                }
                c.fileMode = m
            },
            DaemonOption(
                .minFree, value: "SIZE",
                help: "free space to keep on the file system; offers that would eat into it are refused",
                default: { sizeText($0.minFree) }
            ) { c, v throws(UsageError) in
                c.minFree = try Parse.size(v, .minFree, expected: "expected a size such as 100M")
            },
            DaemonOption(
                .idleTimeout, value: "SECONDS", help: "close a session silent this long",
                default: { durationText($0.idleTimeout, plainSeconds: true) }
            ) { c, v throws(UsageError) in
                c.idleTimeout = try Parse.duration(v, .idleTimeout, expected: "expected seconds, such as 30")
            },
            DaemonOption(
                .handshakeTimeout, value: "SECONDS",
                help: "time a new connection has to finish the TLS handshake and send HELLO",
                default: { durationText($0.handshakeTimeout, plainSeconds: true) }
            ) { c, v throws(UsageError) in
                c.handshakeTimeout = try Parse.duration(v, .handshakeTimeout, expected: "expected seconds, such as 10")
            },
            DaemonOption(
                .partialMaxAge, value: "DURATION",
                help: "delete unfinished uploads older than this; s, m, h, d suffixes",
                default: { durationText($0.partialMaxAge) }
            ) { c, v throws(UsageError) in
                c.partialMaxAge = try Parse.duration(v, .partialMaxAge, expected: "expected a duration, such as 24h")
            },
            DaemonOption(
                .mdns, value: "yes|no", help: "advertise over mDNS (_ptk._tcp) through avahi-daemon",
                commandLine: false,
                default: { $0.mdns ? "yes" : "no" }
            ) { c, v throws(UsageError) in
                c.mdns = try Parse.onOff(v, .mdns, expected: "expected yes or no", digits: true)
            },
            DaemonOption(
                .noMDNS, value: nil, help: "do not advertise over mDNS; in the file: mdns = no", configFile: false,
                defaultIsValue: false, default: { $0.mdns ? "advertise through avahi-daemon" : "do not advertise" }
            ) { c, _ throws(UsageError) in
                c.mdns = false
            },
        ] + inboxSettings

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
            Option(
                .setting($0.key), $0.name, value: $0.valueName, help: $0.help,
                default: $0.defaultText(DaemonConfiguration()), defaultIsValue: $0.defaultIsValue,
                completion: $0.completion)
        } + [
            Option(
                .config, "config", value: "FILE",
                help: "read settings from FILE ('key = value' lines; flags override it)",
                default: "\(defaultConfigFile) if it exists", defaultIsValue: false,
                completion: .file(extensions: ["conf"])),
            ServiceFolders.option,
        ],
        exitStatuses: ExitStatus.all(DaemonExitStatus.self),
        examples: [
            Example(
                "ptkd --dir ~/Pictures/received --no-mdns", "receive into a directory of your own, without advertising"),
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

    /// Sets one setting from its text value ("" or nil for a flag without value).
    public static func apply(_ key: DaemonSetting, _ value: String?, to configuration: inout DaemonConfiguration)
        throws(UsageError)
    {
        try option(key).set(&configuration, value ?? "")
    }

    /// Sets one setting from its name, as a flag or the file spells it, and text value.
    public static func apply(_ name: String, _ value: String?, to configuration: inout DaemonConfiguration)
        throws(UsageError)
    {
        guard let key = DaemonSetting(rawValue: name) else { throw UsageError("unknown setting '\(name)'") }
        try apply(key, value, to: &configuration)
    }

    /// The declaration of `key` (`settings` declares every setting once: DaemonOptionsTests).
    public static func option(_ key: DaemonSetting) -> DaemonOption { byKey[key]! }

    private static let byKey = Dictionary(settings.map { ($0.key, $0) }, uniquingKeysWith: { first, _ in first })

    /// Applies the `key = value` lines of a configuration file. Blank lines and lines starting
    /// with `#` are skipped. A bad line is an error naming the file and the line.
    public static func apply(configFile text: String, path: String, to configuration: inout DaemonConfiguration)
        throws(UsageError)
    {
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
            guard let option = DaemonSetting(rawValue: key).map(Self.option), option.inConfigFile else {
                throw UsageError("\(path):\(lineNumber): unknown key '\(key)'")
            }
            if !option.words, value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") {
                value = String(value.dropFirst().dropLast())
            }
            do { try option.set(&configuration, value) } catch {
                throw UsageError("\(path):\(lineNumber): \(error.message)")
            }
        }
    }

    /// The configuration a command line asks for: the configuration file (`--config`, else
    /// the default one if it exists), then the flags in order.
    public static func configuration(
        from invocation: Invocation<DaemonFlag>,
        readFile: (String) throws(SystemError) -> String = readConfigurationFile
    ) throws(UsageError) -> DaemonConfiguration {
        let settings = invocation.options.compactMap { given -> (DaemonSetting, String?)? in
            guard case .setting(let key) = given.key else { return nil }
            return (key, given.value)
        }
        return try configuration(configFile: invocation.value(.config), settings: settings, readFile: readFile)
    }

    /// The configuration file `configFile` (else the default one, if it exists) with `settings`
    /// applied over it in order. `readFile` reads the file.
    public static func configuration(
        configFile: String?, settings: [(key: DaemonSetting, value: String?)],
        readFile: (String) throws(SystemError) -> String = readConfigurationFile
    ) throws(UsageError) -> DaemonConfiguration {
        var configuration = DaemonConfiguration()
        var path = configFile
        if path == nil && fileExists(defaultConfigFile) { path = defaultConfigFile }
        if let path {
            let text: String
            do { text = try readFile(path) } catch {
                throw UsageError(
                    error.code == .tooManySymlinks
                        ? "cannot read configuration file \(path): it is a symbolic link, which is not followed (name the file itself)"
                        : error.code == .noSuchDeviceOrAddress
                            ? "cannot read configuration file \(path): not a regular file"
                            : "cannot read configuration file: \(error)")
            }
            try apply(configFile: text, path: path, to: &configuration)
        }
        for (key, value) in settings { try apply(key, value, to: &configuration) }
        try configuration.checkInboxes()
        return configuration
    }
}
