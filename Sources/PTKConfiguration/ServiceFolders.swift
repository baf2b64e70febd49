import PTKCLI

/// The systemd drop-in that opens the configured inboxes and drop folders to the service
/// (issue 56): `ptkd --unit-paths` prints it, and the generator `ptkd-folders` writes it to
/// `/run/systemd/generator/ptkd.service.d/50-folders.conf` at boot and at every `systemctl
/// daemon-reload`. The unit makes the file system read-only (`ProtectSystem=strict`) and hides
/// the home directories (`ProtectHome=yes`): a drop folder is made writable (ptkd removes what it
/// took), an inbox read-only (its sources are never changed), and a folder below /home, /root or
/// /run/user is bound into an empty, read-only /home (`ProtectHome=tmpfs`), so no other home
/// directory is opened. Each path has a "-": a folder that is missing does not stop the service
/// from starting; ptkd then says which folder it cannot read, and serves the others.
public struct ServiceFolders: Equatable, Sendable {
    /// The drop-in's text.
    public let dropIn: String
    /// One line for each folder the unit cannot open, saying why (also a comment in `dropIn`).
    public let refused: [String]
    /// What `fingerprint` is set as in the service's environment.
    public static let environmentVariable = "PTK_UNIT_FOLDERS"
    /// The drop-in's file name in the generator's `ptkd.service.d/`.
    public static let fileName = "50-folders.conf"

    /// The drop-in for `configuration`'s inboxes and drop folders.
    public init(_ configuration: DaemonConfiguration) {
        self.init(inboxes: configuration.inboxes, dropFolders: configuration.dropFolders)
    }

    /// The drop-in for these folders (absolute paths, as `Parse.folder` leaves them).
    public init(inboxes: [String], dropFolders: [String]) {
        var lines = [
            "# Made by `ptkd --unit-paths` from ptkd.conf's inbox and drop-folder lines; the generator",
            "# ptkd-folders writes it at boot and at every `systemctl daemon-reload`. Edit ptkd.conf, not this.",
            "[Service]",
            "Environment=\(Self.environmentVariable)=\(Self.fingerprint(inboxes: inboxes, dropFolders: dropFolders))",
        ]
        var refused: [String] = []
        var home: [String] = []
        for (kind, paths) in [(DaemonSetting.inbox, inboxes), (.dropFolder, dropFolders)] {
            for path in paths {
                let label = "\(kind.rawValue) \(path)"
                if let why = Self.unexpressible(path) {
                    refused.append("\(label): \(why); not opened to the service")
                    lines.append("# not opened: \(Self.comment(label)): \(why)")
                    continue
                }
                let inHome = Self.homeDirectories.contains { path == $0 || path.hasPrefix($0 + "/") }
                let key =
                    switch (kind, inHome) {
                    case (.inbox, false): "ReadOnlyPaths"
                    case (.inbox, true): "BindReadOnlyPaths"
                    case (_, false): "ReadWritePaths"
                    case (_, true): "BindPaths"
                    }
                let line = "\(key)=-\(Self.quoted(path))"
                if inHome { home.append(line) } else { lines.append(line) }
            }
        }
        if !home.isEmpty { lines += ["ProtectHome=tmpfs"] + home }
        self.dropIn = lines.joined(separator: "\n") + "\n"
        self.refused = refused
    }

    /// What ProtectHome= hides.
    static let homeDirectories = ["/home", "/root", "/run/user"]

    /// Where the service sees folders of its own, not the host's, whatever the drop-in says.
    static let privateDirectories: [(String, String)] = [
        ("/tmp", "PrivateTmp=yes"), ("/var/tmp", "PrivateTmp=yes"), ("/dev", "PrivateDevices=yes"),
        ("/proc", "its own /proc"), ("/sys", "a read-only /sys"),
    ]

    /// Why systemd cannot open `path` to the service, or nil. Its path checks
    /// (`path_is_valid`): at most 4095 bytes, each name at most 255.
    static func unexpressible(_ path: String) -> String? {
        if path.utf8.count > 4095 { return "longer than systemd takes (4095 bytes)" }
        if path.utf8.split(separator: UInt8(ascii: "/")).contains(where: { $0.count > 255 }) {
            return "a name in it is longer than systemd takes (255 bytes)"
        }
        for (top, why) in privateDirectories where path == top || path.hasPrefix(top + "/") {
            return "the service sees its own \(top) (\(why)), not this one: choose a folder elsewhere, such as /srv/ptk"
        }
        return nil
    }

    /// `path` as one word of a systemd setting (systemd.syntax(7)): in double quotes, with `\`
    /// and `"` escaped by a backslash, and `%` (a specifier) doubled. Spaces, colons (BindPaths=
    /// separates with them) and any other character stand as they are between the quotes.
    static func quoted(_ path: String) -> String {
        var out = "\""
        for scalar in path.unicodeScalars {
            switch scalar {
            case "\\": out += "\\\\"
            case "\"": out += "\\\""
            case "%": out += "%%"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }

    /// `text` safe in a comment line: control characters as "?" (the folders have none: `Parse.folder`),
    /// and at most `commentLimit` characters of it, then "...". systemd stops reading a drop-in at a
    /// line over 1 MiB, silently: a refused path as long as ptkd.conf allows (1 MiB, each byte that
    /// is not UTF-8 read as a 3-byte U+FFFD) would hide the lines after it.
    static func comment(_ text: String) -> String {
        let scalars = text.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7F ? "?" : $0 }
        let kept = String(String.UnicodeScalarView(scalars.prefix(commentLimit)))
        return scalars.count > commentLimit ? kept + "..." : kept
    }

    /// Most characters of a folder's label in a comment line.
    static let commentLimit = 300

    /// Sixteen hex digits naming the folders (FNV-1a over kinds and paths, in order): ptkd at start
    /// compares it with what the unit was made for, and says when `systemctl daemon-reload` is owed.
    public static func fingerprint(inboxes: [String], dropFolders: [String]) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for (kind, paths) in [("inbox", inboxes), ("drop-folder", dropFolders)] {
            for path in paths {
                for byte in Array(kind.utf8) + [0] + Array(path.utf8) + [0] {
                    hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3
                }
            }
        }
        let digits = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }

    /// What ptkd says at start under the unit (`unitFingerprint`: the service's
    /// `PTK_UNIT_FOLDERS`, nil when the generator's drop-in is not in force): the folders the
    /// unit cannot open, and a reminder when ptkd.conf's folders changed since systemd read them.
    public static func startWarnings(_ configuration: DaemonConfiguration, unitFingerprint: String?) -> [String] {
        guard let unitFingerprint else { return [] }
        let now = fingerprint(inboxes: configuration.inboxes, dropFolders: configuration.dropFolders)
        var out = ServiceFolders(configuration).refused
        if now != unitFingerprint {
            out.append(
                "the service was set up for other inbox and drop-folder lines than ptkd.conf has now, and opens only those: run `systemctl daemon-reload`, then `systemctl restart ptkd`"
            )
        }
        return out
    }

    /// ptkd's `--unit-paths` flag, in its command table.
    static let option = Option(
        DaemonFlag.unitPaths, "unit-paths",
        help:
            "print the systemd drop-in that opens the configured inboxes and drop folders to the service, and exit (the ptkd-folders generator runs it)",
        default: "run as the receiver", defaultIsValue: false, acts: true)
}
