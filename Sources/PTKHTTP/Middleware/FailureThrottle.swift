import PTKSystem
import PTKTime

/// Wrong guesses counted per address: what `FailureThrottle` keeps (LocalSend's `TryLimiter`).
public protocol FailureLimiter: Sendable {
    func isLockedOut(_ address: String, now: Instant) -> Bool
    /// Counts a wrong guess; returns whether the address is now locked out.
    mutating func failed(_ address: String, now: Instant) -> Bool
    mutating func succeeded(_ address: String)
    mutating func expire(now: Instant)
}

/// Per-address failure throttling shared by a door's logins (a password form, HTTP Basic):
/// one limiter under one lock, which also makes password checks take turns (a slow hash
/// checked one at a time cannot be run by many connections at once).
public final class FailureThrottle<Limiter: FailureLimiter>: @unchecked Sendable {
    // `limiter` is guarded by `lock`.
    private let lock = Lock()
    private var limiter: Limiter

    /// The throttle owns `limiter` from now on: reach it only through `withLimiter`.
    public init(_ limiter: Limiter) { self.limiter = limiter }

    /// Runs `body` with the limiter, alone (old entries expired first).
    public func withLimiter<T>(_ body: (inout Limiter) -> T) -> T {
        lock.withLock {
            limiter.expire(now: .now)
            return body(&limiter)
        }
    }

    /// Whether `address` must wait before its next try (old entries expired first).
    public func isLockedOut(_ address: String) -> Bool { withLimiter { $0.isLockedOut(address, now: .now) } }
}
