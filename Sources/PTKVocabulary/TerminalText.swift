/// Text from elsewhere (a peer's file name, alias, media type or message, a receiver's name, a
/// file name found in a folder) made safe to write to a log line or a terminal: nothing in it
/// ends the line or starts another, and nothing a terminal acts on (an escape sequence, a bell,
/// a NUL, text turned around by a bidi override) is left raw.
///
/// Matched scalar by scalar, never by Character (as ScalarText.swift explains: a Character can be
/// a control followed by a combining mark, "\u{1B}\u{301}", which equals no control Character
/// while the terminal still gets the ESC).

/// True for a scalar a terminal or a log reader acts on rather than shows: the C0 controls
/// (U+0000–U+001F: LF, CR, TAB, ESC, NUL, BEL...), DEL (U+007F), the C1 controls
/// (U+0080–U+009F: NEL U+0085, CSI U+009B...), the line and paragraph separators (U+2028,
/// U+2029) and the bidi controls (U+061C, U+200E, U+200F, U+202A–U+202E, U+2066–U+2069),
/// which reorder what follows them on the line.
public func isTerminalControl(_ scalar: Unicode.Scalar) -> Bool {
    switch scalar.value {
    case 0x00...0x1F, 0x7F...0x9F: return true
    case 0x2028, 0x2029: return true
    case 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: return true
    default: return false
    }
}

/// `s` on one line with every `isTerminalControl` scalar written as a visible escape: `\n`,
/// `\r`, `\t`, and `\u{1B}` (its hexadecimal value, upper case) for the others. Everything else,
/// a backslash included, is kept as it is: this is the last guard of a line (ptkd's log, what
/// ptk-send prints), so text escaped before (`quotedForTerminal`) passes through unchanged.
public func escapedForTerminal(_ s: String) -> String {
    // Most text has nothing to escape: it is returned as it is.
    guard s.unicodeScalars.contains(where: isTerminalControl) else { return s }
    var out = String.UnicodeScalarView()
    for scalar in s.unicodeScalars {
        if isTerminalControl(scalar) {
            out.append(contentsOf: escape(scalar).unicodeScalars)
        } else {
            out.append(scalar)
        }
    }
    return String(out)
}

/// `s` between double quotes, for a peer's text inside a line: `"` and `\` escaped with a
/// backslash and every `isTerminalControl` scalar as `escapedForTerminal` writes it, so that the
/// quoted text ends where its closing quote is and reads back unambiguously.
public func quotedForTerminal(_ s: String) -> String {
    "\"" + escapedForQuotes(s) + "\""
}

/// What `quotedForTerminal` puts between its quotes (for a line that writes the quotes itself).
public func escapedForQuotes(_ s: String) -> String {
    guard s.unicodeScalars.contains(where: { $0 == "\"" || $0 == "\\" || isTerminalControl($0) }) else { return s }
    var out = String.UnicodeScalarView()
    for scalar in s.unicodeScalars {
        switch scalar {
        case "\"": out.append(contentsOf: "\\\"".unicodeScalars)
        case "\\": out.append(contentsOf: "\\\\".unicodeScalars)
        case _ where isTerminalControl(scalar): out.append(contentsOf: escape(scalar).unicodeScalars)
        default: out.append(scalar)
        }
    }
    return String(out)
}

/// Compact JSON text (as an encoder writes it, on one line) with every `isTerminalControl`
/// scalar still raw in it written as a `\uXXXX` escape: U+2028 and U+2029 (which JSON allows raw
/// but JavaScript before ES2019 and many line readers do not), DEL, C1 and the bidi controls,
/// which JSON allows raw but a terminal acts on. Outside its strings compact JSON holds none of
/// them, and inside a string the escape decodes to the same scalar: the JSON means what it
/// meant. (The C0 controls, which JSON does not allow raw, the encoder escapes already.)
public func escapingTerminalControlsInJSON(_ json: String) -> String {
    guard json.unicodeScalars.contains(where: isTerminalControl) else { return json }
    var out = String.UnicodeScalarView()
    for scalar in json.unicodeScalars {
        if isTerminalControl(scalar) {
            out.append(contentsOf: ("\\u" + hex(scalar.value, width: 4)).unicodeScalars)
        } else {
            out.append(scalar)
        }
    }
    return String(out)
}

/// The visible escape of one control scalar.
private func escape(_ scalar: Unicode.Scalar) -> String {
    switch scalar {
    case "\n": return "\\n"
    case "\r": return "\\r"
    case "\t": return "\\t"
    default: return "\\u{" + hex(scalar.value, width: 1) + "}"
    }
}

/// `value` in upper-case hexadecimal, at least `width` digits.
private func hex(_ value: UInt32, width: Int) -> String {
    let digits = String(value, radix: 16, uppercase: true)
    return String(repeating: "0", count: max(0, width - digits.count)) + digits
}
