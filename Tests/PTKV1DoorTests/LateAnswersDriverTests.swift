import Dispatch
import PTKDigest
import PTKDoor
import PTKProtocol
import PTKSystem
import PTKTestSupport
import PTKTestTags
import PTKTransport
import Testing

@testable import PTKStore
@testable import PTKV1Door

/// A sender that announces late-answers and sends its whole script at once (HELLO, then each
/// photo's OFFER, CHUNK and DONE, then BYE): the receiver cannot tell it from one that waited.
private func pipelinedSender(_ photos: [(String, [UInt8])]) -> ScriptedStream {
    let stream = ScriptedStream { _, _ in }
    stream.feed(.hello(Hello(name: "pipelined", window: 16, features: ["late-answers"])))
    for (name, bytes) in photos {
        stream.feed(.offer(Offer(name: name, size: Int64(bytes.count), sha256: SHA256.hex(of: bytes))))
        stream.feed(.chunk(bytes))
        stream.feed(.done)
    }
    stream.feed(.bye)
    stream.whenEmpty = .close
    return stream
}

private func serve(_ stream: ScriptedStream, _ dir: StoreDirectory) throws {
    let settings = ReceiverSettings(name: "test", window: 16, maxFileSize: 1 << 30, sessions: 2)
    let driver = ReceiverDriver(
        id: 7, connection: FramedConnection(stream: stream, timeout: .seconds(5)),
        peer: SocketAddress(numericHost: "192.0.2.1", port: 4000)!,
        store: dir.store, settings: settings, shutdown: try ShutdownSignal(), handshakeDeadline: .now + .seconds(5))
    driver.run()
}

@Suite("ReceiverDriver: late answers over a scripted sender (issue 46)", .tags(.unit))
struct LateAnswersDriverTests {
    static let photos = (0..<6).map { ("p\($0).png", makePNG(size: 20_000 + $0 * 500, seed: UInt64($0 + 60))) }

    @Test(
        "every photo is saved and answered, in DONE order, before the session closes; the store's late slots are all given back"
    )
    func answeredInOrder() throws {
        let dir = try StoreDirectory()
        let stream = pipelinedSender(Self.photos)
        try serve(stream, dir)
        let saved = stream.written.compactMap { if case .saved(let s) = $0 { s.name } else { nil } }
        #expect(saved == Self.photos.map(\.0))
        for (name, bytes) in Self.photos { #expect(readFile(dir.path + "/" + name) == bytes) }
        #expect(dir.partials.isEmpty)
        #expect(dir.store.lateFinishes.taken == 0)
        #expect(stream.isClosed)
    }

    @Test(
        "with the store's budget of late photos spent, the session waits for each photo's round before it reads on: answers strictly in order"
    )
    func budgetSpent() throws {
        let dir = try StoreDirectory()
        for _ in 0..<PhotoStore.maxLateFinishes { #expect(dir.store.lateFinishes.tryTake()) }
        let stream = pipelinedSender(Self.photos)
        try serve(stream, dir)
        let answers = stream.written.filter { if case .welcome = $0 { false } else { true } }
        var expected: [Frame] = []
        for (name, bytes) in Self.photos {
            expected += [
                .accept(Accept(offset: 0)), .ack,
                .saved(Saved(name: name, size: Int64(bytes.count), sha256: SHA256.hex(of: bytes))),
            ]
        }
        #expect(answers == expected)
        #expect(dir.store.lateFinishes.taken == PhotoStore.maxLateFinishes)
    }
}

/// One photo's session over loopback: a ReceiverDriver on `dir`'s store with idle timeout
/// `timeout`, on a thread of its own, and a sender that sends HELLO (late answers), the photo's
/// OFFER, CHUNK and DONE, then nothing until it is answered, as ptk-send at its last photo.
private final class LastPhotoSession: @unchecked Sendable {
    let driver: ReceiverDriver
    let sender: FramedConnection
    let done = DispatchSemaphore(value: 0)
    let name: String
    let photo: [UInt8]

    init(_ dir: StoreDirectory, id: Int, timeout: Duration, name: String, seed: UInt64) throws {
        let (server, client) = try loopbackPair()
        driver = ReceiverDriver(
            id: id, connection: FramedConnection(stream: server, timeout: timeout),
            peer: SocketAddress(numericHost: "192.0.2.1", port: 4000)!, store: dir.store,
            settings: ReceiverSettings(name: "test", window: 16, maxFileSize: 1 << 30, sessions: 2),
            shutdown: try ShutdownSignal(), handshakeDeadline: .now + .seconds(5))
        sender = FramedConnection(stream: client, timeout: .seconds(5))
        self.name = name
        photo = makePNG(size: 20_000, seed: seed)
    }

    deinit { sender.close() }

    /// What the receiver must answer: WELCOME aside, ACCEPT, ACK and SAVED.
    var expected: [Frame] {
        [
            .accept(Accept(offset: 0)), .ack,
            .saved(Saved(name: name, size: Int64(photo.count), sha256: SHA256.hex(of: photo))),
        ]
    }

    /// Starts the session and sends the photo; returns the frames received up to its SAVED (or
    /// the sender's 5 s timeout, recorded as an issue) and how long they took.
    func sendAndAwaitSaved() throws -> (answers: [Frame], waited: Duration) {
        try startThread(name: "session") { [self] in
            driver.run()
            done.signal()
        }
        for frame: Frame in [
            .hello(Hello(name: "waiting", window: 16, features: ["late-answers"])),
            .offer(Offer(name: name, size: Int64(photo.count), sha256: SHA256.hex(of: photo))), .chunk(photo), .done,
        ] {
            try sender.send(frame)
        }
        var answers: [Frame] = []
        let started = Instant.now
        while !answers.contains(where: { if case .saved = $0 { true } else { false } }) {
            do throws(TransportError) {
                guard let frame = try sender.receive() else { break }
                answers.append(frame)
            } catch {
                Issue.record("no SAVED within 5 s: \(error); got \(answers)")
                break
            }
        }
        return (answers, Instant.now - started)
    }

    /// Sends BYE; returns the frames that follow, to the end of the stream.
    func bye() throws -> [Frame] {
        try sender.send(.bye)
        var after: [Frame] = []
        while true {
            do throws(TransportError) {
                guard let frame = try sender.receive() else { break }
                after.append(frame)
            } catch {
                break
            }
        }
        return after
    }
}

@Suite("ReceiverDriver: an owed answer whose round ends just before the session waits (issue 46)", .tags(.unit))
struct OwedAnswerRaceTests {
    @Test(
        "the round of the last photo ends after the session looked for due answers and before it waits for its peer: SAVED goes at once, not after the peer's next frame (a sender waiting for it would wait out its timeout)"
    )
    func roundEndsBeforeWaiting() throws {
        let dir = try StoreDirectory()
        // The photo's data flush waits for the seam below: its round ends at that moment.
        let gate = DispatchSemaphore(value: 0)
        dir.store.rounds = FlushRounds(
            store: dir.store,
            flush: FlushRounds.Flush(file: { fd throws(SystemError) in
                _ = gate.wait(timeout: .now() + 10)
                try fd.sync()
            }))
        let session = try LastPhotoSession(dir, id: 9, timeout: .seconds(30), name: "last.png", seed: 4601)
        nonisolated(unsafe) var endedPending = 0
        session.driver.beforeWaitingForPeer = { ticket in
            guard let ticket, ticket.result == nil else { return }
            endedPending += 1
            gate.signal()
            _ = ticket.wait()
        }
        let (answers, waited) = try session.sendAndAwaitSaved()
        #expect(endedPending == 1, "the seam ended the round \(endedPending) times")
        #expect(waited < .seconds(3), "\(waited)")
        #expect(Array(answers.dropFirst()) == session.expected, "\(answers)")
        #expect(try session.bye().isEmpty)
        #expect(session.done.wait(timeout: .now() + 10) == .success)
        #expect(readFile(dir.path + "/last.png") == session.photo)
        #expect(dir.store.lateFinishes.taken == 0)
    }
}

@Suite("ReceiverDriver: a round longer than the idle timeout (issue 46)", .tags(.unit))
struct SlowRoundTests {
    @Test(
        "the last photo's round takes longer than the idle timeout while the sender waits for its SAVED: SAVED goes when the round ends and the session goes on (the sender's silence is the receiver's doing, not an idle peer's: no ERROR timeout)"
    )
    func roundLongerThanIdleTimeout() throws {
        let dir = try StoreDirectory()
        // The photo's data flush takes 1.5 s, the session's idle timeout is 1 s.
        dir.store.rounds = FlushRounds(
            store: dir.store,
            flush: FlushRounds.Flush(file: { fd throws(SystemError) in
                sleep(for: .milliseconds(1500))
                try fd.sync()
            }))
        let session = try LastPhotoSession(dir, id: 10, timeout: .seconds(1), name: "slow.png", seed: 4602)
        let (answers, waited) = try session.sendAndAwaitSaved()
        #expect(waited < .milliseconds(1900), "\(waited)")
        #expect(Array(answers.dropFirst()) == session.expected, "\(answers)")
        // Nothing but the end of the stream follows: no ERROR for a timeout.
        let after = try session.bye()
        #expect(after.isEmpty, "\(after)")
        #expect(session.done.wait(timeout: .now() + 10) == .success)
        #expect(readFile(dir.path + "/slow.png") == session.photo)
    }
}
