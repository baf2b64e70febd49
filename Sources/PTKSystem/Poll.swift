import Glibc

/// What `poll` waits for, and what it found.
public struct PollEvents: OptionSet, Sendable {
    public let rawValue: Int16
    public init(rawValue: Int16) { self.rawValue = rawValue }
    public static let readable = PollEvents(rawValue: Int16(POLLIN))
    public static let writable = PollEvents(rawValue: Int16(POLLOUT))
    public static let error = PollEvents(rawValue: Int16(POLLERR))
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
