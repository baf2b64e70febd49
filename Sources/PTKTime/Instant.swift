/// A point on the monotonic clock. Intervals are `Duration`s: an instant plus or minus a
/// duration is an instant, the difference of two instants a duration.
///
/// A pure value, so that the pure modules (PTKProtocol's `Turns`, PTKLocalSend's sessions)
/// are told "now" as the same type the rest of ptk uses; reading the clock (`Instant.now`)
/// is PTKSystem's.
public struct Instant: Comparable, Hashable, Sendable {
    /// Seconds since an arbitrary start (the boot, for the clock's own instants).
    public var seconds: Double
    public init(seconds: Double) { self.seconds = seconds }

    public static func < (a: Instant, b: Instant) -> Bool { a.seconds < b.seconds }
    public static func + (a: Instant, d: Duration) -> Instant { Instant(seconds: a.seconds + d.seconds) }
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
