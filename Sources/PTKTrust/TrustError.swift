/// Why a trust operation could not be done, with the fix where there is one: the one error every
/// public call of PTKTrust throws (typed), so a caller knows what it may have to handle.
public struct TrustError: Error, CustomStringConvertible, Equatable {
    /// Whose the failure is: the request's, or the state files'.
    public enum Kind: Sendable, Equatable {
        /// The request cannot be honoured (no such ID, a name taken, an invalid name): `ptk` exits 1.
        case refused
        /// A state file could not be read, written or locked (an I/O error, a symlink or second
        /// hard link refused, a lock held too long): `ptk` exits 74.
        case files
    }

    /// Whose the failure is.
    public var kind: Kind
    /// What went wrong, with the fix where there is one; `ptk` prints it as it is.
    public var description: String

    /// A refusal of the request. The message should carry the fix where there is one.
    public init(_ description: String) {
        kind = .refused
        self.description = description
    }

    /// A state file's failure, saying what `error` says (a `TrustError` stays as it is).
    public init(files error: any Error) {
        if let error = error as? TrustError {
            self = error
        } else {
            kind = .files
            description = "\(error)"
        }
    }
}

/// Runs the body of a public trust call: whatever the file layer throws comes out as a
/// `TrustError` of kind `.files`, a refusal as it was thrown.
func files<R>(_ body: () throws -> R) throws(TrustError) -> R {
    do { return try body() } catch { throw TrustError(files: error) }
}
