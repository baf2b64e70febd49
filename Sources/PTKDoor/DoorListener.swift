import PTKSystem
import PTKTransport

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

/// A door's listener on `port` at the addresses of `--listen` (every address when empty, where
/// one family may be missing). A port that cannot be bound is a `DaemonError` saying for whom
/// (`purpose`: "for browsers") and what to set instead (`instead`: "set web-port, or web = off").
package func doorListener(_ listen: [String], port: UInt16, purpose: String, instead: String?) throws(DaemonError)
    -> Listener
{
    let addresses = try listenAddresses(listen, port: port)
    do {
        return try Listener(addresses: addresses, skipUnavailable: listen.isEmpty)
    } catch {
        let subject = purpose.isEmpty ? "cannot listen on port \(port)" : "cannot listen \(purpose) on port \(port)"
        throw DaemonError(
            description: "\(subject): \(error)" + (instead.map { " (\($0))" } ?? ""), exitCode: .cannotStart)
    }
}
