import Glibc

/// An IPv4 or IPv6 socket address.
public struct SocketAddress: Sendable, Equatable, CustomStringConvertible {
    fileprivate var storage: sockaddr_storage
    fileprivate var length: socklen_t

    /// Equal when they print the same (host and port as text), whatever padding the storage holds.
    public static func == (a: SocketAddress, b: SocketAddress) -> Bool { a.description == b.description }

    /// The address family, AF_INET or AF_INET6.
    public var family: CInt { CInt(storage.ss_family) }

    /// The port, in host byte order.
    public var port: UInt16 {
        get {
            withUnsafeBytes(of: storage) { raw in
                family == AF_INET6
                    ? UInt16(
                        bigEndian: raw.load(
                            fromByteOffset: MemoryLayout<sockaddr_in6>.offset(of: \.sin6_port)!, as: UInt16.self))
                    : UInt16(
                        bigEndian: raw.load(
                            fromByteOffset: MemoryLayout<sockaddr_in>.offset(of: \.sin_port)!, as: UInt16.self))
            }
        }
        set {
            let offset =
                family == AF_INET6
                ? MemoryLayout<sockaddr_in6>.offset(of: \.sin6_port)!
                : MemoryLayout<sockaddr_in>.offset(of: \.sin_port)!
            withUnsafeMutableBytes(of: &storage) {
                $0.storeBytes(of: newValue.bigEndian, toByteOffset: offset, as: UInt16.self)
            }
        }
    }

    /// The numeric host part ("192.0.2.1", "::1").
    public var host: String {
        var buf = [CChar](repeating: 0, count: Int(NI_MAXHOST))
        var s = storage
        let rc = withUnsafePointer(to: &s) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                getnameinfo($0, length, &buf, socklen_t(buf.count), nil, 0, NI_NUMERICHOST)
            }
        }
        if rc != 0 { return "?" }
        return String(decoding: buf.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// "192.0.2.1:47850" or "[::1]:47850".
    public var description: String {
        family == AF_INET6 ? "[\(host)]:\(port)" : "\(host):\(port)"
    }

    /// Calls `body` with the address as a `sockaddr` pointer and its length.
    public func withSockAddr<R>(_ body: (UnsafePointer<sockaddr>, socklen_t) throws -> R) rethrows -> R {
        var s = storage
        return try withUnsafePointer(to: &s) {
            try $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { try body($0, length) }
        }
    }

    /// Builds an address from what `accept`/`getsockname` filled in.
    init(storage: sockaddr_storage, length: socklen_t) {
        self.storage = storage
        self.length = length
    }

    /// Parses a numeric IPv4 or IPv6 address (brackets allowed around IPv6), with `port`.
    /// Returns nil when `host` is not a numeric address.
    public init?(numericHost host: String, port: UInt16) {
        var h = host
        if h.hasPrefix("[") && h.hasSuffix("]") { h = String(h.dropFirst().dropLast()) }
        // Not a numeric address: the caller treats the text as a host name.
        guard let first = try? Self.resolve(h, port: port, flags: AI_NUMERICHOST).first else { return nil }
        self = first
    }

    /// Resolves a host name or numeric address to its TCP addresses.
    /// The corresponding C function is `getaddrinfo`.
    public static func resolve(_ host: String, port: UInt16, flags: CInt = 0) throws(ResolveError) -> [SocketAddress] {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = CInt(SOCK_STREAM.rawValue)
        hints.ai_flags = flags
        var result: UnsafeMutablePointer<addrinfo>?
        let rc = getaddrinfo(host, String(port), &hints, &result)
        guard rc == 0, let list = result else {
            throw ResolveError(host: host, message: String(cString: gai_strerror(rc)))
        }
        defer { freeaddrinfo(list) }
        var out: [SocketAddress] = []
        var p: UnsafeMutablePointer<addrinfo>? = list
        while let ai = p {
            if let sa = ai.pointee.ai_addr, ai.pointee.ai_family == AF_INET || ai.pointee.ai_family == AF_INET6 {
                var st = sockaddr_storage()
                withUnsafeMutableBytes(of: &st) { dst in
                    dst.copyMemory(from: UnsafeRawBufferPointer(start: sa, count: Int(ai.pointee.ai_addrlen)))
                }
                let addr = SocketAddress(storage: st, length: ai.pointee.ai_addrlen)
                if !out.contains(addr) { out.append(addr) }
            }
            p = ai.pointee.ai_next
        }
        return out
    }
}

/// A host name that did not resolve.
public struct ResolveError: Error, Sendable, CustomStringConvertible {
    /// The name as given.
    public var host: String
    /// What `getaddrinfo` said (`gai_strerror`).
    public var message: String
    /// The message for the user, naming the host.
    public var description: String { "cannot resolve '\(host)': \(message)" }
}

/// The name of the network interface with index `index` ("eth0"), for link-local scopes.
/// The corresponding C function is `if_indextoname`.
public func interfaceName(index: UInt32) -> String? {
    var name = [CChar](repeating: 0, count: Int(IF_NAMESIZE) + 1)
    guard if_indextoname(index, &name) != nil else { return nil }
    return String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}
