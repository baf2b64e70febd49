import PTKVocabulary

/// The one place a store failure becomes protocol v1's words: the FAILED (or REJECT) code for
/// each kind (protocol-v1.md section 7). A type the store does not keep is `not-png`, as it
/// always was on the wire; the message goes as the store wrote it.
extension FileErrorCode {
    /// The code that reports a store failure of this kind.
    public init(_ kind: StoreFailure.Kind) {
        switch kind {
        case .notAPhoto, .typeNotKept: self = .notPNG
        case .sizeMismatch: self = .sizeMismatch
        case .hashMismatch: self = .hashMismatch
        case .noSpace: self = .noSpace
        case .io: self = .ioError
        }
    }
}

extension Problem {
    /// The `{code, message}` of a FAILED or REJECT that reports `failure`.
    public init(_ failure: StoreFailure) { self.init(FileErrorCode(failure.kind), failure.message) }
}
