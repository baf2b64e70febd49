import PTKProtocol
import PTKTestTags
import PTKVocabulary
import Testing

@Suite("Store failures as protocol v1's FAILED and REJECT codes", .tags(.unit))
struct StoreFailureCodesTests {
    @Test("each kind has the wire code it always had; the message goes as written")
    func codes() {
        let expected: [StoreFailure.Kind: String] = [
            .notAPhoto: "not-png", .typeNotKept: "not-png", .sizeMismatch: "size-mismatch",
            .hashMismatch: "hash-mismatch", .noSpace: "no-space", .io: "io-error",
        ]
        for kind in StoreFailure.Kind.allCases {
            #expect(Problem(StoreFailure(kind, "why")) == Problem(code: expected[kind]!, message: "why"))
        }
    }
}
