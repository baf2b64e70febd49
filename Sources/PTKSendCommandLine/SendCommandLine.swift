import PTKCLI
import PTKClient
import PTKProtocol
import PTKSystem

/// ptk-send's options.
public enum SendOption: Hashable, Sendable {
    case port, window, name, timeout, parallel, wait, quiet, plaintext, expectID, keepFolders, follow, json, id, forget,
        list
}

extension SendExitCode: ExitStatusCode {
    /// One line for `ptk-send --help` and the man page's EXIT STATUS.
    public var meaning: String {
        switch self {
        case .ok:
            return
                "every photo of a type the receiver keeps was saved, or was there already (`--list`: listed, even none)"
        case .notAllSaved:
            return
                "some photo was refused or failed, or a session ended before sending it (each is reported); photos of a type the receiver does not keep, and files in folders that are not photos, are reported but are no failure"
        case .usage: return "usage error"
        case .localFile:
            return
                "a file given is missing, unreadable, not a regular file, or not a photo or video (PNG, JPEG, HEIC, HEIF, MP4 or MOV, by its first bytes), or a `.ptk` package of a newer Version, or was truncated by another program while it was being sent"
        case .unreachable:
            return
                "the receiver is unreachable, stayed busy for the whole `--wait`, is shutting down, or went silent (`--list`: avahi-daemon is not running)"
        case .protocolError:
            return
                "the peer does not speak ptk protocol v1 or TLS, or answered ERROR (`unauthorized`, `tls-required`, ...)"
        case .identityMismatch:
            return
                "the receiver's device ID is not the one expected (`--expect-id`, `known-receivers`, or its mDNS `id=`)"
        }
    }
}

/// `$XDG_CONFIG_HOME/ptk`, else `~/.config/ptk`: the sender's identity and known receivers.
public let senderConfigDirectoryDescription = "$XDG_CONFIG_HOME/ptk (else ~/.config/ptk)"

/// ptk-send's command line, declared once.
public let sendCommandLine = CommandTable<SendOption>(
    program: "ptk-send",
    summary: "send photos to a ptkd receiver on the LAN",
    description: """
        Sends photos to a ptkd receiver, over up to \(defaultParallelSessions) sessions at once
        (--parallel). Files that would get the same name there go in order in one session.
        A receiver that is busy serving others is asked again, with pauses of 0.25 to 5 s,
        until it has a turn for this sender (--wait).

        A photo's type comes from its first bytes, not its name: PNG, JPEG, HEIC, HEIF, MP4 or MOV. Only
        the types the receiver keeps are offered (a receiver that does not say keeps PNG); the
        others are reported as not sent. A folder given as FILE sends the photos under it,
        recursively, in name order; hidden files and folders are skipped, symbolic links too
        unless --follow, and files that are not photos are listed at the end, never sent. With
        --keep-folders the path below that folder travels as the photo's name and the receiver
        files it there. On a terminal a summary ends the run (on standard error; with
        --json, last on standard output, always).

        A file or folder whose name is not valid UTF-8 (bytes of another encoding) is sent all
        the same: the receiver's names are UTF-8, so its name is offered with each such byte
        replaced by U+FFFD, and a line on standard error says so, with the bytes written as
        \\xE9: ptk-send: "caf\\xE9.png" is sent as "caf\u{FFFD}.png" (its name is not UTF-8).
        Messages and --json name the file the same way. What the receiver sends (its name, the
        names it saved, its refusals and errors) and names found in folders are printed with
        control characters, line separators and bidi controls escaped (\\n, \\u{1B}); with
        --json, as JSON escapes.

        Sessions use TLS 1.3. The first contact with a receiver records its device ID in
        \(senderConfigDirectoryDescription)/known-receivers; a later contact that presents another ID
        is stopped before anything is sent. This sender's identity is in \(senderConfigDirectoryDescription)/identity.
        """,
    arguments: [
        Argument(
            "<peer>",
            "a receiver's mDNS name (as --list shows it), a host name, host:port, an IPv4 address, or [IPv6]:port",
            completion: .receiverName),
        // A .ptk package is a folder: completion offers folders anyway, to go into.
        Argument(
            "FILE",
            "a photo (PNG, JPEG, HEIC, HEIF) or video (MP4, MOV), a folder of photos, or a .ptk package (the folder `ptk export` writes)",
            completion: .file(extensions: ["png", "jpg", "jpeg", "heic", "heif", "mp4", "m4v", "mov"]), repeats: true),
    ],
    options: [
        Option(
            .port, "port", value: "N", help: "receiver's port when <peer> names none",
            default: "\(ProtocolLimits.defaultPort)"),
        Option(
            .window, "window", value: "N",
            help: "chunks in flight before waiting for acks, 1-\(ProtocolLimits.maxWindow)",
            default: "\(SendOptions(name: "").window)"),
        Option(
            .name, "name", value: "NAME", help: "name to introduce this sender with", default: "the host name",
            defaultIsValue: false),
        Option(
            .timeout, "timeout", value: "SECONDS", help: "give up connecting, or on a silent receiver, after this long",
            default: durationText(SendOptions(name: "").timeout, plainSeconds: true)),
        Option(
            .parallel, "parallel", value: "N",
            help: "sessions at once, 1-\(maxParallelSessions) (1: one session, files in order)",
            default: "\(defaultParallelSessions)"),
        Option(
            .wait, "wait", value: "DURATION",
            help: "how long to wait for a turn at a busy receiver; s, m, h suffixes; 0: give up at once",
            default: durationText(WaitPolicy().limit)),
        Option(.quiet, "quiet", short: "q", help: "no progress bar"),
        Option(.plaintext, "plaintext", help: "send without TLS, to a receiver that allows it (never done unasked)"),
        Option(
            .expectID, "expect-id", value: "ID",
            help: "the receiver's device ID must be this (its `ptk id`); stop before sending otherwise"),
        Option(
            .keepFolders, "keep-folders",
            help:
                "send each photo found in a folder given with its path below that folder as its name, for the receiver to file it there"
        ),
        Option(
            .follow, "follow",
            help: "follow symbolic links found in a folder given (a folder reached twice is sent once)"),
        Option(
            .json, "json",
            help:
                "print JSON on standard output: one object per file (path, name, status, reason, size) and a summary last; with --list, the receivers"
        ),
        Option(.id, "id", help: "print this sender's device ID and exit", acts: true),
        Option(
            .forget, "forget", value: "NAME",
            help: "forget the receiver remembered as NAME (to accept its new ID) and exit",
            acts: true, completion: .receiverName),
        Option(
            .list, "list",
            help:
                "list the receivers found over mDNS (name, address:port, protocol version, ID, known/new/CHANGED) and exit",
            acts: true),
    ],
    otherUsages: ["ptk-send --list [--json] | --id | --forget NAME"],
    exitStatuses: ExitStatus.all(SendExitCode.self),
    examples: [
        Example("ptk-send --list", "the receivers on the LAN"),
        Example("ptk-send livingroom *.png", "send photos to the receiver advertised as livingroom"),
        Example(
            "ptk-send --keep-folders livingroom ~/Pictures/2024",
            "send a folder of photos, its subfolders kept on the receiver"),
        Example(
            "ptk-send --json livingroom DCIM | jq -c 'select(.status != \"saved\")'", "what was not saved, for a script"
        ),
        Example("ptk-send --wait 0 192.0.2.7:47850 photo.png", "send to an address, giving up at once if it is busy"),
    ])

/// The most sessions `--parallel` allows.
public let maxParallelSessions = 8

/// What ptk-send's options ask for, checked.
public struct SendSettings: Sendable {
    /// How each session runs: `--name`, `--window`, `--timeout`, `--keep-folders`.
    public var options = SendOptions()
    /// Sessions opened at most (`--parallel`, 1...`maxParallelSessions`); the receiver may allow fewer.
    public var parallel = defaultParallelSessions
    /// How long and how often to ask a busy receiver for a turn (`--wait`).
    public var waitPolicy = WaitPolicy()
    /// The receiver's port when `<peer>` names none.
    public var defaultPort = ProtocolLimits.defaultPort
    /// `--expect-id`: the receiver must present this device ID; needs TLS.
    public var expectedID: DeviceID?
    /// `--plaintext`: send without TLS; never done unasked.
    public var plaintext = false
    /// `--quiet`: no progress bar, summary or waiting notice.
    public var quiet = false
    /// Follow symbolic links in folders.
    public var follow = false
    /// `--json`: one JSON object per file and a summary, on standard output.
    public var json = false

    /// The defaults, as with no option given.
    public init() {}

    /// The settings of a parsed command line; a bad value is a usage error naming the option.
    public init(_ invocation: Invocation<SendOption>) throws(UsageError) {
        for (key, value) in invocation.options {
            let v = value ?? ""
            func invalid(_ flag: String, _ expected: String) -> UsageError {
                UsageError("invalid value '\(v)' for --\(flag): expected \(expected)")
            }
            switch key {
            case .port:
                guard let p = parseInteger(v, in: 1...65535) else { throw invalid("port", "1-65535") }
                defaultPort = UInt16(p)
            case .window:
                guard let w = parseInteger(v, in: 1...ProtocolLimits.maxWindow) else {
                    throw invalid("window", "1-\(ProtocolLimits.maxWindow)")
                }
                options.window = w
            case .name:
                guard !v.isEmpty else { throw UsageError("--name must not be empty") }
                options.name = v
            case .parallel:
                guard let n = parseInteger(v, in: 1...maxParallelSessions) else {
                    throw invalid("parallel", "1-\(maxParallelSessions)")
                }
                parallel = n
            case .wait:
                guard let t = parseDuration(v) else { throw invalid("wait", "a duration, such as 10m, or 0") }
                waitPolicy.limit = t
            case .timeout:
                guard let t = parseDuration(v), t > .zero else { throw invalid("timeout", "seconds") }
                options.timeout = t
            case .expectID:
                guard let id = DeviceID(parsing: v) else {
                    throw invalid("expect-id", "a device ID (52 characters A-Z, 2-7; dashes ignored)")
                }
                expectedID = id
            case .plaintext: plaintext = true
            case .quiet: quiet = true
            case .keepFolders: options.keepFolders = true
            case .follow: follow = true
            case .json: json = true
            case .id, .forget, .list: break
            }
        }
        if plaintext && expectedID != nil { throw UsageError("--expect-id needs TLS: drop --plaintext") }
    }
}
