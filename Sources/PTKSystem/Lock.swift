import Glibc

/// A pthread mutex. (ThreadSanitizer reports false races on Synchronization.Mutex here.)
public final class Lock: @unchecked Sendable {
    // The mutex is allocated once and only used through pthread calls.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    /// An unlocked mutex, allocated for the life of the lock.
    public init() {
        mutex = .allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` with the mutex held.
    public func withLock<R>(_ body: () throws -> R) rethrows -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }
}

/// A counting semaphore. The corresponding C functions are `sem_post` and `sem_wait`.
public final class Semaphore: @unchecked Sendable {
    // The semaphore is allocated once and only used through sem_* calls.
    private let sem: UnsafeMutablePointer<sem_t>

    /// A semaphore starting at `value` (0: the first `wait` blocks until a `signal`), private to this process.
    public init(value: UInt32 = 0) {
        sem = .allocate(capacity: 1)
        sem_init(sem, 0, value)
    }

    deinit {
        sem_destroy(sem)
        sem.deallocate()
    }

    /// Adds one, waking a waiter if any.
    public func signal() { sem_post(sem) }

    /// Takes one, blocking until there is one; an interrupting signal does not end the wait.
    public func wait() {
        while sem_wait(sem) != 0 && errno == EINTR {}
    }
}

/// A mutex with a condition variable: `wait` releases the mutex until another thread calls
/// `broadcast`. The corresponding C functions are `pthread_mutex_*` and `pthread_cond_*`.
public final class ConditionLock: @unchecked Sendable {
    // Allocated once and only used through pthread calls.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let cond: UnsafeMutablePointer<pthread_cond_t>

    /// An unlocked mutex and its condition variable, allocated for the life of the lock.
    public init() {
        mutex = .allocate(capacity: 1)
        cond = .allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        // Deadlines are on the monotonic clock, like `Instant`.
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(cond, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(cond)
        pthread_mutex_destroy(mutex)
        cond.deallocate()
        mutex.deallocate()
    }

    /// Runs `body` with the mutex held.
    public func withLock<R>(_ body: () throws -> R) rethrows -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }

    /// With the mutex held (inside `withLock`): releases it until `broadcast`, or until
    /// `deadline` when given, and takes it again. Returns false when the deadline passed.
    /// Callers re-check their condition in a loop: a wake-up may be spurious.
    @discardableResult
    public func wait(until deadline: Instant? = nil) -> Bool {
        guard let deadline else {
            pthread_cond_wait(cond, mutex)
            return true
        }
        var ts = deadline.timespecValue
        return pthread_cond_timedwait(cond, mutex, &ts) != ETIMEDOUT
    }

    /// Wakes every thread in `wait`.
    public func broadcast() { pthread_cond_broadcast(cond) }
}
