/// A duration as a flag or setting takes it, "24h" for 86400 s: the largest of h and m that divides the duration; seconds otherwise
/// (plain seconds when `plainSeconds`, as the settings named in seconds show them).
public func durationText(_ duration: Duration, plainSeconds: Bool = false) -> String {
    let seconds = duration.seconds
    guard seconds == seconds.rounded() else { return String(seconds) }
    let s = Int(seconds)
    if !plainSeconds {
        for (size, unit) in [(3600, "h"), (60, "m")] where s > 0 && s % size == 0 { return "\(s / size)\(unit)" }
    }
    return String(s)
}
