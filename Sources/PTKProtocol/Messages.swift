import PTKVocabulary

/// HELLO: the sender's first frame.
public struct Hello: Codable, Equatable, Sendable {
    /// Always "ptk": a receiver refuses a HELLO from another protocol.
    public var proto: String
    /// The protocol version the sender speaks; a receiver that does not speak it answers `unsupported-version`.
    public var version: Int
    /// The sender's display name, shown by the receiver in its logs and records.
    public var name: String
    /// The most CHUNKs the sender wants in flight unacknowledged (§3); nil (an early sender) means 1.
    public var window: Int?
    /// What this sender understands beyond the first edition (protocol-v1.md section 7):
    /// `ProtocolFeature` values; unknown strings are ignored.
    public var features: [String]?
    /// `features` holds `ProtocolFeature` raw values; nil leaves the key out of the JSON, as a
    /// first-edition sender does.
    public init(
        proto: String = "ptk", version: Int = ProtocolLimits.version, name: String, window: Int,
        features: [String]? = nil
    ) {
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
    /// The protocol version the receiver speaks, the one HELLO asked for.
    public var version: Int
    /// The receiver's display name, which the sender shows its user.
    public var name: String
    /// The receiver's largest window; the session's is the smaller of this and HELLO.window, at least 1 (§3).
    public var window: Int
    /// Bytes in every CHUNK but a file's last (§3): 102400 in this version.
    public var chunkSize: Int
    /// The largest file, in bytes, the receiver takes; a larger OFFER gets REJECT `too-large`.
    public var maxFileSize: Int64
    /// How many sessions at once this receiver serves for one sender address (protocol-v1.md §4).
    /// Absent means 1: a receiver that predates the key may serve one session at a time.
    public var sessions: Int?
    /// The media types this receiver keeps (protocol-v1.md section 7). Absent means
    /// `["image/png"]`.
    public var types: [String]?
    /// `sessions` and `types` nil leave their keys out, as a receiver that predates them does.
    public init(
        version: Int = ProtocolLimits.version, name: String, window: Int,
        chunkSize: Int = ProtocolLimits.chunkSize, maxFileSize: Int64, sessions: Int? = nil, types: [String]? = nil
    ) {
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
    /// The file's name on the sender; the receiver makes its own from it by §5's rules (with folders, §7).
    public var name: String
    /// The file's size in bytes; the receiver checks the bytes against it on DONE (§5).
    public var size: Int64
    /// The SHA-256 of the whole file, 64 lowercase hex digits; checked on DONE and used to resume (§4).
    public var sha256: String
    /// The file's media type, one of those WELCOME.types lists (`image/png` before §7).
    public var mediaType: String
    /// The file's modification time on the sender, in milliseconds since the epoch (protocol
    /// section 7); absent when the sender does not say.
    public var modified: Int64?
    /// `modified` nil leaves the key out; the media type defaults to PNG, the only type of the first edition.
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
    /// Bytes of the file the receiver already holds: a multiple of the chunk size, or the whole
    /// size when it holds the file whole (§4, §7).
    public var offset: Int64
    /// `offset` 0 when the receiver has no partial copy.
    public init(offset: Int64) { self.offset = offset }
}

/// SAVED: the file is on disk under `name`, relative to the received-photos directory (a path
/// with folders, "alice/IMG_1.png", when the receiver files photos in folders).
public struct Saved: Codable, Equatable, Sendable {
    /// The final name, relative to the received-photos directory: show it as it is, it may differ from OFFER.name.
    public var name: String
    /// The size in bytes of the file as saved, equal to OFFER.size.
    public var size: Int64
    /// The SHA-256 of the saved bytes, equal to OFFER.sha256.
    public var sha256: String
    /// True when the receiver stored nothing new: it already kept these bytes under `name`
    /// (protocol-v1.md section 7). Absent (nil) otherwise.
    public var duplicate: Bool?
    /// `duplicate` nil leaves the key out: pass true only when nothing new was stored.
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
    /// An `ErrorCode` for ERROR, a `FileErrorCode` for REJECT and FAILED; kept as text so an unknown code decodes.
    public var code: String
    /// Why, in words for a person; may be empty.
    public var message: String
    /// ERROR busy only (an addition to protocol-v1.md section 7, optional, ignored by peers
    /// that predate it): how many senders wait for a session before this one.
    public var waiting: Int?
    /// The untyped form, for a code read off the wire; `waiting` only for ERROR busy.
    public init(code: String, message: String, waiting: Int? = nil) {
        self.code = code
        self.message = message
        self.waiting = waiting
    }
    /// The payload of an ERROR; `waiting` only with `.busy`.
    public init(_ code: ErrorCode, _ message: String, waiting: Int? = nil) {
        self.init(code: code.rawValue, message: message, waiting: waiting)
    }
    /// The payload of a REJECT or FAILED.
    public init(_ code: FileErrorCode, _ message: String) { self.init(code: code.rawValue, message: message) }
    /// "code: message", or the code alone when there is no message.
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
