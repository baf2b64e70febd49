import PTKTestTags
import Testing

@testable import PTKProtocol

// The sender's side of HELLO.features "late-answers" (issue 46): the receiver may answer the next
// OFFER and the next file's CHUNKs before the SAVED/FAILED owed for earlier DONEs; those come in
// DONE order, and a FAILED in place of an ACK only once every earlier DONE was answered.

private let digest = String(repeating: "c3", count: 32)
private let late: [ProtocolFeature] = [.held, .lateAnswers]

private func outgoing(_ sizes: [Int64]) -> [OutgoingFile] {
    sizes.enumerated().map { OutgoingFile(name: "p\($0.offset).png", size: $0.element, sha256: digest) }
}

private func offerOf(_ i: Int, _ size: Int64) -> SenderAction {
    .send(.offer(Offer(name: "p\(i).png", size: size, sha256: digest)))
}

private func savedAs(_ i: Int, _ size: Int64) -> Saved { Saved(name: "rx/p\(i).png", size: size, sha256: digest) }

/// A started, welcomed session over files of `sizes` (chunk size 4, window `window`), its first OFFER out.
private func session(_ sizes: [Int64], features: [ProtocolFeature] = late, window: Int = 4, pipelining: Bool = true)
    -> SenderSession
{
    var s = SenderSession(
        name: "alice", window: window, files: outgoing(sizes), pipelining: pipelining, features: features)
    _ = s.handle(.start)
    let first = s.handle(.frame(.welcome(Welcome(name: "rx", window: window, chunkSize: 4, maxFileSize: 1 << 30))))
    precondition(first == [offerOf(0, sizes[0])])
    return s
}

private func isViolation(_ actions: [SenderAction]) -> Bool {
    guard actions.count == 3, case .send(.error(let p)) = actions[0], p.code == ErrorCode.unexpectedFrame.rawValue,
        case .protocolError(let v) = actions[1], v.code == .unexpectedFrame
    else { return false }
    return actions[2] == .close
}

/// Every `.finished` in `actions`, as (file, outcome), in order.
private func finishes(_ actions: [SenderAction]) -> [(Int, FileOutcome)] {
    actions.compactMap { if case .finished(let f, let o) = $0 { (f, o) } else { nil } }
}

/// Feeds `events` and returns every action, in order.
private func feed(_ s: inout SenderSession, _ events: [SenderEvent]) -> [SenderAction] {
    events.flatMap { s.handle($0) }
}

@Suite("Sender state machine: late answers (HELLO.features \"late-answers\")", .tags(.unit))
struct LateAnswersSenderSessionTests {
    @Test("HELLO announces late-answers when the session has it, not otherwise")
    func announced() {
        var s = SenderSession(name: "alice", window: 8, files: [], features: late)
        #expect(
            s.handle(.start) == [.send(.hello(Hello(name: "alice", window: 8, features: ["held", "late-answers"])))])
        #expect(s.lateAnswers)
        #expect(!SenderSession(name: "alice", window: 8, files: []).lateAnswers)
    }

    @Test(
        "ACCEPTs of files 2 and 3 before the SAVEDs of 1 and 2: each SAVED goes to the oldest owed file; BYE after the last"
    )
    func acceptsBeforeSaved() {
        var s = session([10, 6, 3])
        var all: [SenderAction] = []
        func step(_ e: SenderEvent) -> [SenderAction] {
            let a = s.handle(e)
            all += a
            return a
        }
        #expect(
            step(.frame(.accept(Accept(offset: 0)))) == [
                .started(file: 0, offset: 0), .sendChunk(file: 0, offset: 0, length: 4),
                .sendChunk(file: 0, offset: 4, length: 4), .sendChunk(file: 0, offset: 8, length: 2),
            ])
        _ = step(.frame(.ack))
        _ = step(.frame(.ack))
        #expect(step(.frame(.ack)) == [.acknowledged(file: 0, bytes: 2), .send(.done), offerOf(1, 6)])
        #expect(s.awaitingResults == [0])
        // File 2's ACCEPT before file 1's SAVED: taken.
        #expect(
            step(.frame(.accept(Accept(offset: 0)))) == [
                .started(file: 1, offset: 0), .sendChunk(file: 1, offset: 0, length: 4),
                .sendChunk(file: 1, offset: 4, length: 2),
            ])
        #expect(s.state == .sending(file: 1, next: 6, outstanding: [4, 2]))
        #expect(step(.frame(.ack)) == [.acknowledged(file: 1, bytes: 4)])
        #expect(step(.frame(.ack)) == [.acknowledged(file: 1, bytes: 2), .send(.done), offerOf(2, 3)])
        #expect(s.awaitingResults == [0, 1])
        // File 3's ACCEPT, before either SAVED.
        #expect(
            step(.frame(.accept(Accept(offset: 0)))) == [
                .started(file: 2, offset: 0), .sendChunk(file: 2, offset: 0, length: 3),
            ])
        // The SAVEDs come now, while file 3's chunk is out: file 1's, then file 2's.
        #expect(step(.frame(.saved(savedAs(0, 10)))) == [.finished(file: 0, .saved(savedAs(0, 10)))])
        #expect(s.awaitingResults == [1])
        #expect(s.state == .sending(file: 2, next: 3, outstanding: [3]))
        #expect(step(.frame(.saved(savedAs(1, 6)))) == [.finished(file: 1, .saved(savedAs(1, 6)))])
        #expect(s.awaitingResults == [])
        // File 3's last ACK: DONE, and no BYE before its result.
        #expect(step(.frame(.ack)) == [.acknowledged(file: 2, bytes: 3), .send(.done)])
        #expect(s.state == .awaitingResult(file: 2))
        #expect(
            step(.frame(.saved(savedAs(2, 3)))) == [.finished(file: 2, .saved(savedAs(2, 3))), .send(.bye), .close])
        #expect(s.state == .closed)
        #expect(finishes(all).map { $0.0 } == [0, 1, 2])
    }

    @Test(
        "all three DONEs out before any result: SAVED, FAILED, SAVED go to files 1, 2, 3 in DONE order; BYE only after the third"
    )
    func resultsInDoneOrder() {
        var s = session([4, 4, 4])
        let sent = feed(
            &s,
            [
                .frame(.accept(Accept(offset: 0))), .frame(.ack),
                .frame(.accept(Accept(offset: 0))), .frame(.ack),
                .frame(.accept(Accept(offset: 0))), .frame(.ack),
            ])
        #expect(sent.filter { $0 == .send(.done) }.count == 3)
        #expect(finishes(sent).isEmpty)
        #expect(!sent.contains(.send(.bye)))
        // The last DONE went out with two results owed before it: the oldest is waited for first.
        #expect(s.state == .awaitingResult(file: 0))
        #expect(s.awaitingResults == [1, 2])
        let broken = Problem(.hashMismatch, "bytes differ")
        #expect(s.handle(.frame(.saved(savedAs(0, 4)))) == [.finished(file: 0, .saved(savedAs(0, 4)))])
        #expect(s.state == .awaitingResult(file: 1))
        #expect(s.handle(.frame(.failed(broken))) == [.finished(file: 1, .failed(broken))])
        #expect(s.state == .awaitingResult(file: 2))
        #expect(s.awaitingResults == [])
        #expect(
            s.handle(.frame(.saved(savedAs(2, 4)))) == [.finished(file: 2, .saved(savedAs(2, 4))), .send(.bye), .close])
        // A fourth result, after BYE, is nothing (the session is closed).
        #expect(s.handle(.frame(.saved(savedAs(2, 4)))) == [])
    }

    @Test("a FAILED mid-chunks of file 3 with nothing owed is file 3's")
    func failedMidChunksNothingOwed() {
        var s = session([4, 4, 40], window: 2)
        _ = feed(
            &s, [.frame(.accept(Accept(offset: 0))), .frame(.ack), .frame(.accept(Accept(offset: 0))), .frame(.ack)])
        _ = s.handle(.frame(.accept(Accept(offset: 0))))
        #expect(s.handle(.frame(.saved(savedAs(0, 4)))) == [.finished(file: 0, .saved(savedAs(0, 4)))])
        #expect(s.handle(.frame(.saved(savedAs(1, 4)))) == [.finished(file: 1, .saved(savedAs(1, 4)))])
        _ = s.handle(.frame(.ack))
        #expect(s.awaitingResults.isEmpty)
        guard case .sending(file: 2, _, _) = s.state else {
            Issue.record("file 3 should be sending: \(s.state)")
            return
        }
        let p = Problem(.notPNG, "not a PNG")
        #expect(s.handle(.frame(.failed(p))) == [.finished(file: 2, .failed(p)), .send(.bye), .close])
    }

    @Test(
        "a FAILED while files are owed is the oldest owed file's, even while file 3's chunks flow; file 3's own FAILED comes after"
    )
    func failedWhileOwed() {
        var s = session([4, 4, 40, 4], window: 2)
        _ = feed(
            &s, [.frame(.accept(Accept(offset: 0))), .frame(.ack), .frame(.accept(Accept(offset: 0))), .frame(.ack)])
        _ = s.handle(.frame(.accept(Accept(offset: 0))))
        #expect(s.awaitingResults == [0, 1])
        let first = Problem(.hashMismatch, "first")
        #expect(s.handle(.frame(.failed(first))) == [.finished(file: 0, .failed(first))])
        // File 3 goes on: the FAILED was not about it.
        #expect(s.state == .sending(file: 2, next: 8, outstanding: [4, 4]))
        #expect(
            s.handle(.frame(.ack)) == [.acknowledged(file: 2, bytes: 4), .sendChunk(file: 2, offset: 8, length: 4)])
        let second = Problem(.hashMismatch, "second")
        #expect(s.handle(.frame(.failed(second))) == [.finished(file: 1, .failed(second))])
        #expect(s.awaitingResults == [])
        // Now nothing is owed: a FAILED is in place of an ACK, file 3's, and file 4 is offered.
        let third = Problem(.notPNG, "third")
        #expect(s.handle(.frame(.failed(third))) == [.finished(file: 2, .failed(third)), offerOf(3, 4)])
    }

    @Test("a REJECT of the last file before the earlier results: no BYE until every owed result came")
    func rejectLastWhileOwed() {
        var s = session([4, 4, 4])
        _ = feed(
            &s, [.frame(.accept(Accept(offset: 0))), .frame(.ack), .frame(.accept(Accept(offset: 0))), .frame(.ack)])
        #expect(s.awaitingResults == [0, 1])
        let p = Problem(.tooLarge, "no room")
        // Nothing left to offer, but two results are owed: it waits for them. File 2's REJECT is
        // reported after files 0 and 1, in the files' order.
        #expect(s.handle(.frame(.reject(p))) == [])
        #expect(s.state == .awaitingResult(file: 0))
        #expect(s.handle(.frame(.saved(savedAs(0, 4)))) == [.finished(file: 0, .saved(savedAs(0, 4)))])
        #expect(s.state == .awaitingResult(file: 1))
        // Neither file is offered again, and BYE goes out once the last owed result came.
        #expect(
            s.handle(.frame(.saved(savedAs(1, 4)))) == [
                .finished(file: 1, .saved(savedAs(1, 4))), .finished(file: 2, .rejected(p)), .send(.bye), .close,
            ])
    }

    @Test("files not kept after the last offered one are passed over once, and BYE waits for the owed results")
    func notKeptWhileOwed() {
        var s = SenderSession(
            name: "alice", window: 4,
            files: [
                OutgoingFile(name: "a.png", size: 4, sha256: digest),
                OutgoingFile(name: "b.png", size: 4, sha256: digest),
                OutgoingFile(name: "c.heic", size: 4, sha256: digest, type: .heic),
            ],
            features: late)
        _ = s.handle(.start)
        _ = s.handle(.frame(.welcome(Welcome(name: "rx", window: 4, chunkSize: 4, maxFileSize: 1 << 30))))
        var all = feed(
            &s, [.frame(.accept(Accept(offset: 0))), .frame(.ack), .frame(.accept(Accept(offset: 0))), .frame(.ack)])
        #expect(!all.contains(.send(.bye)))
        #expect(s.state == .awaitingResult(file: 0))
        #expect(s.awaitingResults == [1])
        all += s.handle(.frame(.saved(savedAs(0, 4))))
        #expect(!all.contains(.send(.bye)))
        let last = s.handle(.frame(.saved(savedAs(1, 4))))
        #expect(last.suffix(2) == [.send(.bye), .close])
        all += last
        #expect(finishes(all).map { $0.0 }.sorted() == [0, 1, 2])
        #expect(finishes(all).first { $0.0 == 2 }?.1 == .notKept(kept: [.png]))
    }

    @Test("without late-answers, an ACCEPT or REJECT before the earlier file's SAVED is still a protocol error")
    func withoutTheFeature() {
        var s = session([4, 4], features: [.held])
        _ = feed(&s, [.frame(.accept(Accept(offset: 0))), .frame(.ack)])
        #expect(s.awaitingResults == [0])
        var rejecting = s
        #expect(isViolation(s.handle(.frame(.accept(Accept(offset: 0))))))
        #expect(isViolation(rejecting.handle(.frame(.reject(Problem(.tooLarge, "x"))))))
        // The same with the feature is taken.
        var t = session([4, 4])
        _ = feed(&t, [.frame(.accept(Accept(offset: 0))), .frame(.ack)])
        #expect(t.handle(.frame(.accept(Accept(offset: 0)))).first == .started(file: 1, offset: 0))
    }

    @Test(
        "a SAVED or FAILED with nothing owed and no file in flight, or a SAVED while chunks flow with nothing owed, is unexpected-frame"
    )
    func strayResults() {
        // Before anything was sent.
        var fresh = session([4, 4])
        #expect(isViolation(fresh.handle(.frame(.saved(savedAs(0, 4))))))
        var freshFailed = session([4, 4])
        #expect(isViolation(freshFailed.handle(.frame(.failed(Problem(.hashMismatch, "x"))))))
        // While file 1's chunks flow, nothing owed: a SAVED cannot be about a file before DONE.
        var flowing = session([40, 4])
        _ = flowing.handle(.frame(.accept(Accept(offset: 0))))
        #expect(isViolation(flowing.handle(.frame(.saved(savedAs(0, 40))))))
        // One result more than the DONEs that went out.
        var extra = session([4, 4, 4])
        _ = feed(&extra, [.frame(.accept(Accept(offset: 0))), .frame(.ack)])
        #expect(extra.handle(.frame(.saved(savedAs(0, 4)))) == [.finished(file: 0, .saved(savedAs(0, 4)))])
        #expect(isViolation(extra.handle(.frame(.saved(savedAs(0, 4))))))
        var extraFailed = session([4, 4, 4])
        _ = feed(&extraFailed, [.frame(.accept(Accept(offset: 0))), .frame(.ack)])
        _ = extraFailed.handle(.frame(.saved(savedAs(0, 4))))
        #expect(isViolation(extraFailed.handle(.frame(.failed(Problem(.hashMismatch, "x"))))))
    }

    @Test(
        "a planning session: ACCEPT of the next file before the SAVED; after the last plan, every owed result before BYE"
    )
    func planningSession() {
        var s = SenderSession.planningAfterWelcome(name: "alice", window: 4, features: late)
        #expect(
            s.handle(.start) == [.send(.hello(Hello(name: "alice", window: 4, features: ["held", "late-answers"])))])
        let w = Welcome(name: "rx", window: 4, chunkSize: 4, maxFileSize: 1 << 30, sessions: 2)
        #expect(s.handle(.frame(.welcome(w))) == [.plan(w)])
        var all: [SenderAction] = []
        all += s.handle(.planned([OutgoingFile(name: "p0.png", size: 4, sha256: digest)]))
        all += s.handle(.frame(.accept(Accept(offset: 0))))
        let done0 = s.handle(.frame(.ack))
        #expect(done0 == [.acknowledged(file: 0, bytes: 4), .send(.done), .plan(w)])
        all += done0
        all += s.handle(.planned([OutgoingFile(name: "p1.png", size: 4, sha256: digest)]))
        // File 2's ACCEPT and ACK before file 1's SAVED.
        #expect(
            s.handle(.frame(.accept(Accept(offset: 0)))) == [
                .started(file: 1, offset: 0), .sendChunk(file: 1, offset: 0, length: 4),
            ])
        let done1 = s.handle(.frame(.ack))
        #expect(done1 == [.acknowledged(file: 1, bytes: 4), .send(.done), .plan(w)])
        all += done1
        #expect(s.awaitingResults == [0, 1])
        // A result while it plans goes to the oldest.
        #expect(s.handle(.frame(.saved(savedAs(0, 4)))) == [.finished(file: 0, .saved(savedAs(0, 4)))])
        all.append(.finished(file: 0, .saved(savedAs(0, 4))))
        all += s.handle(.planned([OutgoingFile(name: "p2.png", size: 4, sha256: digest)]))
        all += feed(&s, [.frame(.accept(Accept(offset: 0))), .frame(.ack)])
        #expect(s.awaitingResults == [1, 2])
        #expect(s.state == .awaitingPlan)
        // No more files: it waits for both results, oldest first, and only then says BYE.
        #expect(s.handle(.planned([])) == [])
        #expect(s.exhausted)
        #expect(s.state == .awaitingResult(file: 1))
        let p = Problem(.hashMismatch, "x")
        let r1 = s.handle(.frame(.failed(p)))
        #expect(r1 == [.finished(file: 1, .failed(p))])
        all += r1
        #expect(s.state == .awaitingResult(file: 2))
        let r2 = s.handle(.frame(.saved(savedAs(2, 4))))
        #expect(r2 == [.finished(file: 2, .saved(savedAs(2, 4))), .send(.bye), .close])
        all += r2
        #expect(finishes(all).map { $0.0 } == [0, 1, 2])
        #expect(all.filter { $0 == .send(.bye) }.count == 1)
    }

    @Test(
        "a planning session given files of which the last is rejected while results are owed asks again, then waits for them"
    )
    func planningRejectWhileOwed() {
        var s = SenderSession.planningAfterWelcome(name: "alice", window: 4, features: late)
        _ = s.handle(.start)
        let w = Welcome(name: "rx", window: 4, chunkSize: 4, maxFileSize: 1 << 30)
        _ = s.handle(.frame(.welcome(w)))
        _ = s.handle(.planned(outgoing([4, 4])))
        _ = feed(&s, [.frame(.accept(Accept(offset: 0))), .frame(.ack)])
        #expect(s.awaitingResults == [0])
        let p = Problem(.tooLarge, "x")
        #expect(s.handle(.frame(.reject(p))) == [.plan(w)])
        #expect(s.handle(.planned([])) == [])
        #expect(s.state == .awaitingResult(file: 0))
        #expect(
            s.handle(.frame(.saved(savedAs(0, 4)))) == [
                .finished(file: 0, .saved(savedAs(0, 4))), .finished(file: 1, .rejected(p)), .send(.bye), .close,
            ])
    }

    @Test(
        "files are reported finished in their order: a REJECT that overtakes an owed SAVED waits for it, and an ERROR reports it before the end"
    )
    func reportedInOrder() {
        var s = session([4, 4, 4])
        _ = feed(&s, [.frame(.accept(Accept(offset: 0))), .frame(.ack)])
        let p = Problem(.tooLarge, "no room")
        // File 1 refused while file 0's SAVED is owed: held back.
        let rejected = s.handle(.frame(.reject(p)))
        #expect(finishes(rejected).isEmpty, "\(rejected)")
        _ = feed(&s, [.frame(.accept(Accept(offset: 0))), .frame(.ack)])
        // File 0's SAVED: 0 then 1; file 2 is still owed.
        let first = s.handle(.frame(.saved(savedAs(0, 4))))
        #expect(finishes(first).map(\.0) == [0, 1])
        // Another session: a REJECT held, then the receiver gives up.
        var t = session([4, 4, 4])
        _ = feed(&t, [.frame(.accept(Accept(offset: 0))), .frame(.ack)])
        _ = t.handle(.frame(.reject(p)))
        let ended = t.handle(.frame(.error(Problem(.internal, "gone"))))
        #expect(finishes(ended).map(\.0) == [1], "\(ended)")
        #expect(ended.last == .close)
        #expect(ended.firstIndex { if case .finished = $0 { true } else { false } }! < ended.firstIndex(of: .close)!)
    }

    /// A receiver that keeps the late-answers rules, answering owed DONEs at moments a seeded
    /// generator picks, against the real sender machine: every file ends once, as the receiver
    /// said, in DONE order, and BYE goes out only once nothing is owed.
    @Test(
        "a receiver answering owed DONEs at random moments: every file gets exactly one finished, the right one; BYE last",
        arguments: [false, true])
    func randomReceivers(planning: Bool) {
        for seed in UInt64(1)...300 {
            let problem = simulate(seed: seed, planning: planning, features: late, inOrder: false)
            #expect(problem == nil, "seed \(seed): \(problem ?? "")")
            if problem != nil { return }
        }
        // Without the feature, a receiver that answers in order works as before.
        for seed in UInt64(1)...100 {
            let problem = simulate(seed: seed, planning: planning, features: [.held], inOrder: true)
            #expect(problem == nil, "in order, seed \(seed): \(problem ?? "")")
            if problem != nil { return }
        }
    }
}

/// SplitMix64: a generator that repeats for a seed.
private struct Seeded: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// How the simulated receiver treats a file.
private enum Fate { case saved, held, rejected, failedAfterDone, failedMidChunks }

/// Runs one session against a simulated receiver; returns what went wrong, or nil.
/// `inOrder`: the receiver answers every owed DONE before it answers anything else (section 4).
private func simulate(seed: UInt64, planning: Bool, features: [ProtocolFeature], inOrder: Bool) -> String? {
    var rng = Seeded(state: seed)
    let count = Int.random(in: 1...6, using: &rng)
    let sizes = (0..<count).map { _ in Int64.random(in: 1...14, using: &rng) }
    let fates: [Fate] = sizes.map { size in
        let all: [Fate] =
            size > 4
            ? [.saved, .held, .rejected, .failedAfterDone, .failedMidChunks]
            : [.saved, .held, .rejected, .failedAfterDone]
        return all.randomElement(using: &rng)!
    }
    let window = Int.random(in: 1...3, using: &rng)
    let files = outgoing(sizes)
    var s =
        planning
        ? SenderSession.planningAfterWelcome(name: "alice", window: window, features: features)
        : SenderSession(name: "alice", window: window, files: files, features: features)
    var planned = 0
    // What the receiver expects each file's outcome to be.
    func expected(_ i: Int) -> FileOutcome {
        switch fates[i] {
        case .saved, .held: return .saved(savedAs(i, sizes[i]))
        case .rejected: return .rejected(Problem(.tooLarge, "p\(i)"))
        case .failedAfterDone, .failedMidChunks: return .failed(Problem(.hashMismatch, "p\(i)"))
        }
    }

    var toReceiver: [Frame] = []
    var toSender: [Frame] = [
        .welcome(Welcome(name: "rx", window: window, chunkSize: 4, maxFileSize: 1 << 30, sessions: 2))
    ]
    // Receiver state: the file being received (by its index) and how many chunks of it came;
    // the DONEs not answered yet, oldest first; whether it failed the file mid-chunks.
    var receiving: Int? = nil
    var chunksIn = 0
    var discarding = false
    var owed: [Int] = []
    var byeSeen = false
    var finished: [Int: FileOutcome] = [:]
    var finishOrder: [Int] = []
    var senderClosed = false

    func result(_ i: Int) -> Frame {
        if case .failed(let p) = expected(i) { return .failed(p) }
        return .saved(savedAs(i, sizes[i]))
    }
    func releaseOwed(_ n: Int) {
        for _ in 0..<n { toSender.append(result(owed.removeFirst())) }
    }
    func index(of name: String) -> Int { Int(name.dropFirst().prefix { $0 != "." })! }

    func senderHandles(_ event: SenderEvent) -> String? {
        var events = [event]
        while let e = events.popLast() {
            for action in s.handle(e) {
                switch action {
                case .send(let frame):
                    if frame == .bye {
                        if finished.count != count { return "BYE with \(count - finished.count) files unfinished" }
                        if !s.awaitingResults.isEmpty { return "BYE while results are owed" }
                    }
                    toReceiver.append(frame)
                case .sendChunk(_, _, let length):
                    toReceiver.append(.chunk([UInt8](repeating: 7, count: length)))
                case .plan:
                    let more = planned < count ? [files[planned]] : []
                    planned += more.count
                    events.append(.planned(more))
                case .hash(let f):
                    return "asked for the hash of \(f), which it was given"
                case .finished(let f, let outcome):
                    if finished[f] != nil { return "file \(f) finished twice" }
                    if outcome != expected(f) { return "file \(f) ended \(outcome), not \(expected(f))" }
                    finished[f] = outcome
                    finishOrder.append(f)
                case .started, .acknowledged: break
                case .close: senderClosed = true
                case .remoteError(let p): return "remote error \(p)"
                case .protocolError(let v): return "protocol error \(v)"
                }
            }
        }
        return nil
    }

    func receiverHandles(_ frame: Frame) -> String? {
        // Before answering, a late-answers receiver may answer some owed DONEs (an in-order one must answer all).
        if inOrder { releaseOwed(owed.count) } else { releaseOwed(Int.random(in: 0...owed.count, using: &rng)) }
        switch frame {
        case .hello: return nil
        case .offer(let o):
            let i = index(of: o.name)
            discarding = false
            switch fates[i] {
            case .rejected:
                toSender.append(.reject(Problem(.tooLarge, "p\(i)")))
            case .held:
                receiving = i
                toSender.append(.accept(Accept(offset: sizes[i])))
            default:
                receiving = i
                chunksIn = 0
                toSender.append(.accept(Accept(offset: 0)))
            }
        case .chunk:
            // Chunks sent before the sender read a FAILED in place of an ACK are dropped.
            if discarding { return nil }
            guard let i = receiving else { return "a CHUNK with no file accepted" }
            chunksIn += 1
            if fates[i] == .failedMidChunks && chunksIn == 2 {
                // In place of an ACK: only once every earlier DONE is answered.
                releaseOwed(owed.count)
                toSender.append(.failed(Problem(.hashMismatch, "p\(i)")))
                discarding = true
                receiving = nil
            } else {
                toSender.append(.ack)
            }
        case .done:
            guard let i = receiving else { return "a DONE with no file accepted" }
            owed.append(i)
            receiving = nil
        case .bye:
            byeSeen = true
            releaseOwed(owed.count)
        default:
            return "the sender sent \(frame.type)"
        }
        return nil
    }

    if let p = senderHandles(.start) { return p }
    var steps = 0
    while !senderClosed {
        steps += 1
        if steps > 10_000 { return "no end" }
        // Pick who moves: the receiver reads a frame, the sender reads one, or the receiver answers an owed DONE on its own.
        var moves: [Int] = []
        if !toReceiver.isEmpty { moves.append(0) }
        if !toSender.isEmpty { moves.append(1) }
        if !owed.isEmpty && !inOrder { moves.append(2) }
        if !owed.isEmpty && inOrder && toReceiver.isEmpty { moves.append(2) }
        guard let move = moves.randomElement(using: &rng) else { return "stuck in \(s.state), owed \(owed)" }
        switch move {
        case 0: if let p = receiverHandles(toReceiver.removeFirst()) { return p }
        case 1: if let p = senderHandles(.frame(toSender.removeFirst())) { return p }
        default: releaseOwed(1)
        }
    }
    // Frames still on their way to the receiver are read; nothing may be owed by then.
    while !toReceiver.isEmpty { if let p = receiverHandles(toReceiver.removeFirst()) { return p } }
    if !byeSeen { return "no BYE" }
    if finished.count != count { return "\(count - finished.count) files never finished" }
    if !toSender.isEmpty { return "answers left unread: \(toSender)" }
    // Results in DONE order: the files that went through DONE finished in index order.
    let viaDone = finishOrder.filter { [.saved, .held, .failedAfterDone].contains(fates[$0]) }
    if viaDone != viaDone.sorted() { return "results out of DONE order: \(finishOrder)" }
    return nil
}
