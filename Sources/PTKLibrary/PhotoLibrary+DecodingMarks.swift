import PTKSystem
import PTKVocabulary

/// The "was decoding" marks against crash loops (issue 58). Before a video's poster or a HEIF's
/// thumbnail or preview is decoded (FFmpeg's and libheif's decoders: large native code fed
/// whatever a sender sent), `.ptk/decoding-<id>` is written and flushed, naming the photo by its
/// id, SHA-256, size and name; it is removed once the decoder has returned. A decoder that
/// crashes ptkd, or gets it killed (the OOM killer, a watchdog), leaves the mark behind: at the
/// next start the indexer records that photo as indexed without a thumbnail (or without a
/// preview, when the preview's decode was the one cut short), with the reason, and removes the
/// mark, instead of decoding it again and again under systemd's restarts. The index's schema is
/// not touched: the mark is a file of its own.
extension PhotoLibrary {
    /// The start of a mark's name in `.ptk`; the photo's id follows.
    static let decodingMarkPrefix = "decoding-"
    /// A mark's first line (its format).
    static let decodingMarkHeader = "ptk decoding mark 1"
    /// The most a mark can hold: its fields and a name (the store's names are short).
    static let decodingMarkLimit = 8192

    /// Which decodes are marked: FFmpeg's (videos) and libheif's (HEIF). PNG and JPEG go
    /// through libpng and libjpeg-turbo row by row, within the pixel limit: no mark (a flush per
    /// photo would cost more than decoding a small one).
    public static func marksDecoding(of type: PhotoType) -> Bool { type.isVideo || type.isHEIF }

    /// Which pass was decoding when the mark was written.
    enum DecodingPass: String, Sendable {
        /// The gallery thumbnails (a video's poster).
        case thumbnail
        /// The preview.
        case preview
    }

    /// What a mark names.
    struct DecodingMark: Equatable, Sendable {
        var id: Int64
        var pass: DecodingPass
        var size: Int64
        var sha256: String?
        var name: String

        /// The mark's bytes: a header line, then `key=value` lines, the name last (to the end).
        var bytes: [UInt8] {
            Array(
                """
                \(PhotoLibrary.decodingMarkHeader)
                id=\(id)
                pass=\(pass.rawValue)
                size=\(size)
                sha256=\(sha256 ?? "")
                name=\(name)

                """.utf8)
        }

        /// Reads a mark's bytes; nil when they are not one.
        init?(bytes: [UInt8]) {
            let text = String(decoding: bytes, as: UTF8.self)
            guard text.hasSuffix("\n") else { return nil }
            var lines = text.dropLast().split(separator: "\n", omittingEmptySubsequences: false)[...]
            guard lines.popFirst() == Substring(PhotoLibrary.decodingMarkHeader) else { return nil }
            var fields: [Substring: Substring] = [:]
            var name: String?
            while let line = lines.popFirst() {
                guard let eq = line.firstIndex(of: "=") else { return nil }
                if line[..<eq] == "name" {
                    // The name is last, to the end (whatever it holds).
                    name = ([line[line.index(after: eq)...]] + lines).joined(separator: "\n")
                    break
                }
                fields[line[..<eq]] = line[line.index(after: eq)...]
            }
            guard let name, let id = fields["id"].flatMap({ Int64($0) }),
                let pass = fields["pass"].flatMap({ DecodingPass(rawValue: String($0)) }),
                let size = fields["size"].flatMap({ Int64($0) })
            else { return nil }
            let sha = String(fields["sha256"] ?? "")
            self.init(id: id, pass: pass, size: size, sha256: sha.isEmpty ? nil : sha, name: name)
        }

        init(id: Int64, pass: DecodingPass, size: Int64, sha256: String?, name: String) {
            self.id = id
            self.pass = pass
            self.size = size
            self.sha256 = sha256
            self.name = name
        }

        /// The file's name in `.ptk`.
        var fileName: String { PhotoLibrary.decodingMarkPrefix + String(id) }
    }

    /// `.ptk` opened for marks (through no symlink), or nil when it cannot be: decoding then goes
    /// on unmarked (the mark guards against a loop; it is no reason to leave photos undecoded).
    func openMarkFolder() -> FileDescriptor? {
        // Nil is the answer: decodes go unmarked, as said above.
        try? Self.openFolder(Self.folderName, in: photos, path: folder)
    }

    /// Writes `mark` into `folder` (`.ptk`) and flushes it, so that it outlasts ptkd being
    /// killed and the machine going down meanwhile; true when it was written. A mark that
    /// cannot be written leaves the decode unmarked.
    @discardableResult
    static func writeDecodingMark(_ mark: DecodingMark, in folder: FileDescriptor) -> Bool {
        do {
            let fd = try FileDescriptor.open(
                mark.fileName, relativeTo: folder, flags: [.writeOnly, .create, .truncate, .noFollow, .nonBlocking],
                mode: 0o600)
            defer { fd.close() }
            try fd.writeAll(mark.bytes)
            try fd.sync()
            return true
        } catch {
            return false
        }
    }

    /// Removes the mark of photo `id` from `folder` once its decoder has returned. Not flushed:
    /// a mark that comes back after a power cut costs that photo its thumbnail, nothing more.
    static func removeDecodingMark(id: Int64, in folder: FileDescriptor) {
        // A mark left (a failing disk) is settled at the next start: the photo is then kept
        // without a thumbnail, which is the safe side.
        try? folder.unlink(decodingMarkPrefix + String(id))
    }

    /// Runs `decode` with photo `photo`'s mark written in `folder` when its type is marked
    /// (`marksDecoding`), removing the mark after.
    static func markingDecode<R>(
        _ photo: Photo, pass: DecodingPass, sha256: String?, size: Int64, in folder: FileDescriptor?,
        _ decode: () -> R
    ) -> R {
        guard let folder, marksDecoding(of: photo.type) else { return decode() }
        let mark = DecodingMark(id: photo.id, pass: pass, size: size, sha256: sha256, name: photo.name)
        let marked = writeDecodingMark(mark, in: folder)
        defer { if marked { removeDecodingMark(id: photo.id, in: folder) } }
        return decode()
    }

    /// The problem recorded for a photo whose decode a mark shows was cut short.
    static func interruptedProblem(_ type: PhotoType, _ pass: DecodingPass) -> String {
        let what = pass == .preview ? "preview" : type.isVideo ? "poster" : "thumbnail"
        return "its \(what) was being made when ptkd stopped last time; not tried again"
    }

    /// Settles the marks left by a run that stopped while decoding (called as the indexer opens
    /// the library, before the reconcile): each photo a mark names, when its entry is still that
    /// file (same id, and the same SHA-256 or the same name and size, the file still that size),
    /// is recorded as indexed without a thumbnail and preview (or, when its preview was being
    /// made, without a preview: its thumbnails were made without harm), with the reason. Every
    /// mark is then removed. Returns the photos settled, with their problem, for the log.
    func settleDecodingMarks() throws(LibraryError) -> [(name: String, problem: String)] {
        guard let marks = openMarkFolder() else { return [] }
        defer { marks.close() }
        // A folder that cannot be listed has its marks settled at a later start.
        let names = ((try? marks.entries()) ?? []).filter { $0.hasPrefix(Self.decodingMarkPrefix) }.sorted()
        var settled: [(name: String, problem: String)] = []
        for file in names {
            // An error of the index leaves this mark, and those after it, for the next start.
            if let photo = try settle(file, in: marks) { settled.append(photo) }
            // Gone already, or not removable: settled again at the next start, which changes nothing.
            try? marks.unlink(file)
        }
        return settled
    }

    /// Settles the mark `file` of `marks` (`settleDecodingMarks`): the photo settled, or nil
    /// when the mark names none that is still that file.
    private func settle(_ file: String, in marks: FileDescriptor) throws(LibraryError) -> (
        name: String, problem: String
    )? {
        guard let mark = readDecodingMark(file, in: marks), file == mark.fileName,
            let photo = try photo(id: mark.id), photo.size == mark.size
        else { return nil }
        // The same file: by its SHA-256 when both know it, else by its name and size (never by inode alone).
        if let known = photo.sha256, let marked = mark.sha256 {
            guard known == marked else { return nil }
        } else {
            guard photo.name == mark.name else { return nil }
        }
        // The file as it is now: settled only while it is the one that was being decoded.
        guard let st = try? photos.statusBeneath(photo.name), st.isRegularFile, st.size == mark.size else {
            return nil
        }
        let problem = Self.interruptedProblem(photo.type, mark.pass)
        let changed = try database.writeTransaction { () throws(LibraryError) -> Int in
            if mark.pass == .preview {
                try database.prepare(
                    """
                    UPDATE photos SET preview = 2, preview_problem = ?
                    WHERE id = ? AND name = ? AND indexed = 1 AND preview IS NULL
                    """
                ).bind(problem, photo.id, photo.name).run()
            } else {
                try database.prepare(
                    """
                    UPDATE photos SET indexed = 1, thumbnail = 0, problem = ?, preview = 2, preview_problem = ?,
                        sha256 = coalesce(sha256, ?), inode = ?, mtime = ?, alpha = NULL
                    WHERE id = ? AND name = ?
                    """
                ).bind(
                    problem, problem, mark.sha256, Int64(bitPattern: st.inode), st.modifiedTime.milliseconds,
                    photo.id, photo.name
                ).run()
            }
            return database.changes
        }
        guard changed > 0 else { return nil }
        // What an earlier version of the file left is no longer named by the entry.
        if mark.pass == .thumbnail { try? removeRenditions(photo.id) }
        return (photo.name, problem)
    }

    /// The mark `file` of `folder`, read without following a symlink or waiting on a FIFO;
    /// nil when it is not a regular file holding a mark.
    private func readDecodingMark(_ file: String, in folder: FileDescriptor) -> DecodingMark? {
        guard
            let fd = try? FileDescriptor.open(file, relativeTo: folder, flags: [.readOnly, .nonBlocking, .noFollow])
        else { return nil }  // not a file that can be read: removed, as anything else named so
        defer { fd.close() }
        guard let st = try? fd.status(), st.isRegularFile, st.size <= Self.decodingMarkLimit,
            let bytes = try? fd.readAll(limit: Self.decodingMarkLimit, name: self.folder + "/" + file)
        else { return nil }  // the same
        return DecodingMark(bytes: bytes)
    }
}
