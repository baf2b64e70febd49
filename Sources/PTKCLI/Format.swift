/// A byte count for people: "1.2 MB".
public func formatBytes(_ n: Double) -> String {
    let units = ["B", "kB", "MB", "GB", "TB"]
    var v = n
    var i = 0
    while v >= 1000 && i < units.count - 1 { v /= 1000; i += 1 }
    return i == 0 ? "\(Int(v)) B" : "\(formatDecimal(v)) \(units[i])"
}

/// One decimal place below 100, none above.
public func formatDecimal(_ v: Double) -> String {
    if v >= 100 || v.isNaN || v.isInfinite { return v.isFinite ? String(Int(v.rounded())) : "0" }
    let tenths = Int((v * 10).rounded())
    return "\(tenths / 10).\(tenths % 10)"
}

/// A JSON string literal.
public func jsonString(_ s: String) -> String {
    var out = "\""
    for u in s.unicodeScalars {
        switch u {
        case "\"": out += "\\\""
        case "\\": out += "\\\\"
        case "\n": out += "\\n"
        case "\r": out += "\\r"
        case "\t": out += "\\t"
        default:
            if u.value < 0x20 { out += "\\u" + String(repeating: "0", count: 4 - String(u.value, radix: 16).count) + String(u.value, radix: 16) } else { out.unicodeScalars.append(u) }
        }
    }
    return out + "\""
}
