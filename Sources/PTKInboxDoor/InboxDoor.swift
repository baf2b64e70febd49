import PTKDoor
import PTKInbox
import PTKLibrary
import PTKLog
import PTKStore
import PTKSystem
import PTKVocabulary

/// The door of files that arrive on their own (issue 56): inboxes another program keeps in
/// sync (the source is left as it is) and drop folders (the source is removed once its photo is
/// saved). One thread watches every folder with inotify (IN_CLOSE_WRITE, IN_MOVED_TO, new
/// folders) and scans them all at start, every `scanInterval`, and after events were lost; a
/// file is taken once it has settled (`SettleTracker`), through the store's checks like every
/// door's photos, and remembered in the library (`inbox_sources`) so that nothing is taken twice.
public final class InboxDoor: Service, @unchecked Sendable {
    // `thread state` below is touched only by the door's thread once `start` has run.
    let settings: InboxSettings
    let store: PhotoStore
    let arrivals: Arrivals
    let shutdown: ShutdownSignal
    /// Signalled to stop, and when a photo's flush round is over.
    let wake: WakePipe
    private let stopLock = Lock()
    private var stopping = false
    private let threads = ThreadGroup()
    // Thread state.
    var folders: [WatchedFolder] = []
    var inotify: Inotify?
    var events = InotifyEvents()
    var schedule: ScanSchedule
    var files: [FileKey: TrackedFile] = [:]
    var library: PhotoLibrary?
    var libraryRetry = Instant.now
    /// What was said once in the log (a key per kind and path), so that a lasting condition is
    /// said once, not at every scan.
    var said: Set<String> = []
    /// Files said something of in the scan in progress, and those not said (over `warningsPerScan`).
    var warnings = 0
    var warningsLeftOut = 0
    var warningsSince = Instant.now
    /// The last private name a drop folder's source was moved to before its removal.
    var asideCount = 0
    /// The photos directory's device and inode, once open (never entered by a scan).
    var photosID: FileID?
    /// Photos in flush rounds, oldest first (at most `maxInFlight`).
    var flying: [Flight] = []

    /// The door over `store`, saving through `arrivals`; it stops on `shutdown` or `stop`.
    public init(settings: InboxSettings, store: PhotoStore, arrivals: Arrivals, shutdown: ShutdownSignal)
        throws(SystemError)
    {
        self.settings = settings
        self.store = store
        self.arrivals = arrivals
        self.shutdown = shutdown
        wake = try WakePipe()
        schedule = ScanSchedule(interval: settings.scanInterval, startingAt: .now)
    }

    /// Opens the folders (saying in the log which cannot be used, and why; the others are
    /// served) and starts the door's thread. Throws only when the thread cannot start.
    public func start() throws(SystemError) {
        do { inotify = try Inotify() } catch {
            Log.warning(
                "inbox: cannot watch for new files (\(error)); the folders are scanned every \(formatSeconds(settings.scanInterval)) instead"
            )
        }
        // The folders are opened on the door's thread (its first scan), never here: a hung
        // network mount holds the inbox, not ptkd's start.
        try threads.start(name: "inbox") { [self] in run() }
    }

    /// "inbox", for the log.
    public var serviceName: String { "inbox" }

    /// Asks the thread to stop (a copy in progress is abandoned, nothing kept; the photos in
    /// flush rounds are concluded, each with what follows it) and waits for it.
    public func stop(until deadline: Instant) -> Bool {
        stopLock.withLock { stopping = true }
        wake.signal()
        return threads.join(until: deadline)
    }

    /// True once the door is asked to stop, by `stop` or by ptkd's shutdown.
    var isStopping: Bool { shutdown.isRequested || stopLock.withLock { stopping } }

    /// The thread: scans when due, looks at files when due, reads inotify's events in between.
    private func run() {
        // At the usual priority, as one sender's session is: not lowered, since the store's
        // flush threads, started by whichever thread saves first, would inherit a lowered one
        // for every door (and an unprivileged process cannot raise it again).
        while !isStopping {
            let now = Instant.now
            if schedule.isDue(at: now) { scanAll() }
            lookAtDueFiles()
            sayLeftOutIfDue()
            // The photos whose rounds are over (the others wake the loop as theirs end).
            land(keeping: Self.maxInFlight)
            var fds: [(FileDescriptor, PollEvents)] = [(wake.readEnd, .readable), (shutdown.pipe.readEnd, .readable)]
            if let inotify { fds.append((inotify.descriptor, .readable)) }
            // (A file in flight is looked at again once it has landed.)
            var next =
                files.values.filter { !$0.inFlight }.compactMap(\.due).min().map { min($0, schedule.due) }
                ?? schedule.due
            if let leftOut = leftOutDue { next = min(next, leftOut) }
            do { _ = try poll(fds, until: next) } catch {
                // poll fails only on a bad descriptor or no memory: wait a moment, then go on.
                sleep(for: .seconds(1))
            }
            wake.drain()  // a round over, or the stop: both seen at the loop's top
            readEvents()
        }
        // Every photo in flight is published or failed by its round whatever happens now: each
        // is concluded, and what follows it done, before the thread ends.
        land(keeping: 0)
    }
}
