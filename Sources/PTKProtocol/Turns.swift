import PTKTime

/// Who a receiver serves when more senders want sessions than it has: a pure state machine (no
/// clock of its own: it is told `now`, an instant on the monotonic clock), which the daemon keeps under
/// its lock.
///
/// - Senders wait in line. A sender that asks when every session is taken (or is owed to a
///   sender ahead of it) is answered ERROR busy with its place: `ahead` senders before it. Its
///   place is kept while it keeps asking, at least once every `patience`; when sessions
///   free up, they go to the senders at the front of the line, in order, as each asks again.
///   So a sender that has waited long is not overtaken by one that just came, however their
///   retries fall.
/// - Each sender's share, sent as WELCOME.sessions, is the sessions divided among the senders
///   served and waiting when its session starts (at least 1, at most `perSender`): sixteen
///   senders into 32 sessions get two each, not the first eight four each.
/// - A further session of a sender already served is let in only within its share and only
///   from sessions no waiting sender is owed.
///
/// A sender is named by a key the caller chooses (protocol v1's daemon: the device ID over TLS,
/// else the address).
public struct Turns: Sendable {
    /// What a session that asks to be served is told.
    public enum Decision: Equatable, Sendable {
        /// Served; `sessions` is this sender's share (WELCOME.sessions).
        case serve(sessions: Int)
        /// Not now: `ahead` senders wait before this one (ERROR busy's `waiting`).
        case busy(ahead: Int)
    }

    /// Sessions served at once.
    public let capacity: Int
    /// The most sessions one sender is offered at once.
    public let perSender: Int
    /// How long a waiting sender keeps its place without asking again.
    public let patience: Duration
    /// The most senders kept in line; beyond it a sender is answered with its place at the end
    /// but not remembered, so the line costs a bounded amount of memory.
    public let maxWaiting: Int
    /// Sessions served now, by sender.
    public private(set) var serving: [String: Int] = [:]
    /// Sessions served now, in all.
    public private(set) var total = 0
    /// The senders waiting, first come first, with when each last asked.
    private var line: [(key: String, asked: Instant)] = []

    /// Capacity and per-sender are raised to at least 1; `maxWaiting` 0 remembers no one in line.
    public init(capacity: Int, perSender: Int, patience: Duration = .seconds(10), maxWaiting: Int = 4096) {
        self.capacity = max(1, capacity)
        self.perSender = max(1, perSender)
        self.patience = patience
        self.maxWaiting = max(0, maxWaiting)
    }

    /// The senders in line at `now`, first first (those that stopped asking left out).
    public func waiting(now: Instant) -> [String] {
        line.filter { now - $0.asked <= patience }.map(\.key)
    }

    /// A sender's share of the sessions now: the sessions divided among the senders served and
    /// waiting, at least 1 and at most `perSender`.
    public var share: Int {
        let senders = max(1, serving.count + line.count)
        return max(1, min(perSender, capacity / senders))
    }

    /// A session of sender `key` asks to be served. Served, it counts until `release(key)`.
    public mutating func admit(_ key: String, now: Instant) -> Decision {
        expire(now)
        if let held = serving[key] {
            // A further session: within its share, and only from sessions no one in line is owed.
            guard total < capacity - line.count, held < share else { return .busy(ahead: line.count) }
            serving[key] = held + 1
            total += 1
            return .serve(sessions: share)
        }
        let place = join(key, now: now)
        guard place < capacity - total else { return .busy(ahead: place) }
        if place < line.count { line.remove(at: place) }
        serving[key] = 1
        total += 1
        return .serve(sessions: share)
    }

    /// A session of sender `key` was turned away before it could ask (the receiver had no room
    /// even to hear it): it takes or keeps its place in line. Returns how many are ahead of it.
    public mutating func refused(_ key: String, now: Instant) -> Int {
        expire(now)
        return serving[key] == nil ? join(key, now: now) : line.count
    }

    /// A session of sender `key` served by `admit` has ended.
    public mutating func release(_ key: String) {
        guard let held = serving[key] else { return }
        total -= 1
        serving[key] = held > 1 ? held - 1 : nil
    }

    /// Takes a session for a client that does not wait in line (LocalSend apps, which get HTTP
    /// 429 and retry on their own): only from sessions no one in line is owed. Ended with `release(key)`.
    public mutating func take(_ key: String, now: Instant) -> Bool {
        expire(now)
        guard total < capacity - line.count else { return false }
        serving[key, default: 0] += 1
        total += 1
        return true
    }

    /// `key`'s place in line (its index: how many are ahead), noting that it asked now; a
    /// newcomer joins at the end (or, with the line full, is told the end without joining).
    private mutating func join(_ key: String, now: Instant) -> Int {
        if let i = line.firstIndex(where: { $0.key == key }) {
            line[i].asked = now
            return i
        }
        guard line.count < maxWaiting else { return line.count }
        line.append((key, now))
        return line.count - 1
    }

    private mutating func expire(_ now: Instant) {
        line.removeAll { now - $0.asked > patience }
    }
}
