import PTKSystem
import PTKTime
import PTKVocabulary

/// `text` between double quotes as `quotedForTerminal` writes it, cut first to `limit` bytes
/// (on a scalar's boundary; "..." before the closing quote says it was cut): how peer text (a
/// name, a path, a user agent) enters a log line, so that no peer makes a line longer than
/// its budget.
public func quotedForLog(_ text: String, limit: Int = 200) -> String {
    guard text.utf8.count > limit else { return quotedForTerminal(text) }
    return "\"" + escapedForQuotes(cutUTF8(text, limit)) + "...\""
}

/// The longest line a door writes about a request or connection (a backstop: peer text is cut
/// where it enters a line, by `quotedForLog`).
public let maxLogLine = 2048

/// `line`, cut at `maxLogLine` bytes.
func boundedLine(_ line: String) -> String {
    line.utf8.count <= maxLogLine ? line : cutUTF8(line, maxLogLine) + "... (cut)"
}

/// The longest prefix of `text` of at most `limit` UTF-8 bytes that ends on a scalar.
func cutUTF8(_ text: String, _ limit: Int) -> String {
    var out = String.UnicodeScalarView()
    var used = 0
    for scalar in text.unicodeScalars {
        let n = UTF8.width(scalar)
        if used + n > limit { break }
        used += n
        out.append(scalar)
    }
    return String(out)
}

/// How many request log lines each address may have a minute (a door's, shared by its
/// connections). Remembers at most 4096 addresses: entries a minute old are forgotten first,
/// and while 4096 addresses of this minute are remembered a new one gets no line at all.
public final class LogBudget: @unchecked Sendable {
    // `entries` is guarded by `lock`.
    private let lock = Lock()
    private var entries: [String: (start: Instant, count: Int, left: Int)] = [:]
    /// Lines a minute each address may have.
    public let perMinute: Int
    static let capacity = 4096

    /// A budget of `perMinute` lines a minute per address.
    public init(perMinute: Int = 30) { self.perMinute = perMinute }

    /// Whether a line about `address` may be written now, and how many were left out before it.
    public func take(_ address: String, now: Instant) -> (allowed: Bool, left: Int) {
        lock.withLock {
            if entries[address] == nil && entries.count >= Self.capacity {
                entries = entries.filter { now - $0.value.start < .seconds(60) }
                // Thousands of addresses refused within a minute: a flood, not a person to tell.
                if entries.count >= Self.capacity { return (false, 0) }
            }
            var entry = entries[address] ?? (now, 0, 0)
            if now - entry.start >= .seconds(60) { entry = (now, 0, entry.left) }
            entry.count += 1
            guard entry.count <= perMinute else {
                entry.left += 1
                entries[address] = entry
                return (false, 0)
            }
            let left = entry.left
            entry.left = 0
            entries[address] = entry
            return (true, left)
        }
    }
}
