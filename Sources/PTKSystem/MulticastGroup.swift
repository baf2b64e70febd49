import Glibc

/// An IPv4 interface that is up and can multicast, with its network's prefix length.
public struct MulticastNetwork: Sendable, Equatable, Hashable {
    /// The interface and its IPv4 address.
    public var interface: MulticastInterface
    /// Bits of the netmask (24 for 255.255.255.0); 32 when the interface reports no IPv4 netmask.
    public var prefixLength: Int
}

/// `ipv4MulticastInterfaces()` with each address's prefix length (from its netmask). The
/// corresponding C function is `getifaddrs`.
public func ipv4MulticastNetworks() throws(SystemError) -> [MulticastNetwork] {
    var list: UnsafeMutablePointer<ifaddrs>? = nil
    guard getifaddrs(&list) == 0 else { throw SystemError(call: "getifaddrs", errno: errno) }
    defer { freeifaddrs(list) }
    var out: [MulticastNetwork] = []
    var p = list
    while let ifa = p {
        defer { p = ifa.pointee.ifa_next }
        let flags = ifa.pointee.ifa_flags
        guard let sa = ifa.pointee.ifa_addr, sa.pointee.sa_family == sa_family_t(AF_INET),
            flags & UInt32(IFF_UP) != 0, flags & UInt32(IFF_MULTICAST) != 0
        else { continue }
        var st = sockaddr_storage()
        withUnsafeMutableBytes(of: &st) {
            $0.copyMemory(from: UnsafeRawBufferPointer(start: sa, count: MemoryLayout<sockaddr_in>.size))
        }
        let address = SocketAddress(storage: st, length: socklen_t(MemoryLayout<sockaddr_in>.size)).host
        var prefix = 32
        if let mask = ifa.pointee.ifa_netmask,
            mask.pointee.sa_family == sa_family_t(AF_INET) || mask.pointee.sa_family == 0
        {
            let bits = mask.withMemoryRebound(to: sockaddr_in.self, capacity: 1) {
                UInt32(bigEndian: $0.pointee.sin_addr.s_addr)
            }
            prefix = bits.nonzeroBitCount
        }
        out.append(
            MulticastNetwork(
                interface: MulticastInterface(
                    name: String(cString: ifa.pointee.ifa_name), address: address,
                    isLoopback: flags & UInt32(IFF_LOOPBACK) != 0),
                prefixLength: prefix))
    }
    return out
}

extension Multicast {
    /// A non-blocking UDP socket that receives only datagrams sent to `group`:`port` on the
    /// interfaces it joins itself: it is bound to the group's address (so unicast and broadcast
    /// datagrams to the port are not delivered to it) and IP_MULTICAST_ALL is off (so a group
    /// another program joined on another interface is not delivered either). Shared with other
    /// programs (SO_REUSEADDR, SO_REUSEPORT: a LocalSend app on the same host keeps working), TTL 1,
    /// its own messages looped back.
    /// The corresponding C functions are `socket`, `setsockopt`, `bind`.
    public static func openGroup(_ group: String, port: UInt16) throws(SystemError) -> FileDescriptor {
        guard let bound = SocketAddress(numericHost: group, port: port) else {
            throw SystemError(call: "bind", object: group, errno: EINVAL)
        }
        let fd = try syscall("socket", "UDP") {
            socket(AF_INET, CInt(SOCK_DGRAM.rawValue) | CInt(SOCK_NONBLOCK.rawValue) | CInt(SOCK_CLOEXEC.rawValue), 0)
        }
        let sock = FileDescriptor(rawValue: fd)
        do throws(SystemError) {
            try Socket.setOption(sock, SOL_SOCKET, SO_REUSEADDR, 1)
            try Socket.setOption(sock, SOL_SOCKET, SO_REUSEPORT, 1)
            try Socket.setOption(sock, CInt(IPPROTO_IP), IP_MULTICAST_TTL, 1)
            try Socket.setOption(sock, CInt(IPPROTO_IP), IP_MULTICAST_LOOP, 1)
            try Socket.setOption(sock, CInt(IPPROTO_IP), IP_MULTICAST_ALL, 0)
            _ = try syscall("bind", "UDP \(group) port \(port)") { bound.withSockAddr { Glibc.bind(fd, $0, $1) } }
        } catch {
            sock.close()
            throw error
        }
        return sock
    }
}

/// An interface that is up, can multicast and has IPv6 addresses: its name, index (the scope id
/// of its link-local addresses) and every IPv6 address it has with its prefix length.
public struct IPv6MulticastInterface: Sendable, Equatable, Hashable {
    /// The interface's name ("eth0").
    public var name: String
    /// The interface index (`if_nametoindex`): the scope id of its link-local addresses.
    public var index: UInt32
    /// Numeric, a link-local one with its scope ("fe80::1%eth0"), each with its prefix length.
    public var addresses: [IPv6Prefix]
    /// True for the loopback interface (IFF_LOOPBACK).
    public var isLoopback: Bool
}

/// An IPv6 address as text (link-local ones with "%interface") and its prefix length.
public struct IPv6Prefix: Sendable, Equatable, Hashable {
    /// Numeric, with "%interface" for a link-local one.
    public var address: String
    /// Bits of the prefix (64 for most networks).
    public var prefixLength: Int
}

/// The interfaces that are up, multicast-capable and have at least one IPv6 address (link-local
/// ones included), in the order `getifaddrs` lists them. The corresponding C functions are
/// `getifaddrs` and `if_nametoindex`.
public func ipv6MulticastInterfaces() throws(SystemError) -> [IPv6MulticastInterface] {
    var list: UnsafeMutablePointer<ifaddrs>? = nil
    guard getifaddrs(&list) == 0 else { throw SystemError(call: "getifaddrs", errno: errno) }
    defer { freeifaddrs(list) }
    var out: [IPv6MulticastInterface] = []
    var p = list
    while let ifa = p {
        defer { p = ifa.pointee.ifa_next }
        let flags = ifa.pointee.ifa_flags
        guard let sa = ifa.pointee.ifa_addr, sa.pointee.sa_family == sa_family_t(AF_INET6),
            flags & UInt32(IFF_UP) != 0, flags & UInt32(IFF_MULTICAST) != 0
        else { continue }
        let name = String(cString: ifa.pointee.ifa_name)
        let index = if_nametoindex(ifa.pointee.ifa_name)
        guard index != 0 else { continue }
        var st = sockaddr_storage()
        withUnsafeMutableBytes(of: &st) {
            $0.copyMemory(from: UnsafeRawBufferPointer(start: sa, count: MemoryLayout<sockaddr_in6>.size))
        }
        let address = SocketAddress(storage: st, length: socklen_t(MemoryLayout<sockaddr_in6>.size)).host
        var prefix = 128
        if let mask = ifa.pointee.ifa_netmask,
            mask.pointee.sa_family == sa_family_t(AF_INET6) || mask.pointee.sa_family == 0
        {
            prefix = mask.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { m in
                withUnsafeBytes(of: m.pointee.sin6_addr) { $0.reduce(0) { $0 + $1.nonzeroBitCount } }
            }
        }
        let entry = IPv6Prefix(address: address, prefixLength: prefix)
        if let i = out.firstIndex(where: { $0.index == index }) {
            out[i].addresses.append(entry)
        } else {
            out.append(
                IPv6MulticastInterface(
                    name: name, index: index, addresses: [entry], isLoopback: flags & UInt32(IFF_LOOPBACK) != 0))
        }
    }
    return out
}

extension Multicast {
    /// A non-blocking UDP socket that receives only datagrams sent to the IPv6 `group`:`port` on
    /// the interface with index `interface`, joined there: it is IPv6-only, bound to the group
    /// with the interface as its scope (so the kernel ties it to that interface: nothing to the
    /// group from another interface, no unicast), IPV6_MULTICAST_ALL off, and it sends out of
    /// that interface with hop limit 1, its own messages looped back. Shared with other programs
    /// (SO_REUSEADDR, SO_REUSEPORT). The corresponding C functions are `socket`, `setsockopt`, `bind`.
    public static func openGroup6(_ group: String, port: UInt16, interface: UInt32) throws(SystemError)
        -> FileDescriptor
    {
        var address = in6_addr()
        guard inet_pton(AF_INET6, group, &address) == 1 else {
            throw SystemError(call: "bind", object: group, errno: EINVAL)
        }
        let fd = try syscall("socket", "UDP6") {
            socket(AF_INET6, CInt(SOCK_DGRAM.rawValue) | CInt(SOCK_NONBLOCK.rawValue) | CInt(SOCK_CLOEXEC.rawValue), 0)
        }
        let sock = FileDescriptor(rawValue: fd)
        do throws(SystemError) {
            try Socket.setOption(sock, SOL_SOCKET, SO_REUSEADDR, 1)
            try Socket.setOption(sock, SOL_SOCKET, SO_REUSEPORT, 1)
            try Socket.setOption(sock, CInt(IPPROTO_IPV6), IPV6_V6ONLY, 1)
            try Socket.setOption(sock, CInt(IPPROTO_IPV6), IPV6_MULTICAST_HOPS, 1)
            try Socket.setOption(sock, CInt(IPPROTO_IPV6), IPV6_MULTICAST_LOOP, 1)
            // IPV6_MULTICAST_ALL (29, Linux 4.20).
            try Socket.setOption(sock, CInt(IPPROTO_IPV6), 29, 0)
            try Socket.setOption(sock, CInt(IPPROTO_IPV6), IPV6_MULTICAST_IF, CInt(bitPattern: interface))
            var bound = sockaddr_in6()
            bound.sin6_family = sa_family_t(AF_INET6)
            bound.sin6_port = port.bigEndian
            bound.sin6_addr = address
            bound.sin6_scope_id = interface
            _ = try syscall("bind", "UDP [\(group)%\(interface)] port \(port)") {
                withUnsafePointer(to: &bound) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        Glibc.bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size))
                    }
                }
            }
            var m = ipv6_mreq()
            m.ipv6mr_multiaddr = address
            m.ipv6mr_interface = interface
            if setsockopt(fd, CInt(IPPROTO_IPV6), IPV6_ADD_MEMBERSHIP, &m, socklen_t(MemoryLayout<ipv6_mreq>.size)) != 0
                && errno != EADDRINUSE
            {
                throw SystemError(call: "setsockopt(IPV6_ADD_MEMBERSHIP)", object: group, errno: errno)
            }
        } catch {
            sock.close()
            throw error
        }
        return sock
    }

    /// Sends `bytes` to the IPv6 `group`:`port` out of the interface with index `interface`.
    public static func send6(_ sock: FileDescriptor, _ bytes: [UInt8], group: String, port: UInt16, interface: UInt32)
        throws(SystemError)
    {
        var to = sockaddr_in6()
        to.sin6_family = sa_family_t(AF_INET6)
        to.sin6_port = port.bigEndian
        guard inet_pton(AF_INET6, group, &to.sin6_addr) == 1 else {
            throw SystemError(call: "sendto", object: group, errno: EINVAL)
        }
        to.sin6_scope_id = interface
        _ = try syscall("sendto", group) {
            bytes.withUnsafeBytes { b in
                withUnsafePointer(to: &to) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        Glibc.sendto(
                            sock.rawValue, b.baseAddress, b.count, CInt(MSG_NOSIGNAL), $0,
                            socklen_t(MemoryLayout<sockaddr_in6>.size))
                    }
                }
            }
        }
    }
}
