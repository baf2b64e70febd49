import Glibc

/// A file mapped read-only into memory, so its bytes can be hashed and sent without first being
/// copied into a buffer of ours. Reading a page past the file's end (a file truncated while
/// mapped) raises SIGBUS: a program that maps files calls `exitOnBusError` first.
///
/// The mapping ends when the object goes, which in an optimised build may be right after its
/// last use, even inside the function that holds it: so its bytes are lent out only within
/// `withBytes`, which keeps the object alive until its body returns.
public final class MappedFile: @unchecked Sendable {
    // Immutable after init; unmapped once, in deinit.
    private let bytes: UnsafeRawBufferPointer

    /// The mapped length.
    public var count: Int { bytes.count }

    /// Maps the first `length` bytes of `file` (which may be closed afterwards).
    /// The corresponding C function is `mmap`.
    public init(_ file: FileDescriptor, length: Int) throws(SystemError) {
        guard length > 0 else {
            bytes = UnsafeRawBufferPointer(start: nil, count: 0)
            return
        }
        let p = mmap(nil, length, PROT_READ, MAP_SHARED, file.rawValue, 0)
        guard let p, p != MAP_FAILED else { throw SystemError(call: "mmap", errno: errno) }
        bytes = UnsafeRawBufferPointer(start: p, count: length)
    }

    deinit {
        if let base = bytes.baseAddress { munmap(UnsafeMutableRawPointer(mutating: base), bytes.count) }
    }

    /// Calls `body` with the mapped bytes of `range` (within `0..<count`), the mapping kept
    /// until `body` returns.
    public func withBytes<R, E: Error>(in range: Range<Int>, _ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E)
        -> R
    {
        precondition(range.lowerBound >= 0 && range.upperBound <= bytes.count, "range outside the mapping")
        defer { withExtendedLifetime(self) {} }
        return try body(UnsafeRawBufferPointer(rebasing: bytes[range]))
    }

    /// Maps the pages of `range` in now, one call instead of a page fault per 64 KiB, and
    /// reports a range that is no longer in the file (EFAULT) as an error instead of a SIGBUS
    /// later. Where the kernel cannot (before Linux 5.14) it only asks for read-ahead.
    /// The corresponding C function is `madvise` (MADV_POPULATE_READ, MADV_WILLNEED).
    public func prepare(_ range: Range<Int>) throws(SystemError) {
        guard let base = bytes.baseAddress, !range.isEmpty else { return }
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        let start = range.lowerBound / page * page
        let p = UnsafeMutableRawPointer(mutating: base + start)
        let count = range.upperBound - start
        if madvise(p, count, 22 /* MADV_POPULATE_READ */) == 0 { return }
        if errno == EINVAL || errno == ENOSYS {
            _ = madvise(p, count, MADV_WILLNEED)
            return
        }
        throw SystemError(call: "madvise", errno: errno)
    }
}

nonisolated(unsafe) private var busErrorMessage: UnsafeMutableBufferPointer<UInt8> = .init(start: nil, count: 0)
nonisolated(unsafe) private var busErrorExitCode: CInt = 1

/// SIGBUS (a mapped file shrank under the program) ends the process with `code` after writing
/// `message` to standard error, instead of a crash and a core dump.
public func exitOnBusError(message: String, code: Int32) {
    busErrorMessage = signalHandlerLine(message)
    busErrorExitCode = code
    var action = sigaction()
    action.__sigaction_handler.sa_handler = { _ in
        _ = write(2, busErrorMessage.baseAddress, busErrorMessage.count)
        _exit(busErrorExitCode)
    }
    sigemptyset(&action.sa_mask)
    sigaction(SIGBUS, &action, nil)
}
