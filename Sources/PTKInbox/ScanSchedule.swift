import PTKTime

/// When an inbox's next full scan is due: at start, `interval` after each scan ends, and at
/// once after inotify lost events (a queue overflow) or gave bytes that are not its records (a
/// parse error). A file system that delivers no events at all (a network mount, FUSE) needs no
/// case of its own: the interval's scans are then what finds its files.
///
/// Pure: told what happened and when, it answers when the next scan is due. An overflow while a
/// scan runs makes the next one due right after it, since the running scan may have passed the
/// folder whose events were lost.
public struct ScanSchedule: Sendable, Equatable {
    /// What happened that moves the next scan.
    public enum Event: Sendable, Equatable {
        /// A full scan began.
        case scanStarted
        /// A full scan ended (whether or not every folder could be read).
        case scanFinished
        /// The kernel's queue overflowed: events were lost.
        case overflow
        /// The bytes read from the inotify descriptor were not its records.
        case parseError
    }

    /// The default interval between full scans (the `inbox-scan-interval` setting's default).
    public static let defaultInterval: Duration = .seconds(600)
    /// The shortest interval kept: a shorter one (zero, negative) is taken as this, so that
    /// scans never follow each other without a pause.
    public static let minimumInterval: Duration = .seconds(1)

    /// The time from one scan's end to the next one's start.
    public let interval: Duration
    /// When the next full scan is due.
    public private(set) var due: Instant
    /// When a scan was asked for at once (an overflow, a parse error) and no scan has started since.
    private var urgentSince: Instant?

    /// A schedule for an inbox starting at `now`: its first scan is due at once.
    public init(interval: Duration = defaultInterval, startingAt now: Instant) {
        self.interval = max(interval, Self.minimumInterval)
        due = now
    }

    /// Whether the next scan is due at `now`.
    public func isDue(at now: Instant) -> Bool { now >= due }

    /// Notes `event` at `now`, and answers when the next full scan is due.
    @discardableResult
    public mutating func record(_ event: Event, at now: Instant) -> Instant {
        switch event {
        case .scanStarted:
            urgentSince = nil
            due = now + interval
        case .scanFinished:
            due = urgentSince ?? now + interval
        case .overflow, .parseError:
            if urgentSince == nil { urgentSince = now }
            due = min(due, now)
        }
        return due
    }
}
