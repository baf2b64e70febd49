import PTKAdminCommandLine
import PTKCLI
import PTKConfiguration
import PTKLibrary
import PTKSystem

// Root's `ptk` and the service user's files.
//
// ptkd runs as an unprivileged user who owns the photos and state directories; everything in
// them may have been planted by that user (a compromised ptkd). So when ptk runs as root and a
// user other than root owns the directory it works in (or a folder on the way to it), it takes
// on that user for good (setgroups, setgid, setuid) before it opens anything there. What only
// root may do is done first and kept as descriptors: opening the output named with `-o FILE`
// and the packages given to `import`, each without following links. An export or a gallery
// into a folder only root controls is written by ptk run again as that user, into a folder of
// its own there, and moved into place by root.

/// The environment by which root's ptk hands its child (ptk again, as the service user) the
/// folder to write an export or a gallery into, and the folder they go into afterwards.
let stagingKey = "PTK_STAGING_FD"
let stagedOutputKey = "PTK_STAGED_OUTPUT"

/// What root's ptk opened before it took on the service user.
struct RootOpened {
    /// `thumbnail -o FILE`: the file, opened (and made when missing) by root.
    var output: FileDescriptor?
    /// `import`: the packages' files, opened by root.
    var packages: [PackageFiles] = []
    /// In the child writing an export or a gallery: the folder they are moved into afterwards
    /// (the working directory is the folder to write them into).
    var stagedOutput: String?
    /// Who ptk runs as now, when it took on a user.
    var credentials: Credentials?
}

enum RootBoundary {
    /// Whether `command` works in the photos directory (else in the state directory).
    static func isLibraryCommand(_ command: AdminCommand?) -> Bool {
        switch command {
        case .list, .show, .watch, .thumbnail, .rename, .rm, .note, .rate, .export, .import, .gallery, nil:
            return true
        case .id, .idLocalSend, .trustList, .trustPending, .trustAllow, .trustRemove, .trustDeny,
             .webLink, .webPassword, .webSessions, .webSessionsRevoke:
            return false
        }
    }

    /// The directory `command` works in.
    static func directory(of command: AdminCommand?, _ configuration: DaemonConfiguration) -> String {
        isLibraryCommand(command) ? configuration.effectiveDirectory : configuration.effectiveStateDirectory
    }

    /// True when no user but root owns `path` or a folder on the way to it (what exists of it),
    /// and none of those folders lets others add or remove names.
    static func onlyRootControls(_ path: String) -> Bool { nonRootOwners(of: path).isEmpty && folderOthersMayChange(on: path) == nil }

    /// `directory` and what ptkd keeps in it, which its user may own even where root owns the
    /// directory.
    static func insides(of directory: String, for command: AdminCommand?) -> [String] {
        [directory] + (isLibraryCommand(command) ? [".ptk", ".ptk/thumbnails", ".ptk/gallery", ".incoming"]
                                                 : ["web", "web/tls", "identity", "localsend", "received"]).map { directory + "/" + $0 }
    }

    /// The user to take on for `directory`, nil when only root controls it. Exits when several
    /// users do, or when root owns the way but lets others change a folder on it.
    static func serviceUser(for directory: String, _ command: AdminCommand?) -> Credentials? {
        var owners: [(user: UInt32, group: UInt32)] = []
        for path in insides(of: directory, for: command) {
            for owner in nonRootOwners(of: path) where !owners.contains(where: { $0.user == owner.user }) { owners.append(owner) }
        }
        if owners.isEmpty, let folder = folderOthersMayChange(on: directory) {
            die("\(quotedForTerminal(folder)) may be changed by users other than root (mode g+w or o+w, no sticky bit), who could plant links and files for root's ptk there; make it writable by its owner only, or run ptk as the user ptkd runs as (sudo -u USER ptk ...)", .usage)
        }
        if owners.count > 1 {
            let list = owners.map { Credentials.of(uid: $0.user, groupIfUnknown: $0.group).description }.joined(separator: " and ")
            die("\(quotedForTerminal(directory)) is reached through folders of several users (\(list)): root's ptk acts only as the one user who owns ptkd's files; run it as that user (sudo -u USER ptk ...)", .usage)
        }
        return owners.first.map { Credentials.of(uid: $0.user, groupIfUnknown: $0.group) }
    }

    /// Run first, with the command line parsed and before anything in ptkd's directories is
    /// opened. Does nothing unless ptk runs as root over another user's directory; then opens
    /// what root must, and takes on that user (an export or gallery into root's own folder
    /// runs in a child, and this process exits with it).
    @MainActor static func cross(_ command: AdminCommand?, directory: String, invocation: Invocation<AdminOption>, words: [String]) -> RootOpened {
        var opened = RootOpened()
        guard runningAsRoot, let user = serviceUser(for: directory, command) else {
            if environment(stagingKey) != nil { die("internal: a staged child with nobody to run as", .usage) }
            return opened
        }
        opened.credentials = user
        if let text = environment(stagingKey), let raw = Int32(text), let final = environment(stagedOutputKey) {
            // The child: the folder to write into is the working directory from here on.
            takeOn(user)
            let staging = FileDescriptor(rawValue: raw)
            do { try staging.becomeWorkingDirectory() } catch { die("cannot enter the staging folder: \(error)", .cannotCreate) }
            staging.close()
            opened.stagedOutput = final
            return opened
        }
        switch command {
        case .thumbnail:
            if let output = invocation.value(.output), output != "-", onlyRootControls(parentDirectory(of: absolute(output))) {
                opened.output = openOutput(output)
            }
        case .import:
            for path in words {
                do { opened.packages.append(try PackageFiles.open(path)) } catch {
                    die(LibraryCommands.message(error), LibraryCommands.exitCode(error))
                }
            }
        case .export:
            let output = absolute(invocation.value(.output) ?? ".")
            if onlyRootControls(output) { runStaged(command!, into: output, as: user) }
        case .gallery:
            if let output = invocation.value(.output).map(absolute), onlyRootControls(output) { runStaged(command!, into: output, as: user) }
        default:
            break
        }
        takeOn(user)
        return opened
    }

    static func absolute(_ path: String) -> String { path.startsWithScalar("/") ? path : currentDirectory() + "/" + path }

    static func takeOn(_ user: Credentials) {
        do { try user.takeOn() } catch { die("cannot run as \(user), who owns ptkd's files: \(error)", .ioError) }
    }

    /// `-o FILE` opened by root: made when missing (0644), never through a symbolic link, and
    /// only a regular file.
    static func openOutput(_ path: String) -> FileDescriptor {
        let fd: FileDescriptor
        do { fd = try FileDescriptor.open(path, flags: [.writeOnly, .create, .noFollow, .nonBlocking], mode: 0o644) } catch {
            die("cannot write \(quotedForTerminal(path)): \(error.code == .tooManySymlinks ? "it is a symbolic link, which ptk does not follow" : "\(error)")", .cannotCreate)
        }
        guard let status = try? fd.status(), status.isRegularFile else {  // a status that cannot be read: not known to be a file
            die("cannot write \(quotedForTerminal(path)): not a regular file", .cannotCreate)
        }
        return fd
    }

    /// Runs the export or gallery as `user` in a child that writes into a new folder of its own
    /// inside `output`, then moves what it wrote into `output` and exits with its status.
    @MainActor static func runStaged(_ command: AdminCommand, into output: String, as user: Credentials) -> Never {
        // Made when missing (mode 0755, with its parents), as without root.
        do { if !fileExists(output) { try makeDirectories(output, mode: 0o755) } } catch {
            die("cannot create the directory \(quotedForTerminal(output)): \(error)", .cannotCreate)
        }
        let folder: FileDescriptor
        do { folder = try FileDescriptor.open(output, flags: [.readOnly, .directory, .noFollow]) } catch {
            die("cannot open the directory \(quotedForTerminal(output)): \(error.code == .notDirectory ? "not a directory" : "\(error)")", .cannotCreate)
        }
        var name = ""
        var staging: FileDescriptor?
        for _ in 0..<8 where staging == nil {
            var g = SystemRandomNumberGenerator()
            name = ".ptk-staging-\(processID())-" + String(g.next() as UInt64, radix: 16)
            do {
                try folder.makeDirectory(name, mode: 0o700)
                let made = try FileDescriptor.open(name, relativeTo: folder, flags: [.readOnly, .directory, .noFollow])
                staging = made
                try made.give(to: user)
            } catch where error.code == .exists {
                continue
            } catch {
                die("cannot make a folder in \(quotedForTerminal(output)) for \(user) to write into: \(error)", .cannotCreate)
            }
        }
        guard let staging else { die("cannot make a folder in \(quotedForTerminal(output)): every name tried was taken", .cannotCreate) }
        let ending: Child.Ending
        do {
            let handed = try staging.inheritable()
            defer { handed.close() }
            ending = try runAndWait([try executablePath()] + CommandLine.arguments.dropFirst(),
                                    environment: processEnvironment().filter { !$0.hasPrefix(stagingKey + "=") && !$0.hasPrefix(stagedOutputKey + "=") }
                                        + ["\(stagingKey)=\(handed.rawValue)", "\(stagedOutputKey)=\(output)"])
        } catch {
            die("cannot run ptk as \(user): \(error)", .ioError)
        }
        var status: Int32
        switch ending {
        case .exited(let code): status = code
        case .signalled: status = AdminExitStatus.ioError.rawValue
        }
        // What the child finished is moved into place; what it left half made is removed.
        do {
            for entry in try staging.entries() where !entry.hasPrefix(".") {
                do {
                    if command == .gallery, entry == "thumbnails", (try? folder.status(of: entry)) != nil {  // none there: moved whole below
                        try merge(entry, from: staging, into: folder)
                    } else if command == .gallery {
                        try folder.moveReplacing(entry, in: staging, to: entry)
                    } else {
                        try folder.move(entry, in: staging, to: entry)
                    }
                } catch where error.code == .exists && command == .export {
                    writeToStandardError("ptk: \(quotedForTerminal(output + "/" + entry)) exists; ptk export never replaces a package")
                    status = AdminExitStatus.notFound.rawValue
                } catch {
                    writeToStandardError("ptk: cannot move \(quotedForTerminal(entry)) into \(quotedForTerminal(output)): \(error)")
                    status = AdminExitStatus.cannotCreate.rawValue
                }
            }
        } catch {
            writeToStandardError("ptk: cannot read the folder \(user) wrote into (\(quotedForTerminal(output + "/" + name))): \(error)")
            status = AdminExitStatus.ioError.rawValue
        }
        removeTree(name, in: folder)
        exitProcess(status)
    }

    /// Moves every file of the folder `name` in `source` into the folder of that name in
    /// `target`, replacing files of the same names; neither folder is followed if a link.
    static func merge(_ name: String, from source: FileDescriptor, into target: FileDescriptor) throws(SystemError) {
        let from = try FileDescriptor.open(name, relativeTo: source, flags: [.readOnly, .directory, .noFollow])
        defer { from.close() }
        let to = try FileDescriptor.open(name, relativeTo: target, flags: [.readOnly, .directory, .noFollow])
        defer { to.close() }
        for entry in try from.entries() { try to.moveReplacing(entry, in: from, to: entry) }
    }

    /// Removes `name` in `folder` and, if it is a folder, all it holds, following no link.
    static func removeTree(_ name: String, in folder: FileDescriptor) {
        if let sub = try? FileDescriptor.open(name, relativeTo: folder, flags: [.readOnly, .directory, .noFollow]) {  // not a folder: unlinked below
            for entry in (try? sub.entries()) ?? [] { removeTree(entry, in: sub) }  // unreadable: the rmdir below says so
            sub.close()
            do { try folder.removeDirectory(name) } catch {
                writeToStandardError("ptk: cannot remove the staging folder \(quotedForTerminal(name)): \(error)")
            }
        } else {
            try? folder.unlink(name)  // what cannot be removed stays in the staging folder, whose removal then says so
        }
    }
}
