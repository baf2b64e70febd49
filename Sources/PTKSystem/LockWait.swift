import Glibc

/// How long a process waits for a lock another process holds (a lock file's flock, the photo
/// index's SQLite locks), and whom it tells that it waits. Every such wait is bounded: a
/// holder that never lets go (a process stopped or stuck, or a service user holding the lock
/// on purpose) makes the waiter fail saying what it waited for, never hang.
public struct LockPatience: Sendable {
    /// The longest wait; then the waiter gives up (`LockTimeoutError` for a lock file).
    public var limit: Duration
    /// After this long `waiting` is told, once, what is waited for.
    public var announceAfter: Duration
    /// Told once a wait lasts `announceAfter` (ptk writes it to standard error); nil: nobody
    /// (ptkd, whose error line says it when the wait fails).
    public var waiting: (@Sendable (String) -> Void)?

    /// A patience of `limit`, told to `waiting` (nobody by default) once a wait lasts `announceAfter` (1 s by default).
    public init(limit: Duration, announceAfter: Duration = .seconds(1), waiting: (@Sendable (String) -> Void)? = nil) {
        self.limit = limit
        self.announceAfter = announceAfter
        self.waiting = waiting
    }

    /// A lock file's: 10 s, told to nobody. ptkd holds its lock files for a read-modify-write of
    /// a small file, well under a second.
    public static let lockFile = LockPatience(limit: .seconds(10))

    /// The whole seconds of `limit`, for messages.
    public var limitText: String {
        let seconds = limit.components.seconds
        return seconds == 1 ? "1 second" : "\(seconds) seconds"
    }
}

/// A lock file another process held longer than the waiter's `LockPatience` allowed.
public struct LockTimeoutError: Error, CustomStringConvertible, Sendable {
    /// The lock file.
    public var path: String
    /// What the lock guards, for the message ("the trust lists").
    public var guards: String
    /// The patience that ran out, for its limit in the message.
    public var patience: LockPatience

    /// The lock file at `path`, guarding `guards`, waited for as long as `patience` allowed.
    public init(path: String, guards: String, patience: LockPatience) {
        self.path = path
        self.guards = guards
        self.patience = patience
    }

    /// The message for the user: what was not changed, and how to see who holds the lock.
    public var description: String {
        "\(path): another process held this lock (on \(guards)) for \(patience.limitText), so nothing was changed; "
            + "ptkd holds it for well under a second: try again, and if it persists see who holds it (fuser -v \(path))"
    }
}

extension FileDescriptor {
    /// Takes an exclusive flock on this open lock file (`path` names it, `guards` says what it
    /// guards), waiting at most `patience.limit`: tried without blocking, then again after
    /// pauses growing from 5 to 100 ms; `patience.waiting` is told once the wait lasts
    /// `announceAfter`. Throws `LockTimeoutError` when the limit passes. The corresponding C
    /// function is `flock` with `LOCK_EX | LOCK_NB`.
    public func lockExclusively(path: String, guards: String, patience: LockPatience) throws {
        let start = Instant.now
        var pause = Duration.milliseconds(5)
        var told = false
        while true {
            do {
                if try tryLock() { return }
            } catch {
                throw SystemError(call: "flock", object: path, errno: error.errno)
            }
            let waited = Instant.now - start
            if waited >= patience.limit { throw LockTimeoutError(path: path, guards: guards, patience: patience) }
            if !told && waited >= patience.announceAfter, let waiting = patience.waiting {
                told = true
                waiting(
                    "waiting for the lock \(path) (on \(guards)), which another process holds; giving up after \(patience.limitText)"
                )
            }
            sleep(for: min(pause, patience.limit - waited))
            pause = min(pause * 2, .milliseconds(100))
        }
    }
}

/// A file on which another process held a lease (`fcntl` F_SETLEASE) longer than the
/// waiter's `LockPatience` allowed.
public struct LeaseTimeoutError: Error, CustomStringConvertible, Sendable {
    /// The file.
    public var path: String
    /// The patience that ran out, for its limit in the message.
    public var patience: LockPatience

    /// The file at `path`, waited for as long as `patience` allowed.
    public init(path: String, patience: LockPatience) {
        self.path = path
        self.patience = patience
    }

    /// The message for the user: nothing was done, and how to see who holds the lease.
    public var description: String {
        "\(path): another process holds a lease on it (fcntl F_SETLEASE) and did not let it go within \(patience.limitText), so nothing was done; "
            + "ptkd takes none: see who holds it (fuser -v \(path); /proc/locks says LEASE)"
    }
}

extension FileDescriptor {
    /// Opens `name` (one component) in this directory with `flags`, O_NONBLOCK and O_NOFOLLOW
    /// (`path` names it in errors), waiting as `patience` says (counted from `start`) while
    /// another process holds a lease on it. A lease (F_SETLEASE), which a file's owner may
    /// take, makes an open that conflicts with it (one to write, for a read lease; any, for a
    /// write lease) wait silently until its holder lets go or the kernel breaks it after
    /// `fs.lease-break-time` (45 s by default), and a holder told to let go may take it again;
    /// with O_NONBLOCK the open fails at once with EWOULDBLOCK instead (the kernel still tells
    /// the holder to let go). That open is tried again after pauses growing from 5 to 100 ms;
    /// `patience.waiting` is told once the wait lasts `announceAfter`; `LeaseTimeoutError`
    /// once it lasts `limit`. Any other failure is a `SystemError` naming `path`. The
    /// corresponding C function is `openat`.
    public func openWaitingOutLeases(
        _ name: String, flags: OpenFlags, mode: FileMode = 0o644, path: String,
        patience: LockPatience, since start: Instant = .now
    ) throws -> FileDescriptor {
        var pause = Duration.milliseconds(5)
        var told = false
        let all = flags.rawValue | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC
        while true {
            // Not through the funnel: its EAGAIN retries would wait without a word.
            let fd = openat(rawValue, name, all, mode_t(mode))
            if fd >= 0 { return FileDescriptor(rawValue: fd) }
            let code = errno
            if code == EINTR { continue }
            guard code == EWOULDBLOCK else { throw SystemError(call: "open", object: path, errno: code) }
            let waited = Instant.now - start
            if waited >= patience.limit { throw LeaseTimeoutError(path: path, patience: patience) }
            if !told && waited >= patience.announceAfter, let waiting = patience.waiting {
                told = true
                waiting(
                    "waiting for \(path), on which another process holds a lease (fcntl F_SETLEASE; it has been told to let go); giving up after \(patience.limitText)"
                )
            }
            sleep(for: min(pause, patience.limit - waited))
            pause = min(pause * 2, .milliseconds(100))
        }
    }
}
