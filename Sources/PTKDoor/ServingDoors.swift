import PTKSystem

/// The doors and their connections as one service, stopped after everything that depends on
/// them: stopping it closes every door (`Door.stop`: no more connections accepted) and waits
/// for the connections' threads to end (each answers its door's "shutting down" at its next
/// boundary, told by the shutdown signal).
public final class ServingDoors: Service {
    private let doors: [any Door]
    private let threads: ThreadGroup

    /// `doors`, whose connections run on `threads`.
    public init(_ doors: [any Door], threads: ThreadGroup) {
        self.doors = doors
        self.threads = threads
    }

    /// "sessions", as the log names it when it is late to stop.
    public var serviceName: String { "sessions" }

    /// Closes every door, then joins the connections' threads until `deadline`.
    public func stop(until deadline: Instant) -> Bool {
        for door in doors { door.stop() }
        return threads.join(until: deadline)
    }
}
