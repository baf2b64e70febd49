import PTKVocabulary

/// The one place a store failure becomes an HTTP status (the LocalSend endpoint's and the web
/// interface's uploads): 422 for a hash that does not match (as the apps expect), 400 for bytes
/// that are not what was announced (not a photo, a type not kept, a size that differs), 507
/// (Insufficient Storage) for a full disk or quota, 500 for the receiver's other trouble. The
/// reason is the store's message.
func httpStatus(for failure: StoreFailure) -> (status: Int, reason: String) {
    switch failure.kind {
    case .hashMismatch: return (422, failure.message)
    case .notAPhoto, .typeNotKept, .sizeMismatch: return (400, failure.message)
    case .noSpace: return (507, failure.message)
    case .io: return (500, failure.message)
    }
}
