import Glibc

/// A pthread mutex. (ThreadSanitizer reports false races on Synchronization.Mutex here.)
public final class Lock: @unchecked Sendable {
    // The mutex is allocated once and only used through pthread calls.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

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

    public init(value: UInt32 = 0) {
        sem = .allocate(capacity: 1)
        sem_init(sem, 0, value)
    }

    deinit {
        sem_destroy(sem)
        sem.deallocate()
    }

    public func signal() { sem_post(sem) }

    public func wait() {
        while sem_wait(sem) != 0 && errno == EINTR {}
    }
}
