import PTKVocabulary

/// What the LocalSend door needs of ptkd's configuration, and nothing else (issue 55): made
/// once where the door is built, `LocalSendSettings(configuration)`. Its fields are named as
/// `DaemonConfiguration` names them.
public struct LocalSendSettings: Sendable, Equatable {
    /// The receiver's name, which apps show (`DeviceInfo.alias`) and its certificate carries.
    public var name: String
    /// Addresses to listen on; empty means every IPv6 and IPv4 address.
    public var listen: [String]
    /// The door's TCP port; 0 picks a free port.
    public var localSendPort: UInt16
    /// The receiver's other doors' ports (protocol v1's, the web's): discovery takes an
    /// announcement from one of its own ports for its own.
    public var port: UInt16
    /// The web door's port (see `port`).
    public var webPort: UInt16
    /// A PIN apps must give, or nil.
    public var localSendPIN: String?
    /// Its certificate (RSA) and key.
    public var localSendIdentityDirectory: String
    /// A connection silent this long is closed.
    public var idleTimeout: Duration
    /// The largest photo accepted, in bytes.
    public var maxFileSize: Int64
    /// The types kept, in `PhotoType`'s order.
    public var types: [PhotoType]
    /// Who may send: any app, or those whose certificate is on the trust list.
    public var senders: DaemonConfiguration.SenderPolicy

    /// The LocalSend door's part of `configuration`.
    public init(_ configuration: DaemonConfiguration) {
        name = configuration.name
        listen = configuration.listen
        localSendPort = configuration.localSendPort
        port = configuration.port
        webPort = configuration.webPort
        localSendPIN = configuration.localSendPIN
        localSendIdentityDirectory = configuration.localSendIdentityDirectory
        idleTimeout = configuration.idleTimeout
        maxFileSize = configuration.maxFileSize
        types = configuration.types
        senders = configuration.senders
    }

    /// `types`' media types, sorted, as the logs name them.
    public var mediaTypes: [String] { types.map(\.mediaType).sorted() }
}
