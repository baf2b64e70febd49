import FoundationEssentials
import PTKLog
import PTKSystem
import PTKVocabulary

/// The `on-saved` hook: a program run for each photo saved, one at a time in arrival order, on
/// a thread of its own, so that no session ever waits for it. What is owed survives a crash or
/// a restart: each job is appended to `hooks/queue` in the state directory (and flushed) before
/// SAVED is answered, and `hooks/done` records the last one finished; at start, the jobs after
/// it run (at least once: one that was running when ptkd died runs again).
public final class HookRunner: @unchecked Sendable {
    // `pending`, `nextSequence`, `stopping` and `running` are guarded by `state`; the queue
    // file is written under it too.
    private let state = ConditionLock()
    private var pending: [HookJob] = []
    /// Duplicates queued lately, by `duplicateKey`: a photo named again by the same sender
    /// does not run the hook again within `duplicateWindow`.
    private var recentDuplicates: [String: Instant] = [:]
    /// Duplicate runs waiting (real arrivals are never held back by them).
    private var pendingDuplicates = 0
    /// Duplicate runs dropped since the last warning (logged once per burst).
    private var droppedDuplicates = 0
    private var nextSequence: Int64 = 1
    private var stopping = false
    private var running: Child?
    private let command: [String]
    private let timeout: Duration
    private let killAfter: Duration
    let folder: String
    /// The queue file, append-only; nil when it cannot be written (the runs are owed in memory only).
    private var queue: FileDescriptor?
    /// Lines in the queue file: the jobs owed and those done since it was last emptied.
    private var linesInFile = 0
    private let thread = ThreadGroup()
    /// The queue file is compacted when it holds this many lines of runs done.
    let capacity: Int
    /// Duplicate runs beyond this many waiting are dropped (and logged): a real arrival waits
    /// behind at most this many of them.
    let duplicateCapacity: Int
    /// How long a duplicate of one photo from one sender is not queued again.
    static let duplicateWindow: Duration = .seconds(3600)
    /// The most entries `recentDuplicates` keeps.
    static let recentLimit = 4096
    /// Queue lines longer than this are not a job ptkd wrote (its lines are a few kB): passed over.
    static let lineReadLimit = 64 << 10
    /// Lines of one run's output that are logged; the rest are counted.
    static let linesLogged = 200
    /// Bytes of one line that are logged.
    static let lineLimit = 1000

    var queueFile: String { folder + "/queue" }
    var doneFile: String { folder + "/done" }

    /// Opens (making it when missing) `stateDirectory/hooks/` and reads what is owed from an
    /// earlier run. Only a hooks folder that cannot be made stops it: a queue file that cannot
    /// be read whole is read as far as it can be, and one that cannot be opened is set aside
    /// (`queue.unreadable-TIME`), each said in the log, and a new one started.
    public init(
        command: [String], timeout: Duration, stateDirectory: String, capacity: Int = 10_000,
        duplicateCapacity: Int = 1_000,
        killAfter: Duration = .seconds(5)
    ) throws(SystemError) {
        self.command = command
        self.timeout = timeout
        self.killAfter = killAfter
        self.capacity = capacity
        self.duplicateCapacity = min(duplicateCapacity, capacity)
        folder = stateDirectory + "/hooks"
        try makeDirectories(folder, mode: 0o700)
        // None yet: nothing done.
        let done =
            (try? readTextFile(doneFile)).flatMap {
                $0.split(whereSeparator: \.isWhitespace).first.flatMap { Int64($0) }
            } ?? 0
        let read = Self.readQueue(queueFile, done: done)
        var owed = read.owed
        // Duplicates beyond the limit are dropped, the oldest first; every real arrival stays owed.
        let duplicates = owed.filter(\.duplicate).count
        if duplicates > self.duplicateCapacity {
            var drop = duplicates - self.duplicateCapacity
            owed.removeAll { job in
                guard job.duplicate && drop > 0 else { return false }
                drop -= 1
                return true
            }
            Log.warning(
                "on-saved: \(duplicates - self.duplicateCapacity) queued hook run(s) for duplicates over the limit of \(self.duplicateCapacity) dropped"
            )
        }
        pending = owed
        pendingDuplicates = owed.filter(\.duplicate).count
        nextSequence = max(done, read.last) + 1
        if let problem = read.problem {
            // What could be read is owed; the file is set aside for a person to look at.
            let aside = folder + "/queue.unreadable-\(WallTime.now.milliseconds)"
            do {
                try renameWithoutReplacing(queueFile, to: aside)
                Log.warning(
                    "on-saved: \(queueFile) \(problem); \(owed.count) hook run(s) read from it are owed, the file is set aside as \(aside)"
                )
            } catch {
                Log.warning(
                    "on-saved: \(queueFile) \(problem), and it cannot be set aside (\(error)); \(owed.count) hook run(s) read from it are owed"
                )
            }
        } else if read.skipped > 0 {
            Log.warning("on-saved: \(read.skipped) line(s) of \(queueFile) are not hook runs ptkd wrote; passed over")
        }
        do {
            let file = try FileDescriptor.open(
                queueFile, flags: [.readWrite, .create, .append, .noFollow], mode: 0o600)
            queue = file
            // Rewritten to what is owed when it held more (lines done, lines passed over, a file set aside).
            if read.problem != nil || read.lines != owed.count {
                try writeFileAtomically(queueFile, owed.flatMap(Self.line), mode: 0o600)
                let reopened = try FileDescriptor.open(queueFile, flags: [.readWrite, .append, .noFollow])
                file.close()
                queue = reopened
            }
            linesInFile = owed.count
        } catch {
            Log.warning(
                "on-saved: cannot write \(queueFile) (\(error)); hook runs are owed in memory only, and not run again if ptkd stops first"
            )
        }
        if !pending.isEmpty { Log.info("on-saved: \(pending.count) hook run(s) owed from before the restart") }
    }

    /// What a queue file owes: the jobs after `done`, the last sequence seen, its lines, the
    /// lines passed over (cut short by a crash, too long, not a job), and why it could not be
    /// read to its end, if it could not. Read piece by piece: its size costs no memory.
    static func readQueue(_ path: String, done: Int64) -> (
        owed: [HookJob], last: Int64, lines: Int, skipped: Int, problem: String?
    ) {
        var owed: [HookJob] = []
        var last = done
        var lines = 0
        var skipped = 0
        let file: FileDescriptor
        do { file = try FileDescriptor.open(path, flags: [.readOnly, .noFollow]) } catch {
            if error.code == .noSuchFile { return ([], done, 0, 0, nil) }
            return ([], done, 0, 0, "cannot be opened (\(error))")
        }
        defer { file.close() }
        let decoder = JSONDecoder()
        var line: [UInt8] = []
        var tooLong = false
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        func take() {
            lines += 1
            // A line cut short by a crash while it was appended (its SAVED never went out), or
            // one ptkd did not write.
            guard !tooLong, let job = try? decoder.decode(HookJob.self, from: Data(line)) else {
                skipped += 1
                return
            }
            last = max(last, job.sequence)
            if job.sequence > done { owed.append(job) }
        }
        while true {
            let n: Int
            do { n = try buffer.withUnsafeMutableBytes { b throws(SystemError) in try file.read(into: b) } } catch {
                return (owed, last, lines, skipped, "cannot be read past line \(lines) (\(error))")
            }
            if n == 0 { break }
            // Line by line through the piece read (the standard library's search, not a byte loop).
            var start = 0
            while start < n {
                let end = buffer[start..<n].firstIndex(of: UInt8(ascii: "\n")) ?? n
                let room = lineReadLimit - line.count
                if end - start > room { tooLong = true }
                if !tooLong { line.append(contentsOf: buffer[start..<end]) }
                guard end < n else { break }
                if !line.isEmpty || tooLong { take() }
                line.removeAll(keepingCapacity: true)
                tooLong = false
                start = end + 1
            }
        }
        if !line.isEmpty || tooLong { take() }
        return (owed, last, lines, skipped, nil)
    }

    deinit { queue?.close() }

    /// Starts the thread that runs the hook.
    public func start() throws(SystemError) {
        try thread.start(name: "hook") { [self] in work() }
    }

    /// Queues a run for a photo just saved: appended to the queue file and flushed before it
    /// returns (the caller answers SAVED after). A job that cannot be written is logged and
    /// still queued in memory: the photo is saved either way. A duplicate (nothing new stored)
    /// with `duplicateKey` (the photo and who sent it) runs once per `duplicateWindow`, and at
    /// most `duplicateCapacity` duplicates wait: a sender naming kept photos over and over queues
    /// nothing more, and never costs a photo that really arrived its run. Returns whether a run
    /// was queued.
    @discardableResult
    public func enqueue(duplicateKey: String? = nil, _ make: (Int64) -> HookJob) -> Bool {
        state.withLock {
            let now = Instant.now
            if let key = duplicateKey {
                if let at = recentDuplicates[key], now - at < Self.duplicateWindow { return false }
                guard pendingDuplicates < duplicateCapacity else {
                    if droppedDuplicates == 0 {
                        Log.warning(
                            "on-saved: \(duplicateCapacity) hook runs for duplicates are waiting; more duplicates run no hook until they are done"
                        )
                    }
                    droppedDuplicates += 1
                    return false
                }
                if recentDuplicates.count >= Self.recentLimit {
                    recentDuplicates = recentDuplicates.filter { now - $0.value < Self.duplicateWindow }
                    // Still full of recent ones: the oldest half goes.
                    if recentDuplicates.count >= Self.recentLimit {
                        let cut = recentDuplicates.values.sorted()[Self.recentLimit / 2]
                        recentDuplicates = recentDuplicates.filter { $0.value >= cut }
                    }
                }
                recentDuplicates[key] = now
            }
            let job = make(nextSequence)
            nextSequence += 1
            // Without a queue file (it could not be opened at start) the run is owed in memory
            // only, as said in the log then.
            if let queue {
                do throws(SystemError) {
                    try queue.writeAll(Self.line(job))
                    try queue.syncData()
                    linesInFile += 1
                } catch {
                    Log.warning(
                        "on-saved: cannot write \(queueFile) (\(error)); the hook for \(quotedForTerminal(job.name)) runs, but not again if ptkd stops first"
                    )
                }
            }
            pending.append(job)
            if job.duplicate { pendingDuplicates += 1 }
            state.broadcast()
            return true
        }
    }

    /// A job as its line in the queue file: JSON, keys sorted, and a newline.
    static func line(_ job: HookJob) -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Encoding a plain struct of strings, integers and booleans cannot fail.
        return ((try? encoder.encode(job)).map(Array.init) ?? []) + [UInt8(ascii: "\n")]
    }

    /// Jobs waiting or running.
    var owed: Int { state.withLock { pending.count } }

    private func work() {
        while true {
            let job: HookJob? = state.withLock {
                while pending.isEmpty && !stopping { _ = state.wait(until: nil) }
                return stopping ? nil : pending.first
            }
            guard let job else { return }
            let finished = run(job)
            state.withLock {
                guard finished else { return }
                pending.removeFirst()
                if job.duplicate { pendingDuplicates -= 1 }
                if pendingDuplicates < duplicateCapacity && droppedDuplicates > 0 {
                    Log.info(
                        "on-saved: \(droppedDuplicates) duplicate(s) ran no hook while the queue was full of duplicates"
                    )
                    droppedDuplicates = 0
                }
                do throws(SystemError) {
                    try writeFileAtomically(doneFile, Array("\(job.sequence)\n".utf8), mode: 0o600)
                    // Nothing owed: the queue starts afresh (the done file keeps the sequence going).
                    // Always something owed (a hook that never catches up): the jobs done are
                    // dropped from the file now and then, so it stays bounded.
                    if pending.isEmpty, let queue {
                        try queue.truncate(to: 0)
                        linesInFile = 0
                    } else if linesInFile - pending.count >= capacity, queue != nil {
                        try writeFileAtomically(queueFile, pending.flatMap(Self.line), mode: 0o600)
                        let reopened = try FileDescriptor.open(queueFile, flags: [.readWrite, .append, .noFollow])
                        queue?.close()
                        queue = reopened
                        linesInFile = pending.count
                    }
                } catch {
                    Log.warning(
                        "on-saved: cannot record the hook run for \(quotedForTerminal(job.name)) as done (\(error)); it may run again after a restart"
                    )
                }
            }
        }
    }

    /// Runs the hook for `job`, logging its output line by line and how it ended. Returns false
    /// when ptkd stopped it by shutting down (it stays owed).
    private func run(_ job: HookJob) -> Bool {
        let child: Child
        do {
            child = try Child.spawn(
                command + [job.path],
                environment: processEnvironment().filter { !$0.hasPrefix("PTK_") } + job.environment)
        } catch {
            Log.warning("on-saved: cannot start \(command[0]) for \(quotedForTerminal(job.name)): \(error)")
            return true
        }
        state.withLock { running = child }
        defer { state.withLock { running = nil } }
        let started = Instant.now
        var deadline = started + timeout
        var terminated = false
        var killed = false
        var partial: [UInt8] = []
        var lines = 0
        var buffer = [UInt8](repeating: 0, count: 16384)
        var outputOpen = true
        var ending: Child.Ending?
        // Once it has ended, what is left in the pipe is read for at most a second more (a
        // program it left running in the background may hold the pipe and go on writing).
        var drainedBy: Instant?
        while true {
            if ending == nil {
                ending = child.ended()
                if ending != nil { drainedBy = .now + .seconds(1) }
            }
            if ending != nil && (!outputOpen || Instant.now >= drainedBy!) { break }
            let wait = ending != nil ? Instant.now : min(deadline, Instant.now + .milliseconds(100))
            guard outputOpen else {
                // Its output is closed but it runs on: its end, its deadline or ptkd stopping is awaited.
                sleep(for: .milliseconds(20))
                if handleOverrun(child, job, &deadline, &terminated, &killed) == false { return false }
                continue
            }
            // an interrupted poll: looked at again
            let ready = (try? poll([(child.output, .readable)], until: wait)) ?? []
            if let r = ready.first, !r.isEmpty {
                // EAGAIN: nothing now
                let n = buffer.withUnsafeMutableBytes { b in (try? child.output.read(into: b)) ?? -1 }
                if n == 0 { outputOpen = false }
                if n > 0 {
                    partial += buffer[..<n]
                    while let nl = partial.firstIndex(of: UInt8(ascii: "\n")) {
                        log(Array(partial[..<nl]), of: job, count: &lines)
                        partial.removeSubrange(...nl)
                    }
                    if partial.count > Self.lineLimit {
                        log(partial, of: job, count: &lines)
                        partial.removeAll()
                    }
                    continue
                }
            } else if ending != nil {
                break
            }
            if ending == nil, handleOverrun(child, job, &deadline, &terminated, &killed) == false { return false }
        }
        if !partial.isEmpty { log(partial, of: job, count: &lines) }
        if lines > Self.linesLogged {
            Log.info(
                "on-saved \(quotedForTerminal(job.name)): \(lines - Self.linesLogged) more line(s) of output not logged"
            )
        }
        let seconds = formatDecimal((Instant.now - started).seconds)
        switch ending {
        case .exited(0)?:
            Log.info("on-saved: the hook for \(quotedForTerminal(job.name)) ran in \(seconds) s")
        case let e?:
            Log.warning("on-saved: the hook for \(quotedForTerminal(job.name)) failed after \(seconds) s: \(e)")
        case nil:
            break
        }
        return true
    }

    /// A running hook past its deadline gets SIGTERM, and SIGKILL after `killAfter`; when ptkd
    /// is stopping it gets SIGTERM and false is returned (the run stays owed).
    private func handleOverrun(
        _ child: Child, _ job: HookJob, _ deadline: inout Instant, _ terminated: inout Bool, _ killed: inout Bool
    ) -> Bool {
        if Instant.now >= deadline {
            if !terminated {
                Log.warning(
                    "on-saved: the hook for \(quotedForTerminal(job.name)) has run \(formatSeconds(timeout)); stopping it (SIGTERM)"
                )
                child.signalGroup(Child.terminateSignal)
                terminated = true
                deadline = .now + killAfter
            } else if !killed {
                Log.warning("on-saved: the hook for \(quotedForTerminal(job.name)) did not stop; killing it (SIGKILL)")
                child.signalGroup(Child.killSignal)
                killed = true
                deadline = .now + .seconds(3600)
            }
        }
        if state.withLock({ stopping }) {
            child.signalGroup(Child.terminateSignal)
            Log.info(
                "on-saved: ptkd is stopping; the hook for \(quotedForTerminal(job.name)) runs again at the next start")
            return false
        }
        return true
    }

    private func log(_ line: [UInt8], of job: HookJob, count: inout Int) {
        count += 1
        guard count <= Self.linesLogged else { return }
        let text = String(decoding: line.prefix(Self.lineLimit), as: UTF8.self)
        Log.info("on-saved \(quotedForTerminal(job.name)): \(text)")
    }
}

extension HookRunner: Service {
    /// "on-saved hooks", as the log names it when it is late to stop.
    public var serviceName: String { "on-saved hooks" }
    /// Stops the running hook (SIGTERM; it stays owed) and joins the thread.
    public func stop(until deadline: Instant) -> Bool {
        state.withLock {
            stopping = true
            running?.signalGroup(Child.terminateSignal)
            state.broadcast()
        }
        return thread.join(until: deadline)
    }
}
