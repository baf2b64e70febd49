import PTKTestTags
import PTKVocabulary
import Testing

@testable import PTKProtocol

func files(_ sizes: [Int64]) -> [OutgoingFile] {
    sizes.enumerated().map { OutgoingFile(name: "f\($0.offset).png", size: $0.element, sha256: sha) }
}

func welcomed(_ sizes: [Int64], window: Int = 16, granted: Int = 16, pipelining: Bool = false) -> SenderSession {
    var s = SenderSession(name: "alice", window: window, files: files(sizes), pipelining: pipelining)
    _ = s.handle(.start)
    _ = s.handle(.frame(.welcome(Welcome(name: "rx", window: granted, maxFileSize: 1 << 30))))
    return s
}

func chunkActions(_ actions: [SenderAction]) -> [SenderAction] {
    actions.filter { if case .sendChunk = $0 { return true } else { return false } }
}

func isProtocolError(_ actions: [SenderAction], _ code: ErrorCode) -> Bool {
    guard actions.count == 3, case .send(.error(let p)) = actions[0], p.code == code.rawValue,
        case .protocolError(let v) = actions[1], v.code == code
    else { return false }
    return actions[2] == .close
}

@Suite("Sender state machine", .tags(.unit))
struct SenderSessionTests {
    @Test("start says HELLO with the asked window, clamped to 1...64", arguments: [(16, 16), (0, 1), (100, 64)])
    func hello(asked: Int, sent: Int) {
        var s = SenderSession(name: "alice", window: asked, files: files([100]))
        #expect(s.handle(.start) == [.send(.hello(Hello(name: "alice", window: sent, features: ["held"])))])
        #expect(s.state == .awaitingWelcome)
    }

    @Test("WELCOME sets the smaller window and the first OFFER goes out")
    func welcome() {
        let s = welcomed([100], window: 16, granted: 4)
        #expect(s.window == 4)
        #expect(s.state == .awaitingAnswer(file: 0))
    }

    @Test("a planning session asks for its files on WELCOME, then offers the first of those it is given")
    func planning() {
        var s = SenderSession.planningAfterWelcome(name: "alice", window: 8)
        #expect(s.handle(.start) == [.send(.hello(Hello(name: "alice", window: 8, features: ["held"])))])
        let w = Welcome(name: "rx", window: 4, maxFileSize: 1 << 30, sessions: 3)
        #expect(s.handle(.frame(.welcome(w))) == [.plan(w)])
        #expect(s.state == .awaitingPlan)
        #expect(s.window == 4)
        // A frame while it plans is a protocol error, like any frame out of turn.
        var early = s
        #expect(isProtocolError(early.handle(.frame(.ack)), .unexpectedFrame))
        // A hash nobody asked for changes nothing.
        #expect(s.handle(.hashed(file: 0, sha256: sha)) == [])
        #expect(s.state == .awaitingPlan)
        let mine = files([300, 400])
        #expect(s.handle(.planned(mine)) == [.send(.offer(Offer(name: "f0.png", size: 300, sha256: sha)))])
        #expect(s.files == mine)
        #expect(s.state == .awaitingAnswer(file: 0))
        // A second plan is not asked for and is ignored.
        #expect(s.handle(.planned(files([1]))) == [])
        #expect(s.files == mine)
    }

    @Test("a planning session given no files says BYE; one given files without hashes asks for the first")
    func planningEdges() {
        var empty = SenderSession.planningAfterWelcome(name: "a", window: 1)
        _ = empty.handle(.start)
        _ = empty.handle(.frame(.welcome(Welcome(name: "rx", window: 1, maxFileSize: 1))))
        #expect(empty.handle(.planned([])) == [.send(.bye), .close])
        var unhashed = SenderSession.planningAfterWelcome(name: "a", window: 1)
        _ = unhashed.handle(.start)
        _ = unhashed.handle(.frame(.welcome(Welcome(name: "rx", window: 1, maxFileSize: 1))))
        #expect(unhashed.handle(.planned([OutgoingFile(name: "x.png", size: 9)])) == [.hash(file: 0)])
    }

    @Test("a planning session asks for more at the DONE of its last file, pipelining the next OFFER behind it")
    func pullsMore() {
        var s = SenderSession.planningAfterWelcome(name: "a", window: 4)
        _ = s.handle(.start)
        let w = Welcome(name: "rx", window: 4, maxFileSize: 1 << 30, sessions: 2)
        #expect(s.handle(.frame(.welcome(w))) == [.plan(w)])
        _ = s.handle(.planned(files([10])))
        _ = s.handle(.frame(.accept(Accept(offset: 0))))
        // The last chunk's ACK: DONE, then it asks for more before the result comes.
        #expect(s.handle(.frame(.ack)) == [.acknowledged(file: 0, bytes: 10), .send(.done), .plan(w)])
        #expect(s.state == .awaitingPlan)
        #expect(s.awaitingResults == [0])
        // Given one more, it offers it at once; the earlier file's SAVED then comes first.
        let more = [OutgoingFile(name: "g.png", size: 20, sha256: sha)]
        #expect(s.handle(.planned(more)) == [.send(.offer(Offer(name: "g.png", size: 20, sha256: sha)))])
        #expect(s.files.count == 2)
        let saved = Saved(name: "f0.png", size: 10, sha256: sha)
        #expect(s.handle(.frame(.saved(saved))) == [.finished(file: 0, .saved(saved))])
        _ = s.handle(.frame(.accept(Accept(offset: 0))))
        #expect(s.handle(.frame(.ack)) == [.acknowledged(file: 1, bytes: 20), .send(.done), .plan(w)])
        // Nothing more: it waits for the last result, then says BYE without asking again.
        #expect(s.handle(.planned([])) == [])
        #expect(s.state == .awaitingResult(file: 1))
        #expect(s.exhausted)
        let saved2 = Saved(name: "g.png", size: 20, sha256: sha)
        #expect(s.handle(.frame(.saved(saved2))) == [.finished(file: 1, .saved(saved2)), .send(.bye), .close])
        #expect(s.state == .closed)
    }

    @Test("a planning session asks for more after a REJECT of its last file, and without pipelining after the result")
    func pullsAfterRejectAndResult() {
        var s = SenderSession.planningAfterWelcome(name: "a", window: 1, pipelining: false)
        _ = s.handle(.start)
        let w = Welcome(name: "rx", window: 1, maxFileSize: 1 << 30)
        _ = s.handle(.frame(.welcome(w)))
        _ = s.handle(.planned(files([10])))
        let p = Problem(.tooLarge, "no")
        #expect(s.handle(.frame(.reject(p))) == [.finished(file: 0, .rejected(p)), .plan(w)])
        _ = s.handle(.planned([OutgoingFile(name: "h.png", size: 5, sha256: sha)]))
        _ = s.handle(.frame(.accept(Accept(offset: 0))))
        // Without pipelining, DONE alone; it asks once the result came.
        #expect(s.handle(.frame(.ack)) == [.acknowledged(file: 1, bytes: 5), .send(.done)])
        let saved = Saved(name: "h.png", size: 5, sha256: sha)
        #expect(s.handle(.frame(.saved(saved))) == [.finished(file: 1, .saved(saved)), .plan(w)])
        #expect(s.handle(.planned([])) == [.send(.bye), .close])
    }

    @Test("a result that arrives while it waits for more files is taken; any other frame then is a protocol error")
    func frameWhileAskingForMore() {
        var s = SenderSession.planningAfterWelcome(name: "a", window: 4)
        _ = s.handle(.start)
        let w = Welcome(name: "rx", window: 4, maxFileSize: 1 << 30)
        _ = s.handle(.frame(.welcome(w)))
        _ = s.handle(.planned(files([10])))
        _ = s.handle(.frame(.accept(Accept(offset: 0))))
        _ = s.handle(.frame(.ack))
        #expect(s.state == .awaitingPlan)
        var failed = s
        let p = Problem(.hashMismatch, "x")
        #expect(failed.handle(.frame(.failed(p))) == [.finished(file: 0, .failed(p))])
        #expect(failed.state == .awaitingPlan)
        #expect(isProtocolError(s.handle(.frame(.accept(Accept(offset: 0)))), .unexpectedFrame))
    }

    @Test("a session given its files up front never asks for a plan")
    func noPlanWhenFilesGiven() {
        var s = SenderSession(name: "a", window: 1, files: files([100]))
        _ = s.handle(.start)
        let actions = s.handle(.frame(.welcome(Welcome(name: "rx", window: 1, maxFileSize: 1 << 30, sessions: 8))))
        #expect(actions == [.send(.offer(Offer(name: "f0.png", size: 100, sha256: sha)))])
        #expect(s.handle(.planned(files([5]))) == [])
    }

    @Test(
        "WELCOME.sessions: absent, 0 or negative means 1; otherwise the number",
        arguments: [
            (Optional<Int>.none, 1), (Optional(0), 1), (Optional(-3), 1), (Optional(1), 1), (Optional(8), 8),
        ])
    func sessionsAllowed(sessions: Int?, allowed: Int) {
        #expect(Welcome(name: "rx", window: 1, maxFileSize: 1, sessions: sessions).sessionsAllowed == allowed)
    }

    @Test("WELCOME for another version gets ERROR unsupported-version")
    func wrongVersion() {
        var s = SenderSession(name: "a", window: 1, files: files([100]))
        _ = s.handle(.start)
        #expect(
            isProtocolError(
                s.handle(.frame(.welcome(Welcome(version: 2, name: "x", window: 1, maxFileSize: 1)))),
                .unsupportedVersion))
    }

    @Test("WELCOME with an unusable chunk size gets ERROR bad-frame", arguments: [0, -1, 102_401])
    func badChunkSize(size: Int) {
        var s = SenderSession(name: "a", window: 1, files: files([100]))
        _ = s.handle(.start)
        #expect(
            isProtocolError(
                s.handle(.frame(.welcome(Welcome(name: "x", window: 1, chunkSize: size, maxFileSize: 1)))), .badFrame))
    }

    @Test("ACCEPT fills the window; each ACK sends one more; DONE after the last ACK")
    func windowFlow() {
        let size = Int64(chunk * 5 + 1)
        var s = welcomed([size], granted: 2)
        let first = s.handle(.frame(.accept(Accept(offset: 0))))
        #expect(first.first == .started(file: 0, offset: 0))
        #expect(
            chunkActions(first) == [
                .sendChunk(file: 0, offset: 0, length: chunk), .sendChunk(file: 0, offset: Int64(chunk), length: chunk),
            ])
        var sent = 2
        var acks = 0
        while acks < 6 {
            let actions = s.handle(.frame(.ack))
            acks += 1
            sent += chunkActions(actions).count
            #expect(sent - acks <= 2)
            if acks == 6 {
                #expect(actions.last == .send(.done))
                guard case .acknowledged(0, 1) = actions[0] else {
                    Issue.record("last ack should be 1 byte: \(actions)")
                    return
                }
            }
        }
        #expect(sent == 6)
        #expect(s.state == .awaitingResult(file: 0))
    }

    @Test("window 1 is stop-and-wait: one chunk, one ACK")
    func stopAndWait() {
        var s = welcomed([Int64(chunk * 3)], window: 1)
        #expect(chunkActions(s.handle(.frame(.accept(Accept(offset: 0))))).count == 1)
        #expect(chunkActions(s.handle(.frame(.ack))) == [.sendChunk(file: 0, offset: Int64(chunk), length: chunk)])
        #expect(chunkActions(s.handle(.frame(.ack))) == [.sendChunk(file: 0, offset: Int64(chunk * 2), length: chunk)])
        #expect(s.handle(.frame(.ack)) == [.acknowledged(file: 0, bytes: chunk), .send(.done)])
    }

    @Test("SAVED moves to the next file, and BYE follows the last")
    func savedThenNext() {
        var s = welcomed([10, 20])
        _ = s.handle(.frame(.accept(Accept(offset: 0))))
        _ = s.handle(.frame(.ack))
        let saved = Saved(name: "f0.png", size: 10, sha256: sha)
        #expect(
            s.handle(.frame(.saved(saved))) == [
                .finished(file: 0, .saved(saved)), .send(.offer(Offer(name: "f1.png", size: 20, sha256: sha))),
            ])
        let p = Problem(.tooLarge, "no")
        #expect(s.handle(.frame(.reject(p))) == [.finished(file: 1, .rejected(p)), .send(.bye), .close])
        #expect(s.state == .closed)
    }

    @Test("FAILED in place of an ACK stops that file and offers the next")
    func failedMidStream() {
        var s = welcomed([Int64(chunk * 10), 20], granted: 4)
        _ = s.handle(.frame(.accept(Accept(offset: 0))))
        _ = s.handle(.frame(.ack))
        let p = Problem(.notPNG, "no")
        #expect(
            s.handle(.frame(.failed(p))) == [
                .finished(file: 0, .failed(p)), .send(.offer(Offer(name: "f1.png", size: 20, sha256: sha))),
            ])
    }

    @Test("FAILED after DONE is reported")
    func failedAfterDone() {
        var s = welcomed([10])
        _ = s.handle(.frame(.accept(Accept(offset: 0))))
        _ = s.handle(.frame(.ack))
        let p = Problem(.hashMismatch, "no")
        #expect(s.handle(.frame(.failed(p))) == [.finished(file: 0, .failed(p)), .send(.bye), .close])
    }

    @Test("resume: ACCEPT with an offset sends only the rest")
    func resume() {
        var s = welcomed([Int64(chunk * 3 + 7)])
        let actions = s.handle(.frame(.accept(Accept(offset: Int64(chunk * 3)))))
        #expect(
            actions == [
                .started(file: 0, offset: Int64(chunk * 3)), .sendChunk(file: 0, offset: Int64(chunk * 3), length: 7),
            ])
    }

    @Test("resume of a file the receiver holds whole: DONE at once")
    func resumeWhole() {
        var s = welcomed([Int64(chunk * 2)])
        #expect(
            s.handle(.frame(.accept(Accept(offset: Int64(chunk * 2))))) == [
                .started(file: 0, offset: Int64(chunk * 2)), .send(.done),
            ])
    }

    @Test(
        "an ACCEPT offset off a chunk boundary or past the end gets ERROR bad-frame",
        arguments: [Int64(1), -chunk.asInt64, Int64(chunk * 4)])
    func badOffset(offset: Int64) {
        var s = welcomed([Int64(chunk * 3)])
        #expect(isProtocolError(s.handle(.frame(.accept(Accept(offset: offset)))), .badFrame))
    }

    @Test("an ACK with nothing outstanding gets ERROR unexpected-frame")
    func strayAck() {
        var s = welcomed([10])
        _ = s.handle(.frame(.accept(Accept(offset: 0))))
        _ = s.handle(.frame(.ack))
        #expect(isProtocolError(s.handle(.frame(.ack)), .unexpectedFrame))
    }

    @Test(
        "frames out of order get ERROR unexpected-frame",
        arguments: [
            Frame.saved(Saved(name: "a", size: 1, sha256: sha)),
            .welcome(Welcome(name: "x", window: 1, maxFileSize: 1)),
            .chunk([1]), .done, .bye, .offer(offer(size: 10)),
        ])
    func outOfOrder(frame: Frame) {
        var s = welcomed([Int64(chunk * 3)])
        _ = s.handle(.frame(.accept(Accept(offset: 0))))
        #expect(isProtocolError(s.handle(.frame(frame)), .unexpectedFrame))
    }

    @Test("a file without a hash is asked for it; its OFFER carries the hash given")
    func hashOnDemand() {
        var s = SenderSession(name: "a", window: 4, files: [OutgoingFile(name: "x.png", size: 10)])
        _ = s.handle(.start)
        #expect(s.handle(.frame(.welcome(Welcome(name: "rx", window: 4, maxFileSize: 100)))) == [.hash(file: 0)])
        #expect(s.state == .awaitingHash(file: 0))
        // A hash for another file, or a second one, changes nothing.
        #expect(s.handle(.hashed(file: 1, sha256: sha)) == [])
        #expect(s.state == .awaitingHash(file: 0))
        #expect(s.handle(.hashed(file: 0, sha256: sha)) == [.send(.offer(Offer(name: "x.png", size: 10, sha256: sha)))])
        #expect(s.state == .awaitingAnswer(file: 0))
        #expect(s.files[0].sha256 == sha)
        #expect(s.handle(.hashed(file: 0, sha256: sha)) == [])
    }

    @Test("pipelining with hashes on demand: DONE, then the next file's hash is asked for; its result may come first")
    func pipelinedHashOnDemand() {
        var s = SenderSession(
            name: "a", window: 4,
            files: [
                OutgoingFile(name: "a.png", size: 10, sha256: sha),
                OutgoingFile(name: "b.png", size: 20),
            ], pipelining: true)
        _ = s.handle(.start)
        _ = s.handle(.frame(.welcome(Welcome(name: "rx", window: 4, maxFileSize: 100))))
        _ = s.handle(.frame(.accept(Accept(offset: 0))))
        let afterAck = s.handle(.frame(.ack))
        #expect(Array(afterAck.suffix(2)) == [.send(.done), .hash(file: 1)])
        #expect(s.state == .awaitingHash(file: 1))
        let saved = Saved(name: "a.png", size: 10, sha256: sha)
        #expect(s.handle(.frame(.saved(saved))) == [.finished(file: 0, .saved(saved))])
        #expect(s.state == .awaitingHash(file: 1))
        #expect(s.handle(.hashed(file: 1, sha256: sha)) == [.send(.offer(Offer(name: "b.png", size: 20, sha256: sha)))])
        // An ACCEPT while the hash is awaited is out of place.
        var t = SenderSession(name: "a", window: 4, files: [OutgoingFile(name: "x.png", size: 10)])
        _ = t.handle(.start)
        _ = t.handle(.frame(.welcome(Welcome(name: "rx", window: 4, maxFileSize: 100))))
        #expect(isProtocolError(t.handle(.frame(.accept(Accept(offset: 0)))), .unexpectedFrame))
    }

    @Test("pipelining: the next OFFER goes out right after DONE, and answers are matched in order")
    func pipelined() {
        var s = welcomed([10, 20, 30], pipelining: true)
        _ = s.handle(.frame(.accept(Accept(offset: 0))))
        #expect(
            s.handle(.frame(.ack)) == [
                .acknowledged(file: 0, bytes: 10), .send(.done),
                .send(.offer(Offer(name: "f1.png", size: 20, sha256: sha))),
            ])
        #expect(s.awaitingResults == [0])
        let saved0 = Saved(name: "f0.png", size: 10, sha256: sha)
        #expect(s.handle(.frame(.saved(saved0))) == [.finished(file: 0, .saved(saved0))])
        #expect(
            s.handle(.frame(.accept(Accept(offset: 0)))) == [
                .started(file: 1, offset: 0), .sendChunk(file: 1, offset: 0, length: 20),
            ])
        _ = s.handle(.frame(.ack))  // DONE for f1, OFFER for f2
        let failed1 = Problem(.hashMismatch, "x")
        #expect(s.handle(.frame(.failed(failed1))) == [.finished(file: 1, .failed(failed1))])
        let rejected2 = Problem(.tooLarge, "x")
        // The last file is not pipelined into BYE: BYE follows its answer.
        #expect(
            s.handle(.frame(.reject(rejected2))) == [.finished(file: 2, .rejected(rejected2)), .send(.bye), .close])
    }

    @Test("pipelining: an ACCEPT before the earlier file's result is a protocol error")
    func pipelinedOutOfOrder() {
        var s = welcomed([10, 20], pipelining: true)
        _ = s.handle(.frame(.accept(Accept(offset: 0))))
        _ = s.handle(.frame(.ack))
        #expect(isProtocolError(s.handle(.frame(.accept(Accept(offset: 0)))), .unexpectedFrame))
    }

    @Test("pipelining: the last file waits for its result, then BYE")
    func pipelinedLast() {
        var s = welcomed([10], pipelining: true)
        _ = s.handle(.frame(.accept(Accept(offset: 0))))
        #expect(s.handle(.frame(.ack)) == [.acknowledged(file: 0, bytes: 10), .send(.done)])
        #expect(s.state == .awaitingResult(file: 0))
    }

    @Test("ERROR from the receiver ends the session")
    func remoteError() {
        var s = welcomed([10])
        let p = Problem(.busy, "full")
        #expect(s.handle(.frame(.error(p))) == [.remoteError(p), .close])
        #expect(s.handle(.frame(.ack)) == [])
    }

    @Test("a decoder violation answers ERROR with its code")
    func violation() {
        var s = welcomed([10])
        #expect(isProtocolError(s.handle(.violation(ProtocolViolation(.frameTooLarge, "x"))), .frameTooLarge))
    }
}

extension Int {
    var asInt64: Int64 { Int64(self) }
}

@Suite("Sender state machine: types the receiver keeps (section 7)", .tags(.unit))
struct SenderTypesTests {
    func typed(_ specs: [(String, PhotoType)]) -> [OutgoingFile] {
        specs.map { OutgoingFile(name: $0.0, size: 100, sha256: sha, type: $0.1) }
    }

    @Test(
        "WELCOME.types absent: only PNGs are offered; the others end notKept([PNG]) without a hash, an OFFER or a byte")
    func oldReceiverTakesPNGOnly() {
        var s = SenderSession(
            name: "alice", window: 8, files: typed([("a.jpg", .jpeg), ("b.png", .png), ("c.heic", .heic)]))
        _ = s.handle(.start)
        let actions = s.handle(.frame(.welcome(Welcome(name: "rx", window: 8, maxFileSize: 1 << 30))))
        #expect(
            actions == [
                .finished(file: 0, .notKept(kept: [.png])),
                .send(.offer(Offer(name: "b.png", size: 100, sha256: sha, mediaType: "image/png"))),
            ])
        _ = s.handle(.frame(.accept(Accept(offset: 0))))
        _ = s.handle(.frame(.ack))
        // After b.png's result, c.heic is not offered either: BYE.
        #expect(
            s.handle(.frame(.saved(Saved(name: "b.png", size: 100, sha256: sha)))) == [
                .finished(file: 1, .saved(Saved(name: "b.png", size: 100, sha256: sha))),
                .finished(file: 2, .notKept(kept: [.png])), .send(.bye), .close,
            ])
    }

    @Test(
        "WELCOME.types [png, jpeg]: a JPEG is offered with its media type; a HEIC is not, and unknown type strings are ignored"
    )
    func typesOffered() {
        let w = Welcome(
            name: "rx", window: 8, maxFileSize: 1 << 30, types: ["image/png", "IMAGE/JPEG", "image/x-future"])
        #expect(w.keptTypes == [.png, .jpeg])
        #expect(Welcome(name: "rx", window: 8, maxFileSize: 1).keptTypes == [.png])
        #expect(Welcome(name: "rx", window: 8, maxFileSize: 1, types: []).keptTypes == [])
        var s = SenderSession(name: "alice", window: 8, files: typed([("c.heic", .heic), ("a.jpg", .jpeg)]))
        _ = s.handle(.start)
        #expect(
            s.handle(.frame(.welcome(w))) == [
                .finished(file: 0, .notKept(kept: [.png, .jpeg])),
                .send(.offer(Offer(name: "a.jpg", size: 100, sha256: sha, mediaType: "image/jpeg"))),
            ])
    }

    @Test("none of the files is kept: each ends notKept and the session says BYE at once")
    func noneKept() {
        var s = SenderSession(name: "alice", window: 8, files: typed([("a.heic", .heic), ("b.heif", .heif)]))
        _ = s.handle(.start)
        #expect(
            s.handle(.frame(.welcome(Welcome(name: "rx", window: 8, maxFileSize: 1 << 30, types: ["image/png"])))) == [
                .finished(file: 0, .notKept(kept: [.png])), .finished(file: 1, .notKept(kept: [.png])), .send(.bye),
                .close,
            ])
        #expect(s.state == .closed)
    }

    @Test(
        "pipelining: after DONE of the last kept file, the files after it that are not kept do not make it say BYE before SAVED"
    )
    func pipeliningWaitsForTheLastResult() {
        var s = SenderSession(
            name: "alice", window: 8, files: typed([("a.png", .png), ("b.heic", .heic)]), pipelining: true)
        _ = s.handle(.start)
        _ = s.handle(.frame(.welcome(Welcome(name: "rx", window: 8, maxFileSize: 1 << 30, types: ["image/png"]))))
        _ = s.handle(.frame(.accept(Accept(offset: 0))))
        // The ACK of the only chunk: DONE, and no OFFER, BYE or finished file yet.
        #expect(s.handle(.frame(.ack)) == [.acknowledged(file: 0, bytes: 100), .send(.done)])
        #expect(s.state == .awaitingResult(file: 0))
        let saved = Saved(name: "a.png", size: 100, sha256: sha)
        #expect(
            s.handle(.frame(.saved(saved))) == [
                .finished(file: 0, .saved(saved)), .finished(file: 1, .notKept(kept: [.png])), .send(.bye), .close,
            ])
    }

    @Test(
        "pipelining in a planning session: a file passed over after DONE is not passed over again when the earlier file's SAVED comes"
    )
    func passedOverOnce() {
        var s = SenderSession.planningAfterWelcome(name: "alice", window: 8)
        _ = s.handle(.start)
        let w = Welcome(name: "rx", window: 8, maxFileSize: 1 << 30, types: ["image/png"])
        _ = s.handle(.frame(.welcome(w)))
        var files = typed([("a.png", .png), ("b.jpg", .jpeg)])
        files[0].sha256 = nil
        #expect(s.handle(.planned(files)) == [.hash(file: 0)])
        // The hash arrives: a.png is offered (not passed over because it was asked for before).
        #expect(
            s.handle(.hashed(file: 0, sha256: sha)) == [.send(.offer(Offer(name: "a.png", size: 100, sha256: sha)))])
        _ = s.handle(.frame(.accept(Accept(offset: 0))))
        #expect(
            s.handle(.frame(.ack)) == [
                .acknowledged(file: 0, bytes: 100), .send(.done), .finished(file: 1, .notKept(kept: [.png])), .plan(w),
            ])
        #expect(s.handle(.planned([])) == [])
        let saved = Saved(name: "a.png", size: 100, sha256: sha)
        #expect(s.handle(.frame(.saved(saved))) == [.finished(file: 0, .saved(saved)), .send(.bye), .close])
    }

    @Test("a planning session skips what is not kept in each batch it is given, and asks for more")
    func planningSkips() {
        var s = SenderSession.planningAfterWelcome(name: "alice", window: 8)
        _ = s.handle(.start)
        let w = Welcome(name: "rx", window: 8, maxFileSize: 1 << 30, types: ["image/jpeg"])
        #expect(s.handle(.frame(.welcome(w))) == [.plan(w)])
        #expect(
            s.handle(.planned(typed([("a.png", .png)]))) == [.finished(file: 0, .notKept(kept: [.jpeg])), .plan(w)])
        #expect(s.handle(.planned([])) == [.send(.bye), .close])
    }

    @Test("HELLO.features: held always; folders only when asked")
    func features() {
        var plain = SenderSession(name: "alice", window: 8, files: [])
        #expect(plain.handle(.start) == [.send(.hello(Hello(name: "alice", window: 8, features: ["held"])))])
        var folders = SenderSession(name: "alice", window: 8, files: [], features: [.held, .folders])
        #expect(
            folders.handle(.start) == [.send(.hello(Hello(name: "alice", window: 8, features: ["held", "folders"])))])
    }
}
