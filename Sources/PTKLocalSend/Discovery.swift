import PTKTime

// LocalSend's multicast discovery, the decisions (issue 41): which datagrams are announcements,
// whom ptkd registers with, and how often. No I/O: the daemon feeds datagrams and the time in,
// and does what comes out. Anyone on the link can send to the group (and forge the source), so
// each limit here bounds what a stranger can make ptkd do or keep:
// - an announcement is parsed only when its datagram is at most `datagramLimit` bytes, and
//   kept only when its fields are sound (a fingerprint of 64 hex digits over HTTPS, an alias
//   of at most 1,024 bytes, cut to 64 scalars once cleaned);
// - ptkd registers only over HTTPS, only with the datagram's own source address, only when
//   that address is on a network ptkd serves (`--listen`; for IPv6 an on-link prefix of an
//   interface discovery is on, link-local fe80::/10 of that very interface included), never
//   with a loopback address unless ptkd serves loopback of that family, never with an IPv4
//   address in IPv6 form (::ffff:a.b.c.d), and only on a port in 1024...65535 that is not one of ptkd's
//   own on one of its own addresses;
// - each source address is answered at most once per `sourceInterval` (the table is a ring
//   of fixed capacity), registers are started at most `registersPerSecond` overall, and wait
//   in a queue of `queueCapacity` from which the oldest are pushed out (and counted) when full.

/// An IPv4 address as a number (10.0.0.1 is 0x0A000001).
public struct DiscoveryIPv4: Hashable, Sendable, Comparable, CustomStringConvertible {
    public var value: UInt32
    public init(_ value: UInt32) { self.value = value }

    /// Dotted decimal only: four parts of one to three digits, 0...255, without a leading zero
    /// (which inet_aton would read as octal); nil otherwise.
    public init?(_ text: String) {
        let parts = text.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count == 4 else { return nil }
        var v: UInt32 = 0
        for part in parts {
            guard (1...3).contains(part.count), part.allSatisfy({ (48...57).contains($0) }),
                  part.count == 1 || part.first != 48 else { return nil }
            let n = part.reduce(0) { $0 * 10 + Int($1 - 48) }
            guard n <= 255 else { return nil }
            v = v << 8 | UInt32(n)
        }
        value = v
    }

    public var description: String { "\(value >> 24).\(value >> 16 & 255).\(value >> 8 & 255).\(value & 255)" }
    /// 127.0.0.0/8.
    public var isLoopback: Bool { value >> 24 == 127 }
    /// Whether a device can have this address: not 0.0.0.0/8, not multicast (224.0.0.0/4), not
    /// reserved or broadcast (240.0.0.0/4).
    public var isHostAddress: Bool { value >> 24 != 0 && value >> 28 < 14 }
    public static func < (a: DiscoveryIPv4, b: DiscoveryIPv4) -> Bool { a.value < b.value }
}

/// An IPv6 address as a number (two halves), with its zone (an interface name) when it is a
/// link-local address as the kernel reports a datagram's source ("fe80::1%eth0").
public struct DiscoveryIPv6: Hashable, Sendable, CustomStringConvertible {
    public var high: UInt64
    public var low: UInt64
    /// The interface a scoped (link-local) address is on; nil for a global one.
    public var zone: String?

    public init(high: UInt64, low: UInt64, zone: String? = nil) {
        self.high = high
        self.low = low
        self.zone = zone
    }

    /// Numeric IPv6 text: eight groups of one to four hex digits, one "::" at most, an IPv4
    /// dotted tail allowed in the last 32 bits, and "%zone" (an interface name: letters, digits,
    /// ".", "-", "_", at most 15) allowed after it; no brackets. Nil otherwise.
    public init?(_ text: String) {
        var body = Substring(text)
        var zone: String?
        if let percent = text.firstIndex(of: "%") {
            let z = text[text.index(after: percent)...]
            guard (1...15).contains(z.utf8.count),
                  z.utf8.allSatisfy({ (48...57).contains($0) || (65...90).contains($0) || (97...122).contains($0) || $0 == 45 || $0 == 46 || $0 == 95 }) else { return nil }
            zone = String(z)
            body = text[..<percent]
        }
        guard body.utf8.count <= 45 else { return nil }
        func groups(_ part: Substring) -> [UInt16]? {
            if part.isEmpty { return [] }
            var out: [UInt16] = []
            let fields = part.split(separator: ":", omittingEmptySubsequences: false)
            for (i, field) in fields.enumerated() {
                if i == fields.count - 1, field.contains(".") {
                    guard let v4 = DiscoveryIPv4(String(field)) else { return nil }
                    out += [UInt16(v4.value >> 16), UInt16(v4.value & 0xFFFF)]
                    continue
                }
                guard (1...4).contains(field.utf8.count), let v = UInt16(field, radix: 16) else { return nil }
                out.append(v)
            }
            return out
        }
        var words: [UInt16]
        if let range = body.firstRange(of: "::") {
            guard let head = groups(body[..<range.lowerBound]), let tail = groups(body[range.upperBound...]),
                  !body[range.upperBound...].contains("::"), head.count + tail.count <= 7 else { return nil }
            words = head + Array(repeating: 0, count: 8 - head.count - tail.count) + tail
        } else {
            guard let all = groups(body), all.count == 8 else { return nil }
            words = all
        }
        high = words[0..<4].reduce(0) { $0 << 16 | UInt64($1) }
        low = words[4..<8].reduce(0) { $0 << 16 | UInt64($1) }
        self.zone = zone
    }

    private var words: [UInt16] { (0..<4).map { UInt16(truncatingIfNeeded: high >> (48 - 16 * $0)) } + (0..<4).map { UInt16(truncatingIfNeeded: low >> (48 - 16 * $0)) } }

    /// RFC 5952 text (the longest run of two or more zero groups as "::", lower case), a
    /// v4-mapped address with its dotted tail, and "%zone".
    public var description: String {
        let w = words
        var text: String
        if isV4Mapped {
            text = "::ffff:" + DiscoveryIPv4(UInt32(truncatingIfNeeded: low)).description
        } else {
            var best = (start: -1, count: 0)
            var i = 0
            while i < 8 {
                var j = i
                while j < 8 && w[j] == 0 { j += 1 }
                if j - i > best.count && j - i >= 2 { best = (i, j - i) }
                i = max(j, i + 1)
            }
            let hex = w.map { String($0, radix: 16) }
            if best.start < 0 {
                text = hex.joined(separator: ":")
            } else {
                text = hex[..<best.start].joined(separator: ":") + "::" + hex[(best.start + best.count)...].joined(separator: ":")
            }
        }
        return zone.map { text + "%" + $0 } ?? text
    }

    /// ::1.
    public var isLoopback: Bool { high == 0 && low == 1 }
    /// ::.
    public var isUnspecified: Bool { high == 0 && low == 0 }
    /// ff00::/8.
    public var isMulticast: Bool { high >> 56 == 0xFF }
    /// fe80::/10.
    public var isLinkLocal: Bool { high >> 54 == 0x3FA }
    /// ::ffff:0:0/96, an IPv4 address written as IPv6.
    public var isV4Mapped: Bool { high == 0 && low >> 32 == 0xFFFF }
    /// ::/96 other than :: and ::1 (the old IPv4-compatible form).
    public var isV4Compatible: Bool { high == 0 && low >> 32 == 0 && low > 1 }
    /// Whether a device on a link can have this address as its own: not ::, ::1, multicast, an
    /// IPv4 address in IPv6 form, nor a link-local address without the interface it is on.
    public var isHostAddress: Bool {
        !isUnspecified && !isLoopback && !isMulticast && !isV4Mapped && !isV4Compatible && (!isLinkLocal || zone != nil)
    }
}

/// A source or served address, IPv4 or IPv6.
public enum DiscoveryAddress: Hashable, Sendable, CustomStringConvertible {
    case v4(DiscoveryIPv4)
    case v6(DiscoveryIPv6)

    /// Dotted IPv4 (`DiscoveryIPv4`) or numeric IPv6 (`DiscoveryIPv6`); nil otherwise.
    public init?(_ text: String) {
        if let a = DiscoveryIPv4(text) { self = .v4(a) } else if let a = DiscoveryIPv6(text) { self = .v6(a) } else { return nil }
    }

    public var description: String {
        switch self {
        case .v4(let a): return a.description
        case .v6(let a): return a.description
        }
    }

    /// "192.0.2.7:53317" or "[fe80::1%eth0]:53317".
    public func withPort(_ port: Int) -> String {
        switch self {
        case .v4(let a): return "\(a):\(port)"
        case .v6(let a): return "[\(a)]:\(port)"
        }
    }

    public var isLoopback: Bool {
        switch self {
        case .v4(let a): return a.isLoopback
        case .v6(let a): return a.isLoopback
        }
    }

    public var isIPv6: Bool { if case .v6 = self { return true } else { return false } }

    /// Whether a device can have this address (see `DiscoveryIPv4.isHostAddress` and
    /// `DiscoveryIPv6.isHostAddress`; the IPv6 loopback counts, as the IPv4 one does).
    public var isHostAddress: Bool {
        switch self {
        case .v4(let a): return a.isHostAddress
        case .v6(let a): return a.isLoopback || a.isHostAddress
        }
    }
}

/// An address of an interface discovery serves (one `--listen` names, or any when it names
/// none), with its network's prefix length.
public struct ServedAddress: Hashable, Sendable {
    public var address: DiscoveryAddress
    public var prefixLength: Int
    /// The interface it is on (nil: any, as in tests that need no interface): an announcement
    /// is answered only when its source is on-link on the interface it arrived on.
    public var interface: String?
    public init(address: DiscoveryAddress, prefixLength: Int, interface: String? = nil) {
        self.address = address
        self.prefixLength = min(address.isIPv6 ? 128 : 32, max(0, prefixLength))
        self.interface = interface
    }

    public init(address: DiscoveryIPv4, prefixLength: Int, interface: String? = nil) {
        self.init(address: .v4(address), prefixLength: prefixLength, interface: interface)
    }

    public func hasOnLink(_ host: DiscoveryIPv4) -> Bool { hasOnLink(.v4(host)) }

    /// Whether `host` is a device on this network. IPv4: in it, and neither its network address
    /// nor its broadcast address (for prefixes up to /30, which have those). IPv6: a link-local
    /// host is on the link of a served link-local address with the same zone (fe80::/10 on that
    /// interface, whatever the prefix length says); any other host must be in the prefix and not
    /// its subnet-router anycast address (all host bits zero, up to /126); never across families.
    public func hasOnLink(_ host: DiscoveryAddress) -> Bool {
        switch (address, host) {
        case (.v4(let own), .v4(let h)):
            let mask: UInt32 = prefixLength == 0 ? 0 : UInt32.max << (32 - prefixLength)
            guard h.value & mask == own.value & mask else { return false }
            if prefixLength <= 30 {
                let hostBits = h.value & ~mask
                return hostBits != 0 && hostBits != ~mask
            }
            return true
        case (.v6(let own), .v6(let h)):
            if own.isLinkLocal || h.isLinkLocal {
                return own.isLinkLocal && h.isLinkLocal && own.zone != nil && own.zone == h.zone
            }
            guard !h.isV4Mapped && !h.isMulticast else { return false }
            let highMask: UInt64 = prefixLength == 0 ? 0 : prefixLength >= 64 ? .max : UInt64.max << (64 - prefixLength)
            let lowMask: UInt64 = prefixLength <= 64 ? 0 : prefixLength == 128 ? .max : UInt64.max << (128 - prefixLength)
            guard h.high & highMask == own.high & highMask, h.low & lowMask == own.low & lowMask else { return false }
            if prefixLength <= 126 && h.high & ~highMask == 0 && h.low & ~lowMask == 0 { return false }
            return true
        default:
            return false
        }
    }
}

/// What an announcement says, once checked.
public struct Announcement: Equatable, Sendable {
    /// Cleaned for a log line: no control, line-breaking or bidi characters, 64 scalars at most.
    public var alias: String
    /// HTTPS: the SHA-256 of the announcer's certificate, 64 upper-case hex digits. HTTP: the
    /// random string the apps send then (at most 128 printable ASCII characters), or nil.
    public var fingerprint: String?
    /// 53317 (LocalSend's default) when the announcement names none; not checked here.
    public var port: Int
    public var https: Bool
    /// False for an answer to someone's announcement (`announce` false), which asks for nothing.
    public var asksForAnswers: Bool

    public init(alias: String, fingerprint: String?, port: Int, https: Bool, asksForAnswers: Bool) {
        self.alias = alias
        self.fingerprint = fingerprint
        self.port = port
        self.https = https
        self.asksForAnswers = asksForAnswers
    }

    /// The longest alias taken, in UTF-8 bytes (before cleaning); real ones are a few dozen.
    public static let aliasLimit = 1024
    /// The most scalars kept of an alias; a longer one is cut and ends in "…".
    public static let aliasScalars = 64
    /// The longest HTTP fingerprint taken (the apps send a UUID, 36 characters).
    public static let httpFingerprintLimit = 128

    /// The announcement in `datagram`, which the caller has already held to its size limit.
    public static func parse(_ datagram: [UInt8]) throws(DiscoveryRefusal) -> Announcement {
        let info: DeviceInfo
        do { info = try LocalSendJSON.decode(DeviceInfo.self, from: datagram) } catch { throw .notLocalSend(error.description) }
        guard info.alias.utf8.count <= aliasLimit else { throw .badAlias }
        let https: Bool
        switch info.protocol {
        case nil, "https": https = true
        case "http": https = false
        default: throw .badProtocol
        }
        var fingerprint = info.fingerprint
        if https {
            guard let f = fingerprint, f.utf8.count == 64, f.utf8.allSatisfy(isHexDigit) else { throw .badFingerprint }
            fingerprint = f.uppercased()
        } else if let f = fingerprint {
            guard (1...httpFingerprintLimit).contains(f.utf8.count), f.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) else { throw .badFingerprint }
        }
        return Announcement(alias: cleanAlias(info.alias), fingerprint: fingerprint, port: info.port ?? 53317, https: https,
                            asksForAnswers: info.asksForAnswers)
    }

    /// `alias` fit for a log line: control characters (C0, DEL, C1) and line or paragraph
    /// separators become spaces, bidi controls go, spaces at the ends go, and what is left is
    /// cut to `aliasScalars` scalars with "…". "(no name)" when nothing is left.
    public static func cleanAlias(_ alias: String) -> String {
        var out = String.UnicodeScalarView()
        for s in alias.unicodeScalars {
            switch s.value {
            case 0..<0x20, 0x7F...0x9F, 0x2028, 0x2029: out.append(" ")
            case 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: continue
            default: out.append(s)
            }
        }
        var scalars = Array(out)
        while scalars.first == " " { scalars.removeFirst() }
        while scalars.last == " " { scalars.removeLast() }
        if scalars.count > aliasScalars { scalars = Array(scalars.prefix(aliasScalars - 1)) + ["…"] }
        return scalars.isEmpty ? "(no name)" : String(String.UnicodeScalarView(scalars))
    }
}

private func isHexDigit(_ b: UInt8) -> Bool { (48...57).contains(b) || (65...70).contains(b) || (97...102).contains(b) }

/// Why a datagram or an announcement is not answered.
public enum DiscoveryRefusal: Error, Equatable, Sendable, CustomStringConvertible {
    /// Longer than `datagramLimit`: not decoded at all.
    case tooLong
    /// Not JSON, or not a device's info (a missing alias, a wrong type).
    case notLocalSend(String)
    case badAlias
    case badFingerprint
    /// Neither "http" nor "https".
    case badProtocol
    /// An answer (`announce` false), which asks for nothing.
    case notAnnouncement
    /// ptkd's own announcement, looped back.
    case own
    /// Not a device's address (0.0.0.0, ::, multicast, broadcast, an IPv4 address in IPv6
    /// form, a link-local address without its interface, or no address at all).
    case badSource
    /// A loopback source while ptkd serves no loopback interface: forged.
    case loopbackFromNetwork
    /// A source on none of the networks discovery serves.
    case sourceNotServed
    /// One of ptkd's own ports on one of its own addresses: ptkd would call itself.
    case ownPort
    /// The source was answered less than `sourceInterval` ago (the apps announce a few times in a row).
    case repeated
    /// More registers than `registersPerSecond` allows.
    case overRate
    /// Pushed out of the full queue by a newer one.
    case queueFull
    /// Waited longer than `maxWait` in the queue.
    case stale
    /// A multicast answer went out less than `multicastAnswerInterval` ago; it serves this one too.
    case answeredAlready

    public var description: String {
        switch self {
        case .tooLong: return "too long"
        case .notLocalSend(let why): return "not a LocalSend announcement (\(why))"
        case .badAlias: return "alias over \(Announcement.aliasLimit) bytes"
        case .badFingerprint: return "bad fingerprint"
        case .badProtocol: return "protocol neither http nor https"
        case .notAnnouncement: return "an answer, not an announcement"
        case .own: return "ptkd's own"
        case .badSource: return "not from a device's address"
        case .loopbackFromNetwork: return "a loopback source from the network"
        case .sourceNotServed: return "from an address on no network discovery serves"
        case .ownPort: return "one of ptkd's own ports"
        case .repeated: return "repeated"
        case .overRate: return "over the rate limit"
        case .queueFull: return "pushed out of the full queue"
        case .stale: return "waited too long"
        case .answeredAlready: return "answered by a recent multicast answer"
        }
    }

    /// The kind, for counting: refusals that happen in normal use (repeats, answers, ptkd's own,
    /// answers coalesced) are not worth a log line; the others are counted and reported.
    public var tallyKey: String? {
        switch self {
        case .notAnnouncement, .own, .repeated, .answeredAlready: return nil
        case .tooLong, .notLocalSend, .badAlias, .badFingerprint, .badProtocol: return "invalid"
        case .badSource, .loopbackFromNetwork, .sourceNotServed, .ownPort: return "from a refused source"
        case .overRate: return "over the rate limit"
        case .queueFull: return "pushed out of the full queue"
        case .stale: return "waited too long"
        }
    }
}

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
    public var datagramLimit = 4096
    public var registerPorts: ClosedRange<Int> = 1024...65535
    public var sourceInterval: Duration = .seconds(5)
    public var sourceCapacity = 256
    public var registersPerSecond = 2.0
    public var registerBurst = 6.0
    public var queueCapacity = 8
    public var maxWait: Duration = .seconds(4)
    public var multicastAnswerInterval: Duration = .seconds(1)
    public var reportInterval: Duration = .seconds(60)
    public init() {}
}

/// A register to make.
public struct RegisterJob: Equatable, Sendable {
    /// An IPv6 link-local one with its zone: ptkd calls it over the interface it came from.
    public var host: DiscoveryAddress
    public var port: Int
    /// The certificate fingerprint the server must show before ptkd sends anything.
    public var fingerprint: String
    public var alias: String
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
    public let capacity: Int
    public let interval: Duration
    private var ring: [(key: Key, at: Instant)?]
    private var slot: [Key: Int] = [:]
    private var next = 0

    public init(capacity: Int, interval: Duration) {
        self.capacity = max(1, capacity)
        self.interval = interval
        ring = Array(repeating: nil, count: self.capacity)
    }

    public var count: Int { slot.count }

    /// Whether `key` was recorded less than `interval` before `now`.
    public func contains(_ key: Key, now: Instant) -> Bool {
        guard let i = slot[key], let entry = ring[i] else { return false }
        return now - entry.at < interval
    }

    public mutating func record(_ key: Key, now: Instant) {
        if let i = slot.removeValue(forKey: key) { ring[i] = nil }
        if let old = ring[next] { slot.removeValue(forKey: old.key) }
        ring[next] = (key, now)
        slot[key] = next
        next = (next + 1) % capacity
    }

    public mutating func forget(_ key: Key) {
        if let i = slot.removeValue(forKey: key) { ring[i] = nil }
    }
}

/// At most `rate` takes a second on average, `burst` at once.
public struct DiscoveryTokenBucket: Sendable, Equatable {
    public let rate: Double
    public let burst: Double
    private var tokens: Double
    private var last: Instant?

    public init(rate: Double, burst: Double) {
        self.rate = rate
        self.burst = max(1, burst)
        tokens = self.burst
    }

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
    public let limits: DiscoveryLimits
    /// ptkd's own LocalSend fingerprint, upper case.
    public let ownFingerprint: String
    /// ptkd's own ports (protocol v1, LocalSend, web), which it never registers with on its own addresses.
    public let ownPorts: Set<Int>
    public private(set) var served: [ServedAddress] = []
    private var recent: DiscoveryRecentTable<DiscoveryAddress>
    private var bucket: DiscoveryTokenBucket
    /// Newest last; the worker takes the newest first (a flood's oldest are the likeliest gone).
    public private(set) var queue: [RegisterJob] = []
    private var lastMulticastAnswer: Instant?
    /// Counts by `tallyKey` since the last report.
    public private(set) var tally: [String: Int] = [:]
    private var lastReport: Instant?

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
    public func decide(_ a: Announcement, from source: DiscoveryAddress, arrivedOn: String? = nil) -> DiscoveryDecision {
        let served = arrivedOn.map { name in self.served.filter { $0.interface == nil || $0.interface == name } } ?? self.served
        guard a.asksForAnswers else { return .refuse(.notAnnouncement) }
        if let f = a.fingerprint, f.uppercased() == ownFingerprint { return .refuse(.own) }
        guard source.isHostAddress else { return .refuse(.badSource) }
        // The kernel drops loopback sources that arrive on other interfaces; a loopback source
        // while no loopback address of its family is served is forged all the same.
        if source.isLoopback && !served.contains(where: { $0.address.isLoopback && $0.address.isIPv6 == source.isIPv6 }) { return .refuse(.loopbackFromNetwork) }
        guard served.contains(where: { $0.hasOnLink(source) }) else { return .refuse(.sourceNotServed) }
        if ownPorts.contains(a.port) && served.contains(where: { $0.address == source }) { return .refuse(.ownPort) }
        guard a.https, let fingerprint = a.fingerprint else { return .answerByMulticast(why: "it serves plain HTTP; ptkd registers over HTTPS only") }
        guard limits.registerPorts.contains(a.port) else { return .answerByMulticast(why: "port \(a.port) is outside \(limits.registerPorts.lowerBound)-\(limits.registerPorts.upperBound)") }
        return .register(host: source, port: a.port, fingerprint: fingerprint)
    }

    /// A datagram received from `source` (an address as text) at `now`.
    public mutating func receive(_ datagram: [UInt8], from source: String, arrivedOn: String? = nil, now: Instant) -> DiscoveryOutcome {
        let outcome = admit(datagram, from: source, arrivedOn: arrivedOn, now: now)
        if case .refused(let why) = outcome { count(why) }
        return outcome
    }

    private mutating func admit(_ datagram: [UInt8], from source: String, arrivedOn: String?, now: Instant) -> DiscoveryOutcome {
        guard datagram.count <= limits.datagramLimit else { return .refused(.tooLong) }
        let a: Announcement
        do { a = try Announcement.parse(datagram) } catch { return .refused(error) }
        guard let address = DiscoveryAddress(source) else { return .refused(a.asksForAnswers ? .badSource : .notAnnouncement) }
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
        let parts = tally.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }.map { "\($0.value) \($0.key)" }
        let since = lastReport.map { " in the last \(Int((now - $0).seconds.rounded())) s" } ?? ""
        tally = [:]
        lastReport = now
        return "LocalSend discovery: \(total) announcement(s) not answered\(since): \(parts.joined(separator: ", ")); at most \(Int(limits.registersPerSecond)) register(s) a second, one per address every \(Int(limits.sourceInterval.seconds)) s"
    }
}
