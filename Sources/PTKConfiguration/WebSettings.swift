import PTKVocabulary

/// What the web door (its pages, uploads and WebDAV at /dav/) needs of ptkd's configuration,
/// and nothing else (issue 55): made once where the door is built, `WebSettings(configuration)`.
/// Its fields are named as `DaemonConfiguration` names them.
public struct WebSettings: Sendable, Equatable {
    /// The receiver's name: pages, the certificate, WebDAV's quota root.
    public var name: String
    /// Addresses to listen on; empty means every IPv6 and IPv4 address.
    public var listen: [String]
    /// The door's TCP port; 0 picks a free port.
    public var webPort: UInt16
    /// The password, links, sessions, app passwords, the certificate (`tls/`) and WebDAV's saved state (`dav/`).
    public var webDirectory: String
    /// The received-photos directory in force.
    public var effectiveDirectory: String
    /// Whether the library is kept (the gallery needs it).
    public var library: Bool
    /// A connection silent this long is closed.
    public var idleTimeout: Duration
    /// The largest photo accepted, in bytes.
    public var maxFileSize: Int64
    /// Free bytes to keep on the received-photos file system; an upload that would eat into them is refused.
    public var minFree: Int64
    /// The types kept, in `PhotoType`'s order.
    public var types: [PhotoType]

    /// The web door's part of `configuration`.
    public init(_ configuration: DaemonConfiguration) {
        name = configuration.name
        listen = configuration.listen
        webPort = configuration.webPort
        webDirectory = configuration.webDirectory
        effectiveDirectory = configuration.effectiveDirectory
        library = configuration.library
        idleTimeout = configuration.idleTimeout
        maxFileSize = configuration.maxFileSize
        minFree = configuration.minFree
        types = configuration.types
    }
}
