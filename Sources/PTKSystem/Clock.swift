import Glibc
// `Instant` and `WallTime` (pure values in PTKTime) come with PTKSystem, which reads the clocks.
@_exported import PTKTime

extension WallTime {
    /// Now. The corresponding C function is `clock_gettime` (CLOCK_REALTIME).
    public static var now: WallTime {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return WallTime(milliseconds: Int64(ts.tv_sec) * 1000 + Int64(ts.tv_nsec) / 1_000_000)
    }
}

extension Instant {
    /// Now, on CLOCK_MONOTONIC.
    public static var now: Instant {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Instant(seconds: Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9)
    }

    /// This instant as the C library's absolute deadlines on CLOCK_MONOTONIC take it.
    var timespecValue: timespec {
        let whole = seconds.rounded(.down)
        return timespec(tv_sec: Int(whole), tv_nsec: Int((seconds - whole) * 1e9))
    }

    /// Milliseconds from now until this instant, clamped to 0...Int32.max, for poll(2).
    public var pollTimeout: CInt {
        let ms = (self - .now).seconds * 1000
        if ms <= 0 { return 0 }
        return CInt(min(ms.rounded(.up), Double(Int32.max)))
    }
}

/// Blocks the calling thread for `duration` (a thread of our own, never Swift's cooperative pool).
/// The corresponding C function is `nanosleep`.
public func sleep(for duration: Duration) {
    let (s, attoseconds) = duration.components
    guard s > 0 || attoseconds > 0 else { return }
    var request = timespec(tv_sec: Int(s), tv_nsec: Int(attoseconds / 1_000_000_000))
    var remaining = timespec()
    while nanosleep(&request, &remaining) != 0 && errno == EINTR { request = remaining }
}

/// Now, in nanoseconds since the epoch, on the clock the kernel stamps a file's change time
/// (ctime) with: CLOCK_REALTIME_COARSE, which moves once per tick. Every change made after this
/// reading gets a stamp at least this late (a later one still, when the file's stamp was read
/// since its last change), so a file whose change time is before it gets a different one at its
/// next change. The corresponding C function is `clock_gettime`.
public func changeClockNanoseconds() -> Int64 {
    var ts = timespec()
    clock_gettime(CLOCK_REALTIME_COARSE, &ts)
    return Int64(ts.tv_sec) &* 1_000_000_000 &+ Int64(ts.tv_nsec)
}
