import PTKCLI
import PTKConfiguration
import PTKProtocol
import PTKSystem
import PTKTLS
import PTKTrust

let version = "0.1.0"

let options: [OptionSpec] = [
    OptionSpec("dir", value: "PATH", help: "the received-photos directory, as for ptkd"),
    OptionSpec("state-dir", value: "PATH", help: "the state directory, as for ptkd"),
    OptionSpec("config", value: "FILE", help: "ptkd's configuration file (default: \(DaemonOptions.defaultConfigFile) if it exists)"),
    OptionSpec("json", help: "list, show: JSON instead of text"),
    OptionSpec("sort", value: "name|time|size", help: "list: the order (default time, newest last)"),
    OptionSpec("from", value: "SENDER", help: "list: only photos from this sender (name, address or device ID prefix)"),
    OptionSpec("output", value: "PATH", short: "o", help: "thumbnail: the file (- for standard output); export, gallery: the directory"),
    OptionSpec("help", short: "h", help: "show this help and exit"),
    OptionSpec("version", help: "show the version and exit"),
]

let usageLine = "ptk [OPTIONS] COMMAND [ARGUMENTS]"
/// The state directory of the installed service (the unit's StateDirectory=ptk).
let serviceStateDirectory = "/var/lib/ptk"
let usage = """
    Usage: \(usageLine)

    Administers the ptkd on this host: its photo library, its device identity and who may send
    to it. It finds ptkd's directories as ptkd does (--dir, --state-dir, the configuration file,
    $STATE_DIRECTORY, /var/lib/ptk as root or as its owner, the service user; else
    ~/.local/share/ptk). ptkd need not be stopped: changes are safe while it saves photos.

    Photo library (the received photos, indexed by ptkd in .ptk/ of the directory):
      list [--json] [--sort name|time|size] [--from SENDER]
                                 one line per photo: name, size, dimensions, received, sender, rating
      show NAME [--json]         everything the library holds about a photo
      thumbnail NAME [-o FILE]   write its thumbnail (a PNG, at most 256 px on its long side)
      rename NAME NEW            rename a photo (never replacing one; NEW follows the naming rules)
      rm NAME...                 delete photos
      note NAME TEXT             set a photo's note ("" clears it)
      rate NAME 0-5|none         set or clear a photo's rating
      export NAME... [-o DIR]    write NAME.ptk packages (photo.data + photo.metadata) into DIR (default .)
      import PACKAGE.ptk...      add packages' photos to the library, keeping their metadata
      gallery [-o DIR]           write a static HTML page of the thumbnails, newest first
                                 (default DIR: .ptk/gallery in the received-photos directory)

    Identity and trust:
      id                         print this receiver's device ID (senders check it)
      id localsend               print its LocalSend fingerprint (phones may show it)
      trust list                 the trusted devices: kind (ptk or LocalSend), ID, name
      trust pending              devices refused under `senders = trusted`, newest last
      trust allow ID|PREFIX [NAME]
                                 trust a device (a prefix must match one pending or listed ID);
                                 an ID is a ptk device ID or a LocalSend app's fingerprint
      trust remove ID|PREFIX     stop trusting a device
      trust deny ID|PREFIX       drop a pending device (it is listed again if it retries)

    A NAME may leave out its ending (".png", ".jpg", ".jpeg"). A NAME that matches no photo
    gets the closest names.

    Options:
    \(helpLines(for: options))

    Exit status: 0 done, 1 no such photo or device, a name taken, or an ambiguous prefix,
    64 usage error, 65 a package or photo that is not valid, 66 no library or identity yet
    (or a damaged identity), 73 an output that cannot be created, 74 a file or the index
    cannot be read or written.
    """

func usageError(_ message: String) -> Never { exitWithUsageError(message, program: "ptk", usageLine: usageLine) }
func die(_ message: String, _ code: Int32) -> Never { exitWithError(message, code: code) }

let parsed = parseCommandLineOrExit(options: options, program: "ptk", version: version, usage: usage, usageLine: usageLine)
var settings = parsed
settings.options = parsed.options.filter { ["dir", "state-dir", "config"].contains($0.name) }
settings.positionals = []
var configuration: DaemonConfiguration
do { configuration = try DaemonOptions.configuration(from: settings) } catch { usageError(error.message) }
// Run as the service user (`sudo -u ptk ptk ...`), whose home is the service's state directory:
// use it, as ptkd under systemd does, rather than a data directory inside it.
if configuration.stateDirectory == nil, environment("STATE_DIRECTORY") == nil, geteuidValue() != 0,
   let status = try? fileStatus(serviceStateDirectory), status.isDirectory, status.owner == geteuidValue() {
    configuration.stateDirectory = serviceStateDirectory
}

var words = parsed.positionals[...]
guard let command = words.popFirst() else { usageError("missing COMMAND (list, show, ..., id or trust; see --help)") }

/// `words` must be empty now.
@MainActor func noMore(_ what: String) {
    if let extra = words.first { usageError("unexpected argument '\(extra)' after \(what)") }
}

switch command {
case "id":
    let localSend = words.first == "localsend"
    if localSend { words.removeFirst() }
    noMore("id")
    do {
        if localSend {
            print(try Identity.load(from: configuration.localSendIdentityDirectory, keyType: .rsa).certificateFingerprint)
        } else {
            print(try Identity.load(from: configuration.identityDirectory).deviceID)
        }
    } catch {
        die(error.description, 66)
    }

case "trust":
    let store = TrustStore(directory: configuration.effectiveStateDirectory)
    guard let sub = words.popFirst() else { usageError("missing trust command (list, pending, allow, remove or deny)") }
    do {
        switch sub {
        case "list":
            noMore("trust list")
            let list = store.trusted()
            if list.isEmpty { writeToStandardError("No trusted devices (\(store.trustFile)).") }
            for e in list { print("\(e.id.kind)  \(e.id)  \(e.name)") }
        case "pending":
            noMore("trust pending")
            let pending = try store.pending()
            if pending.isEmpty { writeToStandardError("No pending devices (\(store.pendingFile)).") }
            for p in pending {
                print("\(p.id.kind)  \(p.id)  \"\(p.name)\" from \(p.address), \(p.attempts) attempt(s), first \(formatDate(p.firstAttempt)), last \(formatDate(p.lastAttempt))")
            }
        case "allow":
            guard let id = words.popFirst() else { usageError("missing ID: trust allow ID|PREFIX [NAME]") }
            let name = words.isEmpty ? nil : words.joined(separator: " ")
            words = []
            let entry = try store.allow(id, name: name)
            print("trusted \(entry.id) as \"\(entry.name)\"")
        case "remove":
            guard let id = words.popFirst() else { usageError("missing ID: trust remove ID|PREFIX") }
            noMore("trust remove ID")
            let entry = try store.remove(id)
            print("no longer trusted: \(entry.id) \"\(entry.name)\"")
        case "deny":
            guard let id = words.popFirst() else { usageError("missing ID: trust deny ID|PREFIX") }
            noMore("trust deny ID")
            let entry = try store.deny(id)
            print("dropped pending \(entry.id) \"\(entry.name)\"")
        default:
            usageError("unknown trust command '\(sub)' (list, pending, allow, remove or deny)")
        }
    } catch let error as TrustError {
        die(error.description, 1)
    } catch {
        die("\(error)", 74)
    }

case "list", "show", "thumbnail", "rename", "rm", "note", "rate", "export", "import", "gallery":
    LibraryCommands(directory: configuration.effectiveDirectory, parsed: parsed).run(command, Array(words))

default:
    usageError("unknown command '\(command)' (list, show, thumbnail, rename, rm, note, rate, export, import, gallery, id or trust)")
}
