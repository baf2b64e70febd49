import PTKTestTags
import PTKVocabulary
import Testing

@testable import PTKProtocol

let sha = String(repeating: "a1", count: 32)
/// WELCOME.types of a receiver that keeps every type (the default).
let allTypes = ["image/png", "image/jpeg", "image/heic", "image/heif", "video/mp4", "video/quicktime"]
let chunk = ProtocolLimits.chunkSize

func offer(size: Int64, name: String = "IMG_0001.png", mediaType: String = "image/png", sha256: String = sha) -> Offer {
    Offer(name: name, size: size, sha256: sha256, mediaType: mediaType)
}

/// A receiver after HELLO, with window 16 granted unless `window` says otherwise.
func readyReceiver(window: Int = 16, maxFileSize: Int64 = 1 << 30) -> ReceiverSession {
    var r = ReceiverSession(settings: ReceiverSettings(name: "livingroom", window: 16, maxFileSize: maxFileSize))
    _ = r.handle(.frame(.hello(Hello(name: "alice", window: window))))
    return r
}

/// A receiver that accepted an offer of `size` bytes resuming at `offset`.
func receiving(size: Int64, offset: Int64 = 0, window: Int = 16) -> ReceiverSession {
    var r = readyReceiver(window: window)
    _ = r.handle(.frame(.offer(offer(size: size))))
    _ = r.handle(.offerDecided(.accept(offset: offset)))
    return r
}

func isError(_ actions: [ReceiverAction], _ code: ErrorCode, keep: Bool?) -> Bool {
    var expected: [ReceiverAction] = []
    if let keep { expected.append(.abandonFile(keepForResume: keep)) }
    guard actions.count == expected.count + 2 else { return false }
    guard Array(actions.prefix(expected.count)) == expected else { return false }
    guard case .send(.error(let p)) = actions[expected.count], p.code == code.rawValue else { return false }
    return actions.last == .close
}

@Suite("Receiver state machine", .tags(.unit))
struct ReceiverSessionTests {
    @Test(
        "WELCOME carries sessions when the receiver has it set, and leaves it out otherwise",
        arguments: [Optional(8), nil])
    func welcomeSessions(sessions: Int?) {
        var r = ReceiverSession(
            settings: ReceiverSettings(name: "livingroom", window: 16, maxFileSize: 1000, sessions: sessions))
        #expect(
            r.handle(.frame(.hello(Hello(name: "alice", window: 4)))) == [
                .send(
                    .welcome(
                        Welcome(name: "livingroom", window: 4, maxFileSize: 1000, sessions: sessions, types: allTypes)))
            ])
    }

    @Test(
        "HELLO is answered with WELCOME granting the smaller window",
        arguments: [
            (Optional(64), 16), (Optional(4), 4), (Optional(1), 1), (Optional(0), 1), (Optional(-5), 1), (nil, 1),
        ])
    func hello(asked: Int?, granted: Int) {
        var r = ReceiverSession(settings: ReceiverSettings(name: "livingroom", window: 16, maxFileSize: 1000))
        var hello = Hello(name: "alice", window: 1)
        hello.window = asked
        let actions = r.handle(.frame(.hello(hello)))
        #expect(
            actions == [
                .send(.welcome(Welcome(name: "livingroom", window: granted, maxFileSize: 1000, types: allTypes)))
            ])
        #expect(r.window == granted)
        #expect(r.state == .ready)
        #expect(r.peerName == "alice")
    }

    @Test("an unknown version gets ERROR unsupported-version")
    func unsupportedVersion() {
        var r = ReceiverSession(settings: ReceiverSettings(name: "x", window: 16, maxFileSize: 1000))
        #expect(
            isError(r.handle(.frame(.hello(Hello(version: 2, name: "a", window: 1)))), .unsupportedVersion, keep: nil))
        #expect(r.state == .closed)
        #expect(r.handle(.frame(.bye)) == [])
    }

    @Test("a HELLO for another protocol gets ERROR bad-frame")
    func wrongProto() {
        var r = ReceiverSession(settings: ReceiverSettings(name: "x", window: 16, maxFileSize: 1000))
        #expect(isError(r.handle(.frame(.hello(Hello(proto: "http", name: "a", window: 1)))), .badFrame, keep: nil))
    }

    @Test(
        "any frame but HELLO first gets ERROR unexpected-frame",
        arguments: [
            Frame.offer(offer(size: 100)), .chunk([1]), .done, .bye, .ack,
            .welcome(Welcome(name: "x", window: 1, maxFileSize: 1)),
        ])
    func frameBeforeHello(frame: Frame) {
        var r = ReceiverSession(settings: ReceiverSettings(name: "x", window: 16, maxFileSize: 1000))
        #expect(isError(r.handle(.frame(frame)), .unexpectedFrame, keep: nil))
    }

    @Test("a second HELLO gets ERROR unexpected-frame")
    func secondHello() {
        var r = readyReceiver()
        #expect(isError(r.handle(.frame(.hello(Hello(name: "a", window: 1)))), .unexpectedFrame, keep: nil))
    }

    @Test("a whole file: OFFER, ACCEPT, CHUNK/ACK, DONE, SAVED")
    func wholeFile() {
        var r = readyReceiver()
        let size = Int64(chunk * 2 + 10)
        #expect(r.handle(.frame(.offer(offer(size: size)))) == [.evaluateOffer(offer(size: size))])
        #expect(r.handle(.offerDecided(.accept(offset: 0))) == [.send(.accept(Accept(offset: 0)))])
        for length in [chunk, chunk, 10] {
            let bytes = [UInt8](repeating: 1, count: length)
            #expect(r.handle(.frame(.chunk(bytes))) == [.writeChunk(bytes)])
            #expect(r.handle(.chunkWritten) == [.send(.ack)])
        }
        #expect(r.handle(.frame(.done)) == [.finishFile])
        let saved = Saved(name: "IMG_0001.png", size: size, sha256: sha)
        #expect(r.handle(.fileFinished(.success(saved))) == [.send(.saved(saved))])
        #expect(r.state == .ready)
        #expect(r.handle(.frame(.bye)) == [.close])
        #expect(r.state == .closed)
    }

    @Test("with a window, several chunks may be received before their ACKs")
    func windowed() {
        var r = receiving(size: Int64(chunk * 4), window: 4)
        for _ in 0..<4 { #expect(r.handle(.frame(.chunk([UInt8](repeating: 0, count: chunk)))).count == 1) }
        for _ in 0..<4 { #expect(r.handle(.chunkWritten) == [.send(.ack)]) }
        #expect(r.handle(.frame(.done)) == [.finishFile])
    }

    @Test("more chunks than the window unacknowledged gets ERROR unexpected-frame, keeping the partial")
    func windowExceeded() {
        var r = receiving(size: Int64(chunk * 4), window: 2)
        _ = r.handle(.frame(.chunk([UInt8](repeating: 0, count: chunk))))
        _ = r.handle(.frame(.chunk([UInt8](repeating: 0, count: chunk))))
        #expect(isError(r.handle(.frame(.chunk([UInt8](repeating: 0, count: chunk)))), .unexpectedFrame, keep: true))
    }

    @Test("a rejected decision answers REJECT and the session goes on")
    func storeRejects() {
        var r = readyReceiver()
        _ = r.handle(.frame(.offer(offer(size: 100))))
        let p = Problem(.noSpace, "full")
        #expect(r.handle(.offerDecided(.reject(p))) == [.send(.reject(p))])
        #expect(r.state == .ready)
    }

    @Test(
        "offers of a type no receiver keeps, too small or too large are REJECTed without asking the store",
        arguments: [
            (offer(size: 100, mediaType: "image/gif"), FileErrorCode.unsupportedType),
            (offer(size: 100, mediaType: "text/plain"), .unsupportedType),
            (offer(size: 7), .notPNG),
            (offer(size: 7, mediaType: "image/jpeg"), .notPNG),
            (offer(size: 0), .notPNG),
            (offer(size: 2_000), .tooLarge),
        ])
    func rejectedOffers(o: Offer, code: FileErrorCode) {
        var r = readyReceiver(maxFileSize: 1_000)
        let actions = r.handle(.frame(.offer(o)))
        guard case .send(.reject(let p)) = actions.first else {
            Issue.record("no REJECT: \(actions)")
            return
        }
        #expect(p.code == code.rawValue)
        #expect(actions.count == 1)
        #expect(r.state == .ready)
    }

    @Test(
        "WELCOME.types says what the receiver keeps; an OFFER of another type is REJECTed unsupported-type, naming them; any case of a kept type is taken"
    )
    func keptTypes() {
        var r = ReceiverSession(
            settings: ReceiverSettings(name: "livingroom", window: 16, maxFileSize: 1 << 30, types: [.png, .jpeg]))
        #expect(
            r.handle(.frame(.hello(Hello(name: "alice", window: 4)))) == [
                .send(
                    .welcome(
                        Welcome(
                            name: "livingroom", window: 4, maxFileSize: 1 << 30, types: ["image/png", "image/jpeg"])))
            ])
        let heic = r.handle(.frame(.offer(offer(size: 5000, name: "IMG_2.heic", mediaType: "image/heic"))))
        #expect(
            heic == [
                .send(
                    .reject(
                        Problem(
                            .unsupportedType, "image/heic is not a type this receiver keeps (image/png, image/jpeg)")))
            ])
        #expect(r.state == .ready)
        // The session goes on: a JPEG (its media type in any case) is taken to the store.
        let jpeg = offer(size: 5000, name: "IMG_1.jpg", mediaType: "IMAGE/JPEG")
        #expect(r.handle(.frame(.offer(jpeg))) == [.evaluateOffer(jpeg)])
    }

    @Test(
        "HELLO.features \"folders\" is remembered (OFFER.name's folders are kept); without it, or with unknown features, it is not"
    )
    func foldersFeature() {
        for (features, keeps) in [
            (["held", "folders"], true), (["folders"], true), (["held"], false), (nil, false),
            (["future", "FOLDERS"], false),
        ] as [([String]?, Bool)] {
            var r = ReceiverSession(settings: ReceiverSettings(name: "livingroom", window: 16, maxFileSize: 1000))
            _ = r.handle(.frame(.hello(Hello(name: "alice", window: 4, features: features))))
            #expect(r.peerKeepsFolders == keeps, "\(String(describing: features))")
        }
    }

    @Test(
        "malformed offers get ERROR bad-frame",
        arguments: [
            offer(size: -1), offer(size: 100, sha256: "ABC"),
            offer(size: 100, sha256: String(repeating: "A", count: 64)),
            offer(size: 100, sha256: String(repeating: "g", count: 64)),
        ])
    func malformedOffer(o: Offer) {
        var r = readyReceiver()
        #expect(isError(r.handle(.frame(.offer(o))), .badFrame, keep: nil))
    }

    @Test("a chunk of the wrong size gets FAILED size-mismatch, and the rest of that file is discarded")
    func wrongChunkSize() {
        var r = receiving(size: Int64(chunk * 3))
        let actions = r.handle(.frame(.chunk([UInt8](repeating: 0, count: chunk - 1))))
        #expect(actions.first == .abandonFile(keepForResume: false))
        guard case .send(.failed(let p)) = actions.last else {
            Issue.record("no FAILED")
            return
        }
        #expect(p.code == "size-mismatch")
        #expect(r.state == .discarding)
        #expect(r.handle(.frame(.chunk([UInt8](repeating: 0, count: chunk)))) == [])
        #expect(r.handle(.frame(.chunk([1, 2, 3]))) == [])
        #expect(r.handle(.frame(.offer(offer(size: 50)))) == [.evaluateOffer(offer(size: 50))])
    }

    @Test("BYE after FAILED ends the session")
    func byeWhileDiscarding() {
        var r = receiving(size: Int64(chunk * 3))
        _ = r.handle(.frame(.chunk([1])))
        #expect(r.handle(.frame(.bye)) == [.close])
    }

    @Test("DONE while discarding gets ERROR unexpected-frame")
    func doneWhileDiscarding() {
        var r = receiving(size: Int64(chunk * 3))
        _ = r.handle(.frame(.chunk([1])))
        #expect(isError(r.handle(.frame(.done)), .unexpectedFrame, keep: nil))
    }

    @Test("a failed write sends FAILED in place of the ACK and deletes the partial")
    func writeFails() {
        var r = receiving(size: Int64(chunk * 3))
        _ = r.handle(.frame(.chunk([UInt8](repeating: 0, count: chunk))))
        let p = Problem(.noSpace, "disk full")
        #expect(r.handle(.chunkFailed(p)) == [.abandonFile(keepForResume: false), .send(.failed(p))])
        #expect(r.state == .discarding)
    }

    @Test("DONE before every byte arrived gets FAILED size-mismatch")
    func earlyDone() {
        var r = receiving(size: Int64(chunk * 2))
        _ = r.handle(.frame(.chunk([UInt8](repeating: 0, count: chunk))))
        _ = r.handle(.chunkWritten)
        let actions = r.handle(.frame(.done))
        #expect(actions.first == .abandonFile(keepForResume: false))
        guard case .send(.failed(let p)) = actions.last else {
            Issue.record("no FAILED")
            return
        }
        #expect(p.code == "size-mismatch")
        #expect(r.state == .ready)
    }

    @Test("DONE with a chunk still unacknowledged gets ERROR unexpected-frame")
    func doneBeforeAck() {
        var r = receiving(size: 100)
        _ = r.handle(.frame(.chunk([UInt8](repeating: 0, count: 100))))
        #expect(isError(r.handle(.frame(.done)), .unexpectedFrame, keep: true))
    }

    @Test("a chunk after the last one gets ERROR unexpected-frame")
    func chunkAfterLast() {
        var r = receiving(size: 100)
        _ = r.handle(.frame(.chunk([UInt8](repeating: 0, count: 100))))
        _ = r.handle(.chunkWritten)
        #expect(isError(r.handle(.frame(.chunk([1]))), .unexpectedFrame, keep: true))
    }

    @Test("a failed verification answers FAILED and the session goes on")
    func verificationFails() {
        var r = receiving(size: 100)
        _ = r.handle(.frame(.chunk([UInt8](repeating: 0, count: 100))))
        _ = r.handle(.chunkWritten)
        _ = r.handle(.frame(.done))
        let f = StoreFailure(.hashMismatch, "nope")
        #expect(r.handle(.fileFinished(.failure(f))) == [.send(.failed(Problem(.hashMismatch, "nope")))])
        #expect(r.state == .ready)
    }

    @Test("resuming: ACCEPT carries the offset and only the remaining chunks are owed")
    func resume() {
        var r = readyReceiver()
        let size = Int64(chunk * 2 + 500)
        _ = r.handle(.frame(.offer(offer(size: size))))
        #expect(
            r.handle(.offerDecided(.accept(offset: Int64(chunk * 2)))) == [
                .send(.accept(Accept(offset: Int64(chunk * 2))))
            ])
        #expect(r.handle(.frame(.chunk([UInt8](repeating: 0, count: 500)))).count == 1)
        _ = r.handle(.chunkWritten)
        #expect(r.handle(.frame(.done)) == [.finishFile])
    }

    @Test("resuming a file held whole: DONE comes straight after ACCEPT")
    func resumeComplete() {
        var r = receiving(size: Int64(chunk * 2), offset: Int64(chunk * 2))
        #expect(r.handle(.frame(.done)) == [.finishFile])
    }

    @Test(
        "a store offset that is not a chunk boundary is an internal error",
        arguments: [Int64(1), 100, -1, Int64(chunk * 5)])
    func badStoreOffset(offset: Int64) {
        var r = readyReceiver()
        _ = r.handle(.frame(.offer(offer(size: Int64(chunk * 3)))))
        #expect(isError(r.handle(.offerDecided(.accept(offset: offset))), .internal, keep: nil))
    }

    @Test(
        "BYE or OFFER in the middle of a file gets ERROR unexpected-frame, keeping the partial",
        arguments: [Frame.bye, .offer(offer(size: 100)), .hello(Hello(name: "a", window: 1))])
    func outOfOrderMidFile(frame: Frame) {
        var r = receiving(size: Int64(chunk * 3))
        #expect(isError(r.handle(.frame(frame)), .unexpectedFrame, keep: true))
    }

    @Test(
        "receiver-bound frames from the sender get ERROR unexpected-frame",
        arguments: [
            Frame.ack, .welcome(Welcome(name: "x", window: 1, maxFileSize: 1)), .accept(Accept(offset: 0)),
            .reject(Problem(.noSpace, "")), .saved(Saved(name: "a", size: 1, sha256: sha)),
            .failed(Problem(.ioError, "")),
        ])
    func wrongDirection(frame: Frame) {
        var r = readyReceiver()
        #expect(isError(r.handle(.frame(frame)), .unexpectedFrame, keep: nil))
    }

    @Test("ERROR from the sender closes without an answer, keeping the partial")
    func senderError() {
        var r = receiving(size: Int64(chunk * 3))
        #expect(r.handle(.frame(.error(Problem(.internal, "bye")))) == [.abandonFile(keepForResume: true), .close])
        var idle = readyReceiver()
        #expect(idle.handle(.frame(.error(Problem(.internal, "bye")))) == [.close])
    }

    @Test(
        "idle timeout, shutdown and decoder violations answer ERROR and keep the partial",
        arguments: [
            (ReceiverEvent.timedOut, ErrorCode.timeout),
            (.shutdown, .shuttingDown),
            (.violation(ProtocolViolation(.frameTooLarge, "big")), .frameTooLarge),
            (.violation(ProtocolViolation(.badFrame, "bad")), .badFrame),
        ])
    func terminalEvents(event: ReceiverEvent, code: ErrorCode) {
        var r = receiving(size: Int64(chunk * 3))
        #expect(isError(r.handle(event), code, keep: true))
        var idle = readyReceiver()
        #expect(isError(idle.handle(event), code, keep: nil))
    }

    @Test("the peer closing mid-file keeps the partial for resume")
    func peerClosed() {
        var r = receiving(size: Int64(chunk * 3))
        #expect(r.handle(.peerClosed) == [.abandonFile(keepForResume: true), .close])
        var idle = readyReceiver()
        #expect(idle.handle(.peerClosed) == [.close])
    }

    @Test("a pipelined OFFER right after DONE is answered after SAVED")
    func pipelined() {
        var r = receiving(size: 100)
        _ = r.handle(.frame(.chunk([UInt8](repeating: 0, count: 100))))
        _ = r.handle(.chunkWritten)
        #expect(r.handle(.frame(.done)) == [.finishFile])
        let saved = Saved(name: "a.png", size: 100, sha256: sha)
        #expect(r.handle(.fileFinished(.success(saved))) == [.send(.saved(saved))])
        #expect(r.handle(.frame(.offer(offer(size: 200)))) == [.evaluateOffer(offer(size: 200))])
    }

    @Test(
        "driver results that arrive out of order are internal errors",
        arguments: [
            ReceiverEvent.chunkWritten, .chunkFailed(Problem(.ioError, "")), .offerDecided(.accept(offset: 0)),
            .fileFinished(.success(Saved(name: "a", size: 1, sha256: sha))),
        ])
    func outOfOrderDriverResults(event: ReceiverEvent) {
        var r = readyReceiver()
        #expect(isError(r.handle(event), .internal, keep: nil))
    }
}

@Suite("Receiver state machine: transport security (protocol §6)", .tags(.unit))
struct ReceiverSecurityTests {
    let alice = DeviceID(sha256: Array(repeating: 1, count: 32))
    let hello = ReceiverEvent.frame(.hello(Hello(name: "alice", window: 4)))

    func receiver(_ sender: SenderCredentials, plaintext: Bool = false, trustedOnly: Bool = false) -> ReceiverSession {
        ReceiverSession(
            settings: ReceiverSettings(
                name: "r", window: 16, maxFileSize: 1000, plaintextAllowed: plaintext,
                trustedSendersOnly: trustedOnly), sender: sender)
    }

    func welcomed(_ actions: [ReceiverAction]) -> Bool {
        if case .send(.welcome)? = actions.first { return actions.count == 1 }
        return false
    }

    @Test("plaintext HELLO: ERROR tls-required unless plaintext is allowed; never reaches an OFFER")
    func plaintext() {
        var refused = receiver(.plaintext)
        #expect(isError(refused.handle(hello), .tlsRequired, keep: nil))
        #expect(refused.state == .closed)
        #expect(refused.handle(.frame(.offer(offer(size: 100)))) == [])
        var allowed = receiver(.plaintext, plaintext: true)
        #expect(welcomed(allowed.handle(hello)))
        // Trusted senders only: a plaintext sender cannot be one.
        var trustedOnly = receiver(.plaintext, plaintext: true, trustedOnly: true)
        #expect(isError(trustedOnly.handle(hello), .tlsRequired, keep: nil))
    }

    @Test("TLS under `anyone`: every sender is served, with or without a device ID")
    func anyone() {
        for sender in [
            SenderCredentials.tls(alice, trusted: false), .tls(nil, trusted: false), .tls(alice, trusted: true),
        ] {
            var r = receiver(sender)
            #expect(welcomed(r.handle(hello)), "\(sender)")
        }
    }

    @Test("TLS under `trusted`: an untrusted device is recorded as pending and gets ERROR unauthorized naming its ID")
    func untrusted() {
        var r = receiver(.tls(alice, trusted: false), trustedOnly: true)
        let actions = r.handle(hello)
        #expect(actions.first == .recordRefusedSender(alice, name: "alice"))
        #expect(isError(Array(actions.dropFirst()), .unauthorized, keep: nil))
        guard case .send(.error(let p)) = actions[1] else {
            Issue.record("no ERROR")
            return
        }
        #expect(p.message.contains(alice.description))
        #expect(r.state == .closed)
    }

    @Test(
        "TLS under `trusted`: no Ed25519 identity is ERROR unauthorized, and nothing to record; a trusted one is served"
    )
    func noIdentityAndTrusted() {
        var none = receiver(.tls(nil, trusted: false), trustedOnly: true)
        let actions = none.handle(hello)
        #expect(isError(actions, .unauthorized, keep: nil))
        var trusted = receiver(.tls(alice, trusted: true), trustedOnly: true)
        #expect(welcomed(trusted.handle(hello)))
    }

    @Test("the version check comes first: a HELLO of another version gets unsupported-version even over plaintext")
    func versionFirst() {
        var r = receiver(.plaintext)
        #expect(
            isError(r.handle(.frame(.hello(Hello(version: 2, name: "x", window: 1)))), .unsupportedVersion, keep: nil))
    }
}
