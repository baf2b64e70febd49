/// A long-running part of a process (a thread or a set of them): started once, then stopped
/// once, by a deadline.
public protocol Service: AnyObject {
    /// What the log calls it: "mDNS advertising", "photo library indexing".
    var serviceName: String { get }
    /// Asks it to stop and waits for it until `deadline`; true when it stopped in time (its
    /// threads are then out of every C library).
    func stop(until deadline: Instant) -> Bool
}

/// The services a process started, in the order it started them, stopped in one place in the
/// reverse order: what started last (and may use what started before it) stops first.
public final class Services {
    private var started: [(service: any Service, within: Duration)] = []

    /// None started yet.
    public init() {}

    /// Records a service that has started; when its turn to stop comes it has `within` to do so.
    public func add(_ service: any Service, stopWithin within: Duration) { started.append((service, within)) }

    /// The services, in the order they started.
    public var names: [String] { started.map(\.service.serviceName) }

    /// Stops every service, the last started first, each given its own time from when its turn
    /// comes; returns the names of those that did not stop in time, in the order they were
    /// stopped. A service is stopped once: a second call stops nothing.
    @discardableResult
    public func stopAll() -> [String] {
        var late: [String] = []
        while let (service, within) = started.popLast() {
            if !service.stop(until: .now + within) { late.append(service.serviceName) }
        }
        return late
    }
}
