/// A day of the calendar: what a photo is filed under by date.
public struct CalendarDay: Sendable, Equatable, Hashable {
    /// The year of the proleptic Gregorian calendar (2024).
    public var year: Int
    /// The month, 1 to 12.
    public var month: Int
    /// The day of the month, 1 to 31.
    public var day: Int
    /// A day as given; nothing checks that it exists.
    public init(year: Int, month: Int, day: Int) {
        self.year = year
        self.month = month
        self.day = day
    }
}

/// A point on the wall clock, in milliseconds since 1970-01-01 UTC: the one representation of
/// a date in ptk (when a photo was received, a file modified, a sender last tried), with the
/// one ISO 8601 formatter and parser, and the one way dates are shown to people.
///
/// A pure value, by arithmetic alone (`CivilDate`); reading the clock (`WallTime.now`) and the
/// host's time zone (`localDay`, `local`) is PTKSystem's.
public struct WallTime: Comparable, Hashable, Sendable, CustomStringConvertible {
    /// Milliseconds since 1970-01-01 UTC; negative before it. Any value may come from the index.
    public var milliseconds: Int64
    /// A time `milliseconds` after the epoch.
    public init(milliseconds: Int64) { self.milliseconds = milliseconds }
    /// `seconds` since the epoch; beyond what milliseconds can hold (some 292 million years),
    /// the farthest time they can.
    public init(seconds: Int64) {
        let (ms, overflow) = seconds.multipliedReportingOverflow(by: 1000)
        milliseconds = overflow ? (seconds < 0 ? .min : .max) : ms
    }

    /// `seconds` since the epoch, or nil when milliseconds cannot hold it: for text read from
    /// a file, where such a number is not a time.
    public init?(exactSeconds seconds: Int64) {
        let (ms, overflow) = seconds.multipliedReportingOverflow(by: 1000)
        guard !overflow else { return nil }
        milliseconds = ms
    }

    /// The seconds a time read from a file another user may write can take: 1970-01-01 to
    /// 9999-12-31 UTC. Every time ptk and ptkd write there (when a session began, a sender last
    /// tried) is in it; one outside it is not a time they wrote.
    public static let storedSecondsRange: ClosedRange<Int64> = 0...253_402_300_799

    /// `seconds` since the epoch read from a file, or nil outside `storedSecondsRange`: a
    /// planted extreme never reaches arithmetic or a formatter as a time.
    public init?(storedSeconds seconds: Int64) {
        guard Self.storedSecondsRange.contains(seconds) else { return nil }
        milliseconds = seconds * 1000
    }

    /// Whole seconds since the epoch (rounded down), for every value (Int64.min included: a
    /// time read from the index may be anything).
    public var seconds: Int64 {
        let (quotient, remainder) = milliseconds.quotientAndRemainder(dividingBy: 1000)
        return remainder < 0 ? quotient - 1 : quotient
    }

    /// Earlier first.
    public static func < (a: WallTime, b: WallTime) -> Bool { a.milliseconds < b.milliseconds }

    /// ISO 8601 in UTC with milliseconds: "2023-11-14T22:13:20.123Z".
    public var iso8601: String { formatISO8601(milliseconds: milliseconds) }

    /// Parses what `iso8601` writes, also without a fraction or with an offset ("+02:00");
    /// nil if the text is not such a time.
    public init?(iso8601 text: String) {
        guard let ms = parseISO8601(text) else { return nil }
        milliseconds = ms
    }

    /// For people: "2026-11-30 08:53:00 UTC"; the year as glibc's `strftime` writes `%Y` (no
    /// padding, "-" before a year before 1 BC), which a test checks it against.
    public var description: String {
        let (days, second) = seconds.quotientAndRemainder(dividingBy: 86_400)
        let (d, s) = second < 0 ? (days - 1, second + 86_400) : (days, second)
        let (y, m, day) = CivilDate.date(fromDays: d)
        // Years beyond what C's `tm` holds: said so (no time in milliseconds is one).
        guard y - 1900 >= Int64(Int32.min) && y - 1900 <= Int64(Int32.max) else {
            return "(a time out of range: \(milliseconds) ms)"
        }
        return "\(y)-\(two(m))-\(two(day)) \(two(s / 3600)):\(two(s / 60 % 60)):\(two(s % 60)) UTC"
    }

    /// For a column: "2026-11-30 08:53" (UTC).
    public var minutes: String { String(description.prefix(16)) }
}

/// `milliseconds` since the epoch as ISO 8601 UTC with milliseconds (`WallTime.iso8601`).
private func formatISO8601(milliseconds: Int64) -> String {
    let (days, rest) = milliseconds.quotientAndRemainder(dividingBy: 86_400_000)
    let (d, ms) = rest < 0 ? (days - 1, rest + 86_400_000) : (days, rest)
    let (y, m, day) = CivilDate.date(fromDays: d)
    let millis = ms % 1000
    let milli = millis < 10 ? "00\(millis)" : millis < 100 ? "0\(millis)" : "\(millis)"
    return "\(y)-\(two(m))-\(two(day))T\(two(ms / 3_600_000)):\(two(ms / 60_000 % 60)):\(two(ms / 1000 % 60)).\(milli)Z"
}

/// Parses what `formatISO8601` writes, also without fraction or with an offset
/// ("+02:00"); nil if the text is not such a time.
private func parseISO8601(_ text: String) -> Int64? {
    let b = Array(text.utf8)
    func number(_ from: Int, _ count: Int) -> Int64? {
        guard from + count <= b.count else { return nil }
        var v: Int64 = 0
        for c in b[from..<from + count] {
            guard c >= 48 && c <= 57 else { return nil }
            v = v * 10 + Int64(c - 48)
        }
        return v
    }
    guard b.count >= 20, let y = number(0, 4), b[4] == 45, let mo = number(5, 2), b[7] == 45, let d = number(8, 2),
        b[10] == 84 || b[10] == 116 || b[10] == 32, let h = number(11, 2), b[13] == 58, let mi = number(14, 2),
        b[16] == 58, let s = number(17, 2), (1...12).contains(mo), (1...31).contains(d), h < 24, mi < 60, s < 61
    else { return nil }
    var i = 19
    var millis: Int64 = 0
    if i < b.count, b[i] == 46 {
        i += 1
        var digits = 0
        while i < b.count, b[i] >= 48, b[i] <= 57 {
            if digits < 3 { millis = millis * 10 + Int64(b[i] - 48) }
            digits += 1
            i += 1
        }
        guard digits > 0 else { return nil }
        if digits < 3 { for _ in digits..<3 { millis *= 10 } }
    }
    var offset: Int64 = 0
    guard i < b.count else { return nil }
    if b[i] == 90 || b[i] == 122 {
        i += 1
    } else if b[i] == 43 || b[i] == 45, let oh = number(i + 1, 2), b.count > i + 3, b[i + 3] == 58,
        let om = number(i + 4, 2)
    {
        offset = (oh * 60 + om) * 60_000 * (b[i] == 45 ? -1 : 1)
        i += 6
    } else {
        return nil
    }
    guard i == b.count else { return nil }
    return CivilDate.days(fromYear: y, month: mo, day: d) * 86_400_000 + ((h * 60 + mi) * 60 + s) * 1000 + millis
        - offset
}

/// Two digits at least: "07".
private func two(_ v: Int64) -> String { v < 10 ? "0\(v)" : "\(v)" }

/// The proleptic Gregorian calendar by arithmetic alone (Howard Hinnant's days_from_civil and
/// civil_from_days), UTC: the one calendar routine, for `WallTime` and WebDAV's dates.
public enum CivilDate {
    /// Days since 1970-01-01 of a proleptic Gregorian date.
    public static func days(fromYear year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    /// The date (year, month 1-12, day 1-31) of a day number since 1970-01-01.
    public static func date(fromDays z0: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let z = z0 + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (m <= 2 ? 1 : 0), m, d)
    }
}
