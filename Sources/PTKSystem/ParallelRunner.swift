import Glibc

/// Runs `count` calls on up to `limit` threads at once (the caller's included), threads started
/// as first needed in `group` (named `name-0`, `name-1`...) and kept for later runs until `stop`.
/// A pool for work done in parallel and waited for (the store's flushes), beside `ThreadGroup`.
public final class ParallelRunner: @unchecked Sendable {
    private let name: String
    private let limit: Int
    private unowned let group: ThreadGroup
    // Everything below is guarded by `state`.
    private let state = ConditionLock()
    private var work: (@Sendable (Int) throws(SystemError) -> Void)?
    private var next = 0
    private var count = 0
    private var remaining = 0
    private var failures: [SystemError?] = []
    private var helpers = 0
    private var stopped = false

    /// A runner of up to `limit` threads (at least 1: the caller's), started in `group`, which
    /// the owner joins after `stop`.
    public init(name: String, limit: Int, group: ThreadGroup) {
        self.name = name
        self.limit = max(1, limit)
        self.group = group
    }

    /// Runs `body(0..<count)`, returns each call's error (nil: it succeeded). Runs from several
    /// threads take turns.
    public func run(_ count: Int, _ body: @escaping @Sendable (Int) throws(SystemError) -> Void) -> [SystemError?] {
        runLock.withLock { runAlone(count, body) }
    }

    private let runLock = Lock()

    private func runAlone(_ count: Int, _ body: @escaping @Sendable (Int) throws(SystemError) -> Void) -> [SystemError?]
    {
        guard count > 1 else {
            guard count == 1 else { return [] }
            do throws(SystemError) {
                try body(0)
                return [nil]
            } catch { return [error] }
        }
        let wanted = min(limit, count) - 1
        let toStart: Int = state.withLock {
            work = body
            next = 0
            self.count = count
            remaining = count
            failures = Array(repeating: nil, count: count)
            state.broadcast()
            let more = stopped ? 0 : max(0, wanted - helpers)
            helpers += more
            return more
        }
        for n in 0..<toStart {
            do throws(SystemError) {
                try group.start(name: "\(name)-\(n)") { [self] in helper() }
            } catch {
                // Fewer threads: the others (and this one) do the work.
                state.withLock { helpers -= 1 }
            }
        }
        while let i = take() { perform(i) }
        return state.withLock {
            while remaining > 0 { state.wait() }
            work = nil
            return failures
        }
    }

    /// Ends the helper threads once they are idle (the group joins them); later runs use the
    /// caller's thread and the helpers still there.
    public func stop() {
        state.withLock {
            stopped = true
            state.broadcast()
        }
    }

    private func take() -> Int? {
        state.withLock {
            guard work != nil, next < count else { return nil }
            next += 1
            return next - 1
        }
    }

    private func perform(_ i: Int) {
        let body = state.withLock { work! }
        var failure: SystemError?
        do throws(SystemError) { try body(i) } catch { failure = error }
        state.withLock {
            failures[i] = failure
            remaining -= 1
            if remaining == 0 { state.broadcast() }
        }
    }

    private func helper() {
        while true {
            let i: Int? = state.withLock {
                while !stopped && (work == nil || next >= count) { state.wait() }
                if stopped { return nil }
                next += 1
                return next - 1
            }
            guard let i else { return }
            perform(i)
        }
    }
}
