import PTKSystem

/// Shutdown as its own signal, distinct from errors: set once, seen by every session.
public final class ShutdownSignal: @unchecked Sendable {
    // `requested` is guarded by `lock`; the pipe is thread-safe by itself.
    private let lock = Lock()
    private var requested = false
    /// Readable once shutdown is requested, so waiting reads wake up.
    public let pipe: WakePipe

    /// A signal not yet requested; throws when the wake pipe cannot be made.
    public init() throws(SystemError) { pipe = try WakePipe() }

    /// Whether shutdown has been requested; never goes back to false.
    public var isRequested: Bool { lock.withLock { requested } }

    /// Requests shutdown and wakes every wait on `pipe`; safe from any thread, and more than once.
    public func request() {
        lock.withLock { requested = true }
        pipe.signal()
    }
}
