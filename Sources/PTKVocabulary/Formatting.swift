// Numbers and durations as people read them, in log lines, messages and the web pages. (The
// forms a setting is written in, "512M" and "24h", are the command line's: PTKCLI's
// `durationText`, PTKConfiguration's `sizeText`, beside their parsers.)

/// A byte count for people: "1.2 MB".
public func formatBytes(_ n: Double) -> String {
    let units = ["B", "kB", "MB", "GB", "TB"]
    var v = n
    var i = 0
    while v >= 1000 && i < units.count - 1 {
        v /= 1000
        i += 1
    }
    return i == 0 ? "\(Int(v)) B" : "\(formatDecimal(v)) \(units[i])"
}

/// One decimal place below 100, none above.
public func formatDecimal(_ v: Double) -> String {
    if v >= 100 || v.isNaN || v.isInfinite { return v.isFinite ? String(Int(v.rounded())) : "0" }
    let tenths = Int((v * 10).rounded())
    return "\(tenths / 10).\(tenths % 10)"
}

/// A duration for people to read: "10 min" for whole minutes, else seconds ("90 s", "0.25 s").
public func formatSeconds(_ duration: Duration) -> String {
    // Duration.seconds (PTKTime) written out: the vocabulary stands on nothing.
    let seconds = Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    if seconds >= 60 && seconds.truncatingRemainder(dividingBy: 60) == 0 { return "\(Int(seconds / 60)) min" }
    if seconds == seconds.rounded() { return "\(Int(seconds)) s" }
    return "\(seconds) s"
}

/// Hex digits as browsers show a certificate's fingerprint: pairs of upper-case digits,
/// colon-separated ("AB:12:CD").
public func colonHex(_ hex: String) -> String {
    var out = ""
    for (i, c) in hex.uppercased().enumerated() {
        if i > 0 && i % 2 == 0 { out += ":" }
        out.append(c)
    }
    return out
}
