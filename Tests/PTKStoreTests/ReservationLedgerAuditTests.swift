import PTKSystem
import PTKTestTags
import PTKVocabulary
import Testing

@testable import PTKStore

/// Probes of the store-wide ledger from the security review of issue 55 (attack-55).
@Suite("ReservationLedger: sizes at the ends of Int64, audited", .tags(.unit))
struct ReservationLedgerAuditTests {
    @Test(
        "a size near Int64.max (max-file-size set as large) when more is promised than is free now: refused no-space, no overflow trap, nothing taken"
    )
    func hugeRequestWhenOverPromised() throws {
        let ledger = ReservationLedger()
        try ledger.take(1_000, minFree: 0, what: "first", free: { () throws(SystemError) in 2_000 })
        // The file system filled from elsewhere: less is free now than is promised.
        for bytes in [Int64.max, Int64.max - 500, Int64.max / 2 + 1_000] {
            do throws(StoreFailure) {
                try ledger.take(bytes, minFree: 100, what: "huge", free: { () throws(SystemError) in 10 })
                Issue.record("\(bytes) taken")
            } catch {
                #expect(error.kind == .noSpace, "\(error)")
            }
        }
        // A min-free set near Int64.max too.
        do throws(StoreFailure) {
            try ledger.take(1, minFree: .max, what: "one", free: { () throws(SystemError) in 10 })
            Issue.record("taken under a reserve of Int64.max")
        } catch {
            #expect(error.kind == .noSpace, "\(error)")
        }
        #expect(ledger.total == 1_000)
    }
}
