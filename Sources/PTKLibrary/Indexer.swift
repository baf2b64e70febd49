import PTKSystem
import PTKVocabulary

/// ptkd's background indexing: photos just saved are handed over with `add` (it never blocks
/// and never touches the disk, so SAVED is never delayed), and one thread at the lowest
/// priority enters them in the index and makes their thumbnails (senders in turn, a batch
/// taking new photos for `batchTime` at most), then, when no photo waits for
/// its thumbnails, their previews (`PhotoLibrary.makePreviews`). At start it reconciles the
/// index with the directory and finishes what a previous run left pending, so nothing is lost
/// if ptkd stops first. The queue is bounded: when it overflows (the index is stuck), photos
/// are found again by a reconcile once it drains, without their sender.
public final class LibraryIndexer: @unchecked Sendable {
    // `queue`, `overflowed`, `stopping`, `finished` and `busy` are guarded by `state`; `cancel`
    // is written under it and read by the decoder without it (an int the C code polls).
    private let state = ConditionLock()
    private var queue: [Arrival] = []
    private var overflowed = false
    private var stopping = false
    private var finished = false
    /// True from `init` (the thread is about to start) until the thread waits for work.
    private var busy = true
    private let cancel = UnsafeMutablePointer<Int32>.allocate(capacity: 1)
    /// The indexing thread, joined by `stop`.
    private let thread = ThreadGroup()
    /// The received-photos directory whose library it fills.
    public let directory: String
    /// Arrivals that may wait at most; past it they are dropped and the directory is reconciled instead.
    public let capacity: Int
    private let pixelLimit: UInt64
    /// Previews are not written into the space kept free (`min-free`).
    private let minFree: Int64
    private let log: @Sendable (String) -> Void
    /// The first and the longest pause before a photo whose indexing met a passing error (out
    /// of descriptors, EIO: `PhotoLibrary.isPassing`) is tried again; the pause doubles.
    private let retryFirst: Duration
    private let retryLongest: Duration
    /// Such photos, by id: when each is due again and how many tries it has had. Touched by
    /// the indexing thread only.
    private var deferred: [Int64: (due: Instant, tries: Int)] = [:]
    /// Likewise the photos whose preview met a passing error.
    private var previewsDeferred: [Int64: (due: Instant, tries: Int)] = [:]
    /// A reconcile's backlog being worked through: when it was found and how many photos it
    /// held, so that the log says when it is done. Set by a reconcile (the one at start runs
    /// before the thread starts), cleared by the indexing thread.
    private var backlog: (since: Instant, count: Int)?
    /// Threads that read photos (hash, header, thumbnail) at once: one per CPU, up to 4, all at
    /// the lowest priority. The index itself is written by the indexing thread alone.
    private let readers: Int
    /// Photos indexed together: their thumbnails flushed at once, their entries in one transaction.
    static let batchSize = 64
    /// A batch takes no new photo after this (issue 54): with senders taking turns
    /// (`PhotoLibrary.pending`), another sender's photo waits at most this and the photos in
    /// hand behind one sender's slow ones (20 PNG bombs of 200 MP: 44 s of CPU in one batch).
    static let batchTime: Duration = .seconds(1)
    /// Previews made together (their files flushed at once, their entries in one
    /// transaction): few, as each decodes a whole photo, so that photos arriving meanwhile
    /// wait at most that long for their thumbnails.
    static let previewBatchSize = 2
    /// Called with each library the indexer opens, before it is used (tests make its calls fail).
    var prepare: @Sendable (PhotoLibrary) -> Void = { _ in }

    /// `log` receives the lines worth a journal entry: problems, and what a reconcile changed.
    public init(
        directory: String, capacity: Int = 10_000, pixelLimit: UInt64 = Thumbnailer.defaultPixelLimit,
        minFree: Int64 = 0,
        retryFirst: Duration = .seconds(1), retryLongest: Duration = .seconds(300),
        readers: Int = min(4, availableProcessorCount()),
        log: @escaping @Sendable (String) -> Void
    ) {
        self.directory = directory
        self.readers = max(1, readers)
        self.capacity = capacity
        self.pixelLimit = pixelLimit
        self.minFree = minFree
        self.retryFirst = retryFirst
        self.retryLongest = retryLongest
        self.log = log
        cancel.initialize(to: 0)
    }

    deinit { cancel.deallocate() }

    /// Opens the library and reconciles it with the directory here and now (a directory listing
    /// and a stat per file: so that ptkd's descriptors are settled before it says it is
    /// listening), then starts the indexing thread, which takes the library over. A library that
    /// cannot be opened now is tried again on the thread.
    public func start() throws(SystemError) {
        // Not fatal: the indexing thread opens it again, logging each failure (`retrying`).
        let library = try? PhotoLibrary(directory: directory, create: true)
        if let library {
            library.pixelLimit = pixelLimit
            library.minFree = minFree
            prepare(library)
            settleDecodingMarks(library)
            reconcile(library, atStart: true)
        }
        let opened = LibraryHandOver(library)
        try thread.start(name: "index") { [self] in run(opened.take()) }
    }

    /// Hands over a photo just saved. Never blocks.
    public func add(_ arrival: Arrival) {
        state.withLock {
            if finished { return }
            if queue.count >= capacity {
                overflowed = true
            } else {
                queue.append(arrival)
            }
            state.broadcast()
        }
    }

    /// Stops the thread at its next row, hash block or photo, and joins it, waiting until
    /// `deadline`; returns true when it has ended (it is then outside libpng, SQLite and
    /// OpenSSL, and so are the threads it reads with).
    @discardableResult
    public func stop(waitingUntil deadline: Instant) -> Bool {
        state.withLock {
            stopping = true
            cancel.pointee = 1
            state.broadcast()
        }
        return thread.join(until: deadline)
    }

    /// True when nothing is queued and the thread waits (tests and benchmarks wait for this).
    public var isIdle: Bool { state.withLock { queue.isEmpty && !busy && !overflowed } }

    private func run(_ opened: PhotoLibrary?) {
        lowerThreadPriority()
        defer {
            state.withLock {
                finished = true
                queue.removeAll()
                state.broadcast()
            }
        }
        let library: PhotoLibrary
        if let opened {
            library = opened
        } else {
            guard
                let retried = retrying({ () throws(LibraryError) in try PhotoLibrary(directory: directory, create: true)
                })
            else {
                log("photo library off: its index cannot be opened (see above)")
                return
            }
            library = retried
            library.pixelLimit = pixelLimit
            library.minFree = minFree
            prepare(library)
            settleDecodingMarks(library)
            reconcile(library, atStart: true)
        }
        indexing: while true {
            let (arrivals, recheck) = state.withLock { () -> ([Arrival], Bool) in
                let taken = queue
                queue.removeAll()
                let r = overflowed
                overflowed = false
                return (taken, r)
            }
            if !arrivals.isEmpty { retrying { () throws(LibraryError) in try library.record(arrivals) } }
            if isStopping { break indexing }
            if recheck { reconcile(library, atStart: false) }
            var indexedAny = false
            let now = Instant.now
            if let ids = retrying({ () throws(LibraryError) in
                try library.pending(limit: Self.batchSize + deferred.count)
            }) {
                let due = Array(ids.filter { deferred[$0].map { $0.due <= now } ?? true }.prefix(Self.batchSize))
                if isStopping { break indexing }
                if !due.isEmpty,
                    let outcomes = retrying({ () throws(LibraryError) in
                        try library.index(
                            ids: due, readers: readers, cancel: UnsafePointer(cancel), until: .now + Self.batchTime)
                    })
                {
                    for (id, outcome) in outcomes { note(outcome, of: id) }
                }
                indexedAny = !due.isEmpty
                if ids.isEmpty, let b = backlog {
                    backlog = nil
                    log(
                        "library: indexed the \(b.count) photo(s) found in the directory, in \(formatDecimal((Instant.now - b.since).seconds)) s"
                    )
                }
            }
            if indexedAny { continue }
            // No photo due for its thumbnails: previews, a few at a time, then a look at the queue again.
            if isStopping { break indexing }
            if makePreviews(library) { continue }
            // Nothing due: wait for work, or until the next deferred photo is due.
            let due = (deferred.values.map(\.due) + previewsDeferred.values.map(\.due)).min()
            state.withLock {
                busy = !queue.isEmpty || overflowed
                while queue.isEmpty && !overflowed && !stopping {
                    if !state.wait(until: due) { break }
                }
                busy = true
            }
        }
        // Stopping: photos handed over since the last look are recorded before the thread ends
        // (found at the next start instead, they would have no sender, address or time received).
        // Sessions stop before the library, so nothing is handed over after this.
        let left = state.withLock { () -> [Arrival] in
            finished = true
            defer { queue.removeAll() }
            return queue
        }
        if !left.isEmpty {
            do { try library.record(left) } catch {
                log(
                    "library: cannot record \(left.count) photo(s) saved just before stopping (\(error)); the next start indexes them as found"
                )
            }
        }
    }

    private var isStopping: Bool { state.withLock { stopping } }

    /// Logs what indexing photo `id` gave, and keeps track of the photos to try again.
    private func note(_ outcome: PhotoLibrary.IndexOutcome, of id: Int64) {
        switch outcome {
        case .retryLater(let name, let reason):
            let tries = (deferred[id]?.tries ?? 0) + 1
            let pause = min(retryLongest, retryFirst * (1 << min(tries - 1, 30)))
            deferred[id] = (.now + pause, tries)
            // Once per photo: the journal is not flooded while the cause lasts.
            if tries == 1 {
                log(
                    "library: cannot index \"\(name)\" now (\(reason)); trying again, at first in \(formatSeconds(pause)), then less often"
                )
            }
        case .indexed(let name, let problem):
            if let earlier = deferred.removeValue(forKey: id) {
                log("library: indexed \"\(name)\" at try \(earlier.tries + 1)")
            }
            if let problem { log("library: no thumbnail for \"\(name)\": \(problem)") }
        case .gone, .cancelled:
            deferred[id] = nil
        case .postponed:
            break
        }
    }

    /// Makes the previews of a batch of photos waiting for one (not those deferred and not yet
    /// due again); returns false when none was due.
    private func makePreviews(_ library: PhotoLibrary) -> Bool {
        let now = Instant.now
        guard
            let ids = retrying({ () throws(LibraryError) in
                try library.pendingPreviews(limit: Self.previewBatchSize + previewsDeferred.count)
            })
        else { return false }
        let due = Array(ids.filter { previewsDeferred[$0].map { $0.due <= now } ?? true }.prefix(Self.previewBatchSize))
        if due.isEmpty || isStopping { return false }
        guard
            let outcomes = retrying({ () throws(LibraryError) in
                try library.makePreviews(ids: due, cancel: UnsafePointer(cancel))
            })
        else { return false }
        for (id, outcome) in outcomes {
            switch outcome {
            case .retryLater(let name, let reason):
                let tries = (previewsDeferred[id]?.tries ?? 0) + 1
                let pause = min(retryLongest, retryFirst * (1 << min(tries - 1, 30)))
                previewsDeferred[id] = (.now + pause, tries)
                // Once per photo: the journal is not flooded while the cause lasts.
                if tries == 1 {
                    log(
                        "library: cannot make the preview of \"\(name)\" now (\(reason)); trying again, at first in \(formatSeconds(pause)), then less often"
                    )
                }
            case .failed(let name, let reason):
                previewsDeferred[id] = nil
                log("library: no preview for \"\(name)\": \(reason)")
            case .made, .skipped, .cancelled:
                previewsDeferred[id] = nil
            }
        }
        return true
    }

    /// Settles the "was decoding" marks a run that stopped while decoding left
    /// (`PhotoLibrary.settleDecodingMarks`): those photos are not decoded again; each is logged once.
    private func settleDecodingMarks(_ library: PhotoLibrary) {
        do {
            for (name, problem) in try library.settleDecodingMarks() { log("library: \"\(name)\": \(problem)") }
        } catch {
            log(
                "library: cannot settle the marks of decodes cut short at the last stop (\(error)); tried at the next start"
            )
        }
    }

    private func reconcile(_ library: PhotoLibrary, atStart: Bool) {
        guard let report = retrying({ () throws(LibraryError) in try library.reconcile() }) else { return }
        if atStart {
            do { _ = try library.sweepThumbnails() } catch {
                log("library: cannot remove stale thumbnails now (\(error)); they take space but are never shown")
            }
        }
        var parts: [String] = []
        if report.added > 0 { parts.append("\(report.added) new file(s) to index") }
        if report.dropped > 0 {
            parts.append("\(report.dropped) entr\(report.dropped == 1 ? "y" : "ies") whose file is gone dropped")
        }
        if report.moved > 0 { parts.append("\(report.moved) renamed file(s) followed") }
        if report.changed > 0 { parts.append("\(report.changed) changed file(s) to index again") }
        if let (name, error) = report.unreadable.min(by: { $0.key < $1.key }) {
            parts.append(
                "\(report.unreadable.count) file(s) whose status cannot be read left as they are, to look at again next time (\"\(name)\": \(error))"
            )
        }
        // Only a figure for the log line below.
        let pending = (try? library.pendingCount()) ?? 0
        if !parts.isEmpty || (atStart && pending > 0) {
            log(
                "library \(library.folder): \(parts.isEmpty ? "" : parts.joined(separator: ", ") + "; ")\(pending) photo(s) to index"
            )
        }
        if pending > 0 && backlog == nil { backlog = (Instant.now, pending) }
    }

    /// Runs `body`; on an error (the index locked too long, a full disk) logs it and tries again
    /// after a pause, up to three times. Nil when it kept failing or ptkd is stopping.
    @discardableResult
    private func retrying<R>(_ body: () throws(LibraryError) -> R) -> R? {
        for attempt in 1...3 {
            do { return try body() } catch {
                if isStopping { return nil }
                log("library: \(error)\(attempt < 3 ? "; trying again" : "")")
                sleep(for: .seconds(attempt))
            }
        }
        return nil
    }
}

/// Moves a library (used by one thread at a time) from the thread that opened it to the
/// indexing thread.
private final class LibraryHandOver: @unchecked Sendable {
    private var library: PhotoLibrary?
    init(_ library: PhotoLibrary?) { self.library = library }
    func take() -> PhotoLibrary? { library.take() }
}

extension LibraryIndexer: Service {
    /// "photo library indexing", for the log.
    public var serviceName: String { "photo library indexing" }
    /// Stops the indexing thread (see `stop(waitingUntil:)`); true when it ended by `deadline`.
    public func stop(until deadline: Instant) -> Bool { stop(waitingUntil: deadline) }
}
