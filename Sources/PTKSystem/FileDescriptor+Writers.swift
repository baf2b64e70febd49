import Glibc

extension FileDescriptor {
    /// Whether any process has this file open for writing (issue 56: a file in an inbox is not
    /// taken while its writer still has it open), asked by taking a read lease and letting it
    /// go at once: the kernel refuses a read lease (EAGAIN) while the file is open for writing
    /// by anyone, this process included (a writable shared mapping counts too, as it holds
    /// the file open). True: someone has it open for writing. False: nobody has, at that
    /// instant. Nil: the kernel cannot tell us (EACCES: the file is not ours and the process
    /// lacks CAP_LEASE; EINVAL: not a regular file, or a file system without leases, such as
    /// NFS, FUSE and SMB mounts; any other failure), or this descriptor is not open for reading
    /// only (a descriptor open to write is a writer itself: it would always say true).
    ///
    /// Open the file with `.readOnly`, and keep no descriptor of this process open on it for
    /// writing: a writer in this process is seen like any other. A lease is per open file and
    /// needs the caller to own the file (its fsuid the file's owner) or hold CAP_LEASE; ptkd
    /// run as its service user sees the writers of the files it owns only.
    ///
    /// While the lease is held (two system calls), another process opening the file to write
    /// waits for it to be let go: a few microseconds; one opening with O_NONBLOCK fails with
    /// EWOULDBLOCK instead, and retries if it is a program that takes leases itself (Samba).
    /// The kernel tells the holder of a lease that another wants the file with SIGIO, whose
    /// default action ends the process: before the first lease this ignores SIGIO, unless the
    /// program handles it already (children started by `Child.spawn` and `runAndWait` get
    /// every signal back at its default). The corresponding C function is `fcntl` with
    /// F_SETLEASE (F_RDLCK, then F_UNLCK).
    public func hasWritersVisible() -> Bool? {
        let mode = fcntl(rawValue, F_GETFL)
        guard mode >= 0, mode & O_ACCMODE == O_RDONLY else { return nil }
        _ = leaseBreakSignalIgnored
        // Not through the funnel: its EAGAIN pauses would wait for the writers; here EAGAIN is the answer.
        while true {
            if fcntl(rawValue, setLease, Int32(F_RDLCK)) == 0 {
                _ = fcntl(rawValue, setLease, Int32(F_UNLCK))
                return false
            }
            switch errno {
            case EINTR: continue
            case EAGAIN: return true
            default: return nil
            }
        }
    }
}

/// F_SETLEASE, which the Glibc overlay does not export (a GNU extension).
private let setLease: Int32 = 1024

/// SIGIO set to be ignored when it is at its default (which ends the process), once, before
/// the first lease: the kernel sends it to a lease's holder when another process opens the
/// file in the instant the lease is held. A handler the program installed is left as it is.
private let leaseBreakSignalIgnored: Bool = {
    var current = sigaction()
    guard sigaction(SIGIO, nil, &current) == 0 else { return false }
    let isDefault = current.sa_flags & SA_SIGINFO == 0 && current.__sigaction_handler.sa_handler == nil
    guard isDefault else { return false }
    var ignore = sigaction()
    ignore.__sigaction_handler.sa_handler = SIG_IGN
    sigemptyset(&ignore.sa_mask)
    return sigaction(SIGIO, &ignore, nil) == 0
}()
