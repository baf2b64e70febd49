import PTKAdminCommandLine
import PTKCLI
import PTKConfiguration
import PTKProtocol
import PTKSystem
import PTKTLS
import PTKTrust
import PTKVocabulary

/// The state directory of the installed service (the unit's StateDirectory=ptk).
let serviceStateDirectory = "/var/lib/ptk"

/// How long ptk waits for a lock file ptkd holds (`.trust.lock`, `web/.lock`), saying on
/// standard error after a second what it waits for.
let lockFilePatience = LockPatience(
    limit: .seconds(10), waiting: { writeToStandardError("ptk: " + escapedForTerminal($0)) })
/// How long ptk waits, in all, for locks another process holds on the photo index.
let indexPatience = LockPatience(
    limit: .seconds(30), waiting: { writeToStandardError("ptk: " + escapedForTerminal($0)) })

func usageError(_ message: String) -> Never {
    exitWithUsageError(message, program: "ptk", usageLine: adminCommandLine.usageLine)
}
/// Exits with `message` (controls escaped: it may quote what the service user wrote) and `status`.
func die(_ message: String, _ status: AdminExitStatus) -> Never {
    exitWithError(escapedForTerminal(message), code: status.rawValue)
}

// `ptk __complete photos|devices pending|devices trusted|app-passwords [OPTIONS]`: the values shell completion
// offers (the scripts ptk-docs makes call it), one a line; nothing, and status 0, on any error.
let arguments = Array(CommandLine.arguments.dropFirst())
let completing = arguments.first == "__complete" ? Array(arguments.dropFirst()) : nil
let invocation =
    completing.map { words in
        // Read as the command whose directories it needs; options after the kind apply.
        adminCommandLine.parseOrExit(
            (words.first == "photos" ? ["list"] : ["trust", "list"]) + words.drop { !$0.hasPrefix("-") })
    } ?? adminCommandLine.parseOrExit()
var configuration: DaemonConfiguration
do {
    configuration = try DaemonOptions.configuration(
        configFile: invocation.value(.config),
        settings: invocation.options.compactMap { given in
            switch given.key {
            case .dir: return (.directory, given.value)
            case .stateDirectory: return (.stateDirectory, given.value)
            default: return nil
            }
        })
} catch { usageError(error.message) }
// Run as the service user (`sudo -u ptk ptk ...`), whose home is the service's state directory:
// use it, as ptkd under systemd does, rather than a data directory inside it.
if configuration.stateDirectory == nil, environment("STATE_DIRECTORY") == nil, geteuidValue() != 0,
    // No service state directory of ours: the other defaults apply.
    let status = try? fileStatus(serviceStateDirectory), status.isDirectory, status.owner == geteuidValue()
{
    configuration.stateDirectory = serviceStateDirectory
}

if runningAsRoot {
    // Fixed now, and absolute: the defaults depend on who runs ptk, and root's ptk is about to
    // take on the service user (a staged child even works from another folder).
    let (directory, state) = (configuration.effectiveDirectory, configuration.effectiveStateDirectory)
    configuration.directory = RootBoundary.absolute(directory)
    configuration.stateDirectory = RootBoundary.absolute(state)
}

if let completing {
    // As root, as the user owning what is read (only reads: nothing opened beforehand); a
    // refusal offers nothing, without a word (a Tab never prints an error).
    let kind: AdminCommand = completing.first == "photos" ? .list : .trustList
    let opened = RootBoundary.cross(
        kind, directory: RootBoundary.directory(of: kind, configuration), invocation: invocation, words: [],
        maxFileSize: configuration.maxFileSize, quiet: true)
    complete(completing, configuration: configuration, directory: opened.directory)
    exitProcess(0)
}

let command = AdminCommand(invocation.command!)
let words = invocation.arguments
// As root over the service user's directory: what root must open is opened, then ptk takes on that user.
let opened = RootBoundary.cross(
    command, directory: RootBoundary.directory(of: command, configuration), invocation: invocation, words: words,
    maxFileSize: configuration.maxFileSize)
let trust = TrustStore(directory: configuration.effectiveStateDirectory, lockPatience: lockFilePatience)

/// Runs a trust command; a refusal exits 1, a file that cannot be read or written 74.
@MainActor func trusting(_ body: () throws -> Void) {
    do { try body() } catch let error as TrustError {
        die(error.description, error.kind == .refused ? .notFound : .ioError)
    } catch {
        die("\(error)", .ioError)
    }
}

switch command {
case .id, .idLocalSend:
    do {
        if command == .idLocalSend {
            print(
                try Identity.load(from: configuration.localSendIdentityDirectory, keyType: .rsa).certificateFingerprint)
        } else {
            print(try Identity.load(from: configuration.identityDirectory).deviceID)
        }
    } catch {
        die(error.description, .nothingYet)
    }

case .trustList:
    let list = trust.trusted()
    if list.isEmpty { writeToStandardError("No trusted devices (\(trust.trustFile)).") }
    for e in list { print("\(e.id.kind)  \(e.id)  \(escapedForTerminal(e.name))") }

case .trustPending:
    trusting {
        let pending = try trust.pending()
        if pending.isEmpty { writeToStandardError("No pending devices (\(trust.pendingFile)).") }
        for p in pending {
            print(
                "\(p.id.kind)  \(p.id)  \(quotedForTerminal(p.name)) from \(escapedForTerminal(p.address)), \(p.attempts) attempt(s), first \(p.firstAttempt), last \(p.lastAttempt)"
            )
        }
    }

case .trustAllow:
    trusting {
        let entry = try trust.allow(words[0], name: words.count > 1 ? words.dropFirst().joined(separator: " ") : nil)
        print("trusted \(entry.id) as \(quotedForTerminal(entry.name))")
    }

case .trustRemove:
    trusting {
        let entry = try trust.remove(words[0])
        print("no longer trusted: \(entry.id) \(quotedForTerminal(entry.name))")
    }

case .trustDeny:
    trusting {
        let entry = try trust.deny(words[0])
        print("dropped pending \(entry.id) \(quotedForTerminal(entry.name))")
    }

case .webLink, .webPassword, .webSessions, .webSessionsRevoke:
    WebCommands(configuration: configuration, invocation: invocation).run(command, words)

case .appPasswordAdd, .appPasswordList, .appPasswordRemove:
    AppPasswordCommands(configuration: configuration, invocation: invocation).run(command, words)

case .list, .show, .watch, .thumbnail, .rename, .rm, .note, .rate, .export, .import, .gallery:
    LibraryCommands(
        directory: configuration.effectiveDirectory, invocation: invocation, opened: opened,
        maxFileSize: configuration.maxFileSize
    ).run(command, words)
}
