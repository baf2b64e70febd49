import PTKTime

/// The body of the request being answered, as a stream the connection keeps count of: a body
/// read to its end lets the connection carry the next request; one left unread (a refusal
/// before a large upload) closes it after the answer (`HTTPConnection.send`). Each read waits
/// at most the connection's `idle`.
public struct RequestBody {
    let connection: HTTPConnection

    /// Bodies of requests that need none (a GET may have one, a refused request too) are read
    /// and dropped up to this size before the answer, keeping the connection; beyond it, 413.
    public static let ignoredBodyLimit = 64 << 10

    /// Whether bytes of the body are still to come (false for a request without one).
    public var isPending: Bool { connection.bodyPending }

    /// The whole body, at most `limit` bytes (413 beyond), at `minimumRate` bytes a second after
    /// `HTTPConnection.bodyGrace`.
    public func collect(limit: Int, minimumRate: Int = HTTPConnection.bodyMinimumRate) throws(HTTPError) -> [UInt8] {
        let idle = connection.idle
        return try connection.readBody(limit: limit, deadline: { Instant.now + idle }, minimumRate: minimumRate)
    }

    /// Reads and drops the body, at most `limit` bytes (413 beyond): a refusal that keeps the
    /// connection.
    public func discard(limit: Int) throws(HTTPError) { _ = try collect(limit: limit) }

    /// Passes the body to `sink` piece by piece (see `HTTPConnection.readBody(deadline:sink:)`).
    public func stream(
        minimumRate: Int = HTTPConnection.bodyMinimumRate, sink: (UnsafeRawBufferPointer) -> Bool,
        refusal: () -> (Int, String) = { (400, "body refused") }
    ) throws(HTTPError) {
        let idle = connection.idle
        try connection.readBody(
            deadline: { Instant.now + idle }, minimumRate: minimumRate, sink: sink, refusal: refusal)
    }
}
