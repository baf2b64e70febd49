import PTKDigest
import PTKHTTP
import PTKStore
import PTKSystem
import PTKTestSupport
import PTKTestTags
import PTKUpload
import PTKVocabulary
import Testing

/// Chunked bodies of no announced length (`curl -T -`, `rclone rcat`): held in the store's
/// spool, bounded, checked as they come, then taken like any photo (issue 55, item 1).
@Suite("StoreUpload: chunked bodies of no announced length", .tags(.unit))
struct UnsizedUploadTests {
    /// The request a door makes for an unsized body (its size is the spool's to find).
    func request(_ name: String, _ type: PhotoType, sha256: String = "") -> StoreRequest {
        StoreRequest(name: name, size: 0, sha256: sha256, type: type)
    }

    @Test("a JPEG sent chunked with no length is saved whole under its name, its SHA-256 checked when given; in 7-byte chunks read a byte at a time too; nothing is left in .incoming",
          arguments: [1, 1 << 20])
    func saved(readSize: Int) throws {
        let f = try UploadStore()
        let jpeg = makeJPEG(width: 64, height: 48, seed: 4)
        #expect(StoreUpload.isUnsized(try parsedHead(putHead(length: nil))))
        #expect(!StoreUpload.isUnsized(try parsedHead(putHead(length: nil, expected: jpeg.count))))
        #expect(!StoreUpload.isUnsized(try parsedHead(putHead(length: jpeg.count))))
        let (_, http) = try uploadConnection([putHead(length: nil), chunkedBody(jpeg, size: 7)], readSize: readSize)
        let outcome = StoreUpload.receiveUnsized(request("IMG_1.jpg", .jpeg, sha256: SHA256.hex(of: jpeg)), into: f.store, from: http.requestBody,
                                                 limit: 1 << 20, stop: { nil })
        let saved = try #require(savedPhoto(outcome), "\(outcome)")
        #expect(saved.name == "IMG_1.jpg" && saved.size == Int64(jpeg.count) && saved.sha256 == SHA256.hex(of: jpeg))
        #expect(readFile(f.dir + "/IMG_1.jpg") == jpeg)
        #expect(f.incoming.isEmpty)
        #expect(!http.requestBody.isPending)
    }

    @Test("a given SHA-256 the bytes do not have is refused at the end (422) with nothing kept")
    func wrongHash() throws {
        let f = try UploadStore()
        let png = makePNG(size: 3_000, seed: 5)
        let (_, http) = try uploadConnection([putHead(length: nil), chunkedBody(png, size: 500)])
        let outcome = StoreUpload.receiveUnsized(request("a.png", .png, sha256: String(repeating: "0", count: 64)), into: f.store,
                                                 from: http.requestBody, limit: 1 << 20, stop: { nil })
        let failure = try #require(uploadFailure(outcome), "\(outcome)")
        #expect(failure.status == 422 && failure.stage == .finish && failure.keepsConnection, "\(failure)")
        #expect(f.visible.isEmpty && f.incoming.isEmpty)
    }

    @Test("a body longer than the limit is refused with 413 as soon as it passes it, the rest unread, nothing kept")
    func overLimit() throws {
        let f = try UploadStore()
        let png = makePNG(size: 50_000, seed: 6)
        let (_, http) = try uploadConnection([putHead(length: nil), chunkedBody(png, size: 1_000)], readSize: 2_048)
        let outcome = StoreUpload.receiveUnsized(request("big.png", .png), into: f.store, from: http.requestBody, limit: 10_000, stop: { nil })
        let failure = try #require(uploadFailure(outcome), "\(outcome)")
        #expect(failure.status == 413 && failure.stage == .body && !failure.keepsConnection, "\(failure)")
        #expect(failure.reason.contains("10000 bytes") && failure.reason.contains("max-file-size"), "\(failure.reason)")
        #expect(failure.received <= 10_000)
        #expect(f.visible.isEmpty && f.incoming.isEmpty)
    }

    @Test("bytes that cannot be the type's are refused (400) at the first of them, long before the limit")
    func notAPhotoEarly() throws {
        let f = try UploadStore()
        let text = Array(String(repeating: "no photo here\n", count: 20_000).utf8)
        let (_, http) = try uploadConnection([putHead(length: nil), chunkedBody(text, size: 4_096)], readSize: 4_096)
        let outcome = StoreUpload.receiveUnsized(request("t.png", .png), into: f.store, from: http.requestBody, limit: 1 << 30, stop: { nil })
        let failure = try #require(uploadFailure(outcome), "\(outcome)")
        #expect(failure.status == 400 && failure.stage == .body, "\(failure)")
        // Refused at the first gathered write (64 KiB), not after the 280 kB body.
        #expect(failure.received <= 70_000, "\(failure.received)")
        #expect(f.visible.isEmpty && f.incoming.isEmpty)
    }

    @Test("a file system that would keep less than min-free refuses it (507) at its first bytes")
    func minFree() throws {
        let f = try UploadStore(minFree: Int64.max / 2)
        let png = makePNG(size: 70_000, seed: 7)
        let (_, http) = try uploadConnection([putHead(length: nil), chunkedBody(png, size: 70_000)])
        let outcome = StoreUpload.receiveUnsized(request("m.png", .png), into: f.store, from: http.requestBody, limit: 1 << 30, stop: { nil })
        let failure = try #require(uploadFailure(outcome), "\(outcome)")
        #expect(failure.status == 507 && failure.stage == .body, "\(failure)")
        #expect(failure.reason.contains("reserve"), "\(failure.reason)")
        #expect(f.visible.isEmpty && f.incoming.isEmpty)
    }

    @Test("a body cut short (no last chunk) saves nothing and leaves nothing, not even a partial to resume")
    func cutShort() throws {
        let f = try UploadStore()
        let png = makePNG(size: 20_000, seed: 8)
        let body = chunkedBody(png, size: 1_000)
        let (_, http) = try uploadConnection([putHead(length: nil), Array(body.prefix(9_000))])
        let outcome = StoreUpload.receiveUnsized(request("c.png", .png), into: f.store, from: http.requestBody, limit: 1 << 20, stop: { nil })
        #expect(savedPhoto(outcome) == nil, "\(outcome)")
        #expect(f.visible.isEmpty && f.incoming.isEmpty)
    }

    @Test("a stop asked for while the body comes ends it with the stop's status, nothing kept")
    func stopped() throws {
        let f = try UploadStore()
        let png = makePNG(size: 200_000, seed: 9)
        let stream = PausingStream(ScriptedHTTPStream([putHead(length: nil), chunkedBody(png, size: 10_000)], readSize: 10_000),
                                   pause: .milliseconds(250), from: 3)
        let http = HTTPConnection(stream: stream, kind: .request, idle: .seconds(30))
        _ = try #require(try http.nextHead(deadline: soon()))
        let outcome = StoreUpload.receiveUnsized(request("s.png", .png), into: f.store, from: http.requestBody, limit: 1 << 20,
                                                 stop: { (503, "the receiver is shutting down") })
        let failure = try #require(uploadFailure(outcome), "\(outcome)")
        #expect(failure.status == 503 && failure.stage == .body, "\(failure)")
        #expect(f.visible.isEmpty && f.incoming.isEmpty)
    }

    @Test("the WebDAV door's typed-by-bytes upload takes an unsized body too: typed, spooled, saved; over its limit 413")
    func sniffedUnsized() throws {
        let f = try UploadStore()
        let jpeg = makeJPEG(width: 40, height: 30, seed: 3)
        let (_, http) = try uploadConnection([putHead(length: nil), chunkedBody(jpeg, size: 5)], readSize: 3)
        let outcome = StoreUpload.receive(size: nil, limit: 1 << 20, from: http.requestBody, into: f.store, decide: { type in
            guard let type else { return .refuse(415, "no") }
            return .store(StoreRequest(name: type.fittedName("IMG_2.png"), size: 0, sha256: "", type: type))
        }, stop: { nil })
        let saved = try #require(savedPhoto(outcome), "\(outcome)")
        #expect(saved.name == "IMG_2.jpg" && readFile(f.dir + "/IMG_2.jpg") == jpeg)
        let (_, http2) = try uploadConnection([putHead(length: nil), chunkedBody(jpeg, size: 100)])
        let outcome2 = StoreUpload.receive(size: nil, limit: 1_000, from: http2.requestBody, into: f.store, decide: { type in
            .store(StoreRequest(name: "IMG_3.jpg", size: 0, sha256: "", type: type ?? .jpeg))
        }, stop: { nil })
        let failure = try #require(uploadFailure(outcome2), "\(outcome2)")
        #expect(failure.status == 413, "\(failure)")
        #expect(f.visible == ["IMG_2.jpg"] && f.incoming.isEmpty)
    }
}
