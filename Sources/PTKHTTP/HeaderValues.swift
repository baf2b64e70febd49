import PTKSystem
import PTKVocabulary

/// The answer to a `Range` header (RFC 9110 §14) for a file of a known size. One range is
/// served (206); a header that is not a valid `bytes=` range, or asks for several ranges
/// (overlapping ones included), is ignored and the whole file served (200), as the RFC
/// allows; a range that starts at or past the end is 416. Positions are any number of digits
/// (§14.1.1): a last position past the end is the end (§14.1.2), a suffix longer than the file
/// is the whole file, a first position past the end (even one no Int64 holds) is 416.
public enum ByteRange: Equatable, Sendable {
    case whole
    /// Bytes `start` through `end`, both included.
    case part(start: Int64, end: Int64)
    case unsatisfiable

    /// The range `header` (nil: none sent) asks of a file of `size` bytes.
    public init(header: String?, size: Int64) {
        guard let header else {
            self = .whole
            return
        }
        let text = header.trimmingWhitespace
        guard text.utf8.count <= 200, text.lowercased().hasPrefix("bytes=") else {
            self = .whole
            return
        }
        let spec = text.dropFirst(6).trimmingWhitespace
        guard !spec.containsScalar(",") else {
            self = .whole
            return
        }
        let parts = spec.parts(separatedBy: "-", maxSplits: 1).map { $0.trimmingWhitespace }
        guard parts.count == 2 else {
            self = .whole
            return
        }
        // A position: digits only; one past what Int64 holds is Int64.max (it is past any file's end).
        func number(_ s: String) -> Int64? {
            guard !s.isEmpty, s.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
            return Int64(s) ?? .max
        }
        if parts[0].isEmpty {
            // The last N bytes.
            guard let n = number(parts[1]) else {
                self = .whole
                return
            }
            if n == 0 || size == 0 {
                self = .unsatisfiable
                return
            }
            self = .part(start: max(0, size - n), end: size - 1)
            return
        }
        guard let start = number(parts[0]) else {
            self = .whole
            return
        }
        var end = size - 1
        if !parts[1].isEmpty {
            guard let last = number(parts[1]), last >= start else {
                self = .whole
                return
            }
            end = min(last, size - 1)
        }
        self = start >= size ? .unsatisfiable : .part(start: start, end: end)
    }
}

extension StringProtocol {
    var trimmingWhitespace: String {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { $0 != " " && $0 != "\t" }) else { return "" }
        let last = scalars.lastIndex(where: { $0 != " " && $0 != "\t" })!
        return String(String.UnicodeScalarView(scalars[first...last]))
    }
}

/// The cookies of a `Cookie` header; the first of a repeated name wins.
public func cookies(_ header: String?) -> [String: String] {
    var out: [String: String] = [:]
    // Split by scalars: ";" with a combining mark after it is one Character, and U+037E (Greek
    // question mark) is a Character equal to ";".
    for pair in (header ?? "").parts(separatedBy: ";", omittingEmpty: true) {
        let kv = pair.parts(separatedBy: "=", maxSplits: 1)
        guard kv.count == 2 else { continue }
        let name = kv[0].trimmingWhitespace
        var value = kv[1].trimmingWhitespace
        if value.unicodeScalars.count >= 2, value.startsWithScalar("\""), value.endsWithScalar("\"") {
            value = String(String.UnicodeScalarView(value.unicodeScalars.dropFirst().dropLast()))
        }
        if !name.isEmpty, out[name] == nil { out[name] = value }
    }
    return out
}
