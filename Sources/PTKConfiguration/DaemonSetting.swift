/// A setting of ptkd by name: its long flag (`--dir`) and configuration-file key (`dir = …`).
/// `DaemonOptions.settings` declares each once.
public enum DaemonSetting: String, Sendable, CaseIterable {
    case directory = "dir"
    case stateDirectory = "state-dir"
    case plaintext, senders, library
    case thumbnailMaxMegapixels = "thumbnail-max-megapixels"
    case localSend = "localsend"
    case localSendPort = "localsend-port"
    case localSendPIN = "localsend-pin"
    case localSendPINFile = "localsend-pin-file"
    case web
    case webPort = "web-port"
    case types
    case localSendTypes = "localsend-types"
    case layout, duplicates
    case onSaved = "on-saved"
    case onSavedTimeout = "on-saved-timeout"
    case port, listen, name, window
    case maxFileSize = "max-file-size"
    case maxSessions = "max-sessions"
    case maxSessionsPerAddress = "max-sessions-per-address"
    case fileMode = "file-mode"
    case minFree = "min-free"
    case idleTimeout = "idle-timeout"
    case handshakeTimeout = "handshake-timeout"
    case partialMaxAge = "partial-max-age"
    case mdns
    case noMDNS = "no-mdns"
    case inbox
    case dropFolder = "drop-folder"
    case inboxScanInterval = "inbox-scan-interval"
    case inboxSettle = "inbox-settle"
    case inboxMounts = "inbox-mounts"
    case inboxLinks = "inbox-links"
}
