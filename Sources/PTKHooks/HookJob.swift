import FoundationEssentials
import PTKVocabulary

/// One run of the `on-saved` hook owed for a photo: what it is told.
public struct HookJob: Codable, Equatable, Sendable {
    /// Its place in arrival order; never reused (the queue file's last one goes on after a restart).
    public var sequence: Int64
    /// The photo's path relative to the directory (PTK_NAME).
    public var name: String
    /// The photo's absolute path (PTK_PATH).
    public var path: String
    /// Its size in bytes.
    public var size: Int64
    /// The SHA-256 of its bytes, in hex.
    public var sha256: String
    /// "image/png", "image/jpeg", ...
    public var mediaType: String
    /// The name the sender announced (bounded by `bounded`).
    public var senderName: String
    /// The sender's device ID, when it showed one.
    public var senderID: String?
    /// "192.0.2.1:50000".
    public var senderAddress: String
    /// ISO 8601.
    public var received: String
    /// When the photo was taken (ISO 8601), when known.
    public var taken: String?
    /// The receiver stored nothing new: it kept these bytes already, as `name`.
    public var duplicate: Bool

    /// A job with every field given.
    public init(
        sequence: Int64, name: String, path: String, size: Int64, sha256: String, mediaType: String, senderName: String,
        senderID: String?, senderAddress: String, received: String, taken: String?, duplicate: Bool
    ) {
        self.sequence = sequence
        self.name = name
        self.path = path
        self.size = size
        self.sha256 = sha256
        self.mediaType = mediaType
        self.senderName = senderName
        self.senderID = senderID
        self.senderAddress = senderAddress
        self.received = received
        self.taken = taken
        self.duplicate = duplicate
    }

    /// The most bytes of a sender's text (its name) a job carries: the rest is cut and marked.
    static let textLimit = 256
    static let cutMarker = "...[cut]"

    /// `text` within `textLimit` bytes of UTF-8, cut at a scalar with `cutMarker` when longer:
    /// a sender's name can neither swell the queue nor push the hook's environment past what
    /// `execve` takes.
    public static func bounded(_ text: String) -> String {
        guard text.utf8.count > textLimit else { return text }
        var out = String.UnicodeScalarView()
        var used = 0
        for s in text.unicodeScalars {
            let n = String(s).utf8.count
            if used + n > textLimit - cutMarker.utf8.count { break }
            out.append(s)
            used += n
        }
        return String(out) + cutMarker
    }

    /// The hook's environment beside ptkd's own.
    var environment: [String] {
        var env = [
            "PTK_PATH=\(path)", "PTK_NAME=\(name)", "PTK_SIZE=\(size)", "PTK_SHA256=\(sha256)",
            "PTK_MEDIA_TYPE=\(mediaType)",
            "PTK_SENDER_NAME=\(senderName)", "PTK_SENDER_ID=\(senderID ?? "")", "PTK_SENDER_ADDRESS=\(senderAddress)",
            "PTK_RECEIVED=\(received)",
        ]
        if let taken { env.append("PTK_TAKEN=\(taken)") }
        if duplicate { env.append("PTK_DUPLICATE=1") }
        return env
    }
}
