import PTKDigest
import PTKDoor
import PTKProtocol
import PTKStore
import PTKSystem
import PTKTestSupport
import PTKTestTags
import PTKTransport
import Testing

@testable import PTKV1Door

/// A sender played by a script: HELLO, then each photo (OFFER, its chunks, DONE), then BYE,
/// with one fault.
final class FakeSender {
    enum Fault {
        case none
        /// Nothing more after this many chunks of the first photo.
        case silentAfterChunks(Int)
        /// The connection is reset after this many chunks.
        case resetAfterChunks(Int)
        /// ERROR after this many chunks.
        case errorAfterChunks(Int)
        /// A CHUNK before any OFFER.
        case chunkBeforeOffer
        /// All chunks of a photo in one go, without waiting for ACKs (the window is still kept).
        case eager
    }

    let photos: [(String, [UInt8])]
    let fault: Fault
    let stream: ScriptedStream
    private var next = 0
    private var sentChunks = 0

    init(_ photos: [(String, [UInt8])], fault: Fault = .none, readSize: Int = 1 << 20) {
        self.photos = photos
        self.fault = fault
        var respond: ((Frame, ScriptedStream) -> Void)!
        stream = ScriptedStream(readSize: readSize) { respond($0, $1) }
        respond = { [unowned self] frame, s in answer(frame, s) }
        stream.feed(.hello(Hello(name: "scripted", window: 4)))
        if case .chunkBeforeOffer = fault { stream.feed(.chunk([1, 2, 3])) }
    }

    private var chunks: [[UInt8]] = []
    private var acked = 0
    private var gone = false

    private func chunk(_ s: ScriptedStream) {
        guard !chunks.isEmpty else { return }
        sentChunks += 1
        switch fault {
        case .silentAfterChunks(let n) where sentChunks > n:
            gone = true
            return
        case .resetAfterChunks(let n) where sentChunks > n:
            gone = true
            s.whenEmpty = .reset
            return
        case .errorAfterChunks(let n) where sentChunks > n:
            gone = true
            s.feed(.error(Problem(.internal, "the sender gave up")))
            s.whenEmpty = .close
            return
        default: break
        }
        s.feed(.chunk(chunks.removeFirst()))
        if chunks.isEmpty { s.feed(.done) }
    }

    private func offerNext(_ s: ScriptedStream) {
        guard next < photos.count else {
            s.feed(.bye)
            s.whenEmpty = .close
            return
        }
        let (name, bytes) = photos[next]
        next += 1
        s.feed(.offer(Offer(name: name, size: Int64(bytes.count), sha256: SHA256.hex(of: bytes))))
        chunks = stride(from: 0, to: bytes.count, by: ProtocolLimits.chunkSize).map {
            Array(bytes[$0..<min($0 + ProtocolLimits.chunkSize, bytes.count)])
        }
    }

    private func answer(_ frame: Frame, _ s: ScriptedStream) {
        if gone { return }
        switch frame {
        case .welcome:
            offerNext(s)
        case .accept:
            // The window is 4: send four, then one per ACK (or all in one go when eager).
            let burst = { if case .eager = self.fault { return Int.max } else { return 4 } }()
            for _ in 0..<min(burst, chunks.count) where !gone { chunk(s) }
        case .ack:
            acked += 1
            if case .eager = fault { return }
            chunk(s)
        case .saved, .failed, .reject:
            offerNext(s)
        default:
            break
        }
    }
}

/// A store in a temporary directory.
final class StoreDirectory {
    let path = makeTemporaryDirectory("ptk-driver")
    let store: PhotoStore
    init() throws { store = try PhotoStore(settings: StoreSettings(directory: path)) }
    deinit { removeTree(path) }
    var photos: [String] { listDirectory(path).filter { $0 != PhotoStore.incomingName }.sorted() }
    var partials: [String] { listDirectory(path + "/" + PhotoStore.incomingName) }
}

/// Runs a ReceiverDriver over `sender`'s stream until the session ends.
private func serve(_ sender: FakeSender, _ dir: StoreDirectory, shutdown: ShutdownSignal? = nil) throws {
    let settings = ReceiverSettings(name: "test", window: 4, maxFileSize: 1 << 30, sessions: 2)
    let driver = ReceiverDriver(
        id: 1, connection: FramedConnection(stream: sender.stream, timeout: .seconds(1)),
        peer: SocketAddress(numericHost: "192.0.2.1", port: 4000)!,
        store: dir.store, settings: settings, shutdown: try shutdown ?? ShutdownSignal(),
        handshakeDeadline: .now + .seconds(1))
    driver.run()
}

/// Runs a ReceiverDriver over a scripted `stream` (fed before) until the session ends.
func serveScripted(_ stream: ScriptedStream, _ dir: StoreDirectory) throws {
    let driver = ReceiverDriver(
        id: 1, connection: FramedConnection(stream: stream, timeout: .seconds(5)),
        peer: SocketAddress(numericHost: "192.0.2.1", port: 4000)!, store: dir.store,
        settings: ReceiverSettings(name: "test", window: 4, maxFileSize: 1 << 30),
        shutdown: try ShutdownSignal(), handshakeDeadline: .now + .seconds(5))
    driver.run()
}

private func photo(_ size: Int, _ seed: UInt64) -> [UInt8] { makePNG(size: size, seed: seed) }

@Suite("ReceiverDriver over a scripted sender", .tags(.unit))
struct ScriptedReceiverTests {
    @Test("photos are saved byte-identical, whether bytes come whole or one per read", arguments: [1 << 20, 1])
    func happyPath(readSize: Int) throws {
        let dir = try StoreDirectory()
        let a = photo(450_000, 1)
        let b = photo(3_000, 2)
        let sender = FakeSender([("a.png", a), ("b.png", b)], readSize: readSize)
        try serve(sender, dir)
        #expect(dir.photos == ["a.png", "b.png"])
        #expect(readFile(dir.path + "/a.png") == a)
        #expect(readFile(dir.path + "/b.png") == b)
        #expect(dir.partials.isEmpty)
        let saved = sender.stream.written.compactMap { if case .saved(let s) = $0 { s.name } else { nil } }
        #expect(saved == ["a.png", "b.png"])
        #expect(sender.stream.written.filter { $0 == .ack }.count == 5 + 1)
        #expect(sender.stream.isClosed)
    }

    @Test("chunks sent without waiting for ACKs, within the window, are taken in order")
    func eager() throws {
        let dir = try StoreDirectory()
        let a = photo(350_000, 3)  // 4 chunks: exactly the window
        try serve(FakeSender([("a.png", a)], fault: .eager), dir)
        #expect(readFile(dir.path + "/a.png") == a)
    }

    @Test(
        "a sender that goes silent or resets mid-photo: nothing published, the partial kept for resume",
        arguments: [FakeSender.Fault.silentAfterChunks(2), .resetAfterChunks(2)])
    func silentOrReset(fault: FakeSender.Fault) throws {
        let dir = try StoreDirectory()
        let sender = FakeSender([("a.png", photo(800_000, 4))], fault: fault)
        try serve(sender, dir)
        #expect(dir.photos.isEmpty)
        #expect(dir.partials.count == 1)
        #expect(sender.stream.isClosed)
        if case .silentAfterChunks = fault {
            // A silent sender is told why the session ends.
            guard case .error(let p)? = sender.stream.written.last else {
                Issue.record("no ERROR")
                return
            }
            #expect(p.code == "timeout")
        }
    }

    @Test("ERROR from the sender mid-photo ends the session; the partial is kept, nothing published")
    func senderError() throws {
        let dir = try StoreDirectory()
        let sender = FakeSender([("a.png", photo(800_000, 5))], fault: .errorAfterChunks(3))
        try serve(sender, dir)
        #expect(dir.photos.isEmpty)
        #expect(dir.partials.count == 1)
        #expect(!sender.stream.written.contains { if case .error = $0 { true } else { false } })
    }

    @Test("a CHUNK before any OFFER is answered ERROR unexpected-frame, and the session closes")
    func chunkBeforeOffer() throws {
        let dir = try StoreDirectory()
        let sender = FakeSender([("a.png", photo(2_000, 6))], fault: .chunkBeforeOffer)
        try serve(sender, dir)
        guard case .error(let p)? = sender.stream.written.last else {
            Issue.record("no ERROR")
            return
        }
        #expect(p.code == "unexpected-frame")
        #expect(sender.stream.wroteEnd)  // closed gracefully, so the ERROR reaches the sender
        #expect(dir.photos.isEmpty)
    }

    @Test("a shutdown answers ERROR shutting-down at the next frame boundary and keeps the partial")
    func shutdown() throws {
        let dir = try StoreDirectory()
        let signal = try ShutdownSignal()
        signal.request()
        let sender = FakeSender([("a.png", photo(800_000, 7))])
        try serve(sender, dir, shutdown: signal)
        guard case .error(let p)? = sender.stream.written.last else {
            Issue.record("no ERROR")
            return
        }
        #expect(p.code == "shutting-down")
        #expect(dir.photos.isEmpty)
    }
}

@Suite("ReceiverDriver: a partial planted under another's SHA-256 (issue 54)", .tags(.unit))
struct PlantedPartialTests {
    @Test(
        "an attacker sends other bytes under the victim's SHA-256 and size and closes before DONE; the victim (\"held\") is ACCEPTed at 0, not at the end, and its photo is saved"
    )
    func victimStartsOver() throws {
        let dir = try StoreDirectory()
        let victim = photo(250_001, 31)
        let other = photo(250_001, 32)
        let offer = Offer(name: "IMG_1.png", size: Int64(victim.count), sha256: SHA256.hex(of: victim))
        func session(_ bytes: [UInt8], done: Bool) throws -> ScriptedStream {
            let stream = ScriptedStream { _, _ in }
            stream.feed(.hello(Hello(name: done ? "victim" : "attacker", window: 4, features: ["held"])))
            stream.feed(.offer(offer))
            for start in stride(from: 0, to: bytes.count, by: ProtocolLimits.chunkSize) {
                stream.feed(.chunk(Array(bytes[start..<min(start + ProtocolLimits.chunkSize, bytes.count)])))
            }
            if done {
                stream.feed(.done)
                stream.feed(.bye)
            }
            stream.whenEmpty = .close
            try serveScripted(stream, dir)
            return stream
        }
        _ = try session(other, done: false)
        #expect(dir.partials.count == 1 && dir.photos.isEmpty)
        let answers = try session(victim, done: true).written.filter { if case .welcome = $0 { false } else { true } }
        #expect(answers.first == .accept(Accept(offset: 0)), "\(answers)")
        #expect(
            answers.last == .saved(Saved(name: "IMG_1.png", size: Int64(victim.count), sha256: SHA256.hex(of: victim))),
            "\(answers)")
        #expect(readFile(dir.path + "/IMG_1.png") == victim && dir.partials.isEmpty)
    }
}
