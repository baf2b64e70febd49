import PTKCLI
import PTKVocabulary

// The values ptkd's settings take: their parsers (each kind once), and their texts in help.

/// The usage error of a value `key` does not take: "invalid value 'x' for port: expected …".
func invalid(_ value: String, _ key: DaemonSetting, _ what: String) -> UsageError {
    UsageError("invalid value '\(value)' for \(key.rawValue): \(what)")
}

/// The one parser of each kind of value the settings take: a usage error naming the setting,
/// saying what `expected` asks for, for anything else.
enum Parse {
    /// A switch: on, yes, true or off, no, false, any case (and 1 or 0 where `digits`).
    static func onOff(
        _ value: String, _ key: DaemonSetting, expected: String = "expected on or off",
        digits: Bool = false
    ) throws(UsageError) -> Bool {
        switch value.lowercased() {
        case "on", "yes", "true": return true
        case "off", "no", "false": return false
        case "1" where digits: return true
        case "0" where digits: return false
        default: throw invalid(value, key, expected)
        }
    }

    /// A TCP port, 0 to 65535 (0 picks a free one).
    static func port(
        _ value: String, _ key: DaemonSetting,
        expected: String = "expected 0 to 65535"
    ) throws(UsageError) -> UInt16 {
        guard let n = parseInteger(value, in: 0...65535) else { throw invalid(value, key, expected) }
        return UInt16(n)
    }

    /// A size in bytes with an optional K, M, G or T suffix (`parseSize`), at least `minimum`.
    static func size(
        _ value: String, _ key: DaemonSetting, atLeast minimum: Int64 = 0,
        expected: String
    ) throws(UsageError) -> Int64 {
        guard let n = parseSize(value), n >= minimum else { throw invalid(value, key, expected) }
        return n
    }

    /// A folder named by its absolute path, without "." or ".." components (so two spellings of
    /// one folder compare equal after the trailing "/" is dropped): "/" itself is refused.
    static func folder(_ value: String, _ key: DaemonSetting) throws(UsageError) -> String {
        guard value.hasPrefix("/") else { throw invalid(value, key, "expected an absolute path") }
        let parts = value.parts(separatedBy: "/", omittingEmpty: true)
        guard !parts.isEmpty else { throw invalid(value, key, "expected a folder other than /") }
        guard !parts.contains(where: \.isDotOrDotDot) else {
            throw invalid(value, key, "expected a path without . or .. components")
        }
        guard !value.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
            throw invalid(value, key, "expected a path without control characters")
        }
        return "/" + parts.joined(separator: "/")
    }

    /// A duration above zero: seconds, or with an s, m, h or d suffix (`parseDuration`).
    static func duration(_ value: String, _ key: DaemonSetting, expected: String) throws(UsageError) -> Duration {
        guard let d = parseDuration(value), d > .zero else { throw invalid(value, key, expected) }
        return d
    }
}

/// "512M" for 512 MiB: the largest K/M/G/T unit that divides the size.
func sizeText(_ n: Int64) -> String {
    for (shift, unit) in [(40, "T"), (30, "G"), (20, "M"), (10, "K")] where n > 0 && n % (Int64(1) << shift) == 0 {
        return "\(n >> shift)\(unit)"
    }
    return "\(n)"
}

/// Splits a command line into words as a shell does, without expanding anything: words are
/// separated by spaces and tabs; '...' keeps everything inside as it is; "..." too, except
/// that \" and \\ stand for " and \; outside quotes, \ keeps the next character as it is.
public func splitWords(_ text: String) throws(UsageError) -> [String] {
    var words: [String] = []
    var word = ""
    var inWord = false
    var chars = text.unicodeScalars.makeIterator()
    while let c = chars.next() {
        switch c {
        case " ", "\t":
            if inWord {
                words.append(word)
                word = ""
                inWord = false
            }
        case "'":
            inWord = true
            while true {
                guard let d = chars.next() else { throw UsageError("a ' without its closing '") }
                if d == "'" { break }
                word.unicodeScalars.append(d)
            }
        case "\"":
            inWord = true
            while true {
                guard let d = chars.next() else { throw UsageError("a \" without its closing \"") }
                if d == "\"" { break }
                if d == "\\" {
                    guard let e = chars.next() else { throw UsageError("a \" without its closing \"") }
                    if e != "\"" && e != "\\" { word.unicodeScalars.append(d) }
                    word.unicodeScalars.append(e)
                } else {
                    word.unicodeScalars.append(d)
                }
            }
        case "\\":
            inWord = true
            guard let d = chars.next() else { throw UsageError("a \\ at the end") }
            word.unicodeScalars.append(d)
        default:
            inWord = true
            word.unicodeScalars.append(c)
        }
    }
    if inWord { words.append(word) }
    return words
}

/// A LocalSend PIN as `key` gives it: 1 to 64 characters without spaces or controls.
func checkedPIN(_ v: String, _ key: String) throws(UsageError) -> String {
    guard !v.isEmpty, v.utf8.count <= 64, v.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value != 0x7F }) else {
        // The value is a secret: never echoed (errors reach the journal).
        throw UsageError(
            key == "localsend-pin"
                ? "invalid value for localsend-pin: expected 1 to 64 characters without spaces"
                : "\(key): the PIN in it is not 1 to 64 characters without spaces")
    }
    return v
}

/// A comma-separated list of media types the store keeps ("image/png, IMAGE/JPEG"), in
/// `PhotoType`'s order, each once; a usage error naming `key` for anything else.
func parseTypes(_ v: String, key: DaemonSetting) throws(UsageError) -> [PhotoType] {
    let names = v.lowercased().split(separator: ",").map { String($0).trimmingSpaces }.filter { !$0.isEmpty }
    let types = names.compactMap(PhotoType.init(mediaType:))
    guard !names.isEmpty, types.count == names.count else {
        throw invalid(
            v, key,
            "expected some of image/png, image/jpeg, image/heic, image/heif, video/mp4, video/quicktime, comma-separated"
        )
    }
    return PhotoType.allCases.filter(types.contains)
}
