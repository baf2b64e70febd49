import PTKSystem
import PTKVocabulary

/// ptkd's log: one line per event on standard error (journald adds time stamps under systemd).
/// Lines go through a writer thread with a bounded queue: a journal that stops reading costs
/// log lines (counted, and said so once it reads again), never a stalled session.
///
/// Every message is one line whatever it holds: a newline, a carriage return, an escape
/// sequence, a C1 control, a line separator or a bidi override that reached it (a peer's file
/// name, alias, media type or message, a hook's output) is written as a visible escape
/// (`escapedForTerminal`), so no text from elsewhere can forge a line of its own ("warning: ...")
/// or act on the terminal or reader showing the journal. Peer-given text is also quoted and
/// escaped where it enters a line (`quotedForTerminal`), which this leaves as it is.
public enum Log {
    private static let writer = BackgroundLineWriter(fd: .standardError, capacity: 1000)

    /// Writes one line.
    public static func info(_ message: String) { writer.write(escapedForTerminal(message)) }
    /// Writes one line prefixed with "warning: ".
    public static func warning(_ message: String) { writer.write("warning: " + escapedForTerminal(message)) }
    /// Writes one line prefixed with "error: ": something went wrong that ptkd cannot undo, and
    /// a person should look at (a photo changed under the library).
    public static func error(_ message: String) { writer.write("error: " + escapedForTerminal(message)) }
    /// Waits until the queued lines are written, or `deadline` passes (before the process exits).
    public static func flush(until deadline: Instant) { writer.flush(until: deadline) }
    /// Writes the queued lines (until `deadline`) and ends the writing thread; lines logged
    /// later are written at once, by the thread that logs them.
    public static func stop(until deadline: Instant) { writer.stop(until: deadline) }
}
