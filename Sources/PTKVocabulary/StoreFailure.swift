/// Why the received-photos directory did not keep a photo, in the store's own words: what
/// kind of failure (which the protocols turn into their codes and statuses, each in one place:
/// protocol v1's FAILED and REJECT codes in PTKProtocol, the HTTP statuses in PTKHTTP's
/// `StoreUpload.status(for:)`) and a
/// message for people.
public struct StoreFailure: Error, Equatable, Sendable, CustomStringConvertible {
    /// The kinds of failure the store tells apart.
    public enum Kind: String, Sendable, CaseIterable {
        /// The bytes are not a well-formed photo of their type.
        case notAPhoto
        /// The media type is not one the store keeps.
        case typeNotKept
        /// Fewer or more bytes arrived than were announced.
        case sizeMismatch
        /// The bytes' SHA-256 is not the one announced.
        case hashMismatch
        /// The disk (or a quota, or the free-space reserve) is full.
        case noSpace
        /// The receiver's own trouble: a file could not be made, written or published.
        case io
    }

    /// Which failure: what each door turns into its code or status.
    public var kind: Kind
    /// What happened, for people and the log.
    public var message: String

    /// A failure of `kind`, described by `message`.
    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    /// The bytes were refused (not a photo, not a type kept, wrong size or hash), rather than
    /// the store failing.
    public var isBadInput: Bool {
        kind == .notAPhoto || kind == .typeNotKept || kind == .sizeMismatch || kind == .hashMismatch
    }

    /// "noSpace: ...": the kind's name, then the message.
    public var description: String { "\(kind.rawValue): \(message)" }
}
