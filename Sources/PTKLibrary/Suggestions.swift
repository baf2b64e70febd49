import PTKStore
import PTKVocabulary

/// The names closest to `name` (at most `limit`, closest first), for "did you mean": those
/// within an edit distance of a third of the name's length (at least 2), ignoring case and the
/// photo ending (".png", ".jpg", ".jpeg"), and names that contain it (scored by how much longer they are).
public func closestNames(to name: String, in names: [String], limit: Int = 3) -> [String] {
    func key(_ s: String) -> [Character] {
        var l = s.lowercased()
        if let type = PhotoType(fileName: l), let ending = type.endings.first(where: { l.hasSuffix($0) }) {
            l.removeLast(ending.count)
        }
        return Array(l)
    }
    let wanted = key(name)
    guard !wanted.isEmpty else { return [] }
    let budget = max(2, wanted.count / 3)
    var scored: [(Int, String)] = []
    for candidate in names {
        let k = key(candidate)
        if k.count >= wanted.count, String(k).contains(String(wanted)) {
            scored.append((k.count - wanted.count, candidate))
        } else if abs(k.count - wanted.count) <= budget {
            let d = editDistance(wanted, k, limit: budget)
            if d <= budget { scored.append((d, candidate)) }
        }
    }
    return scored.sorted { ($0.0, $0.1) < ($1.0, $1.1) }.prefix(limit).map(\.1)
}

/// Levenshtein distance of `a` and `b`, or `limit + 1` once it is sure to exceed `limit`.
func editDistance(_ a: [Character], _ b: [Character], limit: Int) -> Int {
    if a.isEmpty { return b.count }
    if b.isEmpty { return a.count }
    var previous = Array(0...b.count)
    var current = [Int](repeating: 0, count: b.count + 1)
    for i in 1...a.count {
        current[0] = i
        var rowMinimum = i
        for j in 1...b.count {
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            rowMinimum = min(rowMinimum, current[j])
        }
        if rowMinimum > limit { return limit + 1 }
        swap(&previous, &current)
    }
    return previous[b.count]
}
