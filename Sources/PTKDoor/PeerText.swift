import PTKVocabulary

/// A peer's text (an alias, a file name) fit to stand between the double quotes of a log line:
/// its first 64 scalars, with `"` and `\` escaped and every control, line separator and bidi
/// control as a visible escape (`escapedForQuotes`).
package func clean(_ alias: String) -> String {
    escapedForQuotes(String(String.UnicodeScalarView(alias.unicodeScalars.prefix(64))))
}
