import PTKTime
import PTKVocabulary

/// When one candidate file in an inbox is whole: a state machine fed what `fstat` and the open
/// files say of it (`Observation`) and what the store's format check says of its bytes
/// (`Outcome`), each at an `Instant`, answering what to do next (`Decision`).
///
/// A file is checked only once it has stayed the same (size, mtime, ctime, device, inode) for
/// `settle` and nobody is seen writing it; it is taken only when the check finds it whole and it
/// did not change while being checked. Any change restarts the settle, and so does time going
/// backwards (a clock that cannot be trusted proves no stillness). A truncated file waits for
/// its next change, and is reported once if it stays truncated for `reportAfter`; a file that
/// will never be a photo is refused once, and again only after it changes.
///
/// Pure: the caller reads the file and the clock and acts on the decision (issue 56, PhotoPrism
/// #4310 and #4249: a file taken mid-transfer, a truncated upload taken and then taken again).
public struct SettleTracker: Sendable {
    /// What is known of the file at one moment.
    public struct Observation: Sendable, Equatable {
        /// Its size in bytes.
        public var size: Int64
        /// Its modification time (st_mtim) in nanoseconds since 1970.
        public var modified: Int64
        /// Its status change time (st_ctim) in nanoseconds since 1970: changes with every write,
        /// rename, chmod or link, and no one can set it back.
        public var changed: Int64
        /// The device of its file system (st_dev).
        public var device: UInt64
        /// Its inode on that device (st_ino): another inode under the same name is another file.
        public var inode: UInt64
        /// Whether a process holds it open for writing: nil when that cannot be told (another
        /// user's processes, a network mount).
        public var openForWriting: Bool?

        /// An observation as read.
        public init(size: Int64, modified: Int64, changed: Int64, device: UInt64, inode: UInt64, openForWriting: Bool?)
        {
            self.size = size
            self.modified = modified
            self.changed = changed
            self.device = device
            self.inode = inode
            self.openForWriting = openForWriting
        }

        /// True when `other` shows the same file with the same size and times: nothing written,
        /// renamed over or replaced in between (whether it is open is no change).
        public func isUnchanged(from other: Observation) -> Bool {
            size == other.size && modified == other.modified && changed == other.changed && isSameFile(as: other)
        }

        /// True when `other` is the same file (device and inode), whatever its contents.
        public func isSameFile(as other: Observation) -> Bool {
            device == other.device && inode == other.inode
        }
    }

    /// What the store's format check said of the file's bytes.
    public enum Outcome: Sendable, Equatable {
        /// A whole photo: take it.
        case whole
        /// Its structure stops short (a truncated JPEG, PNG or HEIC): more bytes may still come.
        case incomplete
        /// It will never be a photo, whatever is appended (not one of the types, a damaged
        /// structure); the reason says why.
        case notAPhoto(String)
    }

    /// What the caller does next about the file.
    public enum Decision: Sendable, Equatable {
        /// Observe it again at this instant (or sooner, on an inotify event): it has not been
        /// still for the settle time yet, or someone is writing it (then a settle time later,
        /// and never sooner than a second).
        case wait(until: Instant)
        /// Run the format check on its bytes now, then call `checked(_:observed:at:)`.
        case check
        /// Take it: whole, and unchanged while checked.
        case take
        /// Nothing to do until an observation shows a change (it has been taken, refused, or
        /// found truncated); a later rescan observes it again.
        case waitForChange
        /// Say this once in the log: it has stayed truncated for `reportAfter`. It keeps waiting.
        case report(String)
        /// Say this once in the log: it is not a photo and is left where it is, until it changes.
        case refuse(String)
    }

    /// The default settle time (the `inbox-settle` setting's default).
    public static let defaultSettle: Duration = .seconds(5)
    /// The default time a truncated file waits before it is reported.
    public static let defaultReportAfter: Duration = .seconds(86_400)

    /// How long a file must stay the same before it is checked (never less than zero).
    public let settle: Duration
    /// How long a file may stay truncated before it is reported (never less than zero).
    public let reportAfter: Duration

    /// Where the file is in its life.
    private enum Phase: Sendable {
        /// Not observed yet.
        case unseen
        /// Unchanged since this instant.
        case settling(since: Instant)
        /// The check was asked for; its outcome is awaited.
        case checking
        /// Taken; nothing more until it changes.
        case taken
        /// Found truncated; waiting for a change.
        case incomplete
        /// Refused as not a photo; nothing more until it changes.
        case refused
    }

    private var phase = Phase.unseen
    /// The last observation and when it was made.
    private var last: (observation: Observation, at: Instant)?
    /// When this file (this device and inode) was first found truncated since it was last
    /// found whole or not a photo; a change of contents keeps it, another inode clears it.
    private var incompleteSince: Instant?
    /// Whether the truncated file has been reported since `incompleteSince` was set.
    private var reported = false

    /// A tracker for a file not observed yet.
    public init(settle: Duration = defaultSettle, reportAfter: Duration = defaultReportAfter) {
        self.settle = max(settle, .zero)
        self.reportAfter = max(reportAfter, .zero)
    }

    /// What to do after observing the file as `observation` at `now`.
    public mutating func observe(_ observation: Observation, at now: Instant) -> Decision {
        if restartsSettle(observation, at: now) {
            if let previous = last?.observation, !observation.isSameFile(as: previous) {
                incompleteSince = nil
                reported = false
            }
            phase = .settling(since: now)
        }
        last = (observation, now)
        switch phase {
        case .unseen:
            phase = .settling(since: now)
            return settling(since: now, observation, at: now)
        case .settling(let since):
            return settling(since: since, observation, at: now)
        case .checking:
            return .check
        case .taken, .refused:
            return .waitForChange
        case .incomplete:
            return reportIfDue(at: now)
        }
    }

    /// What to do after the format check answered `outcome` at `now`, the file observed as
    /// `observed` after its bytes were read (`fstat` of the descriptor read): a file changed
    /// meanwhile settles again, whatever the check said. An outcome not asked for (no `.check`
    /// pending) counts as an observation alone.
    public mutating func checked(_ outcome: Outcome, observed: Observation, at now: Instant) -> Decision {
        guard case .checking = phase else { return observe(observed, at: now) }
        if restartsSettle(observed, at: now) { return observe(observed, at: now) }
        last = (observed, now)
        switch outcome {
        case .whole:
            phase = .taken
            incompleteSince = nil
            reported = false
            return .take
        case .incomplete:
            phase = .incomplete
            if incompleteSince == nil { incompleteSince = now }
            return reportIfDue(at: now)
        case .notAPhoto(let reason):
            phase = .refused
            incompleteSince = nil
            reported = false
            return .refuse(reason)
        }
    }

    /// True when `observation` at `now` is a change from the last one: other contents or
    /// another file, or a clock gone backwards.
    private func restartsSettle(_ observation: Observation, at now: Instant) -> Bool {
        guard let last else { return false }
        return !observation.isUnchanged(from: last.observation) || now < last.at
    }

    /// The decision while settling since `since`: wait out the settle, then wait while someone
    /// writes it, then check.
    private mutating func settling(since: Instant, _ observation: Observation, at now: Instant) -> Decision {
        let settled = since + settle
        if now < settled { return .wait(until: settled) }
        // At least a second between looks at a file being written, whatever the settle time.
        if observation.openForWriting == true { return .wait(until: now + max(settle, .seconds(1))) }
        phase = .checking
        return .check
    }

    /// `.report` once when the file has stayed truncated for `reportAfter`, else `.waitForChange`.
    private mutating func reportIfDue(at now: Instant) -> Decision {
        guard !reported, let since = incompleteSince, now - since >= reportAfter else { return .waitForChange }
        reported = true
        let size = last.map { formatBytes(Double($0.observation.size)) } ?? "unknown"
        return .report(
            "still truncated after \(hoursOrSeconds(now - since)) (\(size)): not taken until it changes and is whole")
    }

    /// "24 h" for a duration of an hour or more (whole hours, rounded down), else `formatSeconds`.
    private func hoursOrSeconds(_ duration: Duration) -> String {
        duration >= .seconds(3600) ? "\(Int(duration.seconds / 3600)) h" : formatSeconds(duration)
    }
}
