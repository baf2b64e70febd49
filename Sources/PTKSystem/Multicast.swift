import Glibc

/// An IPv4 interface that is up and can multicast.
public struct MulticastInterface: Sendable, Equatable, Hashable {
    /// The interface's name ("eth0").
    public var name: String
    /// Its IPv4 address, dotted.
    public var address: String
    /// True for the loopback interface (IFF_LOOPBACK).
    public var isLoopback: Bool
}

/// The IPv4 interfaces that are up and multicast-capable (loopback too when it has
/// IFF_MULTICAST set, as tests set it in a namespace of their own). The corresponding C
/// function is `getifaddrs` (which needs an AF_NETLINK socket).
public func ipv4MulticastInterfaces() throws(SystemError) -> [MulticastInterface] {
    try ipv4MulticastNetworks().map(\.interface)
}

/// UDP for multicast discovery: a socket bound to a group's port, joined per interface.
public enum Multicast {
    private static func request(_ group: String, _ interface: String) -> ip_mreq {
        var m = ip_mreq()
        inet_pton(AF_INET, group, &m.imr_multiaddr)
        inet_pton(AF_INET, interface, &m.imr_interface)
        return m
    }

    /// Joins `group` on the interface with IPv4 address `interface`. Joining twice is not an error.
    public static func join(_ sock: FileDescriptor, group: String, interface: String) throws(SystemError) {
        var m = request(group, interface)
        let rc = setsockopt(
            sock.rawValue, CInt(IPPROTO_IP), IP_ADD_MEMBERSHIP, &m, socklen_t(MemoryLayout<ip_mreq>.size))
        if rc != 0 && errno != EADDRINUSE {
            throw SystemError(call: "setsockopt(IP_ADD_MEMBERSHIP)", object: interface, errno: errno)
        }
    }

    /// Sends `bytes` to `group`:`port` out of the interface with address `interface`.
    public static func send(_ sock: FileDescriptor, _ bytes: [UInt8], group: String, port: UInt16, interface: String)
        throws(SystemError)
    {
        var out = in_addr()
        inet_pton(AF_INET, interface, &out)
        if setsockopt(sock.rawValue, CInt(IPPROTO_IP), IP_MULTICAST_IF, &out, socklen_t(MemoryLayout<in_addr>.size))
            != 0
        {
            throw SystemError(call: "setsockopt(IP_MULTICAST_IF)", object: interface, errno: errno)
        }
        guard let to = SocketAddress(numericHost: group, port: port) else {
            throw SystemError(call: "sendto", object: group, errno: EINVAL)
        }
        _ = try syscall("sendto", group) {
            bytes.withUnsafeBytes { b in
                to.withSockAddr { Glibc.sendto(sock.rawValue, b.baseAddress, b.count, CInt(MSG_NOSIGNAL), $0, $1) }
            }
        }
    }

    /// Receives one datagram into `buffer`: its length and sender, or nil when none is waiting.
    public static func receive(_ sock: FileDescriptor, into buffer: UnsafeMutableRawBufferPointer) throws(SystemError)
        -> (Int, SocketAddress)?
    {
        var st = sockaddr_storage()
        var len = socklen_t(MemoryLayout<sockaddr_storage>.size)
        while true {
            let n = withUnsafeMutablePointer(to: &st) { p in
                p.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    recvfrom(sock.rawValue, buffer.baseAddress, buffer.count, 0, $0, &len)
                }
            }
            if n >= 0 { return (n, SocketAddress(storage: st, length: len)) }
            switch errno {
            case EINTR: continue
            case EAGAIN: return nil
            default: throw SystemError(call: "recvfrom", errno: errno)
            }
        }
    }
}
