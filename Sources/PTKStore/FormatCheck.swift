/// Why bytes are not a well-formed photo of their type (PNG, JPEG, HEIF).
public struct FormatError: Error, Equatable, Sendable, CustomStringConvertible {
    /// What is wrong, in words for the sender and the log.
    public var message: String
    /// A failure saying `message`.
    public init(_ message: String) { self.message = message }
    /// The message alone.
    public var description: String { message }
}

/// A structural check of a photo's bytes, fed as they stream in, in pieces of any size.
public protocol FormatCheck: Sendable {
    /// Feeds the next bytes of the file; throws as soon as they cannot be of the format.
    mutating func feed(_ bytes: UnsafeRawBufferPointer) throws(FormatError)
    /// Ends the stream: throws when the file is incomplete.
    func finish() throws(FormatError)
}

extension FormatCheck {
    /// Feeds the next bytes of the file.
    public mutating func feed(_ bytes: [UInt8]) throws(FormatError) {
        try bytes.withUnsafeBytes { b in Result { () throws(FormatError) in try feed(b) } }.get()
    }
}
