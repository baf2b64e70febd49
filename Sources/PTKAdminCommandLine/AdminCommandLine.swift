import PTKCLI
import PTKConfiguration
import PTKVocabulary

/// ptk's commands. The raw value is the command as typed.
public enum AdminCommand: String, CaseIterable, Sendable {
    case list, show, watch, thumbnail, rename, rm, note, rate, export, `import`, gallery
    case id
    case idLocalSend = "id localsend"
    case trustList = "trust list"
    case trustPending = "trust pending"
    case trustAllow = "trust allow"
    case trustRemove = "trust remove"
    case trustDeny = "trust deny"
    case webLink = "web-link"
    case webPassword = "web-password"
    case webSessions = "web-sessions"
    case webSessionsRevoke = "web-sessions revoke"
    case appPasswordAdd = "app-password add"
    case appPasswordList = "app-password list"
    case appPasswordRemove = "app-password remove"

    /// The command a parsed command line names.
    public init(_ command: Command) { self.init(rawValue: command.name)! }
}

/// ptk's options.
public enum AdminOption: Hashable, Sendable {
    case dir, stateDirectory, config, json, sort, from, output, since, name, host, remove, access, qr
}

/// ptk's exit statuses.
public enum AdminExitStatus: Int32, ExitStatusCode {
    case done = 0
    case notFound = 1
    case usage = 64
    case invalidData = 65
    case nothingYet = 66
    case cannotCreate = 73
    case ioError = 74

    /// One line for `ptk --help` and the man page's EXIT STATUS.
    public var meaning: String {
        switch self {
        case .done: return "done"
        case .notFound: return "no such photo, device or app password, a name taken, or an ambiguous prefix"
        case .usage:
            return
                "usage error, or (run as root) a directory users other than root and its owner may change, or a way to it that cannot be opened"
        case .invalidData:
            return
                "a package or photo that is not valid (or a package of a newer Version), or a photo that is not the one the index holds"
        case .nothingYet: return "no library or identity yet (or a damaged identity)"
        case .cannotCreate: return "an output that cannot be created"
        case .ioError:
            return
                "a file or the index cannot be read or written, or another process held its lock (or a lease on it) too long (10 s for a lock file, 30 s for the index)"
        }
    }
}

private let library = "Photo library (the received photos, indexed by ptkd in .ptk/ of the directory)"
private let trust = "Identity and trust"
private let web = "The web interface (gallery and upload pages served by ptkd over HTTPS)"
private func names(_ commands: [AdminCommand]) -> [String] { commands.map(\.rawValue) }

/// ptk's command line, declared once.
public let adminCommandLine = CommandTable<AdminOption>(
    program: "ptk",
    summary: "administer the ptkd on this host: its photo library, identity and trusted senders",
    description: """
        Administers the ptkd on this host: its photo library, its device identity and who may send
        to it. It finds ptkd's directories as ptkd does (--dir, --state-dir, the configuration file,
        $STATE_DIRECTORY, /var/lib/ptk as root or as its owner, the service user; else
        ~/.local/share/ptk). ptkd need not be stopped: changes are safe while it saves photos.

        Run as root (sudo ptk), it takes on the user who owns the directory it works in (the photos
        directory for the library commands, the state directory for the others), or a folder on the
        way to it: on an installed system the service user, ptk. It does so for good (setgroups,
        setgid, setuid) before it opens anything there, so that nothing that user planted (a link,
        a journal, a package) can make root read, write, chown or delete a file elsewhere. Only
        what the administrator names is opened as root first, never through a symbolic link: the
        configuration file and the packages given to import; an export, a gallery or thumbnail -o
        FILE into a folder that user does not control is written by ptk as that user into a new
        folder of root's there and moved into place. Refused (exit 64): a directory several users
        own the way to, one that users other than root and that user may change on the way (a
        folder writable by its group or by others that is not that user's, sticky or not where
        names are made, or with an ACL granting write, or a file it reads there, the index or a
        trust list, writable so), and a way it cannot open folder by folder (a missing part, a
        dangling link), with the folder or file named and what to do about it.
        """,
    commands: [
        Command(
            "list", group: library,
            "one line per photo (a Live Photo's still and video on one): name, size, dimensions as shown (and a video's length), taken (else received) in the host's time zone, sender, rating"
        ),
        Command(
            "show", group: library, "everything the library holds about a photo",
            arguments: [Argument("NAME", "the photo", completion: .photoName)]),
        Command(
            "watch", group: library, "print each photo as ptkd indexes it, until interrupted",
            details: """
                Text lines start with the photo's id; with --json, one object per line (the fields of show --json, \
                with ID). A later `ptk watch --since ID` goes on after the last one printed, missing and repeating \
                nothing: ids are never reused. Photos are printed in id order, each once indexed. It goes on \
                across ptkd restarts, and exits 0 on SIGINT or SIGTERM or when its output is closed.
                """),
        Command(
            "thumbnail", group: library,
            "write its gallery thumbnail (a JPEG, or a PNG for a photo with transparency or a PNG of at most 360x360; at most 360 px on its long side)",
            arguments: [Argument("NAME", "the photo", completion: .photoName)],
            details: """
                Without -o, or with -o -, the image goes to standard output, which must not be a terminal (redirect it, \
                or pipe it through cat). -o FILE is replaced only by a whole thumbnail, written under another name first.
                """),
        Command(
            "rename", group: library,
            "rename a photo, or move it (NEW may be bob/IMG_1.png, or bob/ to keep its name); never replaces one",
            arguments: [Argument("NAME", "the photo", completion: .photoName), Argument("NEW", "its new name")]),
        Command(
            "rm", group: library, "delete photos (file, entry, thumbnails and preview)",
            arguments: [Argument("NAME", "a photo", completion: .photoName, repeats: true)],
            details: """
                A Live Photo's still takes its video with it (each is named as it goes), unless that video is another \
                still's too; a video removed by its own name goes alone.
                """),
        Command(
            "note", group: library, "set a photo's note (\"\" clears it)",
            arguments: [
                Argument("NAME", "the photo", completion: .photoName),
                Argument("TEXT", "the note; several words are joined with spaces", repeats: true),
            ]),
        Command(
            "rate", group: library, "set or clear a photo's rating",
            arguments: [
                Argument("NAME", "the photo", completion: .photoName),
                Argument("RATING", "0 to 5, or none", completion: .values(["0", "1", "2", "3", "4", "5", "none"])),
            ]),
        Command(
            "export", group: library, "write NAME.ptk packages (photo.data + photo.metadata) into a directory",
            arguments: [Argument("NAME", "a photo", completion: .photoName, repeats: true)],
            details: """
                The directory is -o DIR (made, mode 0755, when missing), else the current one. Only the photo the index \
                holds is exported: a file at its name of another size or SHA-256, or not a regular file, is refused (exit 65). \
                A Live Photo's still is exported with its video, in a package of its own ("IMG_0042 (motion).ptk" when \
                the video's name would give the still's).
                """),
        Command(
            "import", group: library, "add packages' photos to the library, keeping their metadata",
            arguments: [Argument("PACKAGE", "a .ptk package", completion: .file(extensions: ["ptk"]), repeats: true)]),
        Command(
            "gallery", group: library, "write a static HTML page of the thumbnails, newest first",
            details: "The page goes into -o DIR, else .ptk/gallery in the received-photos directory."),
        Command("id", group: trust, "print this receiver's device ID (senders check it)"),
        Command("id localsend", group: trust, "print its LocalSend fingerprint (phones may show it)"),
        Command("trust list", group: trust, "the trusted devices: kind (ptk or LocalSend), ID, name"),
        Command("trust pending", group: trust, "devices refused under `senders = trusted`, newest last"),
        Command(
            "trust allow", group: trust, "trust a device (a prefix must match one pending or listed ID)",
            arguments: [
                Argument(
                    "ID", "a ptk device ID or a LocalSend app's fingerprint, or a prefix of one",
                    completion: .deviceID(.pending)),
                Argument(
                    "NAME", "the name to list it under (default: the name it gave)", repeats: true, optional: true),
            ]),
        Command(
            "trust remove", group: trust, "stop trusting a device",
            arguments: [Argument("ID", "a trusted device's ID or a prefix of it", completion: .deviceID(.trusted))]),
        Command(
            "trust deny", group: trust, "drop a pending device (it is listed again if it retries)",
            arguments: [Argument("ID", "a pending device's ID or a prefix of it", completion: .deviceID(.pending))]),
        Command(
            "web-link", group: web, "print a one-time login link for a browser, and its QR code",
            details: """
                The link works once, within 10 minutes; the browser that opens it stays logged in for 30 days (until \
                `ptk web-sessions revoke`). It names this host by its first network address (--host to choose), and ptkd's \
                web-port. The QR code is printed for a phone's camera. The certificate's SHA-256 is printed too: a browser \
                warns about the self-signed certificate the first time, and shows the same fingerprint.
                """),
        Command(
            "web-password", group: web,
            "set the password of the login page (asked twice on a terminal, else one line of standard input)",
            details:
                "At least 8 characters; kept as a scrypt hash (mode 0600). --remove removes it: then only links log in. Three wrong passwords from one address lock it out for 5 minutes."
        ),
        Command(
            "web-sessions", group: web,
            "list the browsers logged in: ID, name, address, when logged in and last used, until when"),
        Command(
            "web-sessions revoke", group: web, "log a browser out (its cookie stops working at once)",
            arguments: [Argument("ID", "a session's ID (or a prefix), or all", completion: .values(["all"]))]),
        Command(
            "app-password add", group: web,
            "make a password for one device or app to reach the WebDAV door, and print it once",
            arguments: [
                Argument(
                    "NAME",
                    "its name, the user name the app gives: 1 to 64 of A-Z a-z 0-9 . _ -, not starting with . or -")
            ],
            details: """
                Prints the URL (https://HOST:PORT/dav/, HOST as for web-link), the user name (NAME) and the password, \
                "url: ", "user: " and "password: " lines, and the certificate's SHA-256 once ptkd has made it; with \
                --json, one object (url, user, password, access, certificate). The password is 30 random lower-case \
                letters in groups of 5 (about 141 bits); only its SHA-256 is kept (mode 0600), so it cannot be shown \
                again: remove it and add another. --access upload (the default) is for phones and backup apps, which \
                add photos; full is for a desktop's file manager, which also renames and deletes them. With --qr, the \
                link a phone app logs in with (nc://login/user:NAME&password:PASSWORD&server:https://HOST:PORT, which the \
                Nextcloud app reads from its QR scanner) is printed too, with its QR code (with --json, as "link", without \
                the code).
                """),
        Command(
            "app-password list", group: web, "the app passwords: name, access, when made, when last used and from where"
        ),
        Command(
            "app-password remove", group: web, "remove an app password (it stops working at once)",
            arguments: [Argument("NAME", "the password's name", completion: .appPassword)]),
    ],
    options: [
        Option(.dir, "dir", value: "PATH", help: "the received-photos directory, as for ptkd", completion: .directory),
        Option(
            .stateDirectory, "state-dir", value: "PATH", help: "the state directory, as for ptkd",
            completion: .directory),
        Option(
            .config, "config", value: "FILE", help: "ptkd's configuration file",
            default: "\(DaemonOptions.defaultConfigFile) if it exists", defaultIsValue: false,
            completion: .file(extensions: ["conf"])),
        Option(
            .json, "json", help: "JSON instead of text",
            commands: names([.list, .show, .watch, .appPasswordAdd, .appPasswordList])),
        Option(
            .since, "since", value: "now|all|ID",
            help: "the photos to start from: those indexed from now on, all, or those after id ID",
            default: "now", commands: names([.watch]), completion: .values(["now", "all"])),
        Option(
            .sort, "sort", value: "name|time|taken|size", allowed: SortOrder.allCases.map(\.rawValue),
            help: "the order: name, time received or taken (oldest first), or size (smallest first)",
            default: SortOrder.time.rawValue, commands: names([.list])),
        Option(
            .from, "from", value: "SENDER", help: "only photos from this sender (name, address or device ID prefix)",
            commands: names([.list])),
        Option(
            .name, "name", value: "NAME",
            help: "the browser's name: its session is listed so, its uploads are from \"web: NAME\"",
            default: "browser", commands: names([.webLink])),
        Option(
            .host, "host", value: "HOST",
            help: "the host name or address the link or URL names (default: this host's first network address)",
            commands: names([.webLink, .appPasswordAdd])),
        Option(
            .access, "access", value: "upload|full", allowed: ["upload", "full"],
            help:
                "what the password may do: upload adds photos (phones, backup apps); full also renames and deletes (a file manager)",
            default: "upload",
            commands: names([.appPasswordAdd])),
        Option(
            .qr, "qr",
            help:
                "also print the login link a phone app scans (nc://login/...: name, password, https://HOST:PORT) and its QR code",
            commands: names([.appPasswordAdd])),
        Option(.remove, "remove", help: "remove the password instead of setting one", commands: names([.webPassword])),
        Option(
            .output, "output", short: "o", value: "PATH",
            help: "thumbnail: the file (- for standard output); export, gallery: the directory",
            commands: names([.thumbnail, .export, .gallery]), completion: .file(extensions: [])),
    ],
    notes: """
        A NAME is a photo's path below the directory ("alice/IMG_1.png"), or its bare name when
        no other folder has one of that name; it may leave out its ending (".png", ".jpg",
        ".jpeg"). A NAME that matches no photo gets the closest names.
        """,
    exitStatuses: ExitStatus.all(AdminExitStatus.self),
    examples: [
        Example("ptk list --sort size", "the photos, smallest first"),
        Example("ptk watch --json --since all", "every photo, then each new one as it arrives, as JSON lines"),
        Example("ptk note IMG_0001 \"the beach, 2024\"", "annotate a photo"),
        Example("sudo ptk trust pending", "who was refused under senders = trusted"),
        Example("sudo ptk trust allow MFRG \"Anna's phone\"", "trust the pending device whose ID begins MFRG"),
        Example(
            "sudo ptk web-link --name \"Anna's phone\"", "a one-time login link and its QR code for a phone's browser"),
        Example(
            "sudo ptk app-password add annas-phone", "a password for a phone's photo backup app (WebDAV), shown once"),
        Example(
            "sudo ptk app-password add annas-phone --qr",
            "the same, and a QR code the phone's Nextcloud app scans to log in"),
    ],
    completionContext: [.dir, .stateDirectory, .config])
