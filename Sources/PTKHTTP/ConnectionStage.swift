/// Where a connection is in its life, for deciding whom a newcomer may displace when every
/// slot is taken. Only `.working` connections are doing what the receiver is for; the others
/// cost a slot without having shown they are a sender or a browser with a right to it.
public enum ConnectionStage: Sendable, Equatable {
    /// Accepted: its handshake (TLS, and for protocol v1 its admission) is not finished.
    case opening
    /// HTTP between requests (keep-alive).
    case idle
    /// HTTP: a request whose sender has not shown its right yet (a login, a prepare-upload, a
    /// request without a session), or whose body is still coming.
    case unproven
    /// A v1 session past its handshake and admission, an authorised HTTP request.
    case working

    /// Whether a newcomer may displace the connection when every slot is taken: any but `.working`.
    public var isPreemptible: Bool { self != .working }
}
