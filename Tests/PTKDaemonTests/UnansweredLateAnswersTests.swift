import PTKDigest
import PTKDoor
import PTKLibrary
import PTKProtocol
import PTKSystem
import PTKTestSupport
import PTKTestTags
import PTKTransport
import Testing

@testable import PTKDaemon
@testable import PTKV1Door

/// A late-answers sender that sends one photo and then, instead of waiting for SAVED, does
/// `then`: closes, or sends ERROR (as one that timed out waiting for SAVED does).
private func impatientSender(_ name: String, _ bytes: [UInt8], then ending: Frame?) -> ScriptedStream {
    let stream = ScriptedStream { _, _ in }
    stream.feed(.hello(Hello(name: "impatient", window: 16, features: ["late-answers"])))
    stream.feed(.offer(Offer(name: name, size: Int64(bytes.count), sha256: SHA256.hex(of: bytes))))
    stream.feed(.chunk(bytes))
    stream.feed(.done)
    if let ending { stream.feed(ending) }
    stream.whenEmpty = .close
    return stream
}

@Suite("ReceiverDriver: late answers a sender does not wait for (issue 54)", .tags(.unit))
struct UnansweredLateAnswersTests {
    /// A receiver with the library, duplicates = skip and an on-saved hook (never run: its queue is read).
    static func receiver() throws -> DaemonFixture { try DaemonFixture { $0.onSaved = ["/bin/true"] } }

    static func serve(_ stream: ScriptedStream, _ f: DaemonFixture) throws {
        let settings = ReceiverSettings(name: "test", window: 16, maxFileSize: 1 << 30, sessions: 2)
        let driver = ReceiverDriver(
            id: 9, connection: FramedConnection(stream: stream, timeout: .seconds(5)),
            peer: SocketAddress(numericHost: "192.0.2.1", port: 4000)!, store: f.daemon.store,
            arrivals: f.daemon.arrivals, settings: settings, shutdown: try ShutdownSignal(),
            handshakeDeadline: .now + .seconds(5))
        driver.run()
    }

    @Test(
        "closing right after DONE, or sending ERROR: the photo published reaches the held index, the hook's queue and the library with its sender",
        arguments: [nil, Frame.error(Problem(code: "timeout", message: "no SAVED"))])
    func recorded(ending: Frame?) throws {
        let f = try Self.receiver()
        let bytes = makePNG(size: 30_000, seed: 91)
        let stream = impatientSender("lost0.png", bytes, then: ending)
        try Self.serve(stream, f)
        #expect(
            !stream.written.contains { if case .saved = $0 { true } else { false } }, "the sender was gone before SAVED"
        )
        #expect(f.kept() == ["lost0.png"])
        #expect(f.daemon.arrivals.heldPhoto(sha256: SHA256.hex(of: bytes), size: Int64(bytes.count)) == "lost0.png")
        let queue = readFile(f.root + "/state/hooks/queue").map { String(decoding: $0, as: UTF8.self) } ?? ""
        #expect(queue.contains("lost0.png"), "\(queue)")
        let library = try #require(f.daemon.library)
        try library.start()
        defer { library.stop(waitingUntil: .now + .seconds(5)) }
        #expect(eventually(30) { library.isIdle })
        let photo = try PhotoLibrary(directory: f.photos, create: false).find("lost0.png")
        #expect(photo.senderName == "impatient" && photo.senderAddress == "192.0.2.1:4000", "\(photo)")
    }

    @Test("the same bytes sent again after a sender left before SAVED are already there: SAVED duplicate, one file")
    func duplicateAfterwards() throws {
        let f = try Self.receiver()
        let bytes = makePNG(size: 30_000, seed: 92)
        try Self.serve(impatientSender("lost0.png", bytes, then: nil), f)
        let again = impatientSender("lost0.png", bytes, then: .bye)
        try Self.serve(again, f)
        let saved = again.written.compactMap { if case .saved(let s) = $0 { s } else { nil } }
        #expect(
            saved == [
                Saved(name: "lost0.png", size: Int64(bytes.count), sha256: SHA256.hex(of: bytes), duplicate: true)
            ], "\(again.written)")
        #expect(f.kept() == ["lost0.png"])
    }
}
