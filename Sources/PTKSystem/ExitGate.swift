/// Work that must not be running when the process exits (the OpenSSL calls of the photo checks:
/// the C library's exit handlers tear OpenSSL down under a thread still inside it). Each piece
/// of work passes through the gate; `close` waits for those inside and holds every later one
/// at the gate for good, so that the process can exit.
public final class ExitGate: @unchecked Sendable {
    // `inside` and `closed` are guarded by `state`.
    private let state = ConditionLock()
    private var inside = 0
    private var closed = false

    /// An open gate with nobody inside.
    public init() {}

    /// Runs `body`; once the gate is closed, never returns (the thread parks until the process exits).
    public func pass<R>(_ body: () throws -> R) rethrows -> R {
        state.withLock {
            while closed { state.wait() }
            inside += 1
        }
        defer {
            state.withLock {
                inside -= 1
                if inside == 0 { state.broadcast() }
            }
        }
        return try body()
    }

    /// Closes the gate and waits until no work is inside or `deadline` passes; returns true
    /// when none is inside.
    @discardableResult
    public func close(waitingUntil deadline: Instant) -> Bool {
        state.withLock {
            closed = true
            while inside > 0 {
                if !state.wait(until: deadline) { return inside == 0 }
            }
            return true
        }
    }

    /// Work inside now.
    public var busy: Int { state.withLock { inside } }
}
