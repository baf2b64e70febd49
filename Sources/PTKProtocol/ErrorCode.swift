/// Codes carried by ERROR frames (protocol-v1.md section 4).
public struct ErrorCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }

    public static let badFrame = ErrorCode(rawValue: "bad-frame")
    public static let frameTooLarge = ErrorCode(rawValue: "frame-too-large")
    public static let unexpectedFrame = ErrorCode(rawValue: "unexpected-frame")
    public static let unsupportedVersion = ErrorCode(rawValue: "unsupported-version")
    public static let busy = ErrorCode(rawValue: "busy")
    public static let timeout = ErrorCode(rawValue: "timeout")
    public static let shuttingDown = ErrorCode(rawValue: "shutting-down")
    public static let unauthorized = ErrorCode(rawValue: "unauthorized")
    public static let tlsRequired = ErrorCode(rawValue: "tls-required")
    public static let `internal` = ErrorCode(rawValue: "internal")
}

/// Codes carried by REJECT and FAILED frames.
public struct FileErrorCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }

    public static let tooLarge = FileErrorCode(rawValue: "too-large")
    public static let noSpace = FileErrorCode(rawValue: "no-space")
    public static let notPNG = FileErrorCode(rawValue: "not-png")
    /// REJECT: the offer's media type is not one the receiver keeps (protocol-v1.md section 7).
    public static let unsupportedType = FileErrorCode(rawValue: "unsupported-type")
    public static let unauthorized = FileErrorCode(rawValue: "unauthorized")
    public static let sizeMismatch = FileErrorCode(rawValue: "size-mismatch")
    public static let hashMismatch = FileErrorCode(rawValue: "hash-mismatch")
    public static let ioError = FileErrorCode(rawValue: "io-error")
}

/// A protocol violation seen by one side: it answers with ERROR `code` and closes.
public struct ProtocolViolation: Error, Equatable, Sendable, CustomStringConvertible {
    public var code: ErrorCode
    public var message: String
    public init(_ code: ErrorCode, _ message: String) {
        self.code = code
        self.message = message
    }
    public var description: String { "\(code): \(message)" }
}
