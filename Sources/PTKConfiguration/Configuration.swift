import PTKCLI
import PTKProtocol
import PTKSystem
import PTKVocabulary

/// Everything ptkd can be told, parsed and checked (PTKConfiguration reads it from flags
/// and the configuration file; each setting and its default are declared there once).
public struct DaemonConfiguration: Sendable, Equatable {
    /// The received-photos directory; nil means the default (see `defaultDirectory`).
    public var directory: String?
    /// The protocol v1 TCP port; 0 picks a free port and logs it.
    public var port: UInt16 = ProtocolLimits.defaultPort
    /// Addresses to listen on; empty means every IPv6 and IPv4 address.
    public var listen: [String] = []
    /// The display name sent to senders and advertised over mDNS; the host's name by default.
    public var name: String = hostName()
    /// Chunks a sender may have unacknowledged, 1 to `ProtocolLimits.maxWindow`.
    public var window = 64
    /// The largest file accepted, in bytes; larger ones are refused. 16 GiB: a phone's long
    /// 4K video (an iPhone's 4K at 60 frames a second in HEVC is some 400 MB a minute, an
    /// Android's in H.264 up to 700 MB: 20 minutes of either fit).
    public var maxFileSize: Int64 = 16 << 30
    /// Sessions served at once. From bench/soak and bench/run's memory test: ptkd's peak RSS was
    /// 30 MB with 16 TLS senders of 100 MB, 42 MB with 64 of 25 MB, 54 MB with 64 senders of
    /// 25 small photos per call, and 77 MB with 128 (docs/PERFORMANCE.md).
    public var maxSessions = 64
    /// Sessions one IP address may hold at once; beyond it ERROR busy.
    public var maxSessionsPerAddress = 8
    /// How long a new connection has to finish the TLS handshake and send HELLO.
    public var handshakeTimeout: Duration = .seconds(10)
    /// Permission bits of saved photos.
    public var fileMode: UInt32 = 0o644
    /// Free bytes to keep on the received-photos file system; an offer that would eat into them is refused.
    public var minFree: Int64 = 100 << 20
    /// A session silent this long is closed.
    public var idleTimeout: Duration = .seconds(30)
    /// Advertise over mDNS (_ptk._tcp) through avahi-daemon, and let LocalSend discovery multicast.
    public var mdns = true
    /// Unfinished uploads untouched this long are deleted.
    public var partialMaxAge: Duration = .seconds(86_400)
    /// Where the identity, the trust list and the pending senders live; nil means the default
    /// (see `defaultStateDirectory`).
    public var stateDirectory: String?
    /// Serve plaintext sessions (protocol §6), or answer them ERROR `tls-required`.
    public var plaintext: PlaintextPolicy = .refuse
    /// Who may send.
    public var senders: SenderPolicy = .anyone
    /// Keep the photo library (index and thumbnails in `.ptk/` of the directory).
    public var library = true
    /// Photos with more megapixels are indexed without a thumbnail.
    public var thumbnailMaxMegapixels = 200
    /// Serve LocalSend apps (HTTPS on `localSendPort`, multicast discovery unless `mdns` is off).
    public var localSend = true
    /// The LocalSend endpoint's TCP port; 0 picks a free port and logs it.
    public var localSendPort: UInt16 = 53317
    /// A PIN LocalSend apps must give, or nil.
    public var localSendPIN: String?
    /// A file holding the PIN (`localsend-pin-file`), read by ptkd at start (`readingPINFile`).
    public var localSendPINFile: String?
    /// Serve the web interface (gallery and upload pages, HTTPS on `webPort`).
    public var web = true
    /// The web pages' TCP port; 0 picks a free port and logs it.
    public var webPort: UInt16 = 47851
    /// The types this receiver keeps, from ptk-send (WELCOME.types, in this order) and LocalSend
    /// apps alike: some of `PhotoType.allCases`, in its order, each once.
    public var types: [PhotoType] = PhotoType.allCases

    /// `types`' media types, sorted ("image/heic", "image/png"): how help and the logs name them.
    public var mediaTypes: [String] { types.map(\.mediaType).sorted() }
    /// Where in the directory photos are filed (folders by sender or date).
    public var layout: FolderLayout = .flat
    /// What becomes of a photo whose bytes the library already keeps.
    public var duplicates: DuplicatePolicy = .skip
    /// The program (and its first arguments) run for each photo saved; nil: none.
    public var onSaved: [String]?
    /// How long a hook may run before SIGTERM (then SIGKILL 5 s later).
    public var onSavedTimeout: Duration = .seconds(60)
    /// Folders another program keeps in sync (Syncthing's receive-only folder): each photo is
    /// taken in and the source left as it is (issue 56). Absolute paths.
    public var inboxes: [String] = []
    /// Folders people and programs drop files into (a Samba share, an sftp target): a photo is
    /// moved into the directory once verified; anything else stays and is reported. Absolute paths.
    public var dropFolders: [String] = []
    /// A full scan of every inbox and drop folder this often (also at start, and after inotify
    /// lost events); the only way files are found where the file system gives no events.
    public var inboxScanInterval: Duration = .seconds(600)
    /// A file is taken once it has stayed unchanged this long and nobody has it open for writing.
    public var inboxSettle: Duration = .seconds(5)
    /// Enter a folder below an inbox that is a mount point of its own.
    public var inboxMounts = false
    /// Take an inbox's photos as hard links to their sources (no byte copied) where the writer
    /// is known to replace files by rename and never write in place (Syncthing); else each is
    /// a reflink or a copy.
    public var inboxLinks = false

    /// What `duplicates` chooses (`duplicates = skip|keep` in the file).
    public enum DuplicatePolicy: String, Sendable, CaseIterable {
        /// Store nothing new: the photo already kept is named (SAVED.duplicate).
        case skip
        /// Store every photo sent, with a " (2)" name when the name is taken.
        case keep
    }

    /// Whether `plaintext` serves senders without TLS (`allow`) or answers them ERROR tls-required (`refuse`).
    public enum PlaintextPolicy: String, Sendable, CaseIterable {
        case refuse, allow
    }

    /// Who may send: what `senders` chooses.
    public enum SenderPolicy: String, Sendable, CaseIterable {
        /// Any device, over TLS (and plaintext when allowed).
        case anyone
        /// Only the devices on the trust list.
        case trusted
    }

    /// The defaults, every setting as help shows it.
    public init() {}

    /// Refuses what the inbox settings cannot mean together: an inbox without the library (it
    /// remembers there what it took, so that a restart takes nothing twice), and one folder
    /// named twice, or as both an inbox and a drop folder (a folder inside another is found by
    /// ptkd at start, by device and inode).
    public func checkInboxes() throws(UsageError) {
        if !inboxes.isEmpty && !library {
            throw UsageError(
                "inbox needs library = on: the library remembers what an inbox took, so that nothing is taken twice")
        }
        var seen: Set<String> = []
        for folder in inboxes + dropFolders where !seen.insert(folder).inserted {
            throw UsageError("\(folder) is named twice among inbox and drop-folder")
        }
    }

    /// The default state directory: `$STATE_DIRECTORY` under systemd, `/var/lib/ptk` for root,
    /// else `$XDG_DATA_HOME/ptk` (`~/.local/share/ptk`).
    public static func defaultStateDirectory() -> String {
        if let state = environment("STATE_DIRECTORY"), !state.isEmpty {
            // systemd may list several directories separated by colons; the first is ours.
            return state.split(separator: ":").first.map(String.init) ?? state
        }
        if getuidIsRoot() { return "/var/lib/ptk" }
        if let xdg = environment("XDG_DATA_HOME"), xdg.hasPrefix("/") { return xdg + "/ptk" }
        return (environment("HOME") ?? ".") + "/.local/share/ptk"
    }

    /// The default received-photos directory: `received` in the state directory.
    public static func defaultDirectory() -> String { defaultStateDirectory() + "/received" }

    /// The state directory in force.
    public var effectiveStateDirectory: String { stateDirectory ?? Self.defaultStateDirectory() }

    /// The received-photos directory in force.
    public var effectiveDirectory: String { directory ?? effectiveStateDirectory + "/received" }

    /// The device identity's directory.
    public var identityDirectory: String { effectiveStateDirectory + "/identity" }

    /// The LocalSend endpoint's certificate (RSA, which every app's TLS stack takes) and key.
    public var localSendIdentityDirectory: String { effectiveStateDirectory + "/localsend" }
    /// The web interface's password, one-time links and sessions; its certificate in `tls/`.
    public var webDirectory: String { effectiveStateDirectory + "/web" }
}

func getuidIsRoot() -> Bool { geteuidValue() == 0 }
