import PTKHTTP
import PTKSystem
import PTKTestSupport
import PTKTestTags
import PTKTime
import PTKTransport
import Testing

@testable import PTKStore
@testable import PTKUpload

/// A spool of a fresh store (kept alive by the spool's caller through `store`).
func storeSpool(_ store: UploadStore) throws -> SpoolFile {
    try store.store.openSpool().get()
}

/// A client that sends a chunked body of zeros forever, a 64 KiB chunk every 20 ms, until
/// `pieces` chunks (then it ends the body).
final class PacedStream: ByteStream, @unchecked Sendable {
    // Used by the one thread that runs the code under test.
    private var pending: [UInt8] = putHead(length: nil)
    private var sent = 0
    private let pieces: Int
    init(pieces: Int) { self.pieces = pieces }

    func read(into buffer: UnsafeMutableRawBufferPointer, deadline: Instant, interruptible: Bool) throws(TransportError)
        -> Int
    {
        if pending.isEmpty {
            guard sent <= pieces else { return 0 }
            sleep(for: .milliseconds(20))
            pending =
                sent == pieces
                ? Array("0\r\n\r\n".utf8) : Array("10000\r\n".utf8) + [UInt8](repeating: 0, count: 1 << 16) + [13, 10]
            sent += 1
        }
        let n = min(buffer.count, pending.count)
        pending.withUnsafeBytes { buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[..<n])) }
        pending.removeFirst(n)
        return n
    }
    func write(_ bytes: UnsafeRawBufferPointer, deadline: Instant) throws(TransportError) {}
    func shutdownWrite() {}
    func close() {}
}

/// A spool seen from a free-space seam (which must be Sendable); read on the test's thread only.
final class SpoolHolder: @unchecked Sendable {
    let file: SpoolFile
    init(_ file: SpoolFile) { self.file = file }
    var size: Int64 { file.size }
}

@Suite("StoreUpload.spool: a body of undeclared length, bounded as it grows", .tags(.unit))
struct StoreUploadSpoolTests {
    @Test(
        "a chunked body is spooled whole, fed a byte at a time too, and replays byte for byte; the connection can carry the next request; nothing has a name"
    )
    func spooled() throws {
        let body = makePNG(size: 7000, seed: 81)
        for readSize in [1 << 20, 1] {
            let (_, http) = try uploadConnection(
                [putHead(length: nil) + chunkedBody(body, size: 1000) + Array("GET /after HTTP/1.1\r\n\r\n".utf8)],
                readSize: readSize)
            let store = try UploadStore()
            let file = try storeSpool(store)
            defer { file.close() }
            let size = try StoreUpload.spool(http.requestBody, into: file, limit: 7000, stop: { nil }).get()
            #expect(size == 7000 && file.size == 7000)
            #expect(store.incoming.isEmpty)
            var back: [UInt8] = []
            try StoreUpload.replay(file)(
                {
                    back += $0
                    return true
                }, { (400, "") })
            #expect(back == body)
            #expect(try http.nextHead(deadline: soon())?.target == "/after")
        }
    }

    @Test("past the limit, 413 at the first byte over it, the rest unread")
    func overLimit() throws {
        let (_, http) = try uploadConnection([
            putHead(length: nil) + chunkedBody(Array(repeating: 7, count: 5000), size: 1000)
        ])
        let store = try UploadStore()
        let file = try storeSpool(store)
        defer { file.close() }
        guard
            case .failure(.failed(let failure)) = StoreUpload.spool(
                http.requestBody, into: file, limit: 4999, stop: { nil })
        else {
            Issue.record("not refused")
            return
        }
        #expect(failure.status == 413 && failure.stage == .body && !failure.keepsConnection, "\(failure)")
        #expect(http.bodyPending)
    }

    @Test("room is promised at the first byte and as the body grows: a body that would go under min-free is 507")
    func room() throws {
        let step = SpoolFile.reserveStep
        let big = Int(step) * 2
        let (_, http) = try uploadConnection([
            putHead(length: nil) + chunkedBody(Array(repeating: 1, count: big), size: 1 << 16)
        ])
        let store = try UploadStore(minFree: 1 << 30)
        // Room for the first step and a little more, then none: what the spool wrote is no longer free.
        let file = try storeSpool(store)
        let held = SpoolHolder(file)
        store.store.freeSpaceForTests = { (1 << 30) + step + 100 - held.size }
        defer { file.close() }
        let outcome = StoreUpload.spool(http.requestBody, into: file, limit: Int64(big) * 2, stop: { nil })
        guard case .failure(.failed(let failure)) = outcome else {
            Issue.record("not refused: \(outcome)")
            return
        }
        #expect(failure.status == 507 && failure.detail.contains("reserve"), "\(failure)")
        #expect(failure.received > step && failure.received < Int64(big), "\(failure.received)")
        #expect(file.size == step)
    }

    @Test(
        "stop (shutdown) is asked as the body comes: a body that keeps coming is ended 503 within a second, nothing left"
    )
    func stopped() throws {
        let store = try UploadStore()
        let http = HTTPConnection(stream: PacedStream(pieces: 500), kind: .request, idle: .seconds(30))
        _ = try #require(try http.nextHead(deadline: soon()))
        let file = try storeSpool(store)
        let started = Instant.now
        let stopAt = started + .milliseconds(300)
        let outcome = StoreUpload.spool(
            http.requestBody, into: file, limit: 1 << 40,
            stop: {
                Instant.now > stopAt ? (503, "the receiver is shutting down") : nil
            })
        let took = (Instant.now - started).seconds
        guard case .failure(.failed(let failure)) = outcome else {
            Issue.record("not stopped: \(outcome) after \(took) s")
            return
        }
        #expect(failure.status == 503 && failure.stage == .body, "\(failure)")
        #expect(took < 1.5, "\(took) s")
        file.close()
        #expect(store.incoming.isEmpty && store.visible.isEmpty)
        #expect(store.store.ledger.total == 0)
    }
    @Test(
        "stop (shutdown) asked while a spooled body is replayed into the store: 503, nothing under a final name, nothing in .incoming"
    )
    func stoppedInReplay() throws {
        let store = try UploadStore()
        let head: [UInt8] = [
            0xFF, 0xD8, 0xFF, 0xC0, 0x00, 0x0B, 0x08, 0x00, 0x10, 0x00, 0x10, 0x01, 0x01, 0x11, 0x00,
            0xFF, 0xDA, 0x00, 0x08, 0x01, 0x01, 0x00, 0x00, 0x3F, 0x00,
        ]
        let jpeg = head + [UInt8](repeating: 0, count: (4 << 20) - head.count - 2) + [0xFF, 0xD9]
        let (_, http) = try uploadConnection([putHead(length: nil) + chunkedBody(jpeg, size: 1 << 16)])
        let file = try storeSpool(store)
        defer { file.close() }
        let size = try StoreUpload.spool(http.requestBody, into: file, limit: 1 << 30, stop: { nil }).get()
        // Read back slowly (a busy disk), so stop is asked before the end.
        let replay = StoreUpload.replay(file)
        let slow: StoreUpload.BodyReader = { sink, refusal throws(HTTPError) in
            try replay(
                { piece in
                    sleep(for: .milliseconds(30))
                    return sink(piece)
                }, refusal)
        }
        let started = Instant.now
        let outcome = StoreUpload.receive(
            size: size, reading: slow, into: store.store,
            decide: { _ in
                .store(StoreRequest(name: "endless.jpg", size: size, sha256: "", type: .jpeg))
            }, stop: { Instant.now - started > .milliseconds(100) ? (503, "the receiver is shutting down") : nil })
        guard let failure = uploadFailure(outcome) else {
            Issue.record("not stopped: \(outcome)")
            return
        }
        #expect(failure.status == 503, "\(failure)")
        #expect((Instant.now - started).seconds < 1)
        #expect(store.visible.isEmpty && store.incoming.isEmpty, "\(store.visible) \(store.incoming)")
        file.close()
        #expect(store.store.ledger.total == 0)
    }
}
