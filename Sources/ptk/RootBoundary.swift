import PTKAdminCommandLine
import PTKCLI
import PTKConfiguration
import PTKLibrary
import PTKSystem
import PTKVocabulary

// Root's `ptk` and the service user's files.
//
// ptkd runs as an unprivileged user who owns the photos and state directories; everything in
// them may have been planted by that user (a compromised ptkd). So when ptk runs as root and a
// user other than root owns the directory it works in (or a folder on the way to it), it takes
// on that user for good (setgroups, setgid, setuid) before it opens anything there. Whom to act
// as is decided from the folders as they were opened, one by one by descriptor (`openWay`), and
// the directory opened at the end is the one the command works in: a folder swapped on the way
// for a moment is either the one judged or not on the way at all, and a way that cannot be
// opened is refused, never taken for root's. What only root may do is done first and kept as
// descriptors: opening the packages given to `import`, without following links. An export, a
// gallery or a thumbnail (`-o FILE`) into a folder that user does not control is written by ptk
// run again as that user, into a folder of its own there, and moved into place by root.

/// The environment by which root's ptk hands its child (ptk again, as the service user) the
/// folder to write an export or a gallery into, and the folder they go into afterwards; the
/// directory it decided on, open, and the user it decided to act as ("UID:GID").
let stagingKey = "PTK_STAGING_FD"
let stagedOutputKey = "PTK_STAGED_OUTPUT"
let stagedDirectoryKey = "PTK_STAGED_DIRECTORY_FD"
let stagedUserKey = "PTK_STAGED_USER"

/// What root's ptk opened before it took on the service user.
struct RootOpened {
    /// `import`: the packages' files, opened by root.
    var packages: [PackageFiles] = []
    /// In the child writing an export, a gallery or a thumbnail: the folder they are moved
    /// into afterwards (the working directory is the folder to write them into).
    var stagedOutput: String?
    /// Who ptk runs as now, when it took on a user.
    var credentials: Credentials?
    /// The directory the command works in, as root opened it when it decided whom to act as
    /// (nil when ptk does not run as root).
    var directory: FileDescriptor?
}

enum RootBoundary {
    /// Whether `command` works in the photos directory (else in the state directory).
    static func isLibraryCommand(_ command: AdminCommand?) -> Bool {
        switch command {
        case .list, .show, .watch, .thumbnail, .rename, .rm, .note, .rate, .export, .import, .gallery, nil:
            return true
        case .id, .idLocalSend, .trustList, .trustPending, .trustAllow, .trustRemove, .trustDeny,
            .webLink, .webPassword, .webSessions, .webSessionsRevoke, .appPasswordAdd, .appPasswordList,
            .appPasswordRemove:
            return false
        }
    }

    /// The directory `command` works in.
    static func directory(of command: AdminCommand?, _ configuration: DaemonConfiguration) -> String {
        isLibraryCommand(command) ? configuration.effectiveDirectory : configuration.effectiveStateDirectory
    }

    /// True when `user` is the only user but root who owns `path` or a folder on the way to it
    /// (what exists of it, walked by descriptors), and no folder on the way lets anyone else
    /// add or remove names: what ptk writes there it writes as `user`. Elsewhere (and where the
    /// way cannot be walked) root writes it, through descriptors.
    static func serviceUserControls(_ path: String, _ user: Credentials) -> Bool {
        // root stages it, and its own open says what is wrong there
        guard let way = try? openWay(path, allowingMissing: true) else { return false }
        way.directory?.close()
        let owners = way.owners
        guard owners.count == 1, owners[0].user == user.user else { return false }
        return way.changeableFolder(trusting: user.user) == nil
    }

    /// What ptkd keeps in the directory of `command`, which its user may own even where root
    /// owns the directory.
    static func insides(for command: AdminCommand?) -> [String] {
        isLibraryCommand(command)
            ? [".ptk", ".ptk/thumbnails", ".ptk/previews", ".ptk/gallery", ".incoming"]
            : ["web", "web/tls", "identity", "localsend", "received"]
    }

    /// The folders of `command`'s directory whose files ptk reads the bytes of (the index;
    /// the trust lists, the web logins, the identities), "" for the directory itself: a file
    /// there another user owns (a folder of root's holding files the service user can still
    /// write) counts that user as an owner. The photos and their thumbnails are not looked at
    /// one by one (a library holds a great many).
    static func foldersOfFiles(for command: AdminCommand?) -> [String] {
        isLibraryCommand(command) ? [".ptk"] : ["", "web", "web/tls", "identity", "localsend"]
    }

    /// Why root's ptk refuses a way it could not walk (`error`, from `openWay`).
    static func unreachable(_ error: SystemError, directory: String, _ command: AdminCommand?) -> String {
        let why =
            "root's ptk decides whom to act as from the folders it opens on the way (one by one, by descriptor), "
            + "so it refuses a way it cannot open: at the next look it could lead elsewhere"
        let part = error.object ?? directory
        if error.code == .noSuchFile && part == directory {
            let (what, option) =
                isLibraryCommand(command) ? ("received-photos directory", "--dir") : ("state directory", "--state-dir")
            return
                "the \(what) \(quotedForTerminal(directory)) does not exist (has ptkd run on this host? start it: sudo systemctl start ptkd; or give \(option)); \(why); refused"
        }
        let reason: String
        switch error.code {
        case .noSuchFile: reason = "is missing"
        case .notDirectory: reason = "is neither a folder nor a symbolic link"
        case .tooManySymlinks: reason = "is reached through more than 40 symbolic links"
        default: reason = "cannot be opened (\(error))"
        }
        return "\(quotedForTerminal(part)), on the way to \(quotedForTerminal(directory)), \(reason); \(why); refused"
    }

    /// The user to take on for `directory`, nil when only root controls it, and the directory
    /// itself, opened on the way that was judged (`openWay`, then ptkd's folders in it). Exits
    /// (64; with `quiet`, 0 and no word: a Tab) when a part of the way cannot be opened, when
    /// several users own folders on it, or when root owns the way but lets others change a
    /// folder on it.
    static func serviceUser(for directory: String, _ command: AdminCommand?, quiet: Bool = false) -> (
        user: Credentials?, directory: FileDescriptor
    ) {
        func refuse(_ message: String) -> Never {
            if quiet { exitProcess(0) }
            die(message, .usage)
        }
        let way: Way
        do { way = try openWay(directory) } catch { refuse(unreachable(error, directory: directory, command)) }
        guard let opened = way.directory else {
            refuse(
                unreachable(
                    SystemError(call: "open", object: directory, errno: Errno.noSuchFile.rawValue),
                    directory: directory, command))
        }
        var ways = [way]
        for inside in insides(for: command) {
            do { ways.append(try way.beneath(inside)) } catch {
                refuse(unreachable(error, directory: directory, command))
            }
        }
        var files: [WayStep] = []
        for folder in foldersOfFiles(for: command) {
            do { files += try way.entries(of: folder) ?? [] } catch {
                refuse(unreachable(error, directory: directory, command))
            }
        }
        var owners: [(user: UInt32, group: UInt32)] = []
        for steps in ways.map(\.steps) + [files] {
            for owner in Way.owners(steps) where !owners.contains(where: { $0.user == owner.user }) {
                owners.append(owner)
            }
        }
        if owners.count > 1 {
            let list = owners.map { Credentials.of(uid: $0.user, groupIfUnknown: $0.group).description }.joined(
                separator: " and ")
            refuse(
                "\(quotedForTerminal(directory)) is reached through folders of several users (\(list)): root's ptk acts only as the one user who owns ptkd's files; run it as that user (sudo -u USER ptk ...)"
            )
        }
        // A folder on the way through which a user other than root and the one taken on could
        // swap what lies below for a tree of its own (or make what is missing there): root
        // would act among that user's files, or act as the user taken on among a third one's.
        for w in ways {
            if let folder = w.changeableFolder(trusting: owners.first?.user) {
                refuse(
                    refusal(
                        folder, directory: directory,
                        user: owners.first.map { Credentials.of(uid: $0.user, groupIfUnknown: $0.group) }))
            }
        }
        // A file whose bytes root's ptk reads (the index, its -wal, a trust list) that a user
        // other than root and the one taken on may write, as a folder they may change: root
        // would parse and rewrite what they write, as root.
        if let file = Way.changeableFile(files, trusting: owners.first?.user) {
            refuse(
                refusal(
                    file, directory: directory,
                    user: owners.first.map { Credentials.of(uid: $0.user, groupIfUnknown: $0.group) }))
        }
        guard let owner = owners.first else { return (nil, opened) }
        let user = Credentials.of(uid: owner.user, groupIfUnknown: owner.group)
        // Never root's group, which the service user does not have (folders chowned without one).
        guard user.group != 0 else {
            refuse(
                "\(user) owns \(quotedForTerminal(directory)) but has no group of its own here (no password entry, and its folders are in root's group): give them its group (chown -R USER:GROUP), or run ptk as that user"
            )
        }
        return (user, opened)
    }

    /// Run first, with the command line parsed and before anything in ptkd's directories is
    /// opened. Does nothing unless ptk runs as root; then walks the way to the command's
    /// directory by descriptors and keeps that directory open (`opened.directory`), and over
    /// another user's directory opens what root must and takes on that user (an export or
    /// gallery into root's own folder runs in a child, and this process exits with it). With
    /// `quiet` (a Tab's completion), a refusal exits 0 without a word. `maxFileSize` (ptkd's
    /// `max-file-size`) bounds the photo of a package root takes from its child.
    @MainActor static func cross(
        _ command: AdminCommand?, directory: String, invocation: Invocation<AdminOption>, words: [String],
        maxFileSize: Int64, quiet: Bool = false
    ) -> RootOpened {
        var opened = RootOpened()
        guard runningAsRoot else {
            if environment(stagingKey) != nil { die("internal: a staged child that does not run as root", .usage) }
            return opened
        }
        if environment(stagingKey) != nil {
            // The child: root's ptk decided already, and handed over the directory and the user.
            guard let raw = environment(stagingKey).flatMap({ Int32($0) }), let final = environment(stagedOutputKey),
                let decided = environment(stagedDirectoryKey).flatMap({ Int32($0) }),
                let ids = environment(stagedUserKey)?.split(separator: ":").compactMap({ UInt32($0) }), ids.count == 2
            else {
                die("internal: a staged child without its folder, directory or user", .usage)
            }
            let user = Credentials.of(uid: ids[0], groupIfUnknown: ids[1])
            takeOn(user)
            let staging = FileDescriptor(rawValue: raw)
            do { try staging.becomeWorkingDirectory() } catch {
                die("cannot enter the staging folder: \(error)", .cannotCreate)
            }
            staging.close()
            opened.credentials = user
            opened.directory = FileDescriptor(rawValue: decided)
            opened.stagedOutput = final
            return opened
        }
        let (decided, working) = serviceUser(for: directory, command, quiet: quiet)
        opened.directory = working
        guard let user = decided else {
            // Only root controls the way: root works in the directory it opened.
            return opened
        }
        opened.credentials = user
        switch command {
        case .thumbnail:
            if let output = invocation.value(.output), output != "-" {
                let (folder, name) = splitLastComponent(absolute(output))
                let into = folder.map { $0.isEmpty ? "/" : $0 } ?? absolute("")
                guard !name.isEmpty, name != ".", name != ".." else {
                    die("cannot write \(quotedForTerminal(output)): not a file name", .cannotCreate)
                }
                if !serviceUserControls(into, user) {
                    runStaged(command!, into: into, file: name, as: user, directory: working, maxFileSize: maxFileSize)
                }
            }
        case .import:
            for path in words {
                do { opened.packages.append(try PackageFiles.open(path)) } catch {
                    die(LibraryCommands.message(error), LibraryCommands.exitCode(error))
                }
            }
        case .export:
            let output = invocation.value(.output).map(absolute) ?? absolute("")
            if !serviceUserControls(output, user) {
                runStaged(command!, into: output, as: user, directory: working, maxFileSize: maxFileSize)
            }
        case .gallery:
            if let output = invocation.value(.output).map(absolute), !serviceUserControls(output, user) {
                runStaged(command!, into: output, as: user, directory: working, maxFileSize: maxFileSize)
            }
        default:
            break
        }
        takeOn(user)
        checkStillLeadsThere(directory, working, quiet: quiet)
        return opened
    }

    /// After taking on the service user: exits (64) when `path` now leads to another directory
    /// than `opened`, the one decided on (a folder on the way was swapped since). The library
    /// works in `opened` itself; the state directory's stores open it by its path, so their
    /// way must still end there. One the user taken on cannot open by its path is left to the
    /// command, whose own open says so.
    static func checkStillLeadsThere(_ path: String, _ opened: FileDescriptor, quiet: Bool) {
        // the command's own open says why
        guard let now = try? FileDescriptor.open(path, flags: [.readOnly, .directory]) else { return }
        defer { now.close() }
        // an open directory always has a status
        guard let a = try? now.status(), let b = try? opened.status() else { return }
        if FileIdentity(a) != FileIdentity(b) {
            if quiet { exitProcess(0) }
            die(
                "\(quotedForTerminal(path)) leads to another directory than the one root's ptk opened a moment ago (a folder on the way was renamed or replaced meanwhile); refused: try again, and see who changes it",
                .usage)
        }
    }

    /// `path` made absolute from the working directory ("" is the working directory itself).
    static func absolute(_ path: String) -> String {
        if path.startsWithScalar("/") { return path }
        let here = currentDirectory()
        guard here.startsWithScalar("/") else {
            die("cannot tell the working directory (getcwd failed): give absolute paths", .usage)
        }
        return path.isEmpty || path == "." ? here : here + "/" + path
    }

    static func takeOn(_ user: Credentials) {
        do { try user.takeOn() } catch { die("cannot run as \(user), who owns ptkd's files: \(error)", .ioError) }
    }

    /// Runs the export, gallery or thumbnail (`file`, its name in `output`) as `user` in a
    /// child, then moves what it made into `output` and exits with its status. The child writes
    /// into a folder given to it inside a folder of root's (mode 0700) in `output`: nobody but
    /// root can reach it by name while it works. Only what the command makes is moved
    /// (packages; the page and its thumbnails; the thumbnail's file), each a regular file of one
    /// name or a folder, given to root first; a child that failed leaves nothing behind (a
    /// thumbnail's FILE is replaced only by a whole thumbnail). Interrupted (^C), root ends the
    /// child, removes its folder, and ends so too.
    @MainActor static func runStaged(
        _ command: AdminCommand, into output: String, file: String? = nil, as user: Credentials,
        directory: FileDescriptor, maxFileSize: Int64
    ) -> Never {
        // An export's or gallery's folder is made when missing (mode 0755, with its parents),
        // as without root; by descriptor. A thumbnail's must be there.
        if file == nil {
            do { try makeDirectories(output, mode: 0o755, ownerLike: nil) } catch {
                die("cannot create the directory \(quotedForTerminal(output)): \(error)", .cannotCreate)
            }
        }
        let folder: FileDescriptor
        do { folder = try openDirectory(output, followingLinks: true) } catch {
            die(
                "cannot open the directory \(quotedForTerminal(output)): \(error.code == .notDirectory ? "not a directory" : "\(error)")",
                .cannotCreate)
        }
        var name = ""
        var staging: FileDescriptor?
        for _ in 0..<8 where staging == nil {
            var g = SystemRandomNumberGenerator()
            name = ".ptk-staging-\(processID())-" + String(g.next() as UInt64, radix: 16)
            do {
                try folder.makeDirectory(name, mode: 0o700)
                staging = try FileDescriptor.open(name, relativeTo: folder, flags: [.readOnly, .directory, .noFollow])
            } catch  where error.code == .exists {
                continue
            } catch {
                die(
                    "cannot make a folder in \(quotedForTerminal(output)) for \(user) to write into: \(error)",
                    .cannotCreate)
            }
        }
        guard let staging else {
            die("cannot make a folder in \(quotedForTerminal(output)): every name tried was taken", .cannotCreate)
        }
        let work: FileDescriptor
        do {
            try staging.makeDirectory("work", mode: 0o700)
            work = try FileDescriptor.open("work", relativeTo: staging, flags: [.readOnly, .directory, .noFollow])
            try work.give(to: user)
        } catch {
            removeTree(name, in: folder)
            die(
                "cannot make a folder in \(quotedForTerminal(output)) for \(user) to write into: \(error)",
                .cannotCreate)
        }
        let ending: Child.Ending
        let interruption: Int32?
        do {
            let handed = try work.inheritable()
            defer { handed.close() }
            let decided = try directory.inheritable()
            defer { decided.close() }
            let keys = [stagingKey, stagedOutputKey, stagedDirectoryKey, stagedUserKey].map { $0 + "=" }
            (ending, interruption) = try runAndWait(
                [try executablePath()] + CommandLine.arguments.dropFirst(),
                environment: processEnvironment().filter { entry in !keys.contains { entry.hasPrefix($0) } }
                    + [
                        "\(stagingKey)=\(handed.rawValue)", "\(stagedOutputKey)=\(output)",
                        "\(stagedDirectoryKey)=\(decided.rawValue)", "\(stagedUserKey)=\(user.user):\(user.group)",
                    ])
        } catch {
            removeTree(name, in: folder)
            die("cannot run ptk as \(user): \(error)", .ioError)
        }
        if let interruption {
            work.close()
            staging.close()
            removeTree(name, in: folder)
            writeToStandardError(
                "ptk: interrupted: \(command.rawValue) stopped; nothing of it was moved into \(escapedForTerminal(output))"
            )
            endBySignal(interruption)
        }
        var status: Int32
        switch ending {
        case .exited(let code): status = code
        case .signalled: status = AdminExitStatus.ioError.rawValue
        }
        func fail(_ message: String, _ code: AdminExitStatus) {
            writeToStandardError("ptk: " + escapedForTerminal(message))
            if status == 0 { status = code.rawValue }
        }
        do {
            switch command {
            case .thumbnail:
                if let file, (try? work.status(of: file)) != nil {  // none: the child failed, and said why
                    do {
                        try adopt(file, in: work, limit: Int64(Thumbnailer.largestThumbnailBytes))
                        try folder.moveReplacing(file, in: work, to: file)
                    } catch {
                        fail("cannot move the thumbnail into \(output)/\(file): \(error)", .cannotCreate)
                    }
                }
            case .export:
                for entry in try work.entries() where entry.hasSuffix(".ptk") && !entry.hasPrefix(".") {
                    do {
                        // A package's two files (PTKStore's Package): the photo within max-file-size.
                        try adopt(
                            entry, in: work, limit: 0,
                            files: ["photo.data": maxFileSize, "photo.metadata": PackageFiles.metadataLimit])
                        try folder.move(entry, in: work, to: entry)
                    } catch  where error.code == .exists {
                        fail("\(output)/\(entry) exists; ptk export never replaces a package", .notFound)
                    } catch {
                        fail("cannot move \(entry) into \(output): \(error)", .cannotCreate)
                    }
                }
            default:
                // none: a gallery of photos without thumbnails
                if (try? work.status(of: "thumbnails"))?.isDirectory == true {
                    do {
                        let made = try FileDescriptor.open(
                            "thumbnails", relativeTo: work, flags: [.readOnly, .directory, .noFollow])
                        defer { made.close() }
                        do { try folder.makeDirectory("thumbnails", mode: 0o755) } catch  where error.code == .exists {}
                        let target = try FileDescriptor.open(
                            "thumbnails", relativeTo: folder, flags: [.readOnly, .directory, .noFollow])
                        defer { target.close() }
                        for entry in try made.entries() where isThumbnailName(entry) {
                            try adopt(entry, in: made, limit: Int64(Thumbnailer.largestThumbnailBytes))
                            try target.moveReplacing(entry, in: made, to: entry)
                        }
                    } catch {
                        fail("cannot move the thumbnails into \(output)/thumbnails: \(error)", .cannotCreate)
                    }
                }
                if (try? work.status(of: "index.html")) != nil {  // none: the child failed, and said why
                    do {
                        try adopt("index.html", in: work, limit: .max)  // as long as the index's rows make it
                        try folder.moveReplacing("index.html", in: work, to: "index.html")
                    } catch {
                        fail("cannot move index.html into \(output): \(error)", .cannotCreate)
                    }
                }
            }
        } catch {
            fail("cannot read the folder \(user) wrote into: \(error)", .ioError)
        }
        work.close()
        staging.close()
        removeTree(name, in: folder)
        exitProcess(status)
    }
}
