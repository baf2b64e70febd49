import PTKVocabulary
import Testing

@testable import PTKDaemon

@Suite("Store failures as HTTP statuses")
struct StoreFailureStatusTests {
    @Test("422 for a hash, 400 for bytes not as announced, 507 for a full disk, 500 for the rest; the reason is the store's message")
    func statuses() {
        let expected: [StoreFailure.Kind: Int] = [.hashMismatch: 422, .notAPhoto: 400, .typeNotKept: 400, .sizeMismatch: 400, .noSpace: 507, .io: 500]
        for kind in StoreFailure.Kind.allCases {
            let (status, reason) = httpStatus(for: StoreFailure(kind, "why"))
            #expect(status == expected[kind] && reason == "why", "\(kind)")
            #expect(LocalSendEndpoint.status(for: StoreFailure(kind, "why")) == (expected[kind]!, "why"))
        }
    }
}
