import PTKTestSupport
import PTKTestTags
import Testing

@testable import PTKStore
@testable import PTKUpload

/// Probes of the spool and the ledger from the security review of issue 55 (attack-55).
@Suite("StoreUpload.spool: the ledger once a body is whole, audited", .tags(.unit))
struct StoreUploadSpoolAuditTests {
    @Test(
        "a spooled body that fits is stored: the spool's promise of bytes it never wrote is given back before the store counts the photo's room"
    )
    func leftoverPromiseGivenBack() throws {
        let step = SpoolFile.reserveStep
        let photo = makePNG(size: 1 << 20, seed: 5502)
        let (_, http) = try uploadConnection([putHead(length: nil) + chunkedBody(photo, size: 1 << 16)])
        let minFree: Int64 = 1 << 30
        let store = try UploadStore(minFree: minFree)
        let file = try storeSpool(store)
        defer { file.close() }
        let held = SpoolHolder(file)
        // Room for the spool's first step (4 MiB) and half a MiB more; what the spool wrote is no longer free.
        store.store.freeSpaceForTests = { minFree + step + step / 8 - held.size }
        let size = try StoreUpload.spool(http.requestBody, into: file, limit: 1 << 30, stop: { nil }).get()
        #expect(size == Int64(photo.count))
        // The photo needs its 1 MiB again beside the spool's, and 3.5 MiB are free above min-free.
        let outcome = StoreUpload.receive(
            size: size, reading: StoreUpload.replay(file), into: store.store,
            decide: { _ in
                .store(StoreRequest(name: "fits.png", size: size, sha256: "", type: .png))
            }, stop: { nil })
        if let failure = uploadFailure(outcome) { Issue.record("refused: \(failure.status) \(failure.detail)") }
        #expect(store.visible == ["fits.png"], "\(store.visible)")
        file.close()
        #expect(store.store.ledger.total == 0)
    }

    @Test(
        "chunk extensions are not body bytes: 8 MiB of one chunk's extension do not pass as a body under a 10-byte limit (the HTTP layer refuses the chunk line)"
    )
    func chunkExtensionFlood() throws {
        let flood =
            Array("1;".utf8) + [UInt8](repeating: UInt8(ascii: "a"), count: 8 << 20) + Array("\r\nX\r\n0\r\n\r\n".utf8)
        let (_, http) = try uploadConnection([putHead(length: nil) + flood])
        let store = try UploadStore()
        let file = try storeSpool(store)
        defer { file.close() }
        let outcome = StoreUpload.spool(http.requestBody, into: file, limit: 10, stop: { nil })
        if case .success(let size) = outcome { Issue.record("8 MiB of a chunk line read as a body of \(size) bytes") }
    }
}
