import PTKTime

/// The two date forms WebDAV properties use, from seconds since the Unix epoch, by arithmetic
/// alone (no libc time zone, no Foundation): UTC always.
public enum DAVDates {
    private static let weekdays = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// RFC 9110's IMF-fixdate (RFC 1123's form), for getlastmodified (RFC 4918 section 15.7)
    /// and Last-Modified: "Thu, 01 Jan 1970 00:00:00 GMT".
    public static func httpDate(_ secondsSinceEpoch: Int64) -> String {
        let t = civil(secondsSinceEpoch)
        let weekday = weekdays[Int(((t.days % 7) + 7) % 7)]
        return
            "\(weekday), \(two(t.day)) \(months[Int(t.month) - 1]) \(four(t.year)) \(two(t.hour)):\(two(t.minute)):\(two(t.second)) GMT"
    }

    /// RFC 3339's date-time in UTC, for creationdate (RFC 4918 section 15.1):
    /// "1970-01-01T00:00:00Z".
    public static func iso8601(_ secondsSinceEpoch: Int64) -> String {
        let t = civil(secondsSinceEpoch)
        return "\(four(t.year))-\(two(t.month))-\(two(t.day))T\(two(t.hour)):\(two(t.minute)):\(two(t.second))Z"
    }

    /// The proleptic Gregorian date and time of `seconds` (PTKTime's `CivilDate`).
    private static func civil(_ seconds: Int64) -> (
        days: Int64, year: Int64, month: Int64, day: Int64, hour: Int64, minute: Int64, second: Int64
    ) {
        var days = seconds / 86_400
        var rest = seconds % 86_400
        if rest < 0 {
            rest += 86_400
            days -= 1
        }
        let (year, month, day) = CivilDate.date(fromDays: days)
        return (days, year, month, day, rest / 3600, rest % 3600 / 60, rest % 60)
    }

    private static func two(_ n: Int64) -> String { n < 10 ? "0\(n)" : "\(n)" }

    private static func four(_ n: Int64) -> String {
        let s = "\(abs(n))"
        return (n < 0 ? "-" : "") + String(repeating: "0", count: max(0, 4 - s.count)) + s
    }
}
