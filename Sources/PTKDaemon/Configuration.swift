import PTKProtocol
import PTKSystem

/// Everything ptkd can be told, parsed and checked (PTKDaemonCommandLine reads it from flags
/// and the configuration file; each setting and its default are declared there once).
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
}

func getuidIsRoot() -> Bool { geteuidValue() == 0 }
