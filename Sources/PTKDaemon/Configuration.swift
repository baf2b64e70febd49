import PTKCLI
import PTKProtocol
import PTKSystem

/// Everything ptkd can be told, from flags or from its configuration file.
public struct DaemonConfiguration: Sendable, Equatable {
    /// The received-photos directory; nil means the default (see `defaultDirectory`).
    public var directory: String?
    public var port: UInt16 = ProtocolLimits.defaultPort
    /// Addresses to listen on; empty means every IPv6 and IPv4 address.
    public var listen: [String] = []
    public var name: String = hostName()
    public var window = 64
    public var maxFileSize: Int64 = 512 << 20
    public var maxSessions = 32
    public var maxSessionsPerAddress = 8
    /// Seconds a new connection has to send HELLO.
    public var handshakeTimeout: Double = 10
    /// Permission bits of saved photos.
    public var fileMode: UInt32 = 0o644
    public var minFree: Int64 = 100 << 20
    public var idleTimeout: Double = 30
    public var mdns = true
    public var partialMaxAge: Double = 86_400

    public init() {}

    /// The default received-photos directory: `$STATE_DIRECTORY/received` under systemd,
    /// `/var/lib/ptk/received` for root, else `$XDG_DATA_HOME/ptk/received`
    /// (`~/.local/share/ptk/received`).
    public static func defaultDirectory() -> String {
        if let state = environment("STATE_DIRECTORY"), !state.isEmpty {
            // systemd may list several directories separated by colons; the first is ours.
            let first = state.split(separator: ":").first.map(String.init) ?? state
            return first + "/received"
        }
        if getuidIsRoot() { return "/var/lib/ptk/received" }
        if let xdg = environment("XDG_DATA_HOME"), xdg.hasPrefix("/") { return xdg + "/ptk/received" }
        return (environment("HOME") ?? ".") + "/.local/share/ptk/received"
    }

    /// The directory in force.
    public var effectiveDirectory: String { directory ?? Self.defaultDirectory() }

    /// The keys `apply` knows: the long flag names.
    public static let keys = ["dir", "port", "listen", "name", "window", "max-file-size", "max-sessions",
                              "min-free", "idle-timeout", "mdns", "no-mdns", "partial-max-age",
                              "max-sessions-per-address", "file-mode", "handshake-timeout"]

    /// Sets one setting from its flag name and text value (nil for a flag without value).
    public mutating func apply(_ key: String, _ value: String?) throws(UsageError) {
        let v = value ?? ""
        func bad(_ what: String) -> UsageError { UsageError("invalid value '\(v)' for \(key): \(what)") }
        switch key {
        case "dir":
            guard !v.isEmpty else { throw bad("expected a directory path") }
            directory = v
        case "port":
            guard let p = parseInteger(v, in: 0...65535) else { throw bad("expected a port number 0-65535") }
            port = UInt16(p)
        case "listen":
            guard !v.isEmpty else { throw bad("expected an IP address") }
            listen.append(v)
        case "name":
            guard !v.isEmpty, v.utf8.count <= 63 else { throw bad("expected 1 to 63 bytes") }
            name = v
        case "window":
            guard let w = parseInteger(v, in: 1...ProtocolLimits.maxWindow) else { throw bad("expected 1 to \(ProtocolLimits.maxWindow)") }
            window = w
        case "max-file-size":
            guard let s = parseSize(v), s >= 8 else { throw bad("expected a size such as 512M") }
            maxFileSize = s
        case "max-sessions":
            guard let n = parseInteger(v, in: 1...10_000) else { throw bad("expected 1 to 10000") }
            maxSessions = n
        case "max-sessions-per-address":
            guard let n = parseInteger(v, in: 1...10_000) else { throw bad("expected 1 to 10000") }
            maxSessionsPerAddress = n
        case "file-mode":
            guard let m = UInt32(v, radix: 8), m <= 0o777, m & 0o600 == 0o600 else {
                throw bad("expected octal permission bits that let the owner read and write, such as 0644")
            }
            fileMode = m
        case "min-free":
            guard let s = parseSize(v) else { throw bad("expected a size such as 100M") }
            minFree = s
        case "idle-timeout":
            guard let d = parseDuration(v), d > 0 else { throw bad("expected seconds, such as 30") }
            idleTimeout = d
        case "handshake-timeout":
            guard let d = parseDuration(v), d > 0 else { throw bad("expected seconds, such as 10") }
            handshakeTimeout = d
        case "partial-max-age":
            guard let d = parseDuration(v), d > 0 else { throw bad("expected a duration, such as 24h") }
            partialMaxAge = d
        case "no-mdns":
            mdns = false
        case "mdns":
            switch v.lowercased() {
            case "yes", "true", "on", "1": mdns = true
            case "no", "false", "off", "0": mdns = false
            default: throw bad("expected yes or no")
            }
        default:
            throw UsageError("unknown setting '\(key)'")
        }
    }

    /// Applies the `key = value` lines of a configuration file. Blank lines and lines starting
    /// with `#` are skipped. A bad line is an error naming the file and the line.
    public mutating func apply(configFile text: String, path: String) throws(UsageError) {
        var lineNumber = 0
        for raw in text.split(separator: "\n", omittingEmptySubsequences: false) {
            lineNumber += 1
            let line = String(raw).trimmingSpaces()
            if line.isEmpty || line.hasPrefix("#") { continue }
            guard let eq = line.firstIndex(of: "=") else {
                throw UsageError("\(path):\(lineNumber): expected 'key = value', got '\(line)'")
            }
            let key = String(line[..<eq]).trimmingSpaces()
            var value = String(line[line.index(after: eq)...]).trimmingSpaces()
            if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") { value = String(value.dropFirst().dropLast()) }
            guard key != "no-mdns", key != "config", Self.keys.contains(key) else {
                throw UsageError("\(path):\(lineNumber): unknown key '\(key)'")
            }
            do { try apply(key, value) } catch {
                throw UsageError("\(path):\(lineNumber): \(error.message)")
            }
        }
    }
}

func getuidIsRoot() -> Bool { geteuidValue() == 0 }
