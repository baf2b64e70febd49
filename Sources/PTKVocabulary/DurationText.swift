/// A video's length, and other figures, as the pages and `ptk` show them (issue 58).
public enum DurationText {
    /// As people read it: "12.5 s" under a minute, else as `clock` writes it.
    public static func spoken(_ seconds: Double) -> String {
        if seconds < 59.95 { return "\(decimal(seconds, places: 1)) s" }
        return clock(seconds)
    }

    /// As a video player shows it (the gallery's badge, `ptk list`): "0:07", "4:05", "1:02:03",
    /// to the nearest second; anything not a number from 0 to 10⁹ seconds is taken as its bound.
    public static func clock(_ seconds: Double) -> String {
        let whole = Int(seconds.isNaN ? 0 : min(max(seconds, 0), 1e9).rounded())
        let (h, m, s) = (whole / 3600, whole / 60 % 60, whole % 60)
        let two = { (n: Int) in n < 10 ? "0\(n)" : "\(n)" }
        return h > 0 ? "\(h):\(two(m)):\(two(s))" : "\(m):\(two(s))"
    }

    /// `value` (taken within 0...10¹²) with at most `places` decimals (0 to 6), without
    /// trailing zeros: "29.97", "30", "8.1".
    public static func decimal(_ value: Double, places: Int) -> String {
        let places = min(max(places, 0), 6)
        var scale: Int64 = 1
        for _ in 0..<places { scale *= 10 }
        let n = Int64(((value.isNaN ? 0 : min(max(value, 0), 1e12)) * Double(scale)).rounded())
        var text = "\(n / scale)"
        var fraction = String(n % scale)
        if places > 0 {
            fraction = String(repeating: "0", count: places - fraction.count) + fraction
            while fraction.hasSuffix("0") { fraction.removeLast() }
            if !fraction.isEmpty { text += "." + fraction }
        }
        return text
    }
}
