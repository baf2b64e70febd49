import PTKDigest
import PTKHTTP
import PTKStore
import PTKSystem
import PTKTestSupport
import PTKTestTags
import PTKTime
import PTKUpload
import PTKVocabulary
import Testing

/// An upload whose type is read from its first bytes (the WebDAV door's PUT, issue 44):
/// `StoreUpload.receive(size:from:into:decide:)`.
@Suite("StoreUpload: uploads typed by their bytes", .tags(.unit))
struct SniffedUploadTests {
    @Test(
        "a JPEG sent as IMG_1.png is typed by its bytes and saved as IMG_1.jpg; chunked one byte at a time too",
        arguments: [false, true])
    func typedByBytes(chunked: Bool) throws {
        let f = try UploadStore()
        let jpeg = makeJPEG(width: 40, height: 30, seed: 2)
        let pieces =
            chunked
            ? [putHead(length: nil, expected: jpeg.count), chunkedBody(jpeg, size: 7)]
            : [putHead(length: jpeg.count), jpeg]
        let (_, http) = try uploadConnection(pieces, readSize: chunked ? 1 : 1 << 20)
        var chosen: PhotoType? = nil
        let outcome = StoreUpload.receive(
            size: Int64(jpeg.count), from: http.requestBody, into: f.store,
            decide: { type in
                chosen = type
                guard let type else { return .refuse(415, "no") }
                return .store(
                    StoreRequest(name: type.fittedName("IMG_1.png"), size: Int64(jpeg.count), sha256: "", type: type))
            }, stop: { nil })
        let saved = try #require(savedPhoto(outcome), "\(outcome)")
        #expect(chosen == .jpeg)
        #expect(saved.name == "IMG_1.jpg" && saved.sha256 == SHA256.hex(of: jpeg))
        #expect(readFile(f.dir + "/IMG_1.jpg") == jpeg)
        #expect(f.incoming.isEmpty)
    }

    @Test(
        "a body that is no photo is refused from its first bytes: nothing stored, nothing in .incoming, the rest unread"
    )
    func refusedFromFirstBytes() throws {
        let f = try UploadStore()
        let text = Array(String(repeating: "not a photo at all\n", count: 500).utf8)
        let (_, http) = try uploadConnection([putHead(length: text.count), text], readSize: 64)
        var seen: PhotoType?? = .none
        let outcome = StoreUpload.receive(
            size: Int64(text.count), from: http.requestBody, into: f.store,
            decide: { type in
                seen = .some(type)
                return .refuse(415, "not a photo this receiver keeps (it keeps PNG)")
            }, stop: { nil })
        let failure = try #require(uploadFailure(outcome), "\(outcome)")
        #expect(seen == .some(nil))
        #expect(failure.status == 415 && failure.stage == .body && !failure.keepsConnection)
        #expect(failure.received < Int64(text.count))
        #expect(f.visible.isEmpty && f.incoming.isEmpty)
    }

    @Test("a photo shorter than the sniffed length, and a body longer than announced, are refused with nothing left")
    func shortAndLong() throws {
        let f = try UploadStore()
        let png = makePNG(size: 5_000, seed: 9)
        // Announces fewer bytes than it sends.
        let (_, http) = try uploadConnection([putHead(length: nil, expected: 100), chunkedBody(png, size: 1_000)])
        let outcome = StoreUpload.receive(
            size: 100, from: http.requestBody, into: f.store,
            decide: { type in
                .store(StoreRequest(name: "x.png", size: 100, sha256: "", type: type ?? .png))
            }, stop: { nil })
        let failure = try #require(uploadFailure(outcome), "\(outcome)")
        #expect(failure.status == 400, "\(failure)")
        // Ten bytes that are not a whole photo: the store's check refuses them at the end.
        let (_, http2) = try uploadConnection([putHead(length: 10), Array(png.prefix(10))])
        let outcome2 = StoreUpload.receive(
            size: 10, from: http2.requestBody, into: f.store,
            decide: { type in
                .store(StoreRequest(name: "y.png", size: 10, sha256: "", type: type ?? .png))
            }, stop: { nil })
        let failure2 = try #require(uploadFailure(outcome2), "\(outcome2)")
        // Refused by the store's check at the end of the body: the connection can carry on.
        #expect(failure2.status == 400 && failure2.stage == .finish, "\(failure2)")
        #expect(f.visible.isEmpty && f.incoming.isEmpty)
    }
}

/// A deadline no scripted read waits for.
func soon() -> Instant { .now + .seconds(30) }
