import PTKProtocol

/// Who a sender is, in either of the two kinds of identity ptkd knows.
public enum SenderID: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// A ptk device (protocol §6): its device ID.
    case device(DeviceID)
    /// A LocalSend app: the SHA-256 of its certificate, 64 upper-case hex digits (what the apps
    /// call its fingerprint).
    case localSend(String)

    /// Parses either kind as a person may type it: a device ID (52 base32 characters, dashes
    /// and spaces ignored) or a LocalSend fingerprint (64 hex digits, any case, `:` `-` and
    /// spaces ignored).
    public init?(parsing text: String) {
        if let id = DeviceID(parsing: text) {
            self = .device(id)
        } else if let hex = Self.normalizedHex(text), hex.utf8.count == 64 {
            self = .localSend(hex)
        } else {
            return nil
        }
    }

    /// `text` upper-cased without separators, or nil when a character is not a hex digit.
    static func normalizedHex(_ text: String) -> String? {
        var out: [UInt8] = []
        for var c in text.utf8 {
            if c == UInt8(ascii: "-") || c == UInt8(ascii: " ") || c == UInt8(ascii: ":") { continue }
            if c >= UInt8(ascii: "a") && c <= UInt8(ascii: "f") { c -= 32 }
            guard
                (c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9")) || (c >= UInt8(ascii: "A") && c <= UInt8(ascii: "F"))
            else { return nil }
            out.append(c)
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// As lists show it: the device ID in dashed groups, the fingerprint in full.
    public var description: String {
        switch self {
        case .device(let id): return id.description
        case .localSend(let hex): return hex
        }
    }

    /// Without separators, as the files store it.
    public var compact: String {
        switch self {
        case .device(let id): return id.compact
        case .localSend(let hex): return hex
        }
    }

    /// Which kind it is, in words of the same width for aligned lists.
    public var kind: String {
        switch self {
        case .device: return "ptk      "
        case .localSend: return "LocalSend"
        }
    }

    /// A few characters for lists and messages.
    public var short: String {
        switch self {
        case .device(let id): return id.short
        case .localSend(let hex): return String(hex.prefix(8))
        }
    }

    /// True when `prefix` (as typed) starts this ID.
    public func hasPrefix(_ prefix: String) -> Bool {
        switch self {
        case .device(let id): return id.hasPrefix(prefix)
        case .localSend(let hex):
            guard let p = Self.normalizedHex(prefix), !p.isEmpty else { return false }
            return hex.hasPrefix(p)
        }
    }

    /// Orders by the compact form, so lists of senders come out the same every time.
    public static func < (a: SenderID, b: SenderID) -> Bool { a.compact < b.compact }
}
