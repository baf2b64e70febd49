import PTKSystem

/// The addresses to listen on at `port`: those of `--listen`, else every IPv6 and IPv4
/// address ("::" and "0.0.0.0", either of which may be missing on this host).
package func listenAddresses(_ listen: [String], port: UInt16) throws(DaemonError) -> [SocketAddress] {
    var addresses: [SocketAddress] = []
    for text in listen.isEmpty ? ["::", "0.0.0.0"] : listen {
        guard let a = SocketAddress(numericHost: text, port: port) else {
            throw DaemonError(description: "--listen '\(text)' is not an IPv4 or IPv6 address", exitCode: .usage)
        }
        addresses.append(a)
    }
    return addresses
}
