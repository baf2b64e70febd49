import CLinux
import Glibc

/// TCP socket calls. Every socket is non-blocking and close-on-exec; waiting is done with poll.
public enum Socket {
    /// Creates a listening TCP socket bound to `address`. IPv6 sockets are IPv6-only so that
    /// an IPv4 socket can share the port. The corresponding C functions are `socket`, `bind`, `listen`.
    public static func listen(on address: SocketAddress, backlog: CInt = 128) throws(SystemError) -> FileDescriptor {
        let fd = try syscall("socket", address.description) {
            socket(
                address.family, CInt(SOCK_STREAM.rawValue) | CInt(SOCK_NONBLOCK.rawValue) | CInt(SOCK_CLOEXEC.rawValue),
                0)
        }
        let sock = FileDescriptor(rawValue: fd)
        do throws(SystemError) {
            try setOption(sock, SOL_SOCKET, SO_REUSEADDR, 1)
            if address.family == AF_INET6 { try setOption(sock, CInt(IPPROTO_IPV6), IPV6_V6ONLY, 1) }
            _ = try syscall("bind", address.description) { address.withSockAddr { Glibc.bind(fd, $0, $1) } }
            _ = try syscall("listen", address.description) { Glibc.listen(fd, backlog) }
        } catch {
            sock.close()
            throw error
        }
        return sock
    }

    /// Accepts one pending connection, or nil when none is waiting.
    /// The corresponding C function is `accept4`.
    public static func accept(_ listener: FileDescriptor) throws(SystemError) -> (FileDescriptor, SocketAddress)? {
        var st = sockaddr_storage()
        var len = socklen_t(MemoryLayout<sockaddr_storage>.size)
        while true {
            // Non-blocking and close-on-exec from the start: no window in which a forked child
            // could inherit it.
            let fd = withUnsafeMutablePointer(to: &st) {
                accept4(listener.rawValue, $0, &len, CInt(SOCK_CLOEXEC.rawValue) | CInt(SOCK_NONBLOCK.rawValue))
            }
            if fd >= 0 {
                let sock = FileDescriptor(rawValue: fd)
                // Nagle's algorithm only delays small writes; the connection works without this.
                try? setOption(sock, CInt(IPPROTO_TCP), TCP_NODELAY, 1)
                return (sock, SocketAddress(storage: st, length: len))
            }
            switch errno {
            case EINTR: continue
            case EAGAIN, ECONNABORTED, EPROTO: return nil
            default: throw SystemError(call: "accept4", errno: errno)
            }
        }
    }

    /// Connects to `address`, giving up at `deadline`. The corresponding C function is `connect`.
    public static func connect(to address: SocketAddress, deadline: Instant) throws(SystemError) -> FileDescriptor {
        try connect(to: address, from: nil, deadline: deadline)
    }

    /// As `connect(to:deadline:)`, from the local address `source` when given (the tests'
    /// peers on 127.0.0.2, 127.0.0.3, ...). The corresponding C function is `bind`.
    public static func connect(to address: SocketAddress, from source: SocketAddress?, deadline: Instant)
        throws(SystemError) -> FileDescriptor
    {
        let (sock, connected) = try startConnect(to: address, from: source)
        do throws(SystemError) {
            if !connected {
                let revents = try poll([(sock, PollEvents.writable)], until: deadline)
                if revents[0].isEmpty {
                    throw SystemError(call: "connect", object: address.description, errno: ETIMEDOUT)
                }
                try finishConnect(sock, to: address)
            }
        } catch {
            sock.close()
            throw error
        }
        return sock
    }

    /// Starts a non-blocking connect to `address`: the socket, and whether it is connected
    /// already (otherwise it becomes writable once the attempt ends; see `finishConnect`).
    /// The corresponding C functions are `socket` and `connect`.
    public static func startConnect(to address: SocketAddress, from source: SocketAddress? = nil) throws(SystemError)
        -> (FileDescriptor, connected: Bool)
    {
        let fd = try syscall("socket", address.description) {
            socket(
                address.family, CInt(SOCK_STREAM.rawValue) | CInt(SOCK_NONBLOCK.rawValue) | CInt(SOCK_CLOEXEC.rawValue),
                0)
        }
        let sock = FileDescriptor(rawValue: fd)
        if let source {
            let rc = source.withSockAddr { Glibc.bind(fd, $0, $1) }
            if rc != 0 {
                let err = errno
                sock.close()
                throw SystemError(call: "bind", object: source.description, errno: err)
            }
        }
        let rc = address.withSockAddr { Glibc.connect(fd, $0, $1) }
        if rc == 0 {
            // Nagle's algorithm only delays small writes; the connection works without this.
            try? setOption(sock, CInt(IPPROTO_TCP), TCP_NODELAY, 1)
            return (sock, true)
        }
        let err = errno
        // EINTR: the attempt goes on in the background, exactly as with EINPROGRESS.
        guard err == EINPROGRESS || err == EINTR else {
            sock.close()
            throw SystemError(call: "connect", object: address.description, errno: err)
        }
        return (sock, false)
    }

    /// Ends a connect that `startConnect` left in progress, once the socket is writable:
    /// returns when it connected, throws the attempt's error otherwise (the socket stays open).
    /// The corresponding C function is `getsockopt(SO_ERROR)`.
    public static func finishConnect(_ sock: FileDescriptor, to address: SocketAddress) throws(SystemError) {
        var err: CInt = 0
        var len = socklen_t(MemoryLayout<CInt>.size)
        _ = try syscall("getsockopt", address.description) {
            getsockopt(sock.rawValue, SOL_SOCKET, SO_ERROR, &err, &len)
        }
        if err != 0 { throw SystemError(call: "connect", object: address.description, errno: err) }
        // Nagle's algorithm only delays small writes; the connection works without this.
        try? setOption(sock, CInt(IPPROTO_TCP), TCP_NODELAY, 1)
    }

    /// The address a socket is bound to. The corresponding C function is `getsockname`.
    public static func localAddress(_ sock: FileDescriptor) throws(SystemError) -> SocketAddress {
        var st = sockaddr_storage()
        var len = socklen_t(MemoryLayout<sockaddr_storage>.size)
        _ = try syscall("getsockname") {
            withUnsafeMutablePointer(to: &st) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(sock.rawValue, $0, &len) }
            }
        }
        return SocketAddress(storage: st, length: len)
    }

    /// Sends some bytes without raising SIGPIPE; returns how many, or 0 when the buffer is full.
    /// The corresponding C function is `send`.
    public static func send(_ sock: FileDescriptor, _ bytes: UnsafeRawBufferPointer) throws(SystemError) -> Int {
        while true {
            let n = Glibc.send(sock.rawValue, bytes.baseAddress, bytes.count, CInt(MSG_NOSIGNAL))
            if n >= 0 { return n }
            switch errno {
            case EINTR: continue
            case EAGAIN: return 0
            default: throw SystemError(call: "send", errno: errno)
            }
        }
    }

    /// Sends some of `first` and then `second` in one call, without raising SIGPIPE; returns
    /// how many bytes (counting across both), or 0 when the buffer is full.
    /// The corresponding C function is `sendmsg` with two iovecs.
    public static func send(_ sock: FileDescriptor, _ first: UnsafeRawBufferPointer, _ second: UnsafeRawBufferPointer)
        throws(SystemError) -> Int
    {
        var vectors = [
            iovec(iov_base: UnsafeMutableRawPointer(mutating: first.baseAddress), iov_len: first.count),
            iovec(iov_base: UnsafeMutableRawPointer(mutating: second.baseAddress), iov_len: second.count),
        ]
        while true {
            let n = vectors.withUnsafeMutableBufferPointer { v in
                var message = msghdr()
                message.msg_iov = v.baseAddress
                message.msg_iovlen = 2
                return sendmsg(sock.rawValue, &message, CInt(MSG_NOSIGNAL))
            }
            if n >= 0 { return n }
            switch errno {
            case EINTR: continue
            case EAGAIN: return 0
            default: throw SystemError(call: "sendmsg", errno: errno)
            }
        }
    }

    /// Receives some bytes; nil when none are waiting, 0 at end of stream. With `peek` the bytes
    /// stay in the socket for the next read (MSG_PEEK).
    /// The corresponding C function is `recv`.
    public static func receive(_ sock: FileDescriptor, into buffer: UnsafeMutableRawBufferPointer, peek: Bool = false)
        throws(SystemError) -> Int?
    {
        while true {
            let n = recv(sock.rawValue, buffer.baseAddress, buffer.count, peek ? CInt(MSG_PEEK) : 0)
            if n >= 0 { return n }
            switch errno {
            case EINTR: continue
            case EAGAIN: return nil
            default: throw SystemError(call: "recv", errno: errno)
            }
        }
    }

    /// Receives into `first` and, once it is full, on into `second`, in one call; nil when none
    /// are waiting, 0 at end of stream. A frame's payload goes straight to where it is used and
    /// the next frame's header behind it, with no copy between.
    /// The corresponding C function is `readv`.
    public static func receive(
        _ sock: FileDescriptor, into first: UnsafeMutableRawBufferPointer,
        then second: UnsafeMutableRawBufferPointer
    ) throws(SystemError) -> Int? {
        var vectors = [
            iovec(iov_base: first.baseAddress, iov_len: first.count),
            iovec(iov_base: second.baseAddress, iov_len: second.count),
        ]
        while true {
            let n = vectors.withUnsafeMutableBufferPointer { readv(sock.rawValue, $0.baseAddress, 2) }
            if n >= 0 { return n }
            switch errno {
            case EINTR: continue
            case EAGAIN: return nil
            default: throw SystemError(call: "readv", errno: errno)
            }
        }
    }

    /// Shuts down the sending direction, so the peer reads end of stream.
    /// The corresponding C function is `shutdown`.
    public static func shutdownWrite(_ sock: FileDescriptor) {
        _ = Glibc.shutdown(sock.rawValue, CInt(SHUT_WR))
    }

    /// Shuts down both directions: the socket's reads return end of stream and its writes fail,
    /// for every descriptor of it (a thread blocked on it wakes). The C function is `shutdown`.
    public static func shutdownBoth(_ sock: FileDescriptor) {
        _ = Glibc.shutdown(sock.rawValue, CInt(SHUT_RDWR))
    }

    /// Sets an integer socket option. The corresponding C function is `setsockopt`.
    public static func setOption(_ sock: FileDescriptor, _ level: CInt, _ name: CInt, _ value: CInt) throws(SystemError)
    {
        var v = value
        _ = try syscall("setsockopt") { setsockopt(sock.rawValue, level, name, &v, socklen_t(MemoryLayout<CInt>.size)) }
    }
}
