import PTKSystem
import PTKVocabulary

/// Group commit for photos (issue 46): every photo the store publishes, from every session and
/// every door, goes through one flush round. A round takes every photo waiting, flushes each
/// file's data (`fsync`, from several threads at once, so the disk's queue and the file
/// system's journal take them as one commit), moves each flushed file to its final name, flushes
/// each directory it touched once, and only then answers them all. A round starts at once when
/// the flusher is idle, so a lone photo waits for nothing; while a round runs, the next gathers.
///
/// The promise is the one of a photo flushed alone: its bytes are on the disk before its rename,
/// its rename before its directory's flush, that flush before it is answered saved. A photo
/// whose data flush fails is failed alone (never renamed); a directory whose flush fails fails
/// the photos moved into it in that round (each moved back to its temporary name), and no other.
///
/// The files' data is flushed with fsync of each file rather than one syncfs: syncfs would also
/// flush whatever else is dirty on the file system (the library's thumbnails and index, other
/// programs' files) inside the photos' round, and on the emulated slow disk it is no faster.
final class FlushRounds: @unchecked Sendable {
    /// One photo in a round: its temporary file (open; its owner keeps it open until answered)
    /// and where it goes.
    struct Job {
        var file: FileDescriptor
        var temporary: String
        var offeredName: String
        var type: PhotoType
        var folder: String
        var saved: StoredPhoto
        var ticket: FlushTicket
        /// Who brought it (a session): a round takes the waiting photos of each in turn.
        var owner: Int
    }

    /// How files and directories are flushed; tests replace them to fail one.
    struct Flush: Sendable {
        var file: @Sendable (FileDescriptor) throws(SystemError) -> Void = { fd throws(SystemError) in try fd.sync() }
        var directory: @Sendable (FileDescriptor) throws(SystemError) -> Void = { fd throws(SystemError) in
            try fd.sync()
        }
    }

    /// Most threads flushing files (or folders) at once in a round (the flusher's own included).
    static let maxParallel = 32
    /// Most photos in one round: one sender with many photos waiting cannot make the round every
    /// other photo waits for long; the photos are taken from each owner in turn.
    static let maxPerRound = 64

    private unowned let store: PhotoStore
    private let flush: Flush
    // `waiting`, `started`, `stopping`, `stages`, `directoriesRunning` and the counts are
    // guarded by `state`.
    private let state = ConditionLock()
    private var waiting: [Job] = []
    private var started = false
    private var stopping = false
    /// Rounds completed, and photos in them (`counts`).
    private var roundsRun = 0
    private var photosFlushed = 0
    private let threads = ThreadGroup()
    private let parallel: ParallelRunner
    private let directoryParallel: ParallelRunner
    /// Rounds whose files are flushed and renamed, waiting for their directories' flushes (on
    /// the "flush-dirs" thread, so the next round's data flushes run meanwhile), in order.
    private var stages: [Stage] = []
    private var directoriesRunning = false

    /// A round between its two halves.
    private struct Stage {
        var jobs: [Job]
        var results: [Result<StoredPhoto, StoreFailure>?]
        var placed: [Int: PhotoStore.Placed]
        /// Rounds it holds (stages waiting together are flushed together).
        var rounds = 1

        /// `stages` as one: their directories are flushed once for all.
        static func merged(_ stages: [Stage]) -> Stage {
            var all = Stage(jobs: [], results: [], placed: [:], rounds: 0)
            for stage in stages {
                let offset = all.jobs.count
                all.jobs += stage.jobs
                all.results += stage.results
                for (i, p) in stage.placed { all.placed[offset + i] = p }
                all.rounds += stage.rounds
            }
            return all
        }
    }
    /// One round at a time, whichever thread runs it (the flusher, or a caller when no thread
    /// could be started).
    private let roundLock = Lock()

    init(store: PhotoStore, flush: Flush = Flush()) {
        self.store = store
        self.flush = flush
        parallel = ParallelRunner(name: "flush", limit: Self.maxParallel, group: threads)
        directoryParallel = ParallelRunner(name: "flush-d", limit: 8, group: threads)
    }

    /// Counts read under the lock.
    var counts: (rounds: Int, photos: Int) { state.withLock { (roundsRun, photosFlushed) } }

    /// Queues `job` for the next round, starting the flusher thread the first time. When the
    /// thread cannot be started, the job is flushed on the caller's thread, alone.
    func submit(_ job: Job) {
        let startNow: Bool = state.withLock {
            waiting.append(job)
            state.broadcast()
            if started { return false }
            started = true
            return true
        }
        if startNow {
            do throws(SystemError) {
                try threads.start(name: "flush") { [self] in run() }
            } catch {
                state.withLock { started = false }
                // No thread: this caller runs the rounds itself until nothing waits (one round
                // at a time with any other thread running them: `roundLock`).
                while let jobs = takeWaiting(blocking: false) { round(jobs) }
            }
        }
    }

    /// Ends the flusher once nothing waits, and joins its threads (until `deadline`).
    func stop(until deadline: Instant) -> Bool {
        state.withLock {
            stopping = true
            state.broadcast()
        }
        parallel.stop()
        directoryParallel.stop()
        return threads.join(until: deadline)
    }

    private func takeWaiting(blocking: Bool) -> [Job]? {
        state.withLock {
            while waiting.isEmpty {
                if !blocking || stopping { return nil }
                state.wait()
            }
            let (round, rest) = Self.share(waiting, limit: Self.maxPerRound)
            waiting = rest
            return round
        }
    }

    /// At most `limit` of `jobs` for the next round, taken from each owner in turn (each owner's
    /// oldest first, owners in the order of their oldest), and the rest in their order.
    static func share(_ jobs: [Job], limit: Int) -> (round: [Job], rest: [Job]) {
        guard jobs.count > limit else { return (jobs, []) }
        var queues: [Int: [Int]] = [:]
        var owners: [Int] = []
        for (i, job) in jobs.enumerated() {
            if queues[job.owner] == nil { owners.append(job.owner) }
            queues[job.owner, default: []].append(i)
        }
        var taken = Set<Int>()
        var depth = 0
        while taken.count < limit {
            var any = false
            for owner in owners where taken.count < limit {
                if let q = queues[owner], depth < q.count {
                    taken.insert(q[depth])
                    any = true
                }
            }
            if !any { break }
            depth += 1
        }
        var round: [Job] = []
        var rest: [Job] = []
        for (i, job) in jobs.enumerated() {
            if taken.contains(i) { round.append(job) } else { rest.append(job) }
        }
        return (round, rest)
    }

    /// The flusher: each round's data flushes and renames, then its directories on their own
    /// thread, so that round k's directory flush and round k+1's data flushes overlap. Each
    /// photo's order (data, rename, directory, answer) is as in one round.
    private func run() {
        while let jobs = takeWaiting(blocking: true) {
            let stage = roundLock.withLock { filesStage(jobs) }
            handOver(stage)
        }
        state.withLock {
            started = false
            state.broadcast()
        }
    }

    private func handOver(_ stage: Stage) {
        let startNow: Bool = state.withLock {
            stages.append(stage)
            state.broadcast()
            if directoriesRunning { return false }
            directoriesRunning = true
            return true
        }
        guard startNow else { return }
        do throws(SystemError) {
            try threads.start(name: "flush-dirs") { [self] in runDirectories() }
        } catch {
            // No thread: the flusher flushes the directories itself.
            state.withLock { directoriesRunning = false }
            while let next = takeStage(blocking: false) { directoriesStage(next) }
        }
    }

    private func takeStage(blocking: Bool) -> Stage? {
        state.withLock {
            // Ends once the flusher has ended at a stop and nothing is left.
            while stages.isEmpty {
                if !blocking || (stopping && !started) { return nil }
                state.wait()
            }
            // Every round whose files are done by now: one flush of each directory covers them
            // all (a second group commit, for the directories).
            defer { stages.removeAll() }
            return Stage.merged(stages)
        }
    }

    private func runDirectories() {
        while let stage = takeStage(blocking: true) { directoriesStage(stage) }
        state.withLock { directoriesRunning = false }
    }

    /// One whole round on this thread: data flushes in parallel, renames, one flush per
    /// directory, answers (a caller without the flusher thread; tests).
    func round(_ jobs: [Job]) {
        roundLock.withLock { directoriesStage(filesStage(jobs)) }
    }

    /// A round's first half: every file's data flushed (several at once), then each flushed file
    /// renamed to its final name.
    private func filesStage(_ jobs: [Job]) -> Stage {
        var results = [Result<StoredPhoto, StoreFailure>?](repeating: nil, count: jobs.count)
        // 1. Every file's data, several at once.
        let failures = parallel.run(jobs.count) { [flush] i throws(SystemError) in try flush.file(jobs[i].file) }
        for (i, failure) in failures.enumerated() {
            if let failure {
                results[i] = .failure(StoreFailure(failure.isNoSpace ? .noSpace : .io, failure.description))
            }
        }
        // 2. Each flushed file to its final name, without replacing anything.
        var placed: [Int: PhotoStore.Placed] = [:]
        for i in jobs.indices where results[i] == nil {
            let job = jobs[i]
            do throws(SystemError) {
                placed[i] = try store.place(
                    temporary: job.temporary, offeredName: job.offeredName, type: job.type, folder: job.folder)
            } catch {
                results[i] = .failure(StoreFailure(error.isNoSpace ? .noSpace : .io, error.description))
            }
        }
        return Stage(jobs: jobs, results: results, placed: placed)
    }

    /// A round's second half: each directory touched flushed once, then every photo answered.
    private func directoriesStage(_ stage: Stage) {
        let jobs = stage.jobs
        var results = stage.results
        let placed = stage.placed
        // 3. Each directory touched, once: the photos moved into one whose flush fails go back
        // to their temporary names (FAILED means not published; the sender sends them again).
        // The folders are flushed side by side too (a sender filing each photo in a new folder
        // must not make the round, which everyone's photos wait for, one flush per folder long).
        let byFolder = Dictionary(grouping: placed.keys.sorted()) { placed[$0]!.folder }.sorted { $0.key < $1.key }
        let directories = byFolder.map { placed[$0.value[0]]!.directory }
        let folderFailures = directoryParallel.run(directories.count) { [flush] i throws(SystemError) in
            try flush.directory(directories[i])
        }
        for (f, (_, members)) in byFolder.enumerated() {
            do throws(SystemError) {
                if let failure = folderFailures[f] { throw failure }
                for i in members {
                    var saved = jobs[i].saved
                    saved.name = placed[i]!.path
                    results[i] = .success(saved)
                }
            } catch {
                for i in members {
                    // If even the move back fails, the photo stays, whole, for the library's
                    // next reconcile; the flush's error is reported.
                    try? store.incoming.move(placed[i]!.name, in: placed[i]!.directory, to: jobs[i].temporary)
                    results[i] = .failure(StoreFailure(error.isNoSpace ? .noSpace : .io, error.description))
                }
            }
        }
        for p in placed.values where p.ownsDirectory { p.directory.close() }
        state.withLock {
            roundsRun += stage.rounds
            photosFlushed += jobs.count
        }
        // 4. The answers, all after every flush of the round.
        for (i, job) in jobs.enumerated() {
            job.ticket.complete(results[i] ?? .failure(StoreFailure(.io, "the flush round lost this photo")))
        }
    }
}

/// A photo's place in a flush round: its result once the round is over. The session that
/// submitted it waits for it (`wait`) or is told (`notify`, on the flusher's thread: it must
/// only wake the session) and then reads `result`.
public final class FlushTicket: @unchecked Sendable {
    // `outcome` is guarded by `state`.
    private let state = ConditionLock()
    private var outcome: Result<StoredPhoto, StoreFailure>?
    private let notify: (@Sendable () -> Void)?

    init(notify: (@Sendable () -> Void)?) { self.notify = notify }

    /// A ticket answered already (a photo that failed its checks, or that was kept before).
    public init(_ result: Result<StoredPhoto, StoreFailure>) {
        outcome = result
        notify = nil
    }

    func complete(_ result: Result<StoredPhoto, StoreFailure>) {
        state.withLock {
            outcome = result
            state.broadcast()
        }
        notify?()
    }

    /// The result, once the round is over; nil before.
    public var result: Result<StoredPhoto, StoreFailure>? { state.withLock { outcome } }

    /// Waits for the round.
    public func wait() -> Result<StoredPhoto, StoreFailure> {
        state.withLock {
            while outcome == nil { state.wait() }
            return outcome!
        }
    }
}
