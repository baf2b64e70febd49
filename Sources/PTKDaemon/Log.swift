import PTKSystem

/// ptkd's log: one line per event on standard error (journald adds time stamps under systemd).
public enum Log {
    /// Writes one line.
    public static func info(_ message: String) { writeToStandardError(message) }
    /// Writes one line prefixed with "warning: ".
    public static func warning(_ message: String) { writeToStandardError("warning: " + message) }
}

