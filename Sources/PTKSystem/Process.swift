import Glibc

/// The effective user id. The corresponding C function is `geteuid`.
public func geteuidValue() -> UInt32 { geteuid() }

/// The whole contents of a small text file (at most 1 MiB).
public func readTextFile(_ path: String) throws(SystemError) -> String {
    String(decoding: try readFileBytes(path), as: UTF8.self)
}

/// Ends the process with `code`, running the C library's exit handlers. The corresponding C
/// function is `exit`.
public func exitProcess(_ code: Int32) -> Never { exit(code) }

/// Ends the process with `code` at once, without the C library's exit handlers (which would tear
/// down OpenSSL under threads that may still use it: OpenSSL's own clean-up of a thread runs as
/// the thread ends, after the thread has said it is done). What `print` buffered is written
/// first. The corresponding C functions are `fflush` and `_exit`.
public func exitProcessNow(_ code: Int32) -> Never {
    fflush(nil)
    _exit(code)
}

/// True when `path` exists. The corresponding C function is `access`.
public func fileExists(_ path: String) -> Bool { access(path, F_OK) == 0 }

/// Writing to a connection the peer closed is an error (EPIPE), not a signal that kills the
/// process. Every program that writes to sockets calls this first.
public func ignoreBrokenPipeSignal() { signal(SIGPIPE, SIG_IGN) }

/// Ends this process by `signal` at its default action (as if it had not been held), else
/// with status 128 + `signal`: how a program interrupted after cleaning up ends, so that its
/// caller (a shell) sees the interruption. The corresponding C functions are `signal` and `raise`.
public func endBySignal(_ signal: Int32) -> Never {
    _ = Glibc.signal(signal, SIG_DFL)
    _ = raise(signal)
    exit(128 + signal)
}

/// `text` and a newline in memory of its own that is never freed, for a signal handler to
/// `write` (it may not allocate or touch Swift strings).
func signalHandlerLine(_ text: String) -> UnsafeMutableBufferPointer<UInt8> {
    let bytes = Array((text + "\n").utf8)
    let line = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: bytes.count)
    _ = line.initialize(from: bytes)
    return line
}

// What the SIGINT/SIGTERM handler may touch: plain integers and a buffer made beforehand
// (a signal handler can call only async-signal-safe functions: write, _exit).
nonisolated(unsafe) private var terminationWakeFD: CInt = -1
nonisolated(unsafe) private var terminationCount: sig_atomic_t = 0
nonisolated(unsafe) private var secondSignalMessage: UnsafeMutableBufferPointer<UInt8> = .init(start: nil, count: 0)
nonisolated(unsafe) private var secondSignalExitCode: CInt = 0

/// SIGINT and SIGTERM: the first makes `wake` readable (the program's own thread then shuts down
/// in order); a second ends the process at once with `secondExitCode`, after writing
/// `secondMessage` to standard error. Also unblocks both signals, which a parent may have left
/// blocked (some process launchers do): a daemon must hear them.
public func handleTerminationSignals(wake: WakePipe, secondMessage: String, secondExitCode: Int32) {
    terminationWakeFD = wake.writeEndForSignalHandler
    secondSignalMessage = signalHandlerLine(secondMessage)
    secondSignalExitCode = secondExitCode
    var action = sigaction()
    action.__sigaction_handler.sa_handler = { _ in
        terminationCount += 1
        if terminationCount == 1 {
            var b: UInt8 = 1
            // Retried when interrupted; EAGAIN: the pipe is full, so it is readable already.
            while write(terminationWakeFD, &b, 1) == -1 && errno == EINTR {}
        } else {
            _ = write(2, secondSignalMessage.baseAddress, secondSignalMessage.count)
            _exit(secondSignalExitCode)
        }
    }
    sigemptyset(&action.sa_mask)
    // Both handlers mask both signals, so the count never races with itself.
    sigaddset(&action.sa_mask, SIGINT)
    sigaddset(&action.sa_mask, SIGTERM)
    sigaction(SIGINT, &action, nil)
    sigaction(SIGTERM, &action, nil)
    var unblock = sigset_t()
    sigemptyset(&unblock)
    sigaddset(&unblock, SIGINT)
    sigaddset(&unblock, SIGTERM)
    pthread_sigmask(SIG_UNBLOCK, &unblock, nil)
}

/// True when a process `pid` exists (even if it is not ours to signal). The corresponding C
/// function is `kill` with signal 0.
public func processExists(_ pid: Int32) -> Bool {
    kill(pid, 0) == 0 || errno == EPERM
}

/// This process's id. The corresponding C function is `getpid`.
public func processID() -> Int32 { getpid() }
