import PTKProtocol
import PTKSystem
import PTKVocabulary

/// Where in the received-photos directory a photo is filed: the `layout` setting. A pattern of
/// up to `FileName.maxFolderDepth` levels separated by `/`, each made of `{sender}`,
/// `{year}`, `{month}`, `{day}` and literal text; or one of the names `flat` (no folder),
/// `sender`, `date` and `sender/date`. Pure: the daemon gives the sender's name and the day.
public struct FolderLayout: Sendable, Equatable, CustomStringConvertible {
    /// A piece of one level.
    public enum Piece: Sendable, Equatable {
        case sender, year, month, day
        case text(String)
    }

    /// The levels, outermost first; none for `flat`.
    public let levels: [[Piece]]
    /// As it was given ("sender/date", "{sender}/{year}-{month}").
    public let description: String

    /// The named layouts and the patterns they stand for.
    public static let named: [(name: String, pattern: String)] = [
        ("flat", ""),
        ("sender", "{sender}"),
        ("date", "{year}-{month}-{day}"),
        ("sender/date", "{sender}/{year}-{month}-{day}"),
    ]

    /// Every photo in the received-photos directory itself, no folders.
    public static let flat = FolderLayout(levels: [], description: "flat")

    private init(levels: [[Piece]], description: String) {
        self.levels = levels
        self.description = description
    }

    /// Parses a layout; the error says what is wrong with it.
    public init(parsing text: String) throws(LayoutError) {
        let pattern = Self.named.first { $0.name == text }?.pattern ?? text
        guard !pattern.isEmpty || text == "flat" else { throw LayoutError("an empty layout; use flat for none") }
        var levels: [[Piece]] = []
        if !pattern.isEmpty {
            for level in pattern.split(separator: "/", omittingEmptySubsequences: false) {
                levels.append(try Self.pieces(of: String(level)))
            }
        }
        guard levels.count <= FileName.maxFolderDepth else {
            throw LayoutError("\(levels.count) levels; at most \(FileName.maxFolderDepth)")
        }
        self.init(levels: levels, description: text)
    }

    private static func pieces(of level: String) throws(LayoutError) -> [Piece] {
        guard !level.isEmpty else { throw LayoutError("an empty level (two / in a row, or one at an end)") }
        var pieces: [Piece] = []
        var rest = Substring(level)
        while !rest.isEmpty {
            if rest.hasPrefix("{") {
                guard let close = rest.firstIndex(of: "}") else { throw LayoutError("'{' without '}' in '\(level)'") }
                let word = rest[rest.index(after: rest.startIndex)..<close]
                switch word {
                case "sender": pieces.append(.sender)
                case "year": pieces.append(.year)
                case "month": pieces.append(.month)
                case "day": pieces.append(.day)
                default:
                    throw LayoutError("unknown field {\(word)}; the fields are {sender}, {year}, {month} and {day}")
                }
                rest = rest[rest.index(after: close)...]
            } else {
                let end = rest.firstIndex(of: "{") ?? rest.endIndex
                let text = String(rest[..<end])
                guard !text.contains("}") else { throw LayoutError("'}' without '{' in '\(level)'") }
                guard text.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value != 0x7F && $0 != "\\" }) else {
                    throw LayoutError("control characters or '\\' in '\(level)'")
                }
                if pieces.isEmpty && (text.hasPrefix(".") || text.hasPrefix(" ")) {
                    throw LayoutError("'\(level)' starts with a dot or a space (a hidden or odd folder)")
                }
                pieces.append(.text(text))
                rest = rest[end...]
            }
        }
        return pieces
    }

    /// True when the layout names the sender (each sender's photos apart).
    public var usesSender: Bool { levels.contains { $0.contains(.sender) } }

    /// The folder a photo from `sender` (nil: nobody, as for `ptk import`) on `day` is filed
    /// in: "" for `flat`, else levels separated by "/", each by section 5's naming rules
    /// (`FileName.folderComponent`), so that no sender's name can add a level, climb out or hide.
    public func folder(sender: String?, day: CalendarDay) -> String {
        levels.map { level in
            let text = level.map { piece -> String in
                switch piece {
                case .sender: return sender ?? "unknown"
                case .year: return String(day.year)
                case .month: return day.month < 10 ? "0\(day.month)" : String(day.month)
                case .day: return day.day < 10 ? "0\(day.day)" : String(day.day)
                case .text(let t): return t
                }
            }.joined()
            return FileName.folderComponent(text)
        }.joined(separator: "/")
    }
}

/// A layout that cannot be used, and why.
public struct LayoutError: Error, Sendable, CustomStringConvertible {
    /// What is wrong with the pattern, in words for the user.
    public var description: String
    init(_ description: String) { self.description = description }
}
