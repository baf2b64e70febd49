import PTKAdminCommandLine
import PTKCLI
import PTKLibrary
import PTKPhotoPages
import PTKSystem
import PTKVocabulary

/// `ptk list|show|thumbnail|rename|rm|note|rate|export|import|gallery`: the photo library of
/// the received-photos directory (see PTKLibrary).
struct LibraryCommands {
    let directory: String
    let invocation: Invocation<AdminOption>
    /// What root opened before taking on the service user (RootBoundary).
    var opened = RootOpened()
    /// ptkd's `max-file-size`: the largest photo an export copies.
    var maxFileSize: Int64 = .max

    /// The exit status for a library error.
    static func exitCode(_ error: LibraryError) -> AdminExitStatus {
        switch error.kind {
        case .notFound, .refused: return .notFound
        case .badInput: return .invalidData
        case .io: return .ioError
        }
    }

    /// The error's text, with the closest names when a name matched nothing.
    static func message(_ error: LibraryError) -> String {
        guard case .notFound(let suggestions) = error.kind, !suggestions.isEmpty else { return error.description }
        return error.description + "; did you mean " + suggestions.map { "'\($0)'" }.joined(separator: " or ") + "?"
    }

    func fail(_ error: LibraryError) -> Never { die(Self.message(error), Self.exitCode(error)) }

    func open(create: Bool = false) -> PhotoLibrary {
        // Missing: say what it means rather than the open's error (other errors are the open's to
        // tell). Root's ptk opened the directory already (RootBoundary), and works in that one.
        if opened.directory == nil {
            do { _ = try fileStatus(directory) } catch  where error.code == .noSuchFile {
                die(
                    "the received-photos directory \(directory) does not exist: ptkd has not run on this host yet (start it: sudo systemctl start ptkd), or give --dir",
                    .nothingYet)
            } catch {}
        }
        do {
            let library = try PhotoLibrary(
                directory: directory, opened: opened.directory, create: create, lockPatience: indexPatience)
            library.maxFileSize = maxFileSize
            return library
        } catch {
            let who = opened.credentials.map { " (root's ptk works as \($0), who owns ptkd's files)" } ?? ""
            die(
                error.description + (error.description.contains("Permission denied") ? who : ""),
                error.kind == .io && !fileExists(directory + "/.ptk/index.sqlite") ? .nothingYet : Self.exitCode(error))
        }
    }

    /// Runs a library command with its arguments `words`.
    func run(_ command: AdminCommand, _ words: [String]) {
        switch command {
        case .list: list()
        case .show: show(words[0])
        case .watch: watch()
        case .thumbnail: thumbnail(words[0])
        case .rename: rename(words[0], to: words[1])
        case .rm: remove(words)
        case .note: note(words[0], words.dropFirst().joined(separator: " "))
        case .rate: rate(words[0], words[1])
        case .export: export(words)
        case .import: importPackages(words)
        case .gallery: gallery()
        case .id, .idLocalSend, .trustList, .trustPending, .trustAllow, .trustRemove, .trustDeny,
            .webLink, .webPassword, .webSessions, .webSessionsRevoke, .appPasswordAdd, .appPasswordList,
            .appPasswordRemove:
            preconditionFailure("not a library command: \(command.rawValue)")
        }
    }

    func list() {
        // The table allows only the orders there are.
        let sort = invocation.value(.sort).flatMap(SortOrder.init(rawValue:)) ?? .time
        let library = open()
        let photos: [Photo]
        do { photos = try library.all(sort: sort, from: invocation.value(.from)) } catch { fail(error) }
        let byID = Dictionary(photos.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
        if invocation.has(.json) {
            Self.writeJSON(
                photos.map {
                    var m = PhotoMetadata($0)
                    m.indexed = $0.indexed
                    m.id = $0.id
                    m.livePhotoVideo = $0.motionID.flatMap { byID[$0]?.name }
                    m.livePhotoStill = $0.stillID.flatMap { byID[$0]?.name }
                    return m
                })
            return
        }
        // A Live Photo is one entry (issue 58): its still's, naming both files; its video has
        // none of its own when its still is listed too.
        let items = Photo.liveItems(photos)
        let rows = items.map { Self.row($0.photo, motion: $0.motion) }
        var widths = [0, 0, 0, 0, 0, 0]
        for row in rows { for (i, cell) in row.enumerated() { widths[i] = max(widths[i], Self.width(cell)) } }
        var out = ""
        out.reserveCapacity(rows.count * 96)
        for row in rows {
            for (i, cell) in row.enumerated() {
                if i == row.count - 1 {
                    out += cell
                    break
                }
                let pad = String(repeating: " ", count: widths[i] - Self.width(cell) + 2)
                // Sizes line up on the right, everything else on the left.
                out += i == 1 ? pad.dropLast(2) + cell + "  " : cell + pad
            }
            out += "\n"
        }
        writeStandardOutput(out)
        let pending = photos.filter { !$0.indexed }.count
        let from = invocation.value(.from).map { " from '\($0)'" } ?? ""
        let live = items.count { $0.motion != nil }
        writeToStandardError(
            "\(items.count) photo\(items.count == 1 ? "" : "s")\(from) in \(directory)"
                + (live == 0
                    ? ""
                    : live == 1
                        ? " (1 of them a Live Photo: a still with its video)"
                        : " (\(live) of them Live Photos: each a still with its video)")
                + (pending > 0 ? ", \(pending) still being indexed" : ""))
    }

    /// Writes `list` as `PhotoMetadata.json` writes it (pretty-printed, terminal-safe), a
    /// thousand entries at a time: the same bytes as one array, without holding all of its text
    /// (100,000 photos' JSON is some 100 MB, and three copies of it were made at once).
    static func writeJSON(_ list: [PhotoMetadata]) {
        let chunk = 1000
        guard list.count > chunk else {
            writeStandardOutput(terminalSafeJSON(PhotoMetadata.json(list)) + "\n")
            return
        }
        for start in stride(from: 0, to: list.count, by: chunk) {
            let end = min(start + chunk, list.count)
            let text = terminalSafeJSON(PhotoMetadata.json(Array(list[start..<end])))
            // "[\n" + the entries + "\n]", as the encoder writes an array: the entries alone,
            // joined to those before by ",\n".
            guard text.utf8.starts(with: "[\n".utf8), text.utf8.reversed().starts(with: "]\n".utf8) else {
                preconditionFailure("the JSON encoder wrote an array otherwise than \"[\\n ... \\n]\"")
            }
            var part = String(
                decoding: text.utf8.dropFirst(start == 0 ? 0 : 2).dropLast(end == list.count ? 0 : 2), as: UTF8.self)
            part += end == list.count ? "\n" : ",\n"
            writeStandardOutput(part)
        }
    }

    /// How many columns a cell takes: its characters, counted by its bytes when it is ASCII
    /// (almost every cell; counting characters of 100,000 lines is what took longest).
    static func width(_ cell: String) -> Int {
        let ascii = cell.utf8.withContiguousStorageIfAvailable { bytes in bytes.allSatisfy { $0 < 0x80 } } ?? false
        return ascii ? cell.utf8.count : cell.count
    }

    /// A photo's line in `list`: name, size, dimensions (and a video's length: "1920x1080
    /// 0:12"), taken (else received), sender, rating.
    /// Every cell is shown with controls escaped, as `ls` does: each comes from the index, which
    /// the service user may have written.
    /// A photo's line of `list`; a Live Photo's still with its `motion` (issue 58): both names,
    /// both files' bytes, and "live" with the motion's length after the still's size.
    static func row(_ p: Photo, motion: Photo? = nil) -> [String] {
        var size = p.dimensions + (p.duration.map { " " + DurationText.clock($0) } ?? "")
        if let motion { size += " live" + (motion.duration.map { " " + DurationText.clock($0) } ?? "") }
        return [
            p.name + (motion.map { " + " + $0.name } ?? ""), formatBytes(Double(p.size + (motion?.size ?? 0))), size,
            when(p), p.senderName ?? "-",
            p.rating.map { "\($0)/5" } ?? "-",
        ].map(escapedForTerminal)
    }

    /// When a photo was taken, else received, for `list`'s column: an instant (received, or
    /// taken with an offset) in the host's time zone, named ("2026-12-02 07:15 CET"); a taken
    /// time without an offset as the camera's clock said it ("2024-07-03 14:22").
    static func when(_ p: Photo) -> String {
        if let taken = p.taken, let instant = WallTime(iso8601: taken) { return instant.localMinutes }
        return p.takenMinutes ?? p.received.localMinutes
    }

    /// `ptk watch`: each photo as it is indexed, in id order, from `--since` on.
    func watch() {
        ignoreBrokenPipeSignal()
        let wake: WakePipe
        do { wake = try WakePipe() } catch { die("cannot watch: \(error)", .ioError) }
        handleTerminationSignals(wake: wake, secondMessage: "ptk: stopped", secondExitCode: 0)
        let library = open()
        var last: Int64
        switch invocation.value(.since) ?? "now" {
        case "now":
            do { last = try library.lastID() } catch { fail(error) }
        case "all":
            last = 0
        case let text:
            guard let id = Int64(text), id >= 0 else {
                usageError("--since takes now, all or a photo's id, not '\(text)'")
            }
            last = id
        }
        let json = invocation.has(.json)
        while true {
            let batch: [Photo]
            do { batch = try library.photos(after: last, limit: 256) } catch { fail(error) }
            var out = ""
            // In id order, each once indexed: one still waiting holds back those after it.
            for p in batch {
                guard p.indexed else { break }
                if json {
                    var m = PhotoMetadata(p)
                    m.indexed = true
                    m.id = p.id
                    out += escapingTerminalControlsInJSON(m.jsonLine()) + "\n"
                } else {
                    out += ([String(p.id)] + Self.row(p)).joined(separator: "  ") + "\n"
                }
                last = p.id
            }
            if !out.isEmpty {
                var text = out
                let written = text.withUTF8 { bytes in
                    Result { () throws(SystemError) in
                        try FileDescriptor.standardOutput.writeAll(UnsafeRawBufferPointer(bytes))
                    }
                }
                // The reader went away (a pipe closed, `head` done): watching is over.
                if case .failure = written { exitProcess(0) }
            }
            if batch.count == 256 && batch.last?.id == last { continue }
            // A signal makes the pipe readable, and a reader that went away shows as an error on
            // standard output (a pipe whose read end is closed): either ends it. Otherwise look
            // again in a quarter second.
            if let ready = try? poll(
                [(wake.readEnd, .readable), (.standardOutput, [])], until: .now + .milliseconds(250)),
                ready.contains(where: { !$0.isEmpty })
            {
                exitProcess(0)
            }
        }
    }

    /// The inbox sources `show` lists at most.
    static let shownSources = 20

    func show(_ name: String) {
        let library = open()
        let photo: Photo
        do { photo = try library.find(name) } catch { fail(error) }
        let partner: Photo?
        do { partner = try library.livePartner(of: photo) } catch { fail(error) }
        if invocation.has(.json) {
            var m = PhotoMetadata(photo)
            m.indexed = photo.indexed
            m.id = photo.id
            m.livePhotoVideo = photo.motionID == nil ? nil : partner?.name
            m.livePhotoStill = photo.stillID == nil ? nil : partner?.name
            print(terminalSafeJSON(m.json()))
            return
        }
        // Where it came from (issue 56): a hostile inbox may hold thousands of copies; a few are shown.
        let sources: [InboxSourceRecord]
        do { sources = try library.inboxSources(ofPhoto: photo.name, limit: Self.shownSources + 1) } catch {
            fail(error)
        }
        let details = photo.details(
            thumbnailFolder: library.thumbnailFolder, sources: Array(sources.prefix(Self.shownSources)),
            moreSources: sources.count > Self.shownSources, livePartner: partner)
        for (key, value) in details {
            // Times in the host's time zone, named (TZ honoured); --json keeps UTC.
            let text: String
            switch value {
            case .text(let t): text = t
            case .time(let t): text = t.local
            }
            print("\(key):".padding(11) + escapedForTerminal(text))
        }
    }

    /// `ptk thumbnail NAME [-o FILE|-]`: the bytes of its largest gallery thumbnail. An image
    /// is never written to a terminal (`-o -` included; redirect it, or pipe it through `cat`);
    /// FILE is replaced only by a whole thumbnail (a temporary renamed into place; root's ptk
    /// has its child write it so, see RootBoundary), never left empty by a failure.
    func thumbnail(_ name: String) {
        let output = invocation.value(.output)
        if output == nil || output == "-", FileDescriptor.standardOutput.isTerminal {
            usageError(
                "the thumbnail is an image, and standard output is a terminal: give -o FILE, or redirect standard output"
            )
        }
        let library = open()
        let bytes: [UInt8]
        do {
            let photo = try library.find(name)
            guard let b = try library.thumbnail(of: photo, side: Thumbnailer.gallerySides.max()!) else {
                die(
                    "'\(escapedForTerminal(photo.name))' has no thumbnail: \(photo.indexed ? photo.problem ?? "unknown reason" : "not indexed yet")",
                    .notFound)
            }
            bytes = b.bytes
        } catch { fail(error) }
        if let output, output != "-" {
            // Root's child writes into its working directory, a folder root moves it from.
            let path = opened.stagedOutput == nil ? output : lastPathComponent(output)
            do { try writeFileAtomically(path, bytes, mode: 0o644) } catch {
                die("cannot write \(quotedForTerminal(output)): \(error)", .cannotCreate)
            }
            print("wrote \(escapedForTerminal(output)) (\(formatBytes(Double(bytes.count))))")
        } else {
            do { try FileDescriptor.standardOutput.writeAll(bytes) } catch {
                die("cannot write the thumbnail: \(error)", .ioError)
            }
        }
    }

    func rename(_ name: String, to new: String) {
        do {
            let photo = try open().rename(name, to: new)
            print("renamed '\(escapedForTerminal(name))' to '\(escapedForTerminal(photo.name))'")
        } catch { fail(error) }
    }

    func remove(_ words: [String]) {
        let library = open()
        var status = AdminExitStatus.done
        for name in words {
            do {
                let done = try library.removeLivePhoto(name)
                print("removed '\(escapedForTerminal(done.removed[0].name))'")
                // A Live Photo's still takes its video with it (issue 58), and says so.
                for motion in done.removed.dropFirst() {
                    print("removed '\(escapedForTerminal(motion.name))' (its Live Photo video)")
                }
                if let (motion, error) = done.motionFailure {
                    writeToStandardError(
                        "ptk: removed '\(escapedForTerminal(done.removed[0].name))' but not its Live Photo video '\(escapedForTerminal(motion.name))': "
                            + escapedForTerminal(Self.message(error)))
                    if status == .done { status = Self.exitCode(error) }
                }
                if let kept = done.keptMotion, let still = done.keptFor {
                    print(
                        "kept '\(escapedForTerminal(kept.name))': the Live Photo video of '\(escapedForTerminal(still.name))' too"
                    )
                }
            } catch {
                writeToStandardError("ptk: " + escapedForTerminal(Self.message(error)))
                if status == .done { status = Self.exitCode(error) }
            }
        }
        if status != .done { exitProcess(status.rawValue) }
    }

    func note(_ name: String, _ text: String) {
        do {
            let photo = try open().setNote(name, text)
            print(
                photo.note == nil
                    ? "cleared the note of '\(escapedForTerminal(photo.name))'"
                    : "noted '\(escapedForTerminal(photo.name))'")
        } catch { fail(error) }
    }

    func rate(_ name: String, _ text: String) {
        let rating: Int?
        if text == "none" || text == "-" {
            rating = nil
        } else {
            guard let r = parseInteger(text, in: 0...5) else {
                usageError("invalid rating '\(text)': expected 0 to 5, or none")
            }
            rating = r
        }
        do {
            let photo = try open().setRating(name, rating)
            print(
                rating.map { "rated '\(escapedForTerminal(photo.name))' \($0)/5" }
                    ?? "cleared the rating of '\(escapedForTerminal(photo.name))'")
        } catch { fail(error) }
    }

    func export(_ words: [String]) {
        // Root's ptk has this run as the service user, writing into a folder of its own
        // (the working directory) that root then moves into the one named.
        let output = opened.stagedOutput == nil ? invocation.value(.output) ?? "." : "."
        // Made when missing, as `ptk gallery -o DIR` does (mode 0755, with its parents).
        if opened.stagedOutput == nil {
            do {
                if !fileExists(output) { try makeDirectories(output, mode: 0o755) }
                guard try fileStatus(output).isDirectory else {
                    die("\(output) exists and is not a directory", .cannotCreate)
                }
            } catch {
                die("cannot create the directory \(output): \(error)", .cannotCreate)
            }
        }
        let library = open()
        for name in words {
            do {
                var path = try library.export(name, to: output)
                if let final = opened.stagedOutput { path = final + path.dropFirst(1) }
                print("exported '\(escapedForTerminal(name))' to \(escapedForTerminal(path))")
                // A Live Photo's still goes with its video (issue 58), in a package of its own.
                let still = try library.find(name)
                if let motionID = still.motionID, let motion = try library.photo(id: motionID) {
                    var path = try library.export(
                        motion.name, to: output,
                        packageName: PhotoLibrary.motionPackageName(still: still.name, motion: motion.name))
                    if let final = opened.stagedOutput { path = final + path.dropFirst(1) }
                    print(
                        "exported '\(escapedForTerminal(motion.name))' (its Live Photo video) to \(escapedForTerminal(path))"
                    )
                }
            } catch { fail(error) }
        }
    }

    func importPackages(_ words: [String]) {
        let library = open(create: true)
        for (i, path) in words.enumerated() {
            do {
                // Opened by root before ptk took on the service user, else opened here.
                let photo: Photo
                if i < opened.packages.count {
                    photo = try library.importPackage(opened.packages[i])
                } else {
                    photo = try library.importPackage(path)
                }
                print("imported \(escapedForTerminal(path)) as '\(escapedForTerminal(photo.name))'")
            } catch { fail(error) }
        }
    }

    func gallery() {
        do {
            // A thumbnail that cannot be read, or is none the library could have made: its photo is shown without one.
            let leftOut = { (reason: String) in
                writeToStandardError("ptk: left out of the gallery: " + escapedForTerminal(reason))
            }
            let (path, count) =
                if let final = opened.stagedOutput {
                    try open().gallery(to: ".", linkingFrom: final, leavingOut: leftOut)
                } else {
                    try open().gallery(to: invocation.value(.output), leavingOut: leftOut)
                }
            print("wrote \(escapedForTerminal(path)) (\(count) photo\(count == 1 ? "" : "s")); open it in a browser")
        } catch { fail(error) }
    }
}

/// Pretty-printed JSON with the terminal controls JSON allows raw in its strings written as
/// `\uXXXX` (`escapingTerminalControlsInJSON`, line by line: the line breaks between its members
/// stay, those inside strings are escaped by the encoder already).
func terminalSafeJSON(_ json: String) -> String {
    // Almost every list has no control but its own line breaks: one pass over its bytes says so
    // (printable ASCII and line breaks only), else one over its scalars.
    let plain =
        json.utf8.withContiguousStorageIfAvailable { bytes in
            bytes.allSatisfy { ($0 >= 0x20 && $0 < 0x7F) || $0 == 0x0A }
        } ?? false
    guard !plain, json.unicodeScalars.contains(where: { $0 != "\n" && isTerminalControl($0) }) else { return json }
    return json.split(separator: "\n", omittingEmptySubsequences: false).map {
        escapingTerminalControlsInJSON(String($0))
    }.joined(separator: "\n")
}

/// Writes text to standard output at once (a list of 10,000 lines in one write); a list that
/// cannot be written (a full disk behind a redirection) is an error, not a short list.
func writeStandardOutput(_ text: String) {
    var text = text
    let result = text.withUTF8 { bytes in
        Result { () throws(SystemError) in try FileDescriptor.standardOutput.writeAll(UnsafeRawBufferPointer(bytes)) }
    }
    if case .failure(let error) = result { die("cannot write to standard output: \(error)", .ioError) }
}

extension String {
    func padding(_ width: Int) -> String {
        count >= width ? self + " " : self + String(repeating: " ", count: width - count)
    }
}
