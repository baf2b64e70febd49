import PTKDigest
import PTKSystem
import PTKVocabulary

/// The indexing pipeline: photos read by several threads (header, EXIF, thumbnail, SHA-256),
/// thumbnails written, and the results recorded in one write transaction.
extension PhotoLibrary {
    /// Indexes one photo: reads its header, makes its thumbnail (SHA-256 first when the index
    /// has none), and records them; a file that cannot be decoded is recorded with the reason.
    @discardableResult
    public func index(id: Int64, cancel: UnsafePointer<Int32>? = nil) throws(LibraryError) -> IndexOutcome {
        try index(ids: [id], cancel: cancel).first?.outcome ?? .gone
    }

    /// Indexes photos together, as `index(id:)` does one, in one batch: their files are read
    /// on up to `readers` threads (hashes, headers and thumbnails, which need no index), their
    /// thumbnails made durable with one file-system flush and their entries written in one
    /// transaction (per photo, those two cost more than reading a small photo). The readers take
    /// the photos in the order given and take no new one after `until` (the first is always
    /// taken): those left say `.postponed`, and the batch ends with the photos in hand, so that
    /// photos of a few seconds each (a 200 MP PNG) do not hold the batch, and those that come
    /// after it, for minutes. Returns each photo's outcome, in order; photos that `cancel`
    /// stopped say `.cancelled`.
    public func index(
        ids: [Int64], readers: Int = 1, cancel: UnsafePointer<Int32>? = nil,
        until deadline: Instant? = nil
    ) throws(LibraryError) -> [(id: Int64, outcome: IndexOutcome)] {
        var outcomes: [Int64: IndexOutcome] = [:]
        let rows = try photos(ids: ids)
        for id in ids where rows[id] == nil { outcomes[id] = .gone }
        let photos = ids.compactMap { rows[$0] }
        let readings = read(photos, readers: readers, cancel: cancel, until: deadline)
        var examined: [Examined] = []
        for (photo, reading) in zip(photos, readings) {
            if case .postponed = reading {
                outcomes[photo.id] = .postponed
                continue
            }
            if case .missing = reading {
                // Renamed by ptk between reading the entry and opening the file, or deleted.
                switch try examine(id: photo.id, cancel: cancel) {
                case .done(let outcome): outcomes[photo.id] = outcome
                case .examined(let e): examined.append(e)
                }
                continue
            }
            switch examination(of: photo, reading) {
            case .done(let outcome): outcomes[photo.id] = outcome
            case .examined(let e): examined.append(e)
            }
        }
        // Thumbnails first, then the entries: an entry never names a thumbnail not yet on disk.
        let made = examined.filter { $0.thumbnailType != nil }
        let files = made.map { e in
            zip(Thumbnailer.gallerySides, e.thumbnail!.renditions).map { side, r in
                ("\(e.id)-\(side).\(r.type.fileExtension)", r.bytes)
            }
        }
        let written = writeFiles(files.flatMap { $0 }, in: "thumbnails")
        var offset = 0
        for (e, its) in zip(made, files) {
            defer { offset += its.count }
            guard let error = written[offset..<offset + its.count].compactMap({ $0 }).first else { continue }
            if Self.isPassing(error) {
                outcomes[e.id] = .retryLater(name: e.name, reason: "cannot write the thumbnail: \(error)")
            }
            if let i = examined.firstIndex(where: { $0.id == e.id }) {
                examined[i].thumbnail = nil
                examined[i].problem = "cannot write the thumbnail: \(error)"
            }
        }
        // A side written beside one that failed: replaced when the photo is tried again, or
        // removed after the entry below says it has none.
        examined.removeAll { outcomes[$0.id] != nil }
        let changed = try database.writeTransaction { () throws(LibraryError) -> [Int64: Int] in
            let update = try database.prepare(
                """
                UPDATE photos SET sha256 = ?, size = coalesce(?, size), width = ?, height = ?, bit_depth = ?, color_type = ?,
                    interlace = ?, indexed = 1, thumbnail = ?, problem = ?, inode = ?, mtime = ?,
                    orientation = ?, taken = ?, taken_ms = ?, camera_make = ?, camera_model = ?, location = ?,
                    preview = ?, preview_problem = ?, alpha = ?, duration_ms = ?, frame_rate_milli = ?, codec = ?,
                    live_id = ?
                WHERE id = ? AND name = ?
                """)
            var changed: [Int64: Int] = [:]
            for e in examined {
                let header = e.thumbnail.flatMap { $0.width > 0 ? $0 : nil }
                let facts = e.thumbnail?.facts ?? PhotoFacts()
                let (preview, previewProblem) = Self.previewColumns(e, header: header)
                let video = e.thumbnail?.video
                try update.bind(
                    e.sha256, e.status?.size, header?.width, header?.height, header?.bitDepth, header?.colorType,
                    header?.interlace,
                    e.thumbnailType.flatMap { type in Self.thumbnailTypes.first { $0.value == type }?.key } ?? 0,
                    e.problem, e.status.map { Int64(bitPattern: $0.inode) },
                    e.status.map { $0.modifiedTime.milliseconds }, facts.orientation, facts.taken,
                    facts.takenTime?.milliseconds,
                    facts.make, facts.model, e.thumbnail == nil ? nil : (facts.hasLocation ? 1 : 0),
                    preview, previewProblem, e.thumbnailType == nil ? nil : (e.thumbnail!.transparent ? 1 : 0),
                    video?.duration.flatMap { Self.thousandths($0) }, video?.frameRate.flatMap { Self.thousandths($0) },
                    video?.codec.flatMap(VideoCodec.fourCC), facts.contentID, e.id, e.name
                ).run()
                changed[e.id] = database.changes
            }
            return changed
        }
        for e in examined {
            if changed[e.id] == 0 {
                // The entry went meanwhile (ptk rm), or was renamed: what was made of it goes too.
                if e.thumbnailType != nil, try photo(id: e.id) == nil { try? removeRenditions(e.id) }
                outcomes[e.id] = .gone
            } else {
                // What was made of the photo before (thumbnails of another format, the old
                // `<id>.png`, its preview) is stale now that the entry says what it has. One that
                // cannot be removed now is not shown (the entry does not name it), and is
                // replaced when made again or removed with the photo.
                try? removeRenditions(e.id, keeping: e.thumbnailType)
                outcomes[e.id] = .indexed(name: e.name, problem: e.thumbnailType != nil ? nil : e.problem)
            }
        }
        return ids.map { ($0, outcomes[$0] ?? .gone) }
    }

    /// `value` in thousandths, rounded, when it is a finite number from 0 to 10¹² (else nil).
    private static func thousandths(_ value: Double) -> Int64? {
        value.isFinite && value >= 0 && value <= 1e12 ? Int64((value * 1000).rounded()) : nil
    }

    /// The `preview` and `preview_problem` columns of a photo just examined: not needed (0)
    /// for a PNG or JPEG (not a HEIF, not a video: its poster) at most `Thumbnailer.previewSide` on its long side (decided from its
    /// header, without decoding it), failed (2, and why) for one that needs a preview but
    /// could not be thumbnailed either (its pixels cannot be read), else pending (NULL: the
    /// indexer makes it after the thumbnails).
    private static func previewColumns(_ e: Examined, header: Thumbnail?) -> (Int64?, String?) {
        let type = PhotoType(fileName: e.name) ?? .png
        // A browser shows a PNG or JPEG that small as it is; a HEIF or a video's poster needs one made.
        if let header, !type.isHEIF, !type.isVideo, max(header.width, header.height) <= Thumbnailer.previewSide {
            return (0, nil)
        }
        if e.thumbnailType == nil { return (2, e.problem ?? "its pixels cannot be read") }
        return (nil, nil)
    }

    /// Writes files (`writeFilesAtomically`, one flush for them all) into the library folder
    /// `folderName` ("thumbnails", "previews"), opened once below the photos directory through
    /// no symlink (`.ptk` or the folder that is one writes nothing), and
    /// written through that descriptor: a folder swapped for a link after it was opened is not
    /// written through. Returns each one's error or nil.
    func writeFiles(_ files: [(name: String, bytes: [UInt8])], in folderName: String, flushEach: Bool = false)
        -> [SystemError?]
    {
        guard !files.isEmpty else { return [] }
        let path = folder + "/" + folderName
        let opened: FileDescriptor
        do {
            opened = try photos.openBeneath(Self.folderName + "/" + folderName, flags: [.readOnly, .directory])
        } catch {
            let shown = SystemError(call: error.call, object: path, errno: error.errno)
            return files.map { _ in shown }
        }
        defer { opened.close() }
        return opened.writeFilesAtomically(files, mode: 0o644, flushEach: flushEach, path: path)
    }

    /// The entries of `ids` that the index has, by id, in one query.
    func photos(ids: [Int64]) throws(LibraryError) -> [Int64: Photo] {
        guard !ids.isEmpty else { return [:] }
        let list = ids.map(String.init).joined(separator: ",")
        let s = try database.prepare("SELECT \(Self.columns) FROM photos WHERE id IN (\(list))").bind()
        var found: [Int64: Photo] = [:]
        while try s.step() {
            let p = Self.photo(from: s)
            found[p.id] = p
        }
        return found
    }

    /// What reading a photo's file gave: everything but the index.
    private enum Reading: @unchecked Sendable {
        // FileStatus and Thumbnail are values; the enum crosses to the reading thread and back once.
        /// Not taken: the batch's time was spent.
        case postponed
        case missing
        case cancelled
        case passing(String)
        case unusable(FileStatus?, sha256: String?, problem: String)
        case read(FileStatus, sha256: String?, Thumbnail)
    }

    /// Reads `photos` on up to `readers` threads (the calling one included), each with a hash
    /// buffer of its own, each taking the next photo in order until none is left or `deadline`
    /// has passed (the first photo is always taken). Threads that cannot be started leave the
    /// photos to the others.
    private func read(_ photos: [Photo], readers: Int, cancel: UnsafePointer<Int32>?, until deadline: Instant?)
        -> [Reading]
    {
        let results = ReadingResults<Reading>(count: photos.count, filling: .postponed)
        // The opener is a plain open, or a test's; either may run on the reading threads.
        let opener = UncheckedSendable(openForIndexing)
        let directory = self.photos
        let limit = pixelLimit
        let cancelFlag = cancel.map { SendablePointer(pointer: $0) }
        // `.ptk`, for the "was decoding" marks of the videos and HEIF images among them.
        let marks = photos.contains { Self.marksDecoding(of: $0.type) } ? openMarkFolder() : nil
        defer { marks?.close() }
        let shares = max(1, min(readers, photos.count / 8 + 1))
        let all = UncheckedSendable(photos)
        // Joined before returning: none of them outlives the call, in a C library or its
        // thread-local clean-up.
        let threads = ThreadGroup()
        for _ in 1..<shares {
            do {
                try threads.start(name: "index-reader") {
                    lowerThreadPriority()
                    let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 64)
                    defer { buffer.deallocate() }
                    while let i = results.next(until: deadline) {
                        results.set(
                            i,
                            Self.read(
                                all.value[i], in: directory, open: opener.value, pixelLimit: limit, buffer: buffer,
                                marks: marks, cancel: cancelFlag?.pointer))
                    }
                }
            } catch {
                // No thread: the others take its photos.
                break
            }
        }
        while let i = results.next(until: deadline) {
            results.set(
                i,
                Self.read(
                    photos[i], in: directory, open: opener.value, pixelLimit: limit, buffer: hashBuffer, marks: marks,
                    cancel: cancel))
        }
        threads.join(until: nil)
        return results.all
    }

    /// Opens, checks, hashes (when the index has no hash, or the size changed) and thumbnails
    /// one photo, its decode marked in `marks` (`.ptk`) when it is a video or HEIF
    /// (`markingDecode`). Touches no index.
    private static func read(
        _ photo: Photo, in directory: FileDescriptor,
        open: (String, FileDescriptor) throws(SystemError) -> FileDescriptor,
        pixelLimit: UInt64, buffer: UnsafeMutableRawBufferPointer, marks: FileDescriptor?,
        cancel: UnsafePointer<Int32>?
    ) -> Reading {
        if let cancel, cancel.pointee != 0 { return .cancelled }
        let fd: FileDescriptor
        do { fd = try open(photo.name, directory) } catch  where error.code == .noSuchFile {
            return .missing
        } catch {
            return isPassing(error)
                ? .passing("cannot open: \(error)")
                : .unusable(nil, sha256: photo.sha256, problem: "cannot open: \(error)")
        }
        defer { fd.close() }
        let st: FileStatus
        do { st = try fd.status() } catch {
            return isPassing(error)
                ? .passing("cannot read its status: \(error)")
                : .unusable(nil, sha256: photo.sha256, problem: "cannot read its status: \(error)")
        }
        guard st.isRegularFile else { return .unusable(nil, sha256: photo.sha256, problem: "not a regular file") }
        var sha256 = photo.sha256
        if sha256 == nil || photo.size != st.size {
            switch hashFile(fd, buffer: buffer, cancel: cancel) {
            case .success(let digest): sha256 = digest
            case .failure(.cancelled): return .cancelled
            case .failure(.system(let error)):
                return isPassing(error)
                    ? .passing("cannot read: \(error)") : .unusable(st, sha256: nil, problem: "cannot read: \(error)")
            case .failure(.sizeChanged):
                // Read to its end, whatever its size: a file still being written is read again later.
                return .passing("it changed while it was read")
            }
            // The thumbnail reads from the start; a descriptor whose offset cannot be reset is
            // left for the next try.
            do { _ = try fd.seek(to: 0) } catch { return .passing("cannot read: \(error)") }
        }
        // A HEIF's thumbnail item of at least the smallest side stands in for the whole image
        // (an iPhone's 320-pixel one: the largest side comes out at 320 until the preview's
        // pass makes it again from the whole image).
        let thumbnail = markingDecode(photo, pass: .thumbnail, sha256: sha256, size: st.size, in: marks) {
            Thumbnailer.make(
                from: fd, type: PhotoType(fileName: photo.name) ?? .png, sides: Thumbnailer.gallerySides,
                embeddedAtLeast: Thumbnailer.gallerySides.min(), pixelLimit: pixelLimit, cancel: cancel)
        }
        if thumbnail.outcome == .cancelled { return .cancelled }
        return .read(st, sha256: sha256, thumbnail)
    }

    /// What is to be written for `photo` after `reading` (never `.missing`, which the caller handles).
    private func examination(of photo: Photo, _ reading: Reading) -> Examination {
        switch reading {
        case .missing, .cancelled: return .done(.cancelled)
        case .postponed: return .done(.postponed)
        case .passing(let reason): return .done(.retryLater(name: photo.name, reason: reason))
        case .unusable(let st, let sha256, let problem):
            return .examined(
                Examined(id: photo.id, name: photo.name, status: st, sha256: sha256, thumbnail: nil, problem: problem))
        case .read(let st, let sha256, let thumbnail):
            return .examined(
                Examined(
                    id: photo.id, name: photo.name, status: st, sha256: sha256, thumbnail: thumbnail,
                    problem: thumbnail.problem ?? thumbnail.notes))
        }
    }

    /// What `examine` found of one photo, to be written with the others of its batch.
    private struct Examined {
        var id: Int64
        var name: String
        var status: FileStatus?
        var sha256: String?
        var thumbnail: Thumbnail?
        var problem: String?
        /// The gallery thumbnails' format, when they were made (one rendition per side).
        var thumbnailType: PhotoType? {
            guard let thumbnail, thumbnail.outcome == .made,
                thumbnail.renditions.count == Thumbnailer.gallerySides.count
            else { return nil }
            return thumbnail.renditions[0].type
        }
    }

    private enum Examination {
        /// Nothing to write: gone, cancelled or to be tried later.
        case done(IndexOutcome)
        case examined(Examined)
    }

    /// Reads one photo on this thread, following a rename by ptk between reading the entry and
    /// opening the file; drops the entry of a file that is gone.
    private func examine(id: Int64, cancel: UnsafePointer<Int32>?) throws(LibraryError) -> Examination {
        for _ in 0..<5 {
            guard let photo = try photo(id: id) else { return .done(.gone) }
            let marks = Self.marksDecoding(of: photo.type) ? openMarkFolder() : nil
            defer { marks?.close() }
            let reading = Self.read(
                photo, in: photos, open: openForIndexing, pixelLimit: pixelLimit, buffer: hashBuffer, marks: marks,
                cancel: cancel)
            guard case .missing = reading else { return examination(of: photo, reading) }
            if try self.photo(id: id)?.name != photo.name { continue }
            try database.writeTransaction { () throws(LibraryError) in
                try database.prepare("DELETE FROM photos WHERE id = ? AND name = ?").bind(id, photo.name).run()
            }
            // What was made of it and is left behind is removed by the next sweep at start.
            try? removeRenditions(id)
            return .done(.gone)
        }
        return .done(.gone)
    }

    /// What `index` did.
    public enum IndexOutcome: Equatable, Sendable {
        /// Recorded; `problem` says why there is no thumbnail, when there is none.
        case indexed(name: String, problem: String?)
        /// The entry or its file is gone (the entry is dropped with it).
        case gone
        /// `cancel` stopped it: the photo stays pending.
        case cancelled
        /// A passing error (`isPassing`): the photo stays pending, to be tried again later.
        case retryLater(name: String, reason: String)
        /// Not read: its batch's time was spent on the photos before it. It stays pending.
        case postponed
    }
}

/// The readings of one batch, filled in by several threads, each taking the next slot in turn.
private final class ReadingResults<T>: @unchecked Sendable {
    // `slots` and `taken` are guarded by `lock`; the slots are read after every thread has ended.
    private var slots: [T]
    private var taken = 0
    private let lock = Lock()
    /// `count` slots holding `filling` until set.
    init(count: Int, filling: T) { slots = Array(repeating: filling, count: count) }
    /// The next slot to fill; nil when none is left, or `deadline` has passed and one was taken.
    func next(until deadline: Instant?) -> Int? {
        lock.withLock {
            guard taken < slots.count else { return nil }
            if taken > 0, let deadline, Instant.now >= deadline { return nil }
            taken += 1
            return taken - 1
        }
    }
    func set(_ i: Int, _ value: T) { lock.withLock { slots[i] = value } }
    var all: [T] { lock.withLock { slots } }
}

/// A pointer handed to reading threads: the cancel flag, which the indexer owns for its life
/// and the C code polls.
private struct SendablePointer: @unchecked Sendable {
    let pointer: UnsafePointer<Int32>
}

/// A value handed to the reading threads that the compiler cannot see is safe to share.
private struct UncheckedSendable<T>: @unchecked Sendable {
    let value: T
    init(_ value: T) { self.value = value }
}
