import PTKTestTags
import PTKVocabulary
import Testing

@testable import PTKProtocol

/// A receiver after a HELLO that announced `features`, with `lateAnswers` allowed or not.
private func lateReceiver(features: [String] = ["late-answers"], allowed: Bool = true, window: Int = 16)
    -> ReceiverSession
{
    var settings = ReceiverSettings(name: "livingroom", window: 16, maxFileSize: 1 << 30)
    settings.lateAnswers = allowed
    var r = ReceiverSession(settings: settings)
    _ = r.handle(.frame(.hello(Hello(name: "alice", window: window, features: features))))
    return r
}

/// Offers, accepts and receives a one-chunk file of `size` bytes, up to (not including) DONE.
private func receiveOneChunk(_ r: inout ReceiverSession, size: Int = 100, name: String = "a.png") {
    #expect(
        r.handle(.frame(.offer(offer(size: Int64(size), name: name)))) == [
            .evaluateOffer(offer(size: Int64(size), name: name))
        ])
    #expect(r.handle(.offerDecided(.accept(offset: 0))) == [.send(.accept(Accept(offset: 0)))])
    #expect(
        r.handle(.frame(.chunk([UInt8](repeating: 1, count: size)))) == [
            .writeChunk([UInt8](repeating: 1, count: size))
        ])
    #expect(r.handle(.chunkWritten) == [.send(.ack)])
}

private func saved(_ name: String) -> Saved { Saved(name: name, size: 100, sha256: sha) }

@Suite("Receiver state machine: late answers (issue 46)", .tags(.unit))
struct LateAnswersReceiverTests {
    @Test(
        "a sender that announces late-answers gets its DONEs answered late; one that does not, or a receiver that does not allow it, in order"
    )
    func negotiated() {
        #expect(lateReceiver().answersLate)
        #expect(!lateReceiver(features: ["held"]).answersLate)
        #expect(!lateReceiver(allowed: false).answersLate)
        var inOrder = lateReceiver(features: [])
        receiveOneChunk(&inOrder)
        #expect(inOrder.handle(.frame(.done)) == [.finishFile])
        #expect(inOrder.state == .finishing(offer(size: 100, name: "a.png")))
    }

    @Test("DONE is owed, the next OFFER is answered at once, and the owed answers go out in DONE order")
    func owedInOrder() {
        var r = lateReceiver()
        receiveOneChunk(&r, name: "a.png")
        #expect(r.handle(.frame(.done)) == [.finishFileLater])
        #expect(r.state == .ready && r.owed == 1)
        receiveOneChunk(&r, name: "b.png")
        #expect(r.handle(.frame(.done)) == [.finishFileLater])
        #expect(r.owed == 2)
        #expect(r.handle(.fileFinished(.success(saved("a.png")))) == [.send(.saved(saved("a.png")))])
        #expect(
            r.handle(.fileFinished(.failure(StoreFailure(.io, "flush failed")))) == [
                .send(.failed(Problem(.ioError, "flush failed")))
            ])
        #expect(r.owed == 0)
        // Nothing more is owed: another result is out of order.
        let extra = r.handle(.fileFinished(.success(saved("c.png"))))
        #expect(extra.contains(.close) && r.state == .closed)
    }

    @Test("BYE while answers are owed: the session drains them, then closes")
    func byeDrains() {
        var r = lateReceiver()
        receiveOneChunk(&r)
        _ = r.handle(.frame(.done))
        #expect(r.handle(.frame(.bye)) == [])
        #expect(r.state == .draining)
        #expect(r.handle(.fileFinished(.success(saved("a.png")))) == [.send(.saved(saved("a.png"))), .close])
        #expect(r.state == .closed)
    }

    @Test("a frame after BYE while draining is a protocol error")
    func frameWhileDraining() {
        var r = lateReceiver()
        receiveOneChunk(&r)
        _ = r.handle(.frame(.done))
        _ = r.handle(.frame(.bye))
        let actions = r.handle(.frame(.offer(offer(size: 100))))
        // The owed answer goes first (drained), then the ERROR.
        #expect(actions.first == .drainOwed)
        guard actions.count == 3, case .send(.error(let p)) = actions[1] else {
            Issue.record("expected ERROR, got \(actions)")
            return
        }
        #expect(p.code == ErrorCode.unexpectedFrame.rawValue)
        #expect(r.state == .closed)
    }

    @Test("a FAILED in place of an ACK waits for the answers owed before it, and an OFFER before it is refused")
    func heldFailure() {
        var r = lateReceiver()
        receiveOneChunk(&r, name: "a.png")
        _ = r.handle(.frame(.done))
        _ = r.handle(.frame(.offer(offer(size: 300_000, name: "b.png"))))
        _ = r.handle(.offerDecided(.accept(offset: 0)))
        _ = r.handle(.frame(.chunk([UInt8](repeating: 1, count: chunk))))
        // The write fails: FAILED for b must not overtake a's answer.
        #expect(r.handle(.chunkFailed(Problem(.noSpace, "disk full"))) == [.abandonFile(keepForResume: false)])
        #expect(r.state == .discarding && r.heldFailure == Problem(.noSpace, "disk full"))
        // Chunks still arriving are dropped.
        #expect(r.handle(.frame(.chunk([UInt8](repeating: 1, count: chunk)))) == [])
        #expect(
            r.handle(.fileFinished(.success(saved("a.png")))) == [
                .send(.saved(saved("a.png"))), .send(.failed(Problem(.noSpace, "disk full"))),
            ])
        #expect(r.heldFailure == nil)
        // Then the next OFFER is fine.
        #expect(
            r.handle(.frame(.offer(offer(size: 100, name: "c.png")))) == [
                .evaluateOffer(offer(size: 100, name: "c.png"))
            ])

        var hostile = lateReceiver()
        receiveOneChunk(&hostile, name: "a.png")
        _ = hostile.handle(.frame(.done))
        _ = hostile.handle(.frame(.offer(offer(size: 300_000, name: "b.png"))))
        _ = hostile.handle(.offerDecided(.accept(offset: 0)))
        _ = hostile.handle(.frame(.chunk([UInt8](repeating: 1, count: 5))))  // short chunk: size-mismatch, held
        #expect(hostile.heldFailure?.code == FileErrorCode.sizeMismatch.rawValue)
        let actions = hostile.handle(.frame(.offer(offer(size: 100, name: "c.png"))))
        #expect(
            actions.contains {
                if case .send(.error(let p)) = $0 {
                    return p.code == ErrorCode.unexpectedFrame.rawValue
                } else {
                    return false
                }
            })
    }

    @Test("with nothing owed, a FAILED in place of an ACK goes out at once, as in order")
    func failureNothingOwed() {
        var r = lateReceiver()
        _ = r.handle(.frame(.offer(offer(size: 300_000))))
        _ = r.handle(.offerDecided(.accept(offset: 0)))
        _ = r.handle(.frame(.chunk([UInt8](repeating: 1, count: chunk))))
        #expect(
            r.handle(.chunkFailed(Problem(.ioError, "bad"))) == [
                .abandonFile(keepForResume: false), .send(.failed(Problem(.ioError, "bad"))),
            ])
    }

    @Test("answers known at DONE (a size mismatch, a file held whole) wait their turn behind owed ones")
    func knownAnswersWaitTheirTurn() {
        var r = lateReceiver(features: ["late-answers", "held"])
        receiveOneChunk(&r, name: "a.png")
        _ = r.handle(.frame(.done))
        // b: held whole.
        _ = r.handle(.frame(.offer(offer(size: 100, name: "b.png"))))
        let kept = Saved(name: "old.png", size: 100, sha256: sha)
        #expect(r.handle(.offerDecided(.held(kept))) == [.send(.accept(Accept(offset: 100)))])
        var duplicate = kept
        duplicate.duplicate = true
        #expect(r.handle(.frame(.done)) == [.owe(.success(duplicate))])
        #expect(r.owed == 2)
        // c: DONE before its bytes are all there.
        _ = r.handle(.frame(.offer(offer(size: 300_000, name: "c.png"))))
        _ = r.handle(.offerDecided(.accept(offset: 0)))
        _ = r.handle(.frame(.chunk([UInt8](repeating: 1, count: chunk))))
        _ = r.handle(.chunkWritten)
        let done = r.handle(.frame(.done))
        #expect(
            done == [
                .abandonFile(keepForResume: false),
                .owe(.failure(StoreFailure(.sizeMismatch, "received \(chunk) of 300000 bytes"))),
            ])
        #expect(r.owed == 3)
        // Nothing owed: a held file is answered at once.
        var alone = lateReceiver(features: ["late-answers", "held"])
        _ = alone.handle(.frame(.offer(offer(size: 100, name: "b.png"))))
        _ = alone.handle(.offerDecided(.held(kept)))
        #expect(alone.handle(.frame(.done)) == [.send(.saved(duplicate))])
    }

    @Test(
        "an ERROR while answers are owed (timeout, shutdown, a broken frame): the owed answers go first, then a held FAILED, then the ERROR"
    )
    func errorWhileOwed() {
        for event in [ReceiverEvent.timedOut, .shutdown, .frame(.ack)] {
            var r = lateReceiver()
            receiveOneChunk(&r, name: "a.png")
            _ = r.handle(.frame(.done))
            let actions = r.handle(event)
            #expect(actions.first == .drainOwed, "\(event): \(actions)")
            guard actions.count == 3, case .send(.error) = actions[1] else {
                Issue.record("\(event): \(actions)")
                continue
            }
            #expect(actions.last == .close && r.state == .closed && r.owed == 0)
        }
        var held = lateReceiver()
        receiveOneChunk(&held, name: "a.png")
        _ = held.handle(.frame(.done))
        _ = held.handle(.frame(.offer(offer(size: 300_000, name: "b.png"))))
        _ = held.handle(.offerDecided(.accept(offset: 0)))
        _ = held.handle(.frame(.chunk([UInt8](repeating: 1, count: chunk))))
        _ = held.handle(.chunkFailed(Problem(.ioError, "bad")))
        let actions = held.handle(.timedOut)
        #expect(Array(actions.prefix(2)) == [.drainOwed, .send(.failed(Problem(.ioError, "bad")))], "\(actions)")
        #expect(actions.last == .close)
        // Nothing owed: the ERROR alone, as before.
        var none = lateReceiver()
        #expect(isError(none.handle(.timedOut), .timeout, keep: nil))
    }

    @Test("the sender closing while answers are owed abandons nothing owed and closes")
    func peerClosedWhileOwed() {
        var r = lateReceiver()
        receiveOneChunk(&r)
        _ = r.handle(.frame(.done))
        #expect(r.handle(.peerClosed) == [.close])
        #expect(r.state == .closed)
    }
}
