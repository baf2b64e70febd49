/// Codes carried by ERROR frames (protocol-v1.md section 4).
public struct ErrorCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The code as it goes on the wire; a code this build does not know keeps its text.
    public var rawValue: String
    /// Any string is accepted, so an ERROR from a newer peer still decodes.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// The wire text, as logs and messages show it.
    public var description: String { rawValue }

    /// The frame's type is unknown, its payload is not as its type requires, or its JSON does not parse (§2).
    public static let badFrame = ErrorCode(rawValue: "bad-frame")
    /// The frame's length is over its type's limit; the reader says so before it reads the payload (§2).
    public static let frameTooLarge = ErrorCode(rawValue: "frame-too-large")
    /// The frame is not allowed in the session's current state (§2), or the sender overran its window (§3).
    public static let unexpectedFrame = ErrorCode(rawValue: "unexpected-frame")
    /// HELLO asked for a version this receiver does not speak (§4).
    public static let unsupportedVersion = ErrorCode(rawValue: "unsupported-version")
    /// The receiver is at its session limit; a sender retries later (ptk's senders wait their turn: `Problem.waiting`).
    public static let busy = ErrorCode(rawValue: "busy")
    /// The peer sent nothing for its idle timeout (default 30 seconds, §4).
    public static let timeout = ErrorCode(rawValue: "timeout")
    /// The receiver is stopping; what was cut off can be resumed later (§4, ACCEPT.offset).
    public static let shuttingDown = ErrorCode(rawValue: "shutting-down")
    /// The sender's device is not trusted, or has no device identity; the message names its device ID (§6).
    public static let unauthorized = ErrorCode(rawValue: "unauthorized")
    /// The receiver refuses plaintext sessions: a sender must come back over TLS (§6).
    public static let tlsRequired = ErrorCode(rawValue: "tls-required")
    /// Something went wrong inside the peer itself, not in what the other side sent.
    public static let `internal` = ErrorCode(rawValue: "internal")
}

/// Codes carried by REJECT and FAILED frames.
public struct FileErrorCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The code as it goes on the wire; a code this build does not know keeps its text.
    public var rawValue: String
    /// Any string is accepted, so a REJECT or FAILED from a newer peer still decodes.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// The wire text, as logs and messages show it.
    public var description: String { rawValue }

    /// REJECT: the offer is over WELCOME.maxFileSize (§4).
    public static let tooLarge = FileErrorCode(rawValue: "too-large")
    /// REJECT or FAILED: the disk cannot hold the file and keep the configured reserve free (§4).
    public static let noSpace = FileErrorCode(rawValue: "no-space")
    /// REJECT or FAILED: the bytes are not a photo of a type the receiver keeps; the name predates other types (§7).
    public static let notPNG = FileErrorCode(rawValue: "not-png")
    /// REJECT: the offer's media type is not one the receiver keeps (protocol-v1.md section 7).
    public static let unsupportedType = FileErrorCode(rawValue: "unsupported-type")
    /// REJECT: the sender may not send files here (§4, §6).
    public static let unauthorized = FileErrorCode(rawValue: "unauthorized")
    /// FAILED: the bytes received are not as many as OFFER.size said (§5).
    public static let sizeMismatch = FileErrorCode(rawValue: "size-mismatch")
    /// FAILED: the SHA-256 of the bytes received is not OFFER.sha256 (§5).
    public static let hashMismatch = FileErrorCode(rawValue: "hash-mismatch")
    /// FAILED: the receiver could not write or keep the file: its own trouble, not the bytes sent.
    public static let ioError = FileErrorCode(rawValue: "io-error")
}

/// A protocol violation seen by one side: it answers with ERROR `code` and closes.
public struct ProtocolViolation: Error, Equatable, Sendable, CustomStringConvertible {
    /// The ERROR code the side sends before it closes.
    public var code: ErrorCode
    /// What went wrong, in words for a person; it goes in the ERROR frame's message.
    public var message: String
    /// Takes the code and the message, for `throw ProtocolViolation(.badFrame, "...")`.
    public init(_ code: ErrorCode, _ message: String) {
        self.code = code
        self.message = message
    }
    /// "code: message", for logs and the sender's report.
    public var description: String { "\(code): \(message)" }
}
