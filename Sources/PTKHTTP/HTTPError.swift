/// Why an HTTP exchange ended early, or what a handler refuses with: what a body read, a
/// handler and a middleware throw.
public enum HTTPError: Error {
    /// The peer closed, or the connection failed: nothing more can be said to it.
    case gone
    /// Nothing arrived in time: a partial request gets 408, an idle connection is just closed.
    case timedOut(partial: Bool)
    /// Shutdown was requested.
    case interrupted
    /// The bytes are not acceptable HTTP (a head too large, a body too long or too slow): the
    /// connection answers with this status in the door's error body, and closes.
    case refused(Int, String)
    /// The body sink said no (internal: `readBody` turns it into its refusal).
    case bodyRefused
    /// A handler's refusal: the door's error middleware answers it in its own terms (JSON, DAV
    /// XML, HTML) with this status, message and headers. Whether the connection carries on is
    /// the connection's decision (it closes when the request's body was not read).
    case status(HTTPStatus, String, headers: HTTPFields = [])
}

extension HTTPError {
    /// The message of the router's 404 (no route has the path), and of a capture its handler
    /// cannot read as the type it asks for: a door that words its own "no such page" tells it by this.
    public static let noSuchRoute = "no such route"
}
