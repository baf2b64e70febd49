/// A setting of ptkd by name: its long flag (`--dir`) and configuration-file key (`dir = …`).
/// `DaemonOptions.settings` declares each once.
public enum DaemonSetting: String, Sendable, CaseIterable {
    case directory = "dir", stateDirectory = "state-dir", plaintext, senders, library
    case thumbnailMaxMegapixels = "thumbnail-max-megapixels"
    case localSend = "localsend", localSendPort = "localsend-port"
    case localSendPIN = "localsend-pin", localSendPINFile = "localsend-pin-file"
    case web, webPort = "web-port", types, localSendTypes = "localsend-types", layout, duplicates
    case onSaved = "on-saved", onSavedTimeout = "on-saved-timeout", port, listen, name, window
    case maxFileSize = "max-file-size", maxSessions = "max-sessions", maxSessionsPerAddress = "max-sessions-per-address"
    case fileMode = "file-mode", minFree = "min-free"
    case idleTimeout = "idle-timeout", handshakeTimeout = "handshake-timeout"
    case partialMaxAge = "partial-max-age", mdns, noMDNS = "no-mdns"
}
