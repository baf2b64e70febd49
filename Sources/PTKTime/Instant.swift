/// A point on the monotonic clock. Intervals are `Duration`s: an instant plus or minus a
/// duration is an instant, the difference of two instants a duration.
///
/// A pure value, so that the pure modules (PTKProtocol's `Turns`, PTKLocalSend's sessions)
/// are told "now" as the same type the rest of ptk uses; reading the clock (`Instant.now`)
/// is PTKSystem's.
public struct Instant: Comparable, Hashable, Sendable {
    /// Seconds since an arbitrary start (the boot, for the clock's own instants).
    public var seconds: Double
    /// Seconds on the same scale as every other instant compared with it; tests pick any start.
    public init(seconds: Double) { self.seconds = seconds }

    /// Earlier is less; only instants of one clock compare meaningfully.
    public static func < (a: Instant, b: Instant) -> Bool { a.seconds < b.seconds }
    /// The instant `d` after `a` (before it when `d` is negative).
    public static func + (a: Instant, d: Duration) -> Instant { Instant(seconds: a.seconds + d.seconds) }
    /// The instant `d` before `a`.
    public static func - (a: Instant, d: Duration) -> Instant { Instant(seconds: a.seconds - d.seconds) }
    /// The time from `b` to `a`.
    public static func - (a: Instant, b: Instant) -> Duration { .seconds(a.seconds - b.seconds) }
}

extension Duration {
    /// The duration in seconds, as a Double.
    public var seconds: Double {
        let (s, attoseconds) = components
        return Double(s) + Double(attoseconds) / 1e18
    }
}
