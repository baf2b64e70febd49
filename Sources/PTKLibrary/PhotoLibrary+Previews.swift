import PTKSystem
import PTKVocabulary

/// Making previews (issue 45): after a photo is indexed (its thumbnails made), the indexer
/// makes its preview, `.ptk/previews/<id>.jpg`, when it needs one (larger than
/// `Thumbnailer.previewSide` on its long side, or HEIC/HEIF), in small batches: the files
/// written atomically with one flush, then recorded in one transaction.
extension PhotoLibrary {
    /// The ids of indexed photos whose preview is still to be made, senders taking turns as
    /// for thumbnails (`pending`), oldest first within each.
    public func pendingPreviews(limit: Int) throws(LibraryError) -> [Int64] {
        try inTurns(where: "indexed = 1 AND preview IS NULL", limit: limit)
    }

    /// What `makePreviews` did for one photo.
    public enum PreviewOutcome: Equatable, Sendable {
        /// Made and recorded.
        case made(name: String)
        /// Recorded as failed, and why (the photo cannot be decoded, has too many pixels, or
        /// the preview could not be written for good).
        case failed(name: String, reason: String)
        /// The photo is not waiting for a preview (gone, not indexed, its preview made or
        /// decided meanwhile), or its file changed or went since it was indexed: it is
        /// indexed again, which decides its preview anew.
        case skipped
        /// `cancel` stopped it: the preview stays pending.
        case cancelled
        /// A passing error (`isPassing`): the preview stays pending, to be tried again later.
        case retryLater(name: String, reason: String)
    }

    /// Makes the previews of photos `ids` (each an indexed photo whose preview is pending),
    /// on this thread, one after the other; `cancel`, when it becomes nonzero, stops at the
    /// next row. Returns each photo's outcome, in order.
    public func makePreviews(ids: [Int64], cancel: UnsafePointer<Int32>? = nil) throws(LibraryError) -> [(
        id: Int64, outcome: PreviewOutcome
    )] {
        let rows = try photos(ids: ids)
        var outcomes: [Int64: PreviewOutcome] = [:]
        var made: [(photo: Photo, rendition: Rendition)] = []
        // HEIF thumbnails made again from the whole image (`readPreview`), by photo id, in
        // the order of `Thumbnailer.gallerySides`.
        var sharper: [Int64: [Rendition]] = [:]
        var failed: [(photo: Photo, reason: String)] = []
        var changed: [Photo] = []
        for id in ids {
            guard let photo = rows[id], photo.indexed, photo.preview == .pending else {
                outcomes[id] = .skipped
                continue
            }
            switch readPreview(of: photo, cancel: cancel) {
            case .made(let rendition, let thumbnails):
                made.append((photo, rendition))
                sharper[id] = thumbnails
            case .failed(let reason): failed.append((photo, reason))
            case .passing(let reason): outcomes[id] = .retryLater(name: photo.name, reason: reason)
            case .cancelled: outcomes[id] = .cancelled
            case .changed:
                changed.append(photo)
                outcomes[id] = .skipped
            }
        }
        // The files first, then the entries: an entry never names a preview not yet on disk.
        // Never into the space kept free: the batch waits (a passing reason: tried again later,
        // less and less often), the photos themselves having come first.
        if minFree > 0, !made.isEmpty {
            let needed = made.reduce(Int64(0)) { $0 + Int64($1.rendition.bytes.count) }
            // Unreadable free space: written as before (the write's own error says if it fails).
            if let free = try? photos.availableSpace(), free - needed < minFree {
                for m in made {
                    outcomes[m.photo.id] = .retryLater(
                        name: m.photo.name,
                        reason:
                            "\(formatBytes(Double(free))) free, min-free is \(formatBytes(Double(minFree))): previews wait for room"
                    )
                }
                made = []
            }
        }
        // A few files of some 160 kB, batch after batch for a whole roll: each flushed on its own
        // rather than by a syncfs of everything on the file system every time.
        let errors = writeFiles(
            made.map { ("\($0.photo.id).\($0.rendition.type.fileExtension)", $0.rendition.bytes) }, in: "previews",
            flushEach: true)
        var recorded: [(photo: Photo, state: Int64, problem: String?)] = []
        for ((photo, rendition), error) in zip(made, errors) {
            if let error {
                if Self.isPassing(error) {
                    outcomes[photo.id] = .retryLater(name: photo.name, reason: "cannot write the preview: \(error)")
                } else {
                    recorded.append((photo, 2, "cannot write the preview: \(error)"))
                }
            } else {
                recorded.append((photo, Self.previewMade[rendition.type] ?? 1, nil))
            }
        }
        recorded += failed.map { ($0.photo, 2, $0.reason) }
        let changes = try database.writeTransaction { () throws(LibraryError) -> [Int64: Int] in
            // Only while the entry is the one the preview was made from: not renamed, removed,
            // indexed again or decided meanwhile (by another process).
            let update = try database.prepare(
                """
                UPDATE photos SET preview = ?, preview_problem = ?
                WHERE id = ? AND name = ? AND indexed = 1 AND preview IS NULL AND sha256 IS ?
                """)
            var changes: [Int64: Int] = [:]
            for r in recorded {
                try update.bind(r.state, r.problem, r.photo.id, r.photo.name, r.photo.sha256).run()
                changes[r.photo.id] = database.changes
            }
            // A file that changed or went since it was indexed is indexed again (its preview
            // decided anew; a file gone has its entry dropped, or followed when ptk renamed it).
            let redo = try database.prepare("UPDATE photos SET indexed = 0 WHERE id = ? AND name = ?")
            for photo in changed { try redo.bind(photo.id, photo.name).run() }
            return changes
        }
        for r in recorded {
            if changes[r.photo.id] == 0 {
                // Made from what the entry no longer is: removed unless the entry names that very file.
                let written =
                    "\(r.photo.id).\(r.state == 3 ? PhotoType.png.fileExtension : PhotoType.jpeg.fileExtension)"
                if r.state != 2, try photo(id: r.photo.id)?.previewFileName != written {
                    // a file left is swept at start, or replaced when made again
                    try? removeLibraryFiles([written], in: "previews")
                }
                outcomes[r.photo.id] = .skipped
            } else {
                outcomes[r.photo.id] =
                    r.state == 2 ? .failed(name: r.photo.name, reason: r.problem ?? "") : .made(name: r.photo.name)
                // The entry is still the one read: its thumbnails, made from a HEIF's own
                // thumbnail item (smaller than the largest side, or not the photo's very
                // pixels: nothing proves an item shows what the image does), are replaced by
                // those of the whole image. One that cannot be written leaves the item's.
                if r.state != 2, let thumbnails = sharper[r.photo.id] {
                    let files = zip(Thumbnailer.gallerySides, thumbnails).compactMap { side, t in
                        r.photo.thumbnailFileName(side: side).map { ($0, t.bytes) }
                    }
                    _ = writeFiles(files, in: "thumbnails", flushEach: true)
                }
            }
        }
        return ids.map { ($0, outcomes[$0] ?? .skipped) }
    }

    /// What reading a photo for its preview gave.
    private enum PreviewReading {
        /// The preview, and for a HEIF the gallery thumbnails from the same decode (when of
        /// the thumbnails' format; else none).
        case made(Rendition, thumbnails: [Rendition])
        case failed(String)
        case passing(String)
        case cancelled
        /// The file is not the one indexed (gone, renamed, changed, not a regular file).
        case changed
    }

    /// Opens `photo`'s file (as indexing does), checks it is the file indexed (size and
    /// modification time), and makes its preview.
    private func readPreview(of photo: Photo, cancel: UnsafePointer<Int32>?) -> PreviewReading {
        if let cancel, cancel.pointee != 0 { return .cancelled }
        let fd: FileDescriptor
        do { fd = try openForIndexing(photo.name, photos) } catch  where error.code == .noSuchFile {
            return .changed
        } catch {
            return Self.isPassing(error) ? .passing("cannot open: \(error)") : .failed("cannot open: \(error)")
        }
        defer { fd.close() }
        let st: FileStatus
        do { st = try fd.status() } catch {
            return Self.isPassing(error)
                ? .passing("cannot read its status: \(error)") : .failed("cannot read its status: \(error)")
        }
        guard st.isRegularFile, st.size == photo.size,
            photo.modified.map({ $0.milliseconds == st.modifiedTime.milliseconds }) ?? true
        else {
            return .changed
        }
        // A HEIF's thumbnails may have come from its thumbnail item (an iPhone's is 320
        // pixels, less than the largest thumbnail; and an item may show other pixels than the
        // image): this decode of the whole image makes them again.
        let remake = photo.type.isHEIF && photo.thumbnailType != nil
        // A video's or HEIF's decode is marked (`markingDecode`): one that kills ptkd is not tried again.
        let marks = Self.marksDecoding(of: photo.type) ? openMarkFolder() : nil
        defer { marks?.close() }
        let t = Self.markingDecode(photo, pass: .preview, sha256: photo.sha256, size: st.size, in: marks) {
            Thumbnailer.preview(
                from: fd, type: photo.type, alsoSides: remake ? Thumbnailer.gallerySides : [],
                pixelLimit: pixelLimit, cancel: cancel)
        }
        switch t.outcome {
        case .cancelled: return .cancelled
        case .made:
            guard let rendition = t.renditions.first, !rendition.bytes.isEmpty else {
                return .failed("the thumbnailer made no preview")
            }
            let thumbnails = Array(t.renditions.dropFirst())
            let usable =
                thumbnails.count == Thumbnailer.gallerySides.count
                && thumbnails.allSatisfy { $0.type == photo.thumbnailType && !$0.bytes.isEmpty }
            return .made(rendition, thumbnails: usable ? thumbnails : [])
        default: return .failed(t.problem ?? "not decodable")
        }
    }
}
