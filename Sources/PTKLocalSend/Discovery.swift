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

/// What an announcement says, once checked.
public struct Announcement: Equatable, Sendable {
    /// Cleaned for a log line: no control, line-breaking or bidi characters, 64 scalars at most.
    public var alias: String
    /// HTTPS: the SHA-256 of the announcer's certificate, 64 upper-case hex digits. HTTP: the
    /// random string the apps send then (at most 128 printable ASCII characters), or nil.
    public var fingerprint: String?
    /// 53317 (LocalSend's default) when the announcement names none; not checked here.
    public var port: Int
    /// The announcement's `protocol` is "https" (or absent); ptkd registers only with an HTTPS announcer.
    public var https: Bool
    /// False for an answer to someone's announcement (`announce` false), which asks for nothing.
    public var asksForAnswers: Bool

    /// Takes the fields as given: `Announcement.parse` is what checks them.
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
        do { info = try LocalSendJSON.decode(DeviceInfo.self, from: datagram) } catch {
            throw .notLocalSend(error.description)
        }
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
            guard (1...httpFingerprintLimit).contains(f.utf8.count), f.utf8.allSatisfy({ (0x21...0x7E).contains($0) })
            else { throw .badFingerprint }
        }
        return Announcement(
            alias: cleanAlias(info.alias), fingerprint: fingerprint, port: info.port ?? 53317, https: https,
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

    /// Why, in a few words, for the log.
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
