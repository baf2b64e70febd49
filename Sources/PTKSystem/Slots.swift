/// At most `limit` holders at once, taken without waiting: `tryTake` says whether one more
/// may start now.
public final class Slots: @unchecked Sendable {
    // `inUse` is guarded by `lock`.
    private let lock = Lock()
    private var inUse = 0
    /// The most holders at once; 0 refuses every `tryTake`.
    public let limit: Int

    /// Slots for `limit` holders (a negative limit counts as 0), none taken.
    public init(limit: Int) { self.limit = max(0, limit) }

    /// Takes a slot if one is free; true when taken (give it back with `give`).
    public func tryTake() -> Bool {
        lock.withLock {
            guard inUse < limit else { return false }
            inUse += 1
            return true
        }
    }

    /// Gives back a slot taken with `tryTake`.
    public func give() { lock.withLock { inUse = max(0, inUse - 1) } }

    /// Slots held now.
    public var taken: Int { lock.withLock { inUse } }
}
