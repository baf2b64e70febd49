import CHEIFOpen
import PTKDigest
import PTKSystem
import PTKVocabulary

/// One photo being received: its temporary file in `.incoming/`, hashed and checked for its
/// type's structure (PNG, or JPEG) as the bytes are written, so finishing needs no second pass
/// over the file.
public final class IncomingFile {
    /// What was asked for: the name, size, hash and type the bytes are held to.
    public let request: StoreRequest
    /// Bytes already held when the transfer (re)started: the ACCEPT offset.
    public private(set) var offset: Int64 = 0
    /// Bytes in the temporary file now.
    public internal(set) var written: Int64 = 0
    let store: PhotoStore
    let fd: FileDescriptor
    private let name: String
    private let resumable: Bool
    /// The checks, inline; moved into `checking` once a big file's bytes start to flow.
    private var hasher: SHA256? = SHA256()
    private let type: PhotoType
    private var structure: StructureCheck
    var formatError: FormatError?
    private var checking: CheckingThread?
    private var open = true
    /// True when `fd` is an inbox's source itself, linked into `.incoming` (`PhotoStore+Source`):
    /// its mode, owner and time stay its writer's.
    var linked = false
    /// The bytes still to come, promised against min-free by `begin`; given back as they are
    /// written and when the file is let go.
    var reservation: Reservation?

    /// True when this file's checks run on a checking thread (tests).
    var checksOnThread: Bool { checking != nil }

    init(store: PhotoStore, request: StoreRequest, fd: FileDescriptor, name: String, resumable: Bool) {
        self.store = store
        self.request = request
        self.fd = fd
        self.name = name
        self.resumable = resumable
        self.type = request.type
        self.structure = StructureCheck(type: type, totalSize: request.size)
    }

    deinit {
        // A file in a flush round is the round's until it is answered.
        if let flushing { _ = conclude(flushing) }
        if open { abandon(keepForResume: resumable) }
        _ = checking?.finish()
    }

    func hashInline(_ bytes: UnsafeRawBufferPointer) {
        guard var h = hasher.take() else { return }
        store.checks.pass { h.update(bytes) }
        hasher = consume h
    }

    /// Feeds `bytes` to the inline structural check unless it already failed.
    func checkStructureInline(_ bytes: UnsafeRawBufferPointer) {
        guard formatError == nil else { return }
        store.checks.pass {
            do throws(FormatError) { try structure.feed(bytes) } catch { formatError = error }
        }
    }

    /// Files with at least this many bytes still to come after their first chunk are checked
    /// on a thread of their own (see CheckingThread).
    static let threadedCheckMinimum: Int64 = 1 << 20

    /// Takes up a partial upload of `length` bytes: keeps whole chunks only, and re-reads them to
    /// rebuild the hash and PNG state. A partial whose bytes are not a PNG start is discarded, and
    /// so is one that holds the whole file but not the offered bytes (its SHA-256 is known then):
    /// anyone may leave a partial under the name of content they know the hash of, and the next
    /// sender of that content would be told it is all there, then that it does not match.
    /// `remembered`, the state the last session left of this very file unchanged, spares the
    /// re-reading (ResumeStates); a partial read back more than `ResumeStates.rereadLimit` times
    /// its length in this run is started over instead.
    func resume(length: Int64, chunkSize: Int, remembered: ResumeStates.Remembered? = nil) throws(SystemError) {
        let chunk = Int64(chunkSize)
        // A partial holding the whole file (its session broke off after the last chunk) is taken
        // whole when the sender takes an offset at the file's end ("held", protocol §7).
        let usable =
            request.wholeResumable && length == request.size
            ? length : min(length / chunk * chunk, request.size / chunk * chunk)
        if usable != length { try fd.truncate(to: usable) }
        if usable == 0 { return }
        if let remembered, usable == length, remembered.hasher != nil || remembered.wholeDigest != nil,
            remembered.describes(try fd.status())
        {
            hasher = remembered.hasher.take()
            structure = remembered.structure
            wholeDigest = remembered.wholeDigest
            // A whole file is taken only as the offered bytes, remembered or read (a planted one
            // is the sender's to send again).
            if usable == request.size, wholeDigest == nil, !request.sha256.isEmpty, var h = hasher.take() {
                let digest = store.checks.pass { h.finalizeHex() }
                guard digest == request.sha256 else {
                    store.resumeStates.forget(name)
                    try fd.truncate(to: 0)
                    hasher = SHA256()
                    structure = StructureCheck(type: type, totalSize: request.size)
                    try fd.seek(to: 0)
                    return
                }
                wholeDigest = digest
            }
            offset = usable
            written = usable
            try fd.seek(to: usable)
            return
        }
        var buffer = [UInt8](repeating: 0, count: Int(min(usable, 1 << 20)))
        var position: Int64 = 0
        let startOver = store.resumeStates.overRereadLimit(name, length: usable)
        while position < usable, !startOver {
            let want = Int(min(Int64(buffer.count), usable - position))
            let n = try buffer.withUnsafeMutableBytes { b in
                Result { () throws(SystemError) in
                    try fd.read(fromAbsoluteOffset: position, into: UnsafeMutableRawBufferPointer(rebasing: b[..<want]))
                }
            }.get()
            if n == 0 { break }
            store.resumeStates.read(n, of: name)
            buffer.withUnsafeBytes { b in
                let slice = UnsafeRawBufferPointer(rebasing: b[..<n])
                hashInline(slice)
                checkStructureInline(slice)
            }
            position += Int64(n)
        }
        // A whole file is hashed to its end here: it is kept only when it is the offered bytes.
        var whole: String?
        if formatError == nil, position == usable, usable == request.size, !request.sha256.isEmpty,
            var h = hasher.take()
        {
            let digest = store.checks.pass { h.finalizeHex() }
            if digest == request.sha256 { whole = digest }
        }
        if formatError != nil || position != usable
            || (usable == request.size && whole == nil && !request.sha256.isEmpty)
        {
            store.resumeStates.forget(name)
            try fd.truncate(to: 0)
            hasher = SHA256()
            structure = StructureCheck(type: type, totalSize: request.size)
            formatError = nil
            position = 0
        }
        wholeDigest = whole
        offset = position
        written = position
        try fd.seek(to: position)
    }

    /// The SHA-256 of a partial that held the whole file, checked by `resume`.
    private var wholeDigest: String?

    /// Appends one chunk. Fails `.notAPhoto` as soon as the bytes cannot be a photo of the
    /// offer's type, `.noSpace` when the disk is full, `.io` otherwise.
    public func append(_ bytes: UnsafeRawBufferPointer) throws(StoreFailure) {
        try append(bytes, held: nil)
    }

    /// Appends one chunk; the checking thread takes `chunk` itself, without a copy.
    public func append(_ chunk: [UInt8]) throws(StoreFailure) {
        try chunk.withUnsafeBytes { b in Result { () throws(StoreFailure) in try append(b, held: chunk) } }.get()
    }

    /// `held`, when given, is the array `bytes` points into.
    private func append(_ bytes: UnsafeRawBufferPointer, held: [UInt8]?) throws(StoreFailure) {
        if let checking {
            formatError = formatError ?? checking.formatError  // found on the thread, a few chunks back
        } else {
            checkStructureInline(bytes)
        }
        if let formatError {
            throw StoreFailure(.notAPhoto, message(formatError))
        }
        do { try fd.writeAll(bytes) } catch {
            throw StoreFailure(error.isNoSpace ? .noSpace : .io, "writing the temporary file: \(error.reason)")
        }
        if let checking {
            if let held { checking.update(held) } else { checking.update(bytes) }
        } else {
            hashInline(bytes)
        }
        written += Int64(bytes.count)
        reservation?.used(Int64(bytes.count))
        // The first chunk is checked here, so a file that is no photo fails at once; the rest of
        // a big file is checked on a thread of its own once the store has one to spare (asked
        // again at each chunk, so a file may move there mid-way when another's thread ends).
        if checking == nil, request.size - written >= Self.threadedCheckMinimum, hasher != nil,
            store.checkingThreads.tryTake()
        {
            checking = CheckingThread(
                continuing: hasher.take()!, structure: structure, gate: store.checks, slot: store.checkingThreads,
                group: store.checkingGroup)
        }
        if written - writebackStart >= Self.writebackStep || written == request.size {
            // Start writing this stretch to disk now (posix_fadvise DONTNEED begins writeback of
            // dirty pages without waiting), so the fsync before SAVED has little left to do and
            // the disk works while the network does; after the last byte, while ACK and DONE
            // cross the network.
            fd.startWriteback(offset: writebackStart, length: written - writebackStart)
            writebackStart = written
        }
    }

    /// Bytes between early writebacks.
    static let writebackStep: Int64 = 8 << 20
    private var writebackStart: Int64 = 0

    /// Checks size, SHA-256 and structure, flushes the file, publishes it under its final
    /// name without replacing anything, and flushes the directory, in the store's next flush
    /// round with every other photo finishing then. On failure nothing is published and the
    /// temporary file is deleted.
    public func finish() -> Result<StoredPhoto, StoreFailure> {
        conclude(startFinishing(notify: nil))
    }

    /// The first half of `finish`, for a session that goes on while its photo is flushed: checks
    /// the photo now and queues it for the next flush round. `notify` is called on the flusher's
    /// thread once the round is over (it must only wake the session); the session then calls
    /// `conclude` on its own thread. A photo that fails its checks gets a ticket answered already.
    /// `owner` (a session) shares rounds fairly with other owners; nil: this file alone. `held`,
    /// asked when duplicates are looked for and the store keeps none with these bytes, names a
    /// photo with them that the caller has in a round still (`PhotoStore.startTaking`).
    public func startFinishing(
        notify: (@Sendable () -> Void)?, owner: Int? = nil,
        held: (_ sha256: String, _ size: Int64) -> String? = { _, _ in nil }
    ) -> FlushTicket {
        switch verify(held: held) {
        case .failure(let failure):
            return FlushTicket(.failure(failure))
        case .success(.kept(let saved)):
            return FlushTicket(.success(saved))
        case .success(.toFlush(let digest)):
            let ticket = FlushTicket(notify: notify)
            flushing = ticket
            store.rounds.submit(
                FlushRounds.Job(
                    file: fd, temporary: name, offeredName: request.name, type: type, folder: request.folder,
                    saved: StoredPhoto(name: "", size: request.size, sha256: digest), ticket: ticket,
                    owner: owner ?? ObjectIdentifier(self).hashValue))
            return ticket
        }
    }

    /// The second half of `finish`: waits for `ticket`'s round if it is not over, then closes the
    /// file (saved) or deletes it (failed).
    public func conclude(_ ticket: FlushTicket) -> Result<StoredPhoto, StoreFailure> {
        let result = ticket.wait()
        flushing = nil
        switch result {
        case .success:
            reservation?.release()
            if open {
                open = false
                if resumable { store.resumeStates.forget(name) }
                fd.close()
            }
        case .failure:
            abandon(keepForResume: false)
        }
        return result
    }

    /// The SHA-256 of its bytes, once `startFinishing` has read them whole.
    private(set) var sha256: String?

    /// The round this file is in, until `conclude`.
    private var flushing: FlushTicket?

    private enum Verified {
        /// Its bytes are right: flush and publish it.
        case toFlush(sha256: String)
        /// The same bytes are kept already (duplicates = skip); the temporary file is gone.
        case kept(StoredPhoto)
    }

    private func verify(held alsoHeld: (String, Int64) -> String?) -> Result<Verified, StoreFailure> {
        guard written == request.size else {
            return .failure(StoreFailure(.sizeMismatch, "received \(written) bytes, the offer said \(request.size)"))
        }
        let digest: String
        if let checking {
            let result = checking.finish()
            digest = result.sha256
            formatError = formatError ?? result.structure
        } else if let wholeDigest {
            digest = wholeDigest
            if formatError == nil {
                store.checks.pass { do throws(FormatError) { try structure.finish() } catch { formatError = error } }
            }
        } else {
            var h = hasher.take() ?? SHA256()
            digest = store.checks.pass { h.finalizeHex() }
            if formatError == nil {
                store.checks.pass { do throws(FormatError) { try structure.finish() } catch { formatError = error } }
            }
        }
        sha256 = digest
        guard request.sha256.isEmpty || digest == request.sha256 else {
            return .failure(StoreFailure(.hashMismatch, "SHA-256 of the received bytes is \(digest)"))
        }
        if let formatError { return .failure(StoreFailure(.notAPhoto, message(formatError))) }
        if type.isHEIF, let problem = store.checks.pass({ Self.heifProblem(fd) }) {
            return .failure(StoreFailure(.notAPhoto, "not a well-formed \(type.displayName): \(problem)"))
        }
        if type.isVideo, case .failure(let problem) = store.checks.pass({ MP4Check.examine(fd) }) {
            return .failure(StoreFailure(.notAPhoto, "not a well-formed \(type.displayName): \(problem.message)"))
        }
        if let held = store.heldPhoto(sha256: digest, size: request.size)
            ?? (store.findHeld == nil ? nil : alsoHeld(digest, request.size))
        {
            // The same bytes are kept already: nothing new is stored (duplicates = skip).
            abandon(keepForResume: false)
            return .success(.kept(StoredPhoto(name: held, size: request.size, sha256: digest, isDuplicate: true)))
        }
        // A linked source keeps its own mode, owner and time: the file is its writer's too.
        if linked { return .success(.toFlush(sha256: digest)) }
        do throws(SystemError) {
            // A photo whose mode cannot be set is not published with the wrong one.
            try fd.setPermissions(store.settings.fileMode)
            // Run as root (ptk import on the service's directory), the photo gets the directory's owner.
            try fd.takeOwner(of: store.settings.directory)
            // The sender's modification time, when it gave a believable one (protocol section 7:
            // not before 1970, not more than a day ahead of this clock).
            if let modified = request.modified, modified >= 0, modified <= WallTime.now.milliseconds + 86_400_000 {
                try fd.setModifiedTime(WallTime(milliseconds: modified))
            }
        } catch {
            return .failure(StoreFailure(error.isNoSpace ? .noSpace : .io, error.description))
        }
        return .success(.toFlush(sha256: digest))
    }

    /// A PNG's problem as it is ("CRC mismatch in IDAT chunk"); a JPEG's or a HEIF's says which type it is about.
    func message(_ error: FormatError) -> String {
        type == .png ? error.message : "not a well-formed \(type.displayName): \(error.message)"
    }

    /// Why the HEIF file must not be kept: what `HEIFCheck` refuses before libheif sees it,
    /// else why libheif cannot open it or find its primary image; nil when it can.
    static func heifProblem(_ fd: FileDescriptor) -> String? {
        if let problem = HEIFCheck.problem(in: fd) { return problem }
        var message = [CChar](repeating: 0, count: 200)
        guard ptk_heif_check(fd.rawValue, &message) != 0 else { return nil }
        return String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Leaves this partial's checks to the next session that resumes it, when they are sound
    /// and the file holds exactly the bytes checked: taken back from the checking thread when
    /// they run there, and kept once the kernel's change clock has passed the file's change
    /// time (a tick at most), so that any later write is seen (ResumeStates). Called with the
    /// partial still open, so locked: nobody else writes it meanwhile.
    private func rememberState() {
        if let checking {
            self.checking = nil
            guard var back = checking.handBack(waitingUntil: .now + .seconds(5)) else { return }
            formatError = formatError ?? back.error
            hasher = back.hasher.take()
            structure = back.structure
        }
        guard formatError == nil, hasher != nil || wholeDigest != nil else { return }
        // unreadable: the next session reads the partial again
        guard let status = try? fd.status(), status.size == written else { return }
        let deadline = Instant.now + ResumeStates.settleLimit
        var taken = changeClockNanoseconds()
        while taken <= status.changedAt {
            guard Instant.now < deadline else { return }  // the clock stands still (set back): read again next time
            sleep(for: .milliseconds(1))
            taken = changeClockNanoseconds()
        }
        // Changed while waiting (not by this session: it holds the lock): not the bytes checked.
        // unreadable: read again next time
        guard let again = try? fd.status(), again == status, again.changedAt == status.changedAt else { return }
        store.resumeStates.remember(
            name,
            ResumeStates.Remembered(
                status: status, taken: taken, length: written, hasher: hasher.take(),
                structure: structure, wholeDigest: wholeDigest))
    }

    /// Gives the file up. A resumable partial is kept (whole chunks only) for a later session;
    /// anything else is deleted.
    public func abandon(keepForResume: Bool) {
        reservation?.release()
        guard open else { return }
        open = false
        if keepForResume && resumable && written > 0 {
            rememberState()
            fd.close()
        } else {
            if resumable { store.resumeStates.forget(name) }
            // Already gone, or left for the stale-partial clean-up: no final name is involved.
            try? store.incoming.unlink(name)
            fd.close()
        }
    }
}
