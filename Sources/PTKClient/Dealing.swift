import PTKProtocol
import PTKVocabulary

/// How many sessions `ptk-send` opens when `--parallel` is not given, for two or more files.
/// From `bench/run` (docs/PERFORMANCE.md): 1000 photos of 20 kB took 0.66-1.23 s over one
/// session, 0.55-0.70 s over four and 0.49-0.52 s over eight; four leave half of the
/// receiver's default per-address limit (8) free for another sender on the same host.
public let defaultParallelSessions = 4

/// The files of one call that its sessions have not taken yet, which each session takes one at
/// a time (`Delivery`): the first file in the given order that it may send. Files that would
/// take the same name on the receiver go to the session that took the first of them, in their
/// given order, so that their " (2)" suffixes come out as they would over one session; one
/// session alone takes every file in the given order.
public struct WorkList: Sendable {
    /// Each file's name as the receiver's naming rules see it (protocol §5).
    private let keys: [String]
    /// Files not taken, in the given order.
    public private(set) var left: [Int]
    /// The session that sends the files of each name, while it runs.
    private var owner: [String: Int] = [:]

    /// Every file starts untaken, in the given order.
    public init(_ files: [LocalFile]) {
        keys = files.map { FileName.collisionKey($0.name) }
        left = Array(files.indices)
    }

    /// The next file for `session`, or nil when none is left that it may send.
    public mutating func next(for session: Int) -> Int? {
        guard let k = left.firstIndex(where: { owner[keys[$0]].map { $0 == session } ?? true }) else { return nil }
        let file = left.remove(at: k)
        owner[keys[file]] = session
        return file
    }

    /// `session` has ended: the names it sent are free for any session, and `returned` (files
    /// it took but did not start) go back in their places.
    public mutating func ended(_ session: Int, returning returned: [Int] = []) {
        owner = owner.filter { $0.value != session }
        left = (left + returned).sorted()
    }
}

/// How long, and how often, a call asks a busy receiver for its turn (`ptk-send --wait`).
public struct WaitPolicy: Sendable, Equatable {
    /// How long to keep asking, from the receiver's first busy answer; zero: give up at once.
    public var limit: Duration
    /// The shortest and the longest pause before asking again.
    public var first: Duration
    /// Pauses grow towards this and no further.
    public var longest: Duration

    /// Defaults: ask for ten minutes, pausing a quarter of a second at first and five seconds at most.
    public init(limit: Duration = .seconds(600), first: Duration = .milliseconds(250), longest: Duration = .seconds(5))
    {
        self.limit = limit
        self.first = first
        self.longest = longest
    }

    /// The pause before asking again after the `attempt`-th busy answer (from 0): jittered
    /// exponential backoff, a random time between half and all of min(`longest`, `first` × 2^step).
    /// The step is the attempt; when the receiver says how many senders wait before this one
    /// (`ahead`, ERROR busy's `waiting`), it is log2(ahead / 4 + 1) instead, rounded down: the
    /// first four in line ask again within 0.25 s, the next eight within 0.5 s, and so on, since a
    /// receiver owes its free sessions to the front of the line and holds them until they ask.
    /// (With log2(ahead + 1), 64 senders into 32 sessions took twice as long: bench/soak.)
    /// `random` is in 0..<1.
    public func pause(attempt: Int, ahead: Int?, random: Double) -> Duration {
        let step = ahead.map { Int.bitWidth - 1 - (max(0, $0) / 4 + 1).leadingZeroBitCount } ?? max(0, attempt)
        let most = min(longest, first * Double(1 << min(step, 30)))
        return most * (0.5 + 0.5 * min(max(random, 0), 1))
    }
}
