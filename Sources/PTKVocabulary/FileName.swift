/// Final names for received photos (protocol-v1.md section 5). Pure, so that the receiver names
/// files with them and the sender can tell in advance which files will compete for a name.
public enum FileName {
    /// The most bytes of UTF-8 a final name may have.
    public static let maxBytes = 200
    /// The most folders a saved photo's name may have (protocol-v1.md section 7: "a/b/c/d/x.png").
    public static let maxFolderDepth = 4

    /// The name a photo offered as `offered` is saved under, before collision suffixes:
    /// its last path component (`/` and `\` both separate, as scalars), without control
    /// characters, without leading dots, spaces or marks that join a "/" (`joinsSlashBefore`),
    /// at most 200 bytes, ending in `.png` (for a JPEG `.jpg`, or `.jpeg` when it has that);
    /// `photo.png` if nothing is left. An existing ending of the type (any case) is kept as it is.
    public static func sanitize(_ offered: String, type: PhotoType = .png) -> String {
        // Split by scalars: "/" followed by a combining mark is one Character, and a Character
        // split would keep that "/" in the name ("x/\u{301}y.png").
        let last =
            offered.unicodeScalars.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "/" || $0 == "\\" })
            .last ?? Substring.UnicodeScalarView()
        var scalars = String.UnicodeScalarView()
        for s in last where !isControl(s) { scalars.append(s) }
        let cleaned = String(
            String.UnicodeScalarView(scalars.drop(while: { $0 == "." || $0 == " " || joinsSlashBefore($0) })))
        if cleaned.isEmpty { return "photo" + type.endings[0] }
        return withSuffix(cleaned, counter: 1, type: type)
    }

    /// One folder name made of attacker-controlled text (a sender's name, say), by section 5's
    /// rules: `/` and `\` become `_` (the text never adds a level), control characters go,
    /// leading dots, spaces and marks that join a "/" go (`joinsSlashBefore`), and trailing
    /// ones that join a "/" after them (`joinsSlashAfter`), at most 200 bytes of UTF-8; nothing
    /// left gives `unknown`.
    public static func folderComponent(_ text: String) -> String {
        var scalars = String.UnicodeScalarView()
        for s in text.unicodeScalars where !isControl(s) { scalars.append(s == "/" || s == "\\" ? "_" : s) }
        var cleaned = truncate(
            String(String.UnicodeScalarView(scalars.drop(while: { $0 == "." || $0 == " " || joinsSlashBefore($0) }))),
            toBytes: maxBytes)
        while let last = cleaned.unicodeScalars.last, joinsSlashAfter(last) { cleaned.unicodeScalars.removeLast() }
        return cleaned.isEmpty ? "unknown" : cleaned
    }

    /// `name` with the collision counter `n` inserted before its ending (" (2)" for 2; nothing
    /// for 1), shortened at a character boundary so the whole stays within 200 bytes.
    public static func withSuffix(_ name: String, counter n: Int, type: PhotoType = .png) -> String {
        let (stem, ext) = split(name, type: type)
        let tail = (n > 1 ? " (\(n))" : "") + ext
        let budget = maxBytes - tail.utf8.count
        let short = truncate(stem, toBytes: budget)
        return (short.isEmpty ? "photo" : short) + tail
    }

    /// Files whose offered names have the same key may compete on the receiver for one final
    /// name or its suffixed forms: their sanitised names are equal once a collision suffix
    /// (" (2)") is taken off ("a", ".a.png" and "a (2).png" all give "a.png"). A sender keeps such
    /// files in one session, in order, so the suffixes come out as over one session.
    public static func collisionKey(_ offered: String) -> String {
        let (stem, ext) = split(sanitize(offered))
        var s = Substring(stem)
        // Drop trailing " (N)" groups.
        while s.hasSuffix(")"), let open = s.lastIndex(of: "("), open > s.startIndex,
            s[s.index(before: open)] == " ",
            s[s.index(after: open)..<s.index(before: s.endIndex)].allSatisfy(\.isASCII),
            Int(s[s.index(after: open)..<s.index(before: s.endIndex)]) != nil
        {
            s = s[..<s.index(before: open)]
        }
        return String(s) + ext
    }

    /// Splits a name into its stem and the type's ending (".png"; the first ending when it has
    /// none of them).
    public static func split(_ name: String, type: PhotoType = .png) -> (String, String) {
        let (stem, ending) = type.split(name)
        return (stem, ending.isEmpty ? type.endings[0] : ending)
    }

    static func truncate(_ s: String, toBytes budget: Int) -> String {
        if s.utf8.count <= budget { return s }
        var out = String.UnicodeScalarView()
        var used = 0
        for scalar in s.unicodeScalars {
            let n = String(scalar).utf8.count
            if used + n > budget { break }
            out.append(scalar)
            used += n
        }
        return String(out)
    }

    /// True when `scalar` right after a "/" would make one Character (grapheme cluster) with
    /// it: a combining mark (U+0301), a spacing mark, a zero-width joiner. A name never starts
    /// with one, so that code splitting a path by Characters finds the same "/" as the kernel,
    /// and "a/\u{301}.." is not shown as "a/́..".
    public static func joinsSlashBefore(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value >= 0x80 && ("/" + String(scalar)).count == 1
    }

    /// True when `scalar` right before a "/" would make one Character with it: a prepended
    /// concatenation mark (U+0600) and the like. A folder name never ends with one.
    public static func joinsSlashAfter(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value >= 0x80 && (String(scalar) + "/").count == 1
    }

    /// The scalars a name never keeps: C0 and C1 controls and DEL, the line and paragraph
    /// separators (U+2028, U+2029), the bidi controls (U+061C, U+200E, U+200F, U+202A-U+202E,
    /// U+2066-U+2069: an override makes `gnp.exe` read as `exe.png`) and U+FEFF. The same set
    /// as `isTerminalControl` (TerminalText.swift), plus U+FEFF.
    static func isControl(_ s: Unicode.Scalar) -> Bool {
        isTerminalControl(s) || s.value == 0xFEFF
    }
}
