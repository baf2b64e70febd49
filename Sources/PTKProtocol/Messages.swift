import PTKVocabulary

/// HELLO: the sender's first frame.
public struct Hello: Codable, Equatable, Sendable {
    public var proto: String
    public var version: Int
    public var name: String
    public var window: Int?
    /// What this sender understands beyond the first edition (protocol-v1.md section 7):
    /// `ProtocolFeature` values; unknown strings are ignored.
    public var features: [String]?
    public init(proto: String = "ptk", version: Int = ProtocolLimits.version, name: String, window: Int, features: [String]? = nil) {
        self.proto = proto
        self.version = version
        self.name = name
        self.window = window
        self.features = features
    }

    /// True when the sender announced `feature` in HELLO.features.
    public func announces(_ feature: ProtocolFeature) -> Bool { features?.contains(feature.rawValue) ?? false }
}

/// The strings of HELLO.features this implementation knows (protocol-v1.md section 7).
public enum ProtocolFeature: String, Sendable, CaseIterable {
    /// The sender takes ACCEPT.offset equal to OFFER.size (the receiver holds the file whole:
    /// it then sends DONE at once) and SAVED.duplicate.
    case held
    /// ptk's own addition: OFFER.name may carry folders ("2024/summer/IMG_1.jpg", separated by
    /// `/`), which the receiver keeps below its own folder for this sender, each component by
    /// section 5's rules. Without it, only the name's last component counts (section 5). A
    /// peer that does not know it ignores it (section 7), so the names stay flat there.
    case folders
    /// ptk's own addition: the receiver may answer a file's DONE after it has answered later
    /// frames (the next OFFER's ACCEPT or REJECT, that file's ACKs), so files of one session
    /// share one flush round. SAVED and FAILED answering DONEs still come in the order of the
    /// DONEs, and a FAILED in place of an ACK comes only after every earlier DONE was answered:
    /// a SAVED answers the oldest unanswered DONE, a FAILED too when there is one, else the file
    /// whose chunks flow. A receiver that does not know it answers in order (section 4).
    case lateAnswers = "late-answers"
}

/// WELCOME: the receiver's answer to HELLO.
public struct Welcome: Codable, Equatable, Sendable {
    public var version: Int
    public var name: String
    public var window: Int
    public var chunkSize: Int
    public var maxFileSize: Int64
    /// How many sessions at once this receiver serves for one sender address (protocol-v1.md §4).
    /// Absent means 1: a receiver that predates the key may serve one session at a time.
    public var sessions: Int?
    /// The media types this receiver keeps (protocol-v1.md section 7). Absent means
    /// `["image/png"]`.
    public var types: [String]?
    public init(version: Int = ProtocolLimits.version, name: String, window: Int,
                chunkSize: Int = ProtocolLimits.chunkSize, maxFileSize: Int64, sessions: Int? = nil, types: [String]? = nil) {
        self.version = version
        self.name = name
        self.window = window
        self.chunkSize = chunkSize
        self.maxFileSize = maxFileSize
        self.sessions = sessions
        self.types = types
    }

    /// The sessions a sender may have open at once with this receiver: `sessions`, or 1 when
    /// it is absent or not a usable number.
    public var sessionsAllowed: Int { max(1, sessions ?? 1) }

    /// The types a sender may offer: those of `types` this implementation knows, or PNG alone
    /// when the receiver does not say (a receiver that predates section 7).
    public var keptTypes: [PhotoType] {
        guard let types else { return [.png] }
        return PhotoType.allCases.filter { t in types.contains { $0.lowercased() == t.mediaType } }
    }
}

/// OFFER: a file the sender wants to send.
public struct Offer: Codable, Equatable, Sendable {
    public var name: String
    public var size: Int64
    public var sha256: String
    public var mediaType: String
    /// The file's modification time on the sender, in milliseconds since the epoch (protocol
    /// section 7); absent when the sender does not say.
    public var modified: Int64?
    public init(name: String, size: Int64, sha256: String, mediaType: String = "image/png", modified: Int64? = nil) {
        self.name = name
        self.size = size
        self.sha256 = sha256
        self.mediaType = mediaType
        self.modified = modified
    }
}

/// ACCEPT: the receiver takes the offer and already holds `offset` bytes of it.
public struct Accept: Codable, Equatable, Sendable {
    public var offset: Int64
    public init(offset: Int64) { self.offset = offset }
}

/// SAVED: the file is on disk under `name`, relative to the received-photos directory (a path
/// with folders, "alice/IMG_1.png", when the receiver files photos in folders).
public struct Saved: Codable, Equatable, Sendable {
    public var name: String
    public var size: Int64
    public var sha256: String
    /// True when the receiver stored nothing new: it already kept these bytes under `name`
    /// (protocol-v1.md section 7). Absent (nil) otherwise.
    public var duplicate: Bool?
    public init(name: String, size: Int64, sha256: String, duplicate: Bool? = nil) {
        self.name = name
        self.size = size
        self.sha256 = sha256
        self.duplicate = duplicate
    }

    /// True when SAVED says the receiver already held the file.
    public var isDuplicate: Bool { duplicate == true }
}

/// The `{code, message}` payload of REJECT, FAILED and ERROR.
public struct Problem: Codable, Equatable, Sendable, CustomStringConvertible {
    public var code: String
    public var message: String
    /// ERROR busy only (an addition to protocol-v1.md section 7, optional, ignored by peers
    /// that predate it): how many senders wait for a session before this one.
    public var waiting: Int?
    public init(code: String, message: String, waiting: Int? = nil) {
        self.code = code
        self.message = message
        self.waiting = waiting
    }
    public init(_ code: ErrorCode, _ message: String, waiting: Int? = nil) { self.init(code: code.rawValue, message: message, waiting: waiting) }
    public init(_ code: FileErrorCode, _ message: String) { self.init(code: code.rawValue, message: message) }
    public var description: String { message.isEmpty ? code : "\(code): \(message)" }
    /// The code of an ERROR, typed (a code this build does not know keeps its text).
    public var errorCode: ErrorCode { ErrorCode(rawValue: code) }
    /// The code of a REJECT or FAILED, typed.
    public var fileErrorCode: FileErrorCode { FileErrorCode(rawValue: code) }
}

extension String {
    /// True when the string is 64 lowercase hexadecimal digits, the form OFFER.sha256 takes.
    public var isLowercaseSHA256Hex: Bool {
        utf8.count == 64 && utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }
}
