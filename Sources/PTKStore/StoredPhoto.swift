/// What the store answers for a photo it took: where it is kept and what it is. The store's own
/// terms, not any door's message: protocol v1 turns it into SAVED, the HTTP doors into their
/// answers, the library and the hook into an arrival.
public struct StoredPhoto: Sendable, Equatable {
    /// Where it is kept, relative to the received-photos directory (with folders,
    /// "alice/IMG_1.png", when the layout files photos in folders).
    public var name: String
    /// Its length in bytes.
    public var size: Int64
    /// Its SHA-256, 64 lowercase hex digits.
    public var sha256: String
    /// True when nothing new was stored: the directory already kept these bytes under `name`
    /// (duplicates = skip).
    public var isDuplicate: Bool

    /// What the store answers; `isDuplicate` only when it kept nothing new.
    public init(name: String, size: Int64, sha256: String, isDuplicate: Bool = false) {
        self.name = name
        self.size = size
        self.sha256 = sha256
        self.isDuplicate = isDuplicate
    }
}
