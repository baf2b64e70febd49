import PTKHTTP
import PTKSystem
import PTKTestSupport
import PTKTestTags
@testable import PTKUpload
import Testing

/// A file with no name, in a fresh temporary directory: what a door spools a body into.
func unnamedFile() throws -> FileDescriptor {
    let folder = makeTemporaryDirectory("ptk-spool")
    defer { removeTree(folder) }
    let fd = try FileDescriptor.open(folder + "/spool", flags: [.readWrite, .create, .exclusive, .noFollow], mode: 0o600)
    try removeFile(folder + "/spool")
    return fd
}

@Suite("StoreUpload.spool: a body of undeclared length, bounded as it grows", .tags(.unit))
struct StoreUploadSpoolTests {
    @Test("a chunked body is spooled whole, fed a byte at a time too, and replays byte for byte; the connection can carry the next request")
    func spooled() throws {
        let body = makePNG(size: 7000, seed: 81)
        for readSize in [1 << 20, 1] {
            let (_, http) = try uploadConnection([putHead(length: nil) + chunkedBody(body, size: 1000) + Array("GET /after HTTP/1.1\r\n\r\n".utf8)],
                                                 readSize: readSize)
            let file = try unnamedFile()
            defer { file.close() }
            let size = try StoreUpload.spool(http.requestBody, into: file, limit: 7000, room: { 1 << 30 }).get()
            #expect(size == 7000)
            var back: [UInt8] = []
            try StoreUpload.replay(file, size: size)({ back += $0; return true }, { (400, "") })
            #expect(back == body)
            #expect(try http.nextHead(deadline: soon())?.target == "/after")
        }
    }

    @Test("past the limit, 413 at the first byte over it, the rest unread")
    func overLimit() throws {
        let (_, http) = try uploadConnection([putHead(length: nil) + chunkedBody(Array(repeating: 7, count: 5000), size: 1000)])
        let file = try unnamedFile()
        defer { file.close() }
        guard case .failure(.failed(let failure)) = StoreUpload.spool(http.requestBody, into: file, limit: 4999, room: { nil }) else {
            Issue.record("not refused")
            return
        }
        #expect(failure.status == 413 && failure.stage == .body && !failure.keepsConnection, "\(failure)")
        #expect(http.bodyPending)
    }

    @Test("room is asked at the start and as the body grows: a body that would pass it is 507")
    func room() throws {
        let big = Int(StoreUpload.spoolCheckStep) * 2
        let (_, http) = try uploadConnection([putHead(length: nil) + chunkedBody(Array(repeating: 1, count: big), size: 1 << 16)])
        let file = try unnamedFile()
        defer { file.close() }
        var asked = 0
        // Room for the first step and a little more, then none.
        let outcome = StoreUpload.spool(http.requestBody, into: file, limit: Int64(big) * 2, room: {
            asked += 1
            return asked == 1 ? StoreUpload.spoolCheckStep + 100 : 0
        })
        guard case .failure(.failed(let failure)) = outcome else {
            Issue.record("not refused: \(outcome)")
            return
        }
        #expect(failure.status == 507 && asked == 2, "\(failure) \(asked)")
        #expect(failure.received > StoreUpload.spoolCheckStep && failure.received < Int64(big), "\(failure.received)")
    }
}
