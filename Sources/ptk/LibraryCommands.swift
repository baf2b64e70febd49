import PTKAdminCommandLine
import PTKCLI
import PTKLibrary
import PTKSystem

/// `ptk list|show|thumbnail|rename|rm|note|rate|export|import|gallery`: the photo library of
/// the received-photos directory (see PTKLibrary).
struct LibraryCommands {
    let directory: String
    let invocation: Invocation<AdminOption>

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
        // Missing: say what it means rather than the open's error (other errors are the open's to tell).
        do { _ = try fileStatus(directory) } catch where error.code == .noSuchFile {
            die("the received-photos directory \(directory) does not exist: ptkd has not run on this host yet (start it: sudo systemctl start ptkd), or give --dir", .nothingYet)
        } catch {}
        do { return try PhotoLibrary(directory: directory, create: create) } catch {
            die(error.description, error.kind == .io && !fileExists(directory + "/.ptk/index.sqlite") ? .nothingYet : Self.exitCode(error))
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
             .webLink, .webPassword, .webSessions, .webSessionsRevoke:
            preconditionFailure("not a library command: \(command.rawValue)")
        }
    }

    func list() {
        // The table allows only the orders there are.
        let sort = invocation.value(.sort).flatMap(PhotoLibrary.SortOrder.init(rawValue:)) ?? .time
        let library = open()
        let photos: [Photo]
        do { photos = try library.all(sort: sort, from: invocation.value(.from)) } catch { fail(error) }
        if invocation.has(.json) {
            print(PhotoMetadata.json(photos.map { var m = PhotoMetadata($0); m.Indexed = $0.indexed; m.ID = $0.id; return m }))
            return
        }
        let rows = photos.map(Self.row)
        var widths = [0, 0, 0, 0, 0, 0]
        for row in rows { for (i, cell) in row.enumerated() { widths[i] = max(widths[i], cell.count) } }
        var out = ""
        out.reserveCapacity(rows.count * 96)
        for row in rows {
            for (i, cell) in row.enumerated() {
                if i == row.count - 1 { out += cell; break }
                let pad = String(repeating: " ", count: widths[i] - cell.count + 2)
                // Sizes line up on the right, everything else on the left.
                out += i == 1 ? pad.dropLast(2) + cell + "  " : cell + pad
            }
            out += "\n"
        }
        writeStandardOutput(out)
        let pending = photos.filter { !$0.indexed }.count
        let from = invocation.value(.from).map { " from '\($0)'" } ?? ""
        writeToStandardError("\(photos.count) photo\(photos.count == 1 ? "" : "s")\(from) in \(directory)" + (pending > 0 ? ", \(pending) still being indexed" : ""))
    }

    /// A photo's line in `list`: name, size, dimensions, received, sender, rating.
    static func row(_ p: Photo) -> [String] {
        [p.name, formatBytes(Double(p.size)), p.dimensions, p.takenMinutes ?? p.received.minutes, p.senderName ?? "-", p.rating.map { "\($0)/5" } ?? "-"]
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
            guard let id = Int64(text), id >= 0 else { usageError("--since takes now, all or a photo's id, not '\(text)'") }
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
                    m.Indexed = true
                    m.ID = p.id
                    out += m.jsonLine() + "\n"
                } else {
                    out += ([String(p.id)] + Self.row(p)).joined(separator: "  ") + "\n"
                }
                last = p.id
            }
            if !out.isEmpty {
                var text = out
                let written = text.withUTF8 { bytes in
                    Result { () throws(SystemError) in try FileDescriptor.standardOutput.writeAll(UnsafeRawBufferPointer(bytes)) }
                }
                // The reader went away (a pipe closed, `head` done): watching is over.
                if case .failure = written { exitProcess(0) }
            }
            if batch.count == 256 && batch.last?.id == last { continue }
            // A signal makes the pipe readable, and a reader that went away shows as an error on
            // standard output (a pipe whose read end is closed): either ends it. Otherwise look
            // again in a quarter second.
            if let ready = try? poll([(wake.readEnd, .readable), (.standardOutput, [])], until: .now + .milliseconds(250)),
               ready.contains(where: { !$0.isEmpty }) {
                exitProcess(0)
            }
        }
    }

    func show(_ name: String) {
        let library = open()
        let photo: Photo
        do { photo = try library.find(name) } catch { fail(error) }
        if invocation.has(.json) {
            var m = PhotoMetadata(photo)
            m.Indexed = photo.indexed
            m.ID = photo.id
            print(m.json())
            return
        }
        for (key, value) in photo.details(thumbnailFolder: library.thumbnailFolder) { print("\(key):".padding(11) + value) }
    }

    func thumbnail(_ name: String) {
        let library = open()
        let bytes: [UInt8]
        do {
            let photo = try library.find(name)
            guard let b = try library.thumbnail(of: photo) else {
                die("'\(photo.name)' has no thumbnail: \(photo.indexed ? photo.problem ?? "unknown reason" : "not indexed yet")", .notFound)
            }
            bytes = b
        } catch { fail(error) }
        if let output = invocation.value(.output), output != "-" {
            do { try writeFileAtomically(output, bytes, mode: 0o644) } catch { die("cannot write \(output): \(error)", .cannotCreate) }
            print("wrote \(output) (\(formatBytes(Double(bytes.count))))")
        } else {
            if invocation.value(.output) == nil && FileDescriptor.standardOutput.isTerminal {
                usageError("the thumbnail is a PNG: give -o FILE, or redirect standard output")
            }
            do { try FileDescriptor.standardOutput.writeAll(bytes) } catch { die("cannot write the thumbnail: \(error)", .ioError) }
        }
    }

    func rename(_ name: String, to new: String) {
        do {
            let photo = try open().rename(name, to: new)
            print("renamed '\(name)' to '\(photo.name)'")
        } catch { fail(error) }
    }

    func remove(_ words: [String]) {
        let library = open()
        var status = AdminExitStatus.done
        for name in words {
            do {
                let photo = try library.remove(name)
                print("removed '\(photo.name)'")
            } catch {
                writeToStandardError("ptk: \(Self.message(error))")
                if status == .done { status = Self.exitCode(error) }
            }
        }
        if status != .done { exitProcess(status.rawValue) }
    }

    func note(_ name: String, _ text: String) {
        do {
            let photo = try open().setNote(name, text)
            print(photo.note == nil ? "cleared the note of '\(photo.name)'" : "noted '\(photo.name)'")
        } catch { fail(error) }
    }

    func rate(_ name: String, _ text: String) {
        let rating: Int?
        if text == "none" || text == "-" {
            rating = nil
        } else {
            guard let r = parseInteger(text, in: 0...5) else { usageError("invalid rating '\(text)': expected 0 to 5, or none") }
            rating = r
        }
        do {
            let photo = try open().setRating(name, rating)
            print(rating.map { "rated '\(photo.name)' \($0)/5" } ?? "cleared the rating of '\(photo.name)'")
        } catch { fail(error) }
    }

    func export(_ words: [String]) {
        let output = invocation.value(.output) ?? "."
        // Made when missing, as `ptk gallery -o DIR` does (mode 0755, with its parents).
        do {
            if !fileExists(output) { try makeDirectories(output, mode: 0o755) }
            guard try fileStatus(output).isDirectory else { die("\(output) exists and is not a directory", .cannotCreate) }
        } catch {
            die("cannot create the directory \(output): \(error)", .cannotCreate)
        }
        let library = open()
        for name in words {
            do {
                let path = try library.export(name, to: output)
                print("exported '\(name)' to \(path)")
            } catch { fail(error) }
        }
    }

    func importPackages(_ words: [String]) {
        let library = open(create: true)
        for path in words {
            do {
                let photo = try library.importPackage(path)
                print("imported \(path) as '\(photo.name)'")
            } catch { fail(error) }
        }
    }

    func gallery() {
        do {
            let (path, count) = try open().gallery(to: invocation.value(.output))
            print("wrote \(path) (\(count) photo\(count == 1 ? "" : "s")); open it in a browser")
        } catch { fail(error) }
    }
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
