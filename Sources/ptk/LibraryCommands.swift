import PTKCLI
import PTKLibrary
import PTKSystem

/// `ptk list|show|thumbnail|rename|rm|note|rate|export|import|gallery`: the photo library of
/// the received-photos directory (see PTKLibrary).
struct LibraryCommands {
    let directory: String
    let parsed: ParsedArguments

    /// The exit status for a library error.
    static func exitCode(_ error: LibraryError) -> Int32 {
        switch error.kind {
        case .notFound, .refused: return 1
        case .badInput: return 65
        case .io: return 74
        }
    }

    /// The error's text, with the closest names when a name matched nothing.
    static func message(_ error: LibraryError) -> String {
        guard case .notFound(let suggestions) = error.kind, !suggestions.isEmpty else { return error.description }
        return error.description + "; did you mean " + suggestions.map { "'\($0)'" }.joined(separator: " or ") + "?"
    }

    func fail(_ error: LibraryError) -> Never { die(Self.message(error), Self.exitCode(error)) }

    func open(create: Bool = false) -> PhotoLibrary {
        do { return try PhotoLibrary(directory: directory, create: create) } catch {
            die(error.description, error.kind == .io && !fileExists(directory + "/.ptk/index.sqlite") ? 66 : Self.exitCode(error))
        }
    }

    /// Runs `command` with its arguments `words`.
    func run(_ command: String, _ words: [String]) {
        switch command {
        case "list": list(words)
        case "show": show(words)
        case "thumbnail": thumbnail(words)
        case "rename": rename(words)
        case "rm": remove(words)
        case "note": note(words)
        case "rate": rate(words)
        case "export": export(words)
        case "import": importPackages(words)
        case "gallery": gallery(words)
        default: usageError("unknown command '\(command)'")
        }
    }

    /// Refuses options that `command` does not take.
    func only(_ allowed: [String], for command: String) {
        let common: Set = ["dir", "state-dir", "config"]
        for (name, _) in parsed.options where !common.contains(name) && !allowed.contains(name) {
            usageError("option '--\(name)' does not apply to '\(command)'")
        }
    }

    func list(_ words: [String]) {
        only(["json", "sort", "from"], for: "list")
        if let extra = words.first { usageError("unexpected argument '\(extra)' after list") }
        var sort = PhotoLibrary.SortOrder.time
        if let text = parsed.last("sort") {
            guard let s = PhotoLibrary.SortOrder(rawValue: text) else { usageError("invalid value '\(text)' for --sort: expected name, time or size") }
            sort = s
        }
        let library = open()
        let photos: [Photo]
        do { photos = try library.all(sort: sort, from: parsed.last("from")) } catch { fail(error) }
        if parsed.has("json") {
            print(PhotoMetadata.json(photos.map { var m = PhotoMetadata($0); m.Indexed = $0.indexed; return m }))
            return
        }
        let rows = photos.map { p in
            [p.name, formatBytes(Double(p.size)), p.dimensions, shortDate(p.received), p.senderName ?? "-",
             p.rating.map { "\($0)/5" } ?? "-"]
        }
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
        let from = parsed.last("from").map { " from '\($0)'" } ?? ""
        writeToStandardError("\(photos.count) photo\(photos.count == 1 ? "" : "s")\(from) in \(directory)" + (pending > 0 ? ", \(pending) still being indexed" : ""))
    }

    func show(_ words: [String]) {
        only(["json"], for: "show")
        guard words.count == 1 else { usageError(words.isEmpty ? "missing NAME: show NAME" : "show takes one NAME") }
        let library = open()
        let photo: Photo
        do { photo = try library.find(words[0]) } catch { fail(error) }
        if parsed.has("json") {
            var m = PhotoMetadata(photo)
            m.Indexed = photo.indexed
            print(m.json())
            return
        }
        var lines: [(String, String)] = [
            ("name", photo.name),
            ("size", "\(formatBytes(Double(photo.size))) (\(photo.size) bytes)"),
            ("sha256", photo.sha256 ?? "(not indexed yet)"),
        ]
        if photo.width != nil {
            var image = "\(photo.type.displayName), \(photo.dimensions), \(photo.bitDepth ?? 0)-bit \(photo.colorTypeName ?? "")"
            if photo.interlace == 1 { image += photo.type == .png ? ", interlaced (Adam7)" : ", progressive" }
            lines.append(("image", image))
        }
        lines.append(("received", formatDate(photo.received / 1000)))
        if let name = photo.senderName {
            var sender = "\"\(name)\""
            if let a = photo.senderAddress { sender += " from \(a)" }
            sender += photo.senderID.map { ", device \($0)" } ?? " (plaintext, no device ID)"
            lines.append(("sender", sender))
        } else {
            lines.append(("sender", "(none: found in the directory or imported without one)"))
        }
        lines.append(("rating", photo.rating.map { "\($0)/5" } ?? "-"))
        lines.append(("note", photo.note ?? "-"))
        let thumbnail: String
        if !photo.indexed {
            thumbnail = "(not indexed yet)"
        } else if photo.hasThumbnail {
            thumbnail = "\(library.thumbnailFolder)/\(photo.id).png"
        } else {
            thumbnail = "none: \(photo.problem ?? "unknown reason")"
        }
        lines.append(("thumbnail", thumbnail))
        for (key, value) in lines { print("\(key):".padding(11) + value) }
    }

    func thumbnail(_ words: [String]) {
        only(["output"], for: "thumbnail")
        guard words.count == 1 else { usageError(words.isEmpty ? "missing NAME: thumbnail NAME [-o FILE]" : "thumbnail takes one NAME") }
        let library = open()
        let bytes: [UInt8]
        do {
            let photo = try library.find(words[0])
            guard let b = try library.thumbnail(of: photo) else {
                die("'\(photo.name)' has no thumbnail: \(photo.indexed ? photo.problem ?? "unknown reason" : "not indexed yet")", 1)
            }
            bytes = b
        } catch { fail(error) }
        if let output = parsed.last("output"), output != "-" {
            do { try writeFileAtomically(output, bytes, mode: 0o644) } catch { die("cannot write \(output): \(error)", 73) }
            print("wrote \(output) (\(formatBytes(Double(bytes.count))))")
        } else {
            if parsed.last("output") == nil && FileDescriptor.standardOutput.isTerminal {
                usageError("the thumbnail is a PNG: give -o FILE, or redirect standard output")
            }
            do { try FileDescriptor.standardOutput.writeAll(bytes) } catch { die("cannot write the thumbnail: \(error)", 74) }
        }
    }

    func rename(_ words: [String]) {
        only([], for: "rename")
        guard words.count == 2 else { usageError("rename takes NAME and NEW") }
        do {
            let photo = try open().rename(words[0], to: words[1])
            print("renamed '\(words[0])' to '\(photo.name)'")
        } catch { fail(error) }
    }

    func remove(_ words: [String]) {
        only([], for: "rm")
        guard !words.isEmpty else { usageError("missing NAME: rm NAME...") }
        let library = open()
        var status: Int32 = 0
        for name in words {
            do {
                let photo = try library.remove(name)
                print("removed '\(photo.name)'")
            } catch {
                writeToStandardError("Error: \(Self.message(error))")
                if status == 0 { status = Self.exitCode(error) }
            }
        }
        if status != 0 { exitProcess(status) }
    }

    func note(_ words: [String]) {
        only([], for: "note")
        guard let name = words.first, words.count >= 2 else { usageError("note takes NAME and TEXT (\"\" clears the note)") }
        let text = words.dropFirst().joined(separator: " ")
        do {
            let photo = try open().setNote(name, text)
            print(photo.note == nil ? "cleared the note of '\(photo.name)'" : "noted '\(photo.name)'")
        } catch { fail(error) }
    }

    func rate(_ words: [String]) {
        only([], for: "rate")
        guard words.count == 2 else { usageError("rate takes NAME and a rating 0-5 (or none)") }
        let rating: Int?
        if words[1] == "none" || words[1] == "-" {
            rating = nil
        } else {
            guard let r = parseInteger(words[1], in: 0...5) else { usageError("invalid rating '\(words[1])': expected 0 to 5, or none") }
            rating = r
        }
        do {
            let photo = try open().setRating(words[0], rating)
            print(rating.map { "rated '\(photo.name)' \($0)/5" } ?? "cleared the rating of '\(photo.name)'")
        } catch { fail(error) }
    }

    func export(_ words: [String]) {
        only(["output"], for: "export")
        guard !words.isEmpty else { usageError("missing NAME: export NAME... [-o DIR]") }
        let output = parsed.last("output") ?? "."
        guard (try? fileStatus(output))?.isDirectory == true else { die("\(output) is not a directory", 73) }
        let library = open()
        for name in words {
            do {
                let path = try library.export(name, to: output)
                print("exported '\(name)' to \(path)")
            } catch { fail(error) }
        }
    }

    func importPackages(_ words: [String]) {
        only([], for: "import")
        guard !words.isEmpty else { usageError("missing PACKAGE: import PACKAGE.ptk...") }
        let library = open(create: true)
        for path in words {
            do {
                let photo = try library.importPackage(path)
                print("imported \(path) as '\(photo.name)'")
            } catch { fail(error) }
        }
    }

    func gallery(_ words: [String]) {
        only(["output"], for: "gallery")
        if let extra = words.first { usageError("unexpected argument '\(extra)' after gallery") }
        do {
            let (path, count) = try open().gallery(to: parsed.last("output"))
            print("wrote \(path) (\(count) photo\(count == 1 ? "" : "s")); open it in a browser")
        } catch { fail(error) }
    }
}

/// "2026-11-30 09:41" (UTC) of milliseconds since the epoch.
func shortDate(_ milliseconds: Int64) -> String {
    String(formatDate(milliseconds / 1000).prefix(16))
}

/// Writes text to standard output at once (a list of 10,000 lines in one write).
func writeStandardOutput(_ text: String) {
    var text = text
    text.withUTF8 { bytes in _ = try? FileDescriptor.standardOutput.writeAll(UnsafeRawBufferPointer(bytes)) }
}

extension String {
    func padding(_ width: Int) -> String {
        count >= width ? self + " " : self + String(repeating: " ", count: width - count)
    }
}
