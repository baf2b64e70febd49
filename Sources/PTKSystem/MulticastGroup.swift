import Glibc

/// An IPv4 interface that is up and can multicast, with its network's prefix length.
public struct MulticastNetwork: Sendable, Equatable, Hashable {
    public var interface: MulticastInterface
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
              flags & UInt32(IFF_UP) != 0, flags & UInt32(IFF_MULTICAST) != 0 else { continue }
        var st = sockaddr_storage()
        withUnsafeMutableBytes(of: &st) { $0.copyMemory(from: UnsafeRawBufferPointer(start: sa, count: MemoryLayout<sockaddr_in>.size)) }
        let address = SocketAddress(storage: st, length: socklen_t(MemoryLayout<sockaddr_in>.size)).host
        var prefix = 32
        if let mask = ifa.pointee.ifa_netmask, mask.pointee.sa_family == sa_family_t(AF_INET) || mask.pointee.sa_family == 0 {
            let bits = mask.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { UInt32(bigEndian: $0.pointee.sin_addr.s_addr) }
            prefix = bits.nonzeroBitCount
        }
        out.append(MulticastNetwork(interface: MulticastInterface(name: String(cString: ifa.pointee.ifa_name), address: address,
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
    /// programs (SO_REUSEADDR, SO_REUSEPORT), TTL 1, its own messages looped back, as `open`.
    /// The corresponding C functions are `socket`, `setsockopt`, `bind`.
    public static func openGroup(_ group: String, port: UInt16) throws(SystemError) -> FileDescriptor {
        guard let bound = SocketAddress(numericHost: group, port: port) else { throw SystemError(call: "bind", object: group, errno: EINVAL) }
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
