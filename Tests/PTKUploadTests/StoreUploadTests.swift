import PTKDigest
import PTKHTTP
import PTKProtocol
import PTKStore
import PTKSystem
import PTKTestSupport
import PTKTestTags
import PTKTime
import PTKTransport
import PTKUpload
import PTKVocabulary
import Testing

/// A photo store in a fresh temporary directory, removed after the test.
final class UploadStore {
    let root = makeTemporaryDirectory("ptk-http-upload")
    let store: PhotoStore
    var dir: String { root + "/photos" }
    var visible: [String] { listDirectory(dir).filter { $0 != ".incoming" } }
    var incoming: [String] { listDirectory(dir + "/.incoming") }

    init(minFree: Int64 = 0) throws {
        store = try PhotoStore(
            settings: StoreSettings(directory: root + "/photos", minFree: minFree, checkingThreads: 1))
    }
    deinit { removeTree(root) }
}

/// The store's request for `bytes` as a PNG named IMG_0001.png (its SHA-256 unless `sha256` says).
func photoOffer(_ bytes: [UInt8], sha256: String? = nil, size: Int64? = nil, folder: String = "") -> StoreRequest {
    StoreRequest(
        name: "IMG_0001.png", size: size ?? Int64(bytes.count), sha256: sha256 ?? SHA256.hex(of: bytes), type: .png,
        folder: folder)
}

func savedPhoto(_ outcome: StoreUpload.Outcome) -> StoredPhoto? {
    if case .saved(let saved, _) = outcome { return saved }
    return nil
}

func uploadFailure(_ outcome: StoreUpload.Outcome) -> StoreUpload.Failure? {
    if case .failed(let f) = outcome { return f }
    return nil
}

func goneAfter(_ outcome: StoreUpload.Outcome) -> Int64? {
    if case .gone(let received) = outcome { return received }
    return nil
}

/// A PUT head announcing `length` bytes (or chunked, with `expected` as X-Expected-Entity-Length).
func putHead(length: Int?, expected: Int? = nil) -> [UInt8] {
    var text = "PUT /dav/IMG_0001.png HTTP/1.1\r\nHost: h\r\n"
    if let length { text += "Content-Length: \(length)\r\n" } else { text += "Transfer-Encoding: chunked\r\n" }
    if let expected { text += "X-Expected-Entity-Length: \(expected)\r\n" }
    return Array((text + "\r\n").utf8)
}

/// A connection whose head has been read, the body (and whatever follows) still to come.
func uploadConnection(
    _ pieces: [[UInt8]], readSize: Int = 1 << 20, whenEmpty: ScriptedStream.WhenEmpty = .close,
    idle: Duration = .seconds(30)
) throws -> (ScriptedHTTPStream, HTTPConnection) {
    let stream = ScriptedHTTPStream(pieces, readSize: readSize, whenEmpty: whenEmpty)
    let http = HTTPConnection(stream: stream, kind: .request, idle: idle)
    _ = try #require(try http.nextHead(deadline: soon()))
    return (stream, http)
}

/// The head a server reads from `bytes`.
func parsedHead(_ bytes: [UInt8]) throws -> HTTPHead {
    let http = HTTPConnection(stream: ScriptedHTTPStream([bytes]), kind: .request)
    return try #require(try http.nextHead(deadline: soon()))
}

/// A stream that waits `pause` before each read from the `from`-th on (a slow client, for
/// the checks that run every 200 ms).
final class PausingStream: ByteStream, @unchecked Sendable {
    let inner: ScriptedHTTPStream
    let pause: Duration
    let from: Int
    private var reads = 0

    init(_ inner: ScriptedHTTPStream, pause: Duration, from: Int) {
        self.inner = inner
        self.pause = pause
        self.from = from
    }

    func read(into buffer: UnsafeMutableRawBufferPointer, deadline: Instant, interruptible: Bool) throws(TransportError)
        -> Int
    {
        reads += 1
        if reads >= from { sleep(for: pause) }
        return try inner.read(into: buffer, deadline: deadline, interruptible: interruptible)
    }

    func write(_ bytes: UnsafeRawBufferPointer, deadline: Instant) throws(TransportError) {
        try inner.write(bytes, deadline: deadline)
    }
    func shutdownWrite() { inner.shutdownWrite() }
    func close() { inner.close() }
}

@Suite("StoreUpload: status table and announced sizes", .tags(.unit))
struct StoreUploadStatusTests {
    @Test("every kind of store failure maps to its HTTP status, the store's message as the reason")
    func statusTable() {
        let table: [StoreFailure.Kind: Int] = [
            .hashMismatch: 422, .notAPhoto: 400, .sizeMismatch: 400, .typeNotKept: 415, .noSpace: 507, .io: 500,
        ]
        #expect(Set(table.keys) == Set(StoreFailure.Kind.allCases))
        for kind in StoreFailure.Kind.allCases {
            let answer = StoreUpload.status(for: StoreFailure(kind, "message of \(kind)"))
            #expect(answer.status == table[kind], "\(kind)")
            #expect(answer.reason == "message of \(kind)")
        }
    }

    @Test("the announced size is Content-Length, or a chunked body's X-Expected-Entity-Length, else nil")
    func announced() {
        var head = HTTPHead()
        #expect(StoreUpload.announcedSize(head) == nil)
        head.contentLength = 1234
        #expect(StoreUpload.announcedSize(head) == 1234)
        head.headers["x-expected-entity-length"] = "99"
        #expect(StoreUpload.announcedSize(head) == 1234)
        head.contentLength = 0
        #expect(StoreUpload.announcedSize(head) == 0)

        var chunked = HTTPHead()
        chunked.chunked = true
        #expect(StoreUpload.announcedSize(chunked) == nil)
        chunked.headers["x-expected-entity-length"] = "5000"
        #expect(StoreUpload.announcedSize(chunked) == 5000)
        chunked.headers["x-expected-entity-length"] = "999999999999999999"
        #expect(StoreUpload.announcedSize(chunked) == 999_999_999_999_999_999)

        var notChunked = HTTPHead()
        notChunked.headers["x-expected-entity-length"] = "5000"
        #expect(StoreUpload.announcedSize(notChunked) == nil)
    }

    @Test(
        "junk in X-Expected-Entity-Length is no size",
        arguments: [
            "-1", "+5", "1e3", "0x10", " 5", "5 ", "", "5,5", "1234567890123456789",
            "99999999999999999999", "\u{0665}", "NaN",
        ])
    func junkExpectedLength(value: String) {
        var head = HTTPHead()
        head.chunked = true
        head.headers["x-expected-entity-length"] = value
        #expect(StoreUpload.announcedSize(head) == nil)
    }

    @Test("the sizes announced by parsed heads: Content-Length, and chunked with and without the macOS header")
    func announcedFromParsedHeads() throws {
        #expect(StoreUpload.announcedSize(try parsedHead(putHead(length: 77))) == 77)
        #expect(StoreUpload.announcedSize(try parsedHead(putHead(length: nil, expected: 4096))) == 4096)
        #expect(StoreUpload.announcedSize(try parsedHead(putHead(length: nil))) == nil)
    }
}

@Suite("StoreUpload: a photo received into a PhotoStore", .tags(.unit))
struct StoreUploadReceiveTests {
    @Test("a Content-Length body is saved under its name, byte for byte, and .incoming is left empty")
    func savedWithLength() throws {
        let f = try UploadStore()
        let png = makePNG(size: 20_000, seed: 3)
        let (_, http) = try uploadConnection([putHead(length: png.count), png])
        let outcome = StoreUpload.receive(photoOffer(png), into: f.store, from: http.requestBody, stop: { nil })
        let saved = try #require(savedPhoto(outcome), "\(outcome)")
        #expect(saved == StoredPhoto(name: "IMG_0001.png", size: Int64(png.count), sha256: SHA256.hex(of: png)))
        #expect(readFile(f.dir + "/IMG_0001.png") == png)
        #expect(f.visible == ["IMG_0001.png"])
        #expect(f.incoming.isEmpty)
    }

    @Test("a chunked body fed one byte at a time is saved byte for byte, and the connection carries on")
    func savedChunkedByteByByte() throws {
        let f = try UploadStore()
        let png = makePNG(size: 3_000, seed: 4)
        let (_, http) = try uploadConnection(
            [
                putHead(length: nil, expected: png.count), chunkedBody(png, size: 700),
                Array("GET /after HTTP/1.1\r\n\r\n".utf8),
            ], readSize: 1)
        let outcome = StoreUpload.receive(photoOffer(png), into: f.store, from: http.requestBody, stop: { nil })
        _ = try #require(savedPhoto(outcome), "\(outcome)")
        #expect(readFile(f.dir + "/IMG_0001.png") == png)
        #expect(f.incoming.isEmpty)
        #expect(try http.nextHead(deadline: soon())?.target == "/after")
    }

    @Test(
        "a chunked body cut short (closed or reset) is .gone: no file under the final name, .incoming empty",
        arguments: [
            ScriptedStream.WhenEmpty.close, .reset,
        ])
    func chunkedCutShort(end: ScriptedStream.WhenEmpty) throws {
        let f = try UploadStore()
        let png = makePNG(size: 5_000, seed: 5)
        let body = chunkedBody(png, size: 1_000)
        let (_, http) = try uploadConnection(
            [putHead(length: nil, expected: png.count), Array(body.prefix(2_500))], readSize: 1, whenEmpty: end)
        let outcome = StoreUpload.receive(photoOffer(png), into: f.store, from: http.requestBody, stop: { nil })
        let received = try #require(goneAfter(outcome), "\(outcome)")
        #expect(received > 0 && received < Int64(png.count))
        #expect(f.visible.isEmpty)
        #expect(f.incoming.isEmpty)
    }

    @Test("bytes that do not start as a PNG fail while the body is read: 400, the connection closes, nothing kept")
    func notAPNGAtAll() throws {
        let f = try UploadStore()
        let junk = Array(String(repeating: "not a png at all. ", count: 100).utf8)
        let (_, http) = try uploadConnection([putHead(length: junk.count), junk])
        let outcome = StoreUpload.receive(photoOffer(junk), into: f.store, from: http.requestBody, stop: { nil })
        try expectRefusedMidBody(outcome, f)
    }

    @Test("a PNG whose end is missing fails at finish: 400, the whole body was read, so the connection carries on")
    func truncatedPNGAtFinish() throws {
        let f = try UploadStore()
        let cut = Array(makePNG(size: 4_000, seed: 6).dropLast(12))  // no IEND
        let (_, http) = try uploadConnection([
            putHead(length: cut.count), cut, Array("GET /next HTTP/1.1\r\n\r\n".utf8),
        ])
        let outcome = StoreUpload.receive(photoOffer(cut), into: f.store, from: http.requestBody, stop: { nil })
        let failed = try #require(uploadFailure(outcome), "\(outcome)")
        #expect(failed.status == 400)
        #expect(failed.stage == .finish)
        #expect(failed.keepsConnection)
        #expect(failed.received == Int64(cut.count))
        #expect(f.visible.isEmpty)
        #expect(f.incoming.isEmpty)
        #expect(try http.nextHead(deadline: soon())?.target == "/next")
    }

    @Test("a body whose SHA-256 is not the offer's is 422 at finish; a shorter body than offered is 400 at finish")
    func finishRefusals() throws {
        let f = try UploadStore()
        let png = makePNG(size: 4_000, seed: 7)
        let (_, http) = try uploadConnection([putHead(length: png.count), png])
        let wrongHash = StoreUpload.receive(
            photoOffer(png, sha256: String(repeating: "0", count: 64)), into: f.store, from: http.requestBody,
            stop: { nil })
        let hashFailure = try #require(uploadFailure(wrongHash), "\(wrongHash)")
        #expect(hashFailure.status == 422)
        #expect(hashFailure.stage == .finish)

        let short = Array(png.dropLast(100))
        let (_, shortHTTP) = try uploadConnection([putHead(length: short.count), short])
        let shorter = StoreUpload.receive(photoOffer(png), into: f.store, from: shortHTTP.requestBody, stop: { nil })
        let shortFailure = try #require(uploadFailure(shorter), "\(shorter)")
        #expect(shortFailure.status == 400)
        #expect(shortFailure.stage == .finish)
        #expect(f.visible.isEmpty)
    }

    @Test("a body longer than the announced size is refused while it is read: 400, stage body, nothing kept")
    func longerThanAnnounced() throws {
        let f = try UploadStore()
        let png = makePNG(size: 4_000, seed: 8)
        let longer = png + Array("trailing junk".utf8)
        let (_, http) = try uploadConnection([putHead(length: longer.count), longer])
        let outcome = StoreUpload.receive(photoOffer(png), into: f.store, from: http.requestBody, stop: { nil })
        try expectRefusedMidBody(outcome, f)
    }

    @Test("a store that refuses at begin (full disk) gives 507 at stage begin, without reading the body")
    func refusedAtBegin() throws {
        let f = try UploadStore(minFree: Int64.max / 4)
        let png = makePNG(size: 4_000, seed: 9)
        let (_, http) = try uploadConnection([putHead(length: png.count), png])
        let outcome = StoreUpload.receive(photoOffer(png), into: f.store, from: http.requestBody, stop: { nil })
        let failed = try #require(uploadFailure(outcome), "\(outcome)")
        #expect(failed.status == 507)
        #expect(failed.stage == .begin)
        #expect(failed.received == 0)
        #expect(!failed.keepsConnection)
        #expect(try http.readBody(limit: 1 << 20, deadline: { soon() }) == png)
    }

    @Test("an invalid folder is the store's own trouble at begin: 500")
    func invalidFolder() throws {
        let f = try UploadStore()
        let png = makePNG(size: 4_000, seed: 10)
        let (_, http) = try uploadConnection([putHead(length: png.count), png])
        let outcome = StoreUpload.receive(
            photoOffer(png, folder: "../up"), into: f.store, from: http.requestBody, stop: { nil })
        let failed = try #require(uploadFailure(outcome), "\(outcome)")
        #expect(failed.status == 500)
        #expect(failed.stage == .begin)
    }

    @Test("stop() saying no while the body comes ends the upload with its status, and nothing is kept")
    func stopped() throws {
        let f = try UploadStore()
        let png = makePNG(size: 6_000, seed: 11)
        let inner = ScriptedHTTPStream([
            putHead(length: png.count), Array(png[..<2_000]), Array(png[2_000..<4_000]), Array(png[4_000...]),
        ])
        let http = HTTPConnection(stream: PausingStream(inner, pause: .milliseconds(250), from: 3), kind: .request)
        _ = try #require(try http.nextHead(deadline: soon()))
        var asked = 0
        let outcome = StoreUpload.receive(
            photoOffer(png), into: f.store, from: http.requestBody,
            stop: {
                asked += 1
                return (503, "the receiver is shutting down")
            })
        let failed = try #require(uploadFailure(outcome), "\(outcome)")
        #expect(failed.status == 503)
        #expect(failed.reason == "the receiver is shutting down")
        #expect(failed.stage == .body)
        #expect(asked == 1)
        #expect(failed.received < Int64(png.count))
        #expect(f.visible.isEmpty)
        #expect(f.incoming.isEmpty)
    }

    @Test("stop() saying nothing lets a slow upload finish")
    func notStopped() throws {
        let f = try UploadStore()
        let png = makePNG(size: 6_000, seed: 12)
        let inner = ScriptedHTTPStream([putHead(length: png.count), Array(png[..<3_000]), Array(png[3_000...])])
        let http = HTTPConnection(stream: PausingStream(inner, pause: .milliseconds(250), from: 3), kind: .request)
        _ = try #require(try http.nextHead(deadline: soon()))
        var asked = 0
        let outcome = StoreUpload.receive(
            photoOffer(png), into: f.store, from: http.requestBody,
            stop: {
                asked += 1
                return nil
            })
        _ = try #require(savedPhoto(outcome), "\(outcome)")
        #expect(asked >= 1)
        #expect(readFile(f.dir + "/IMG_0001.png") == png)
    }

    @Test("a client silent mid-body: idle when the idle timeout comes first (408, idle), else the minimum rate's 408")
    func silentClient() throws {
        let f = try UploadStore()
        let png = makePNG(size: 4_000, seed: 13)
        let (_, idleHTTP) = try uploadConnection(
            [putHead(length: png.count), Array(png.prefix(1_000))], whenEmpty: .silent, idle: .seconds(1))
        let idle = StoreUpload.receive(photoOffer(png), into: f.store, from: idleHTTP.requestBody, stop: { nil })
        let idleFailure = try #require(uploadFailure(idle), "\(idle)")
        #expect(idleFailure.status == 408)
        #expect(idleFailure.idle)
        #expect(idleFailure.stage == .body)
        #expect(idleFailure.received == 1_000)

        let (_, slowHTTP) = try uploadConnection(
            [putHead(length: png.count), Array(png.prefix(1_000))], whenEmpty: .silent,
            idle: .seconds(3600))
        let slow = StoreUpload.receive(photoOffer(png), into: f.store, from: slowHTTP.requestBody, stop: { nil })
        let slowFailure = try #require(uploadFailure(slow), "\(slow)")
        #expect(slowFailure.status == 408)
        #expect(!slowFailure.idle)
        #expect(slowFailure.stage == .body)
        #expect(f.visible.isEmpty)
        #expect(f.incoming.isEmpty)
    }

    @Test(
        "a partial file of the same photo is resumed: resuming is told its offset, the bytes it holds are passed over")
    func resumed() throws {
        let f = try UploadStore()
        let chunk = ProtocolLimits.chunkSize
        let png = makePNG(size: 2 * chunk + 5_000, seed: 14)
        let partial = try f.store.begin(photoOffer(png)).get()
        try partial.append(Array(png[..<(chunk + 100)]))
        partial.abandon(keepForResume: true)
        #expect(f.incoming.count == 1)

        let (_, http) = try uploadConnection([putHead(length: png.count), png])
        var offsets: [Int64] = []
        let outcome = StoreUpload.receive(
            photoOffer(png), into: f.store, from: http.requestBody, resuming: { offsets.append($0) },
            stop: { nil })
        _ = try #require(savedPhoto(outcome), "\(outcome)")
        #expect(offsets.count == 1)
        #expect((offsets.first ?? 0) > 0)
        #expect(readFile(f.dir + "/IMG_0001.png") == png)
        #expect(f.incoming.isEmpty)
    }
}

/// A 400 while the body was read: the connection closes, nothing kept, nothing left in `.incoming/`.
func expectRefusedMidBody(
    _ outcome: StoreUpload.Outcome, _ f: UploadStore, sourceLocation: SourceLocation = #_sourceLocation
) throws {
    let failed = try #require(uploadFailure(outcome), "\(outcome)", sourceLocation: sourceLocation)
    #expect(failed.status == 400, sourceLocation: sourceLocation)
    #expect(failed.stage == .body, sourceLocation: sourceLocation)
    #expect(!failed.keepsConnection, sourceLocation: sourceLocation)
    #expect(f.visible.isEmpty, sourceLocation: sourceLocation)
    #expect(f.incoming.isEmpty, sourceLocation: sourceLocation)
}
