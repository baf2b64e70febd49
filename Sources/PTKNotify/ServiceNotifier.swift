import CSystemd

/// Tells systemd about ptkd's state through sd_notify. Does nothing when NOTIFY_SOCKET is
/// not set (not started by systemd with Type=notify).
public enum ServiceNotifier {
    /// Sends `READY=1` with a status line. The corresponding C function is `sd_notify`.
    public static func ready(status: String) { send("READY=1\nSTATUS=\(status)") }
    /// Sends a `STATUS=` line.
    public static func status(_ text: String) { send("STATUS=\(text)") }
    /// Sends `STOPPING=1` with a status line.
    public static func stopping(status: String) { send("STOPPING=1\nSTATUS=\(status)") }

    private static func send(_ message: String) {
        _ = sd_notify(0, message)
    }
}
