import Glibc

/// Why no address of a peer could be connected to: each attempt that was made, with its error
/// (ETIMEDOUT for those still pending at the deadline).
public struct ConnectFailure: Error, Sendable, CustomStringConvertible {
    /// Each address tried, in the order tried, with why it failed; empty when there was none to try.
    public var attempts: [(address: SocketAddress, error: SystemError)]

    /// The reason alone for one attempt; for several, each address with its reason.
    public var description: String {
        if attempts.isEmpty { return "no address to connect to" }
        if attempts.count == 1 { return attempts[0].error.reason.lowercasedFirst }
        return attempts.map { "\($0.address): \($0.error.reason.lowercasedFirst)" }.joined(separator: "; ")
    }
}

extension Socket {
    /// RFC 8305's "Connection Attempt Delay": how long an attempt runs alone before the next starts.
    public static let connectionAttemptDelay: Duration = .milliseconds(250)

    /// Orders addresses for connection attempts as RFC 8305 section 4 says: the family of the
    /// first address (the resolver's preferred one) first, then alternating between the two
    /// families, each family keeping the resolver's order.
    public static func interleaveByFamily(_ addresses: [SocketAddress]) -> [SocketAddress] {
        guard let first = addresses.first else { return [] }
        let preferred = addresses.filter { $0.family == first.family }
        let other = addresses.filter { $0.family != first.family }
        var out: [SocketAddress] = []
        for i in 0..<max(preferred.count, other.count) {
            if i < preferred.count { out.append(preferred[i]) }
            if i < other.count { out.append(other[i]) }
        }
        return out
    }

    /// Connects to whichever of `addresses` answers first, the way RFC 8305 (Happy Eyeballs v2)
    /// describes: attempts in `interleaveByFamily` order, a new one every `attemptDelay`
    /// while earlier ones are still pending (at once when one fails), the first to connect wins
    /// and the others are closed. `deadline` bounds the whole attempt, not each address, so one
    /// address that drops packets costs `attemptDelay`, not the whole timeout.
    /// The corresponding C functions are `connect` and `poll`.
    public static func connectFirst(
        to addresses: [SocketAddress], attemptDelay: Duration = connectionAttemptDelay,
        deadline: Instant
    ) throws(ConnectFailure) -> (FileDescriptor, SocketAddress) {
        let order = interleaveByFamily(addresses)
        var pending: [(sock: FileDescriptor, address: SocketAddress)] = []
        var failed: [(address: SocketAddress, error: SystemError)] = []
        var next = 0
        var nextStart = Instant.now
        defer { for p in pending { p.sock.close() } }

        while true {
            // Start the next attempt when its time has come, or when nothing else is running.
            while next < order.count && (pending.isEmpty || Instant.now >= nextStart) {
                let address = order[next]
                next += 1
                do throws(SystemError) {
                    let (sock, connected) = try startConnect(to: address)
                    if connected { return (sock, address) }
                    pending.append((sock, address))
                    nextStart = .now + attemptDelay
                } catch {
                    failed.append((address, error))  // refused at once: the next starts now
                }
            }
            if pending.isEmpty { throw ConnectFailure(attempts: failed) }
            if Instant.now >= deadline {
                for p in pending {
                    failed.append(
                        (p.address, SystemError(call: "connect", object: p.address.description, errno: ETIMEDOUT)))
                }
                throw ConnectFailure(attempts: orderedLike(order, failed))
            }
            let wakeUp = next < order.count ? min(nextStart, deadline) : deadline
            let revents: [PollEvents]
            do throws(SystemError) {
                revents = try poll(pending.map { ($0.sock, PollEvents.writable) }, until: wakeUp)
            } catch {
                throw ConnectFailure(attempts: failed + [(pending[0].address, error)])
            }
            var stillPending: [(sock: FileDescriptor, address: SocketAddress)] = []
            var winner: (FileDescriptor, SocketAddress)? = nil
            for (i, p) in pending.enumerated() {
                guard !revents[i].isEmpty, winner == nil else {
                    stillPending.append(p)
                    continue
                }
                do throws(SystemError) {
                    try finishConnect(p.sock, to: p.address)
                    winner = (p.sock, p.address)
                } catch {
                    p.sock.close()
                    failed.append((p.address, error))
                    nextStart = .now  // RFC 8305 §5: a failed attempt lets the next start at once
                }
            }
            pending = stillPending
            if let winner { return winner }
        }
    }

    /// `failed` sorted in the order the addresses were tried, for a stable message.
    private static func orderedLike(_ order: [SocketAddress], _ failed: [(address: SocketAddress, error: SystemError)])
        -> [(address: SocketAddress, error: SystemError)]
    {
        failed.sorted { a, b in (order.firstIndex(of: a.address) ?? 0) < (order.firstIndex(of: b.address) ?? 0) }
    }
}
