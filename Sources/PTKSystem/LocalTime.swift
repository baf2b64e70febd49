import Glibc

/// Times as the host's people read them: in the host's time zone (TZ, else /etc/localtime),
/// with the zone named, for `ptk list` and `ptk show` (issue 45). What is written for programs
/// (`--json`, the package format) stays `WallTime.iso8601`, in UTC.
extension WallTime {
    /// "2026-12-02 07:15:03 CET". The corresponding C functions are `localtime_r` and
    /// `strftime` (%Z, the zone's abbreviation; TZ=UTC gives "UTC").
    public var local: String { localText("%Y-%m-%d %H:%M:%S %Z") }

    /// For a column: "2026-12-02 07:15 CET".
    public var localMinutes: String { localText("%Y-%m-%d %H:%M %Z") }

    /// The calendar day this time falls on in the local time zone (TZ, else /etc/localtime).
    /// The corresponding C function is `localtime_r`.
    public var localDay: CalendarDay {
        var t = time_t(seconds)
        var parts = tm()
        guard localtime_r(&t, &parts) != nil else { return CalendarDay(year: 1970, month: 1, day: 1) }
        return CalendarDay(year: Int(parts.tm_year) + 1900, month: Int(parts.tm_mon) + 1, day: Int(parts.tm_mday))
    }

    private func localText(_ format: String) -> String {
        _ = hostZoneRead
        var t = time_t(seconds)
        var parts = tm()
        // A time localtime_r cannot convert (out of its years) is shown in UTC, saying so.
        guard localtime_r(&t, &parts) != nil else { return description }
        var buffer = [CChar](repeating: 0, count: 128)
        let n = strftime(&buffer, buffer.count, format, &parts)
        guard n > 0 else { return description }
        return String(decoding: buffer[..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// The host's zone, read once (tzset) before the first conversion: glibc's `localtime_r`
/// need not read TZ itself.
private let hostZoneRead: Void = tzset()
