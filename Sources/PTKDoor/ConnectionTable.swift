import PTKHTTP
import PTKLocalSend
import PTKSystem

/// The connection slots: at most `capacity` connections, at most `perAddress` from one
/// address (`slotKey`: each IPv6 address is its own, as every device of a home's /64 has one).
/// When every slot is taken, a newcomer from an address holding fewer slots than another
/// displaces that address's oldest connection that is not working (in its handshake, idle, or
/// on a request not yet shown to be allowed); a newcomer whose address holds none displaces
/// the oldest connection anywhere that has not been working for `staleAfter`. So connections
/// that never finish a handshake or a request cannot keep out a sender who does, however fast
/// they come back, nor can one such connection from each of many addresses. Once a connection
/// works for an owner known past its handshake (an app password, `claim`), that owner may
/// hold at most `perAddress` working connections whatever addresses they come from: one
/// password's slow uploads from many addresses cannot take every slot. Pure: told the
/// time, no I/O; the daemon holds it under its lock.
public struct ConnectionTable: Sendable {
    struct Entry: Sendable, Equatable {
        var key: String
        var stage: ConnectionStage
        /// When it last entered a preemptible stage (the oldest is displaced first).
        var since: Instant
        /// Whom it works for, once `claim`ed ("app password ID").
        var owner: String? = nil
    }

    enum Decision: Equatable {
        case admit
        /// Admitted in place of connection `victim`, which the caller closes.
        case admitDisplacing(victim: Int)
        /// The address has its `perAddress` connections.
        case addressFull
        /// Every slot is taken by connections that may not be displaced for this address.
        case full
    }

    let capacity: Int
    let perAddress: Int
    /// How long a connection must have been idle, unproven or opening to be displaced by a
    /// newcomer from an address holding no slot.
    static let staleAfter: Duration = .seconds(2)

    /// The key an address's slots are counted under: the address itself (an IPv4-mapped IPv6
    /// address as its IPv4 one).
    public static func slotKey(_ address: String) -> String {
        let key = addressKey(address)
        return key.contains("::/64") ? address : key
    }
    private(set) var entries: [Int: Entry] = [:]
    private var counts: [String: Int] = [:]

    init(capacity: Int, perAddress: Int) {
        self.capacity = capacity
        self.perAddress = perAddress
    }

    var count: Int { entries.count }
    func count(of address: String) -> Int { counts[Self.slotKey(address), default: 0] }

    /// Decides connection `id` from `address`; admitted, it is entered as `.opening` (and a
    /// displaced one is gone from the table).
    mutating func admit(_ id: Int, from address: String, now: Instant) -> Decision {
        let key = Self.slotKey(address)
        let mine = counts[key, default: 0]
        if mine >= perAddress { return .addressFull }
        var decision = Decision.admit
        if entries.count >= capacity {
            guard let victim = victim(for: mine, now: now) else { return .full }
            remove(victim)
            decision = .admitDisplacing(victim: victim)
        }
        entries[id] = Entry(key: key, stage: .opening, since: now)
        counts[key, default: 0] += 1
        return decision
    }

    /// The connection a newcomer whose address holds `mine` slots displaces: the oldest
    /// preemptible one of the address holding the most slots, if that address holds at least
    /// two more than the newcomer's (so the two end no further apart than they were); else,
    /// for a newcomer holding none, the oldest preemptible one anywhere, stale for `staleAfter`.
    func victim(for mine: Int, now: Instant) -> Int? {
        var byKey: [String: (id: Int, since: Instant)] = [:]
        for (id, e) in entries where e.stage.isPreemptible {
            if let old = byKey[e.key], old.since <= e.since { continue }
            byKey[e.key] = (id, e.since)
        }
        let best = byKey.max { a, b in
            let ca = counts[a.key, default: 0]
            let cb = counts[b.key, default: 0]
            return ca != cb ? ca < cb : a.value.since > b.value.since
        }
        if let best, counts[best.key, default: 0] >= mine + 2 { return best.value.id }
        guard mine == 0, let oldest = byKey.values.min(by: { $0.since < $1.since }),
            now - oldest.since >= Self.staleAfter
        else { return nil }
        return oldest.id
    }

    /// Connection `id` moved on to `stage` (a displaced or released one is not there: nothing).
    mutating func set(_ id: Int, _ stage: ConnectionStage, now: Instant) {
        guard var e = entries[id], e.stage != stage else { return }
        if stage.isPreemptible { e.since = now }
        e.stage = stage
        entries[id] = e
    }

    /// Connection `id` is to work for `owner`: true (it is working, counted as the owner's)
    /// unless the owner has `perAddress` other connections working already; then false, and
    /// the connection is `.unproven` again (displaceable: it is refused and closes). A
    /// connection no longer in the table (displaced) is not counted: true.
    mutating func claim(_ id: Int, owner: String, now: Instant) -> Bool {
        guard var e = entries[id] else { return true }
        let others = entries.reduce(0) {
            $0 + ($1.key != id && $1.value.owner == owner && $1.value.stage == .working ? 1 : 0)
        }
        if others >= perAddress {
            if e.stage != .unproven { e.since = now }
            e.stage = .unproven
            entries[id] = e
            return false
        }
        e.owner = owner
        e.stage = .working
        entries[id] = e
        return true
    }

    /// Connection `id` ended; false when it was not there (displaced before).
    @discardableResult
    mutating func remove(_ id: Int) -> Bool {
        guard let e = entries.removeValue(forKey: id) else { return false }
        counts[e.key, default: 1] -= 1
        if counts[e.key] == 0 { counts[e.key] = nil }
        return true
    }
}
