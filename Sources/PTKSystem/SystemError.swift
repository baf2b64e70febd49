import Glibc

/// A failed system call: which call, on what, and the errno it left.
public struct SystemError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The C function that failed.
    public var call: String
    /// The path or address it worked on, if any.
    public var object: String?
    /// The errno value.
    public var errno: CInt

    /// A failure of `call` on `object` (a path or address; nil for none) with `errno`.
    public init(call: String, object: String? = nil, errno: CInt) {
        self.call = call
        self.object = object
        self.errno = errno
    }

    /// The C library's text for the errno ("No such file or directory"); for inotify_add_watch's
    /// ENOSPC, which is no full disk, what it is.
    public var reason: String {
        if isOutOfInotifyWatches { return "out of inotify watches (fs.inotify.max_user_watches)" }
        return String(cString: strerror(errno))
    }

    /// "open '/srv/photos': Permission denied", or without the object when there is none.
    public var description: String {
        if let object { return "\(call) '\(object)': \(reason)" }
        return "\(call): \(reason)"
    }

    /// True for "the file system is full" (ENOSPC) and "over quota" (EDQUOT); not for the
    /// ENOSPC of inotify_add_watch, which means out of watches (`isOutOfInotifyWatches`).
    public var isNoSpace: Bool { (errno == ENOSPC && !isOutOfInotifyWatches) || errno == EDQUOT }
}

/// The syscall funnel: runs `body` until it does not fail with EINTR or EAGAIN, and turns -1
/// into a `SystemError` that names the call and the object. Errno is captured at once. EINTR
/// (a signal arrived) is retried at once; EAGAIN (a resource briefly unavailable: a network
/// file system, a lock, memory) after a pause, for up to `maxWouldBlockWait` in all. Neither is
/// an answer for a file or directory call, so neither reaches a sender. The calls whose EAGAIN
/// means "would block" (non-blocking sockets and pipes) do not come through here.
@inline(__always)
public func syscall<T: BinaryInteger>(
    _ call: String, _ object: @autoclosure () -> String? = nil,
    retryOnInterrupt: Bool = true, _ body: () -> T
) throws(SystemError) -> T {
    var pauses = 0
    while true {
        let result = body()
        if result != -1 { return result }
        let err = Glibc.errno
        if err == EINTR && retryOnInterrupt { continue }
        if err == EAGAIN && pauses < maxWouldBlockPauses {
            pauses += 1
            var pause = timespec(tv_sec: 0, tv_nsec: 1_000_000)
            var left = timespec()
            while nanosleep(&pause, &left) != 0 && errno == EINTR { pause = left }
            continue
        }
        throw SystemError(call: call, object: object(), errno: err)
    }
}

/// How many 1 ms pauses the funnel makes for EAGAIN before it gives up: 2 s.
let maxWouldBlockPauses = 2000

extension String {
    /// The string with its first letter lower-cased: a C library message ("Connection
    /// refused") as the middle of a sentence.
    public var lowercasedFirst: String { prefix(1).lowercased() + dropFirst() }
}
