import PTKVocabulary

/// How a login flow names its device: the text the approval page shows (from the User-Agent)
/// and the app password's name it suggests.
extension LoginFlows {
    /// The device a User-Agent names, for the approval page and the log: controls (a line
    /// break, an escape, a bidi override) and runs of white space as one space, cut to
    /// `deviceNameLimit` characters; "an unnamed device" when nothing is left.
    public static func deviceName(userAgent: String?) -> String {
        var out = String.UnicodeScalarView()
        var space = false
        for scalar in (userAgent ?? "").unicodeScalars {
            if isTerminalControl(scalar) || scalar.properties.isWhitespace {
                space = !out.isEmpty
                continue
            }
            if space { out.append(" ") }
            space = false
            out.append(scalar)
        }
        let name = String(String(out).prefix(deviceNameLimit))
        return name.isEmpty ? "an unnamed device" : name
    }

    /// Products a browser-like User-Agent names that say nothing of the app.
    static let genericProducts: Set<String> = [
        "mozilla", "applewebkit", "chrome", "safari", "mobile", "version", "gecko", "firefox", "khtml", "like",
        "dalvik", "okhttp",
    ]

    /// A valid app password name (`AppPasswords.validName`) for `device` that is none of
    /// `taken` (compared as bytes): the User-Agent's last product that is not a browser's
    /// ("Nextcloud-android" of "Mozilla/5.0 (Android) Nextcloud-android/3.30.0"), "browser" when
    /// it names only a browser's, else the whole name, with what a name may not hold as "-",
    /// cut to 48; "-2", "-3"... added while taken; "device" when nothing is left.
    public static func suggestedPasswordName(device: String, taken: [String]) -> String {
        var products: [String] = []
        var sawProduct = false
        var depth = 0
        var word = ""
        for c in device + " " {
            switch c {
            case "(": depth += 1
            case ")": depth = max(0, depth - 1)
            case " " where depth == 0:
                if let name = word.split(separator: "/").first, word.contains("/") {
                    sawProduct = true
                    if !genericProducts.contains(name.lowercased()) { products.append(String(name)) }
                }
                word = ""
            default: if depth == 0 { word.append(c) }
            }
        }
        var base = slug(products.last ?? (sawProduct ? "browser" : device))
        if base.isEmpty { base = "device" }
        let names = Set(taken.map { Array($0.utf8) })
        var candidate = base
        var n = 2
        while names.contains(Array(candidate.utf8)) {
            candidate = base + "-\(n)"
            n += 1
        }
        return candidate
    }

    /// `text` with every scalar outside `A-Z a-z 0-9 . _ -` as "-", runs of "-" as one, no "."
    /// or "-" first nor "-" last, cut to 48 bytes.
    static func slug(_ text: String) -> String {
        var out: [UInt8] = []
        for scalar in text.unicodeScalars {
            let v = scalar.value
            let keep =
                (0x41...0x5A).contains(v) || (0x61...0x7A).contains(v) || (0x30...0x39).contains(v) || v == 0x2E
                || v == 0x5F
            let byte = keep ? UInt8(v) : UInt8(ascii: "-")
            if byte == UInt8(ascii: "-") && (out.last == UInt8(ascii: "-") || out.isEmpty) { continue }
            if out.isEmpty && byte == UInt8(ascii: ".") { continue }
            out.append(byte)
            if out.count >= 48 { break }
        }
        while out.last == UInt8(ascii: "-") || out.last == UInt8(ascii: ".") { out.removeLast() }
        return String(decoding: out, as: UTF8.self)
    }
}
