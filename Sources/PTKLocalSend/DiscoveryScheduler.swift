import PTKTime

// LocalSend discovery's limits and schedule: the table of sources answered lately, the
// register rate, the queue. See Discovery.swift for what each limit bounds.

/// What discovery does about an announcement, before any limit.
public enum DiscoveryDecision: Equatable, Sendable {
    /// `POST register` over HTTPS to the announcer's address and port, to a server whose
    /// certificate has the announced fingerprint.
    case register(host: DiscoveryAddress, port: Int, fingerprint: String)
    /// No register (the reason says why); the multicast answer tells the announcer of ptkd.
    case answerByMulticast(why: String)
    case refuse(DiscoveryRefusal)
}

/// The limits (see the top of this file).
public struct DiscoveryLimits: Sendable, Equatable {
    /// Bytes: a longer datagram is not decoded at all.
    public var datagramLimit = 4096
    /// Ports a register may go to; an announcement naming another gets a multicast answer instead.
    public var registerPorts: ClosedRange<Int> = 1024...65535
    /// A source address answered less than this ago is not answered again (the apps announce a few times in a row).
    public var sourceInterval: Duration = .seconds(5)
    /// How many source addresses the table remembers; a full table forgets its oldest.
    public var sourceCapacity = 256
    /// Registers started per second on average, over all sources.
    public var registersPerSecond = 2.0
    /// Registers that may start at once before `registersPerSecond` applies.
    public var registerBurst = 6.0
    /// Registers waiting for the worker; when full, the oldest is pushed out and counted.
    public var queueCapacity = 8
    /// A register that waited longer than this in the queue is dropped as stale: its announcer has likely moved on.
    public var maxWait: Duration = .seconds(4)
    /// At most one multicast answer per this interval; it serves every announcement in between.
    public var multicastAnswerInterval: Duration = .seconds(1)
    /// How often at most the log says what discovery refused meanwhile.
    public var reportInterval: Duration = .seconds(60)
    /// The defaults the daemon runs with; tests change single fields.
    public init() {}
}

/// A register to make.
public struct RegisterJob: Equatable, Sendable {
    /// An IPv6 link-local one with its zone: ptkd calls it over the interface it came from.
    public var host: DiscoveryAddress
    /// The announced port, within `DiscoveryLimits.registerPorts`.
    public var port: Int
    /// The certificate fingerprint the server must show before ptkd sends anything.
    public var fingerprint: String
    /// The announcer's cleaned alias, for the log line.
    public var alias: String
    /// When it was queued: a job older than `maxWait` is dropped as stale.
    public var queued: Instant
}

/// What to do with a datagram.
public enum DiscoveryOutcome: Equatable, Sendable {
    /// A register was queued: wake the worker.
    case queued(RegisterJob)
    /// Send the multicast answer now.
    case answerByMulticast(alias: String, host: String, port: Int, why: String)
    case refused(DiscoveryRefusal)
}

/// Keys seen lately, at most `capacity` of them: a ring in the order they were recorded, so that
/// recording is O(1) and a full table forgets its oldest key. Nothing is filtered as a whole.
public struct DiscoveryRecentTable<Key: Hashable & Sendable>: Sendable {
    /// The most keys kept, at least 1.
    public let capacity: Int
    /// How long a recorded key counts as recent for `contains`.
    public let interval: Duration
    private var ring: [(key: Key, at: Instant)?]
    private var slot: [Key: Int] = [:]
    private var next = 0

    /// `capacity` below 1 is raised to 1.
    public init(capacity: Int, interval: Duration) {
        self.capacity = max(1, capacity)
        self.interval = interval
        ring = Array(repeating: nil, count: self.capacity)
    }

    /// Keys held now, recent or not.
    public var count: Int { slot.count }

    /// Whether `key` was recorded less than `interval` before `now`.
    public func contains(_ key: Key, now: Instant) -> Bool {
        guard let i = slot[key], let entry = ring[i] else { return false }
        return now - entry.at < interval
    }

    /// Marks `key` as seen at `now`, pushing out the oldest key when the ring is full.
    public mutating func record(_ key: Key, now: Instant) {
        if let i = slot.removeValue(forKey: key) { ring[i] = nil }
        if let old = ring[next] { slot.removeValue(forKey: old.key) }
        ring[next] = (key, now)
        slot[key] = next
        next = (next + 1) % capacity
    }

    /// Drops `key` at once, so it counts as not seen.
    public mutating func forget(_ key: Key) {
        if let i = slot.removeValue(forKey: key) { ring[i] = nil }
    }
}

/// At most `rate` takes a second on average, `burst` at once.
public struct DiscoveryTokenBucket: Sendable, Equatable {
    /// Takes a second on average.
    public let rate: Double
    /// Takes at once after a quiet spell, at least 1.
    public let burst: Double
    private var tokens: Double
    private var last: Instant?

    /// Starts full; `burst` below 1 is raised to 1.
    public init(rate: Double, burst: Double) {
        self.rate = rate
        self.burst = max(1, burst)
        tokens = self.burst
    }

    /// Whether one take is allowed at `now`; a true answer spends it. A clock going back refills nothing.
    public mutating func take(now: Instant) -> Bool {
        if let last, now > last { tokens = min(burst, tokens + rate * (now - last).seconds) }
        last = max(last ?? now, now)
        guard tokens >= 1 else { return false }
        tokens -= 1
        return true
    }
}

/// Everything discovery decides, for one receiving thread and one worker (under one lock).
public struct DiscoveryScheduler: Sendable {
    /// The limits in force, fixed at init.
    public let limits: DiscoveryLimits
    /// ptkd's own LocalSend fingerprint, upper case.
    public let ownFingerprint: String
    /// ptkd's own ports (protocol v1, LocalSend, web), which it never registers with on its own addresses.
    public let ownPorts: Set<Int>
    /// The networks discovery serves now, as `serve(_:)` last set them; empty, it registers with no one.
    public private(set) var served: [ServedAddress] = []
    private var recent: DiscoveryRecentTable<DiscoveryAddress>
    private var bucket: DiscoveryTokenBucket
    /// Newest last; the worker takes the newest first (a flood's oldest are the likeliest gone).
    public private(set) var queue: [RegisterJob] = []
    private var lastMulticastAnswer: Instant?
    /// Counts by `tallyKey` since the last report.
    public private(set) var tally: [String: Int] = [:]
    private var lastReport: Instant?

    /// `ownFingerprint` is upper-cased, so an announcement of ptkd's own is recognised whatever its case.
    public init(ownFingerprint: String, ownPorts: Set<Int>, limits: DiscoveryLimits = DiscoveryLimits()) {
        self.limits = limits
        self.ownFingerprint = ownFingerprint.uppercased()
        self.ownPorts = ownPorts
        recent = DiscoveryRecentTable(capacity: limits.sourceCapacity, interval: limits.sourceInterval)
        bucket = DiscoveryTokenBucket(rate: limits.registersPerSecond, burst: limits.registerBurst)
    }

    /// The addresses discovery serves now (as interfaces come and go).
    public mutating func serve(_ addresses: [ServedAddress]) { served = addresses }

    /// Whom to register with for `announcement`, from `source` (the datagram's sender, which is
    /// the announcer: ptkd never calls another address than the one the datagram came from).
    /// `arrivedOn` is the interface the datagram came in on, when known: only the networks of
    /// that interface count (a source in the prefix of another interface is on another link).
    public func decide(_ a: Announcement, from source: DiscoveryAddress, arrivedOn: String? = nil) -> DiscoveryDecision
    {
        let served =
            arrivedOn.map { name in self.served.filter { $0.interface == nil || $0.interface == name } } ?? self.served
        guard a.asksForAnswers else { return .refuse(.notAnnouncement) }
        if let f = a.fingerprint, f.uppercased() == ownFingerprint { return .refuse(.own) }
        guard source.isHostAddress else { return .refuse(.badSource) }
        // The kernel drops loopback sources that arrive on other interfaces; a loopback source
        // while no loopback address of its family is served is forged all the same.
        if source.isLoopback && !served.contains(where: { $0.address.isLoopback && $0.address.isIPv6 == source.isIPv6 })
        {
            return .refuse(.loopbackFromNetwork)
        }
        guard served.contains(where: { $0.hasOnLink(source) }) else { return .refuse(.sourceNotServed) }
        if ownPorts.contains(a.port) && served.contains(where: { $0.address == source }) { return .refuse(.ownPort) }
        guard a.https, let fingerprint = a.fingerprint else {
            return .answerByMulticast(why: "it serves plain HTTP; ptkd registers over HTTPS only")
        }
        guard limits.registerPorts.contains(a.port) else {
            return .answerByMulticast(
                why: "port \(a.port) is outside \(limits.registerPorts.lowerBound)-\(limits.registerPorts.upperBound)")
        }
        return .register(host: source, port: a.port, fingerprint: fingerprint)
    }

    /// A datagram received from `source` (an address as text) at `now`.
    public mutating func receive(_ datagram: [UInt8], from source: String, arrivedOn: String? = nil, now: Instant)
        -> DiscoveryOutcome
    {
        let outcome = admit(datagram, from: source, arrivedOn: arrivedOn, now: now)
        if case .refused(let why) = outcome { count(why) }
        return outcome
    }

    private mutating func admit(_ datagram: [UInt8], from source: String, arrivedOn: String?, now: Instant)
        -> DiscoveryOutcome
    {
        guard datagram.count <= limits.datagramLimit else { return .refused(.tooLong) }
        let a: Announcement
        do { a = try Announcement.parse(datagram) } catch { return .refused(error) }
        guard let address = DiscoveryAddress(source) else {
            return .refused(a.asksForAnswers ? .badSource : .notAnnouncement)
        }
        let decision = decide(a, from: address, arrivedOn: arrivedOn)
        if case .refuse(let why) = decision { return .refused(why) }
        guard !recent.contains(address, now: now) else { return .refused(.repeated) }
        switch decision {
        case .register(let host, let port, let fingerprint):
            // A source over the rate is not recorded: its next announcement may get through.
            guard bucket.take(now: now) else { return .refused(.overRate) }
            recent.record(address, now: now)
            if queue.count >= limits.queueCapacity {
                queue.removeFirst()
                count(.queueFull)
            }
            let job = RegisterJob(host: host, port: port, fingerprint: fingerprint, alias: a.alias, queued: now)
            queue.append(job)
            return .queued(job)
        case .answerByMulticast(let why):
            recent.record(address, now: now)
            guard mayAnswerByMulticast(now: now) else { return .refused(.answeredAlready) }
            return .answerByMulticast(alias: a.alias, host: source, port: a.port, why: why)
        case .refuse(let why):
            return .refused(why)
        }
    }

    /// The next register to make (the newest waiting), dropping those that waited too long.
    public mutating func next(now: Instant) -> RegisterJob? {
        while let job = queue.popLast() {
            if now - job.queued <= limits.maxWait { return job }
            count(.stale)
        }
        return nil
    }

    /// Whether a multicast answer may go out now (one serves every announcer that hears it, so
    /// at most one per `multicastAnswerInterval`); true records it as sent.
    public mutating func mayAnswerByMulticast(now: Instant) -> Bool {
        if let last = lastMulticastAnswer, now - last < limits.multicastAnswerInterval { return false }
        lastMulticastAnswer = now
        return true
    }

    private mutating func count(_ why: DiscoveryRefusal) {
        if let key = why.tallyKey { tally[key, default: 0] += 1 }
    }

    /// A line that says what was refused since the last one, at most once per `reportInterval`
    /// (the first refusal is reported at once); nil when there is nothing to say yet.
    public mutating func report(now: Instant) -> String? {
        guard !tally.isEmpty else { return nil }
        if let last = lastReport, now - last < limits.reportInterval { return nil }
        let total = tally.values.reduce(0, +)
        let parts = tally.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }.map {
            "\($0.value) \($0.key)"
        }
        let since = lastReport.map { " in the last \(Int((now - $0).seconds.rounded())) s" } ?? ""
        tally = [:]
        lastReport = now
        return
            "LocalSend discovery: \(total) announcement(s) not answered\(since): \(parts.joined(separator: ", ")); at most \(Int(limits.registersPerSecond)) register(s) a second, one per address every \(Int(limits.sourceInterval.seconds)) s"
    }
}
