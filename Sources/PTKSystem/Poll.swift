import Glibc

/// What `poll` waits for, and what it found.
public struct PollEvents: OptionSet, Sendable {
    /// The `events`/`revents` bits as `poll` takes and gives them.
    public let rawValue: Int16
    /// Any set of poll bits.
    public init(rawValue: Int16) { self.rawValue = rawValue }
    /// POLLIN: data to read, or end of file, or a connection to accept.
    public static let readable = PollEvents(rawValue: Int16(POLLIN))
    /// POLLOUT: a write would not block.
    public static let writable = PollEvents(rawValue: Int16(POLLOUT))
    /// POLLERR: an error is pending (only in what `poll` found; never asked for).
    public static let error = PollEvents(rawValue: Int16(POLLERR))
    /// POLLHUP: the peer hung up (only in what `poll` found); reads drain what is left, then see end of file.
    public static let hangUp = PollEvents(rawValue: Int16(POLLHUP))
}

/// Waits until one of `fds` is ready for `events` or `deadline` passes; returns the
/// `revents` of each, in order. The corresponding C function is `poll`.
public func poll(_ fds: [(FileDescriptor, PollEvents)], until deadline: Instant?) throws(SystemError) -> [PollEvents] {
    var pfds = fds.map { pollfd(fd: $0.0.rawValue, events: $0.1.rawValue, revents: 0) }
    while true {
        let timeout = deadline?.pollTimeout ?? -1
        let n = Glibc.poll(&pfds, nfds_t(pfds.count), timeout)
        if n >= 0 { return pfds.map { PollEvents(rawValue: $0.revents) } }
        if errno != EINTR { throw SystemError(call: "poll", errno: errno) }
    }
}
