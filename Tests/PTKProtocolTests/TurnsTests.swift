import PTKProtocol
import PTKTestTags
import PTKTime
import Testing

/// The instant `seconds` after the start of a test's made-up clock.
private func at(_ seconds: Double) -> Instant { Instant(seconds: seconds) }

@Suite("Turns: who a full receiver serves next", .tags(.unit))
struct TurnsTests {
    @Test(
        "a sender alone gets the sessions up to its per-sender limit; its further sessions are served within that share"
    )
    func alone() {
        var t = Turns(capacity: 32, perSender: 8)
        #expect(t.admit("a", now: at(0)) == .serve(sessions: 8))
        for _ in 1..<8 { #expect(t.admit("a", now: at(0)) == .serve(sessions: 8)) }
        // Its ninth is over its share, though sessions are free.
        #expect(t.admit("a", now: at(0)) == .busy(ahead: 0))
        #expect(t.total == 8)
        #expect(t.serving == ["a": 8])
    }

    @Test(
        "the share is the sessions divided among the senders served and waiting, at least 1",
        arguments: [
            (32, 8, 1, 8), (32, 8, 4, 8), (32, 8, 16, 2), (32, 8, 17, 1), (32, 8, 64, 1), (5, 8, 2, 2), (1, 8, 1, 1),
        ])
    func share(capacity: Int, perSender: Int, senders: Int, expected: Int) {
        var t = Turns(capacity: capacity, perSender: perSender)
        var last: Turns.Decision? = nil
        for s in 0..<senders { last = t.admit("s\(s)", now: at(0)) }
        #expect(t.share == expected)
        // The last sender heard the share as it stood when it came (served or waiting).
        if case .serve(let n)? = last { #expect(n == expected) }
    }

    @Test(
        "sixteen senders into 32 sessions get two each: the first ones' further sessions are refused once others wait")
    func fairShares() {
        var t = Turns(capacity: 32, perSender: 8)
        // The first sender comes alone and is offered 8; then 15 more come.
        #expect(t.admit("s0", now: at(0)) == .serve(sessions: 8))
        for s in 1..<16 { _ = t.admit("s\(s)", now: at(0)) }
        #expect(t.share == 2)
        // s0's further sessions: its second is within its share, its third is not.
        #expect(t.admit("s0", now: at(0)) == .serve(sessions: 2))
        #expect(t.admit("s0", now: at(0)) == .busy(ahead: 0))
        for s in 1..<16 { #expect(t.admit("s\(s)", now: at(0)) == .serve(sessions: 2)) }
        #expect(t.total == 32)
        #expect(t.serving.values.allSatisfy { $0 == 2 })
    }

    @Test("when every session is taken, senders wait in line, first come first served, told how many are ahead")
    func line() {
        var t = Turns(capacity: 2, perSender: 8)
        #expect(t.admit("a", now: at(0)) == .serve(sessions: 2))
        #expect(t.admit("b", now: at(0)) == .serve(sessions: 1))
        #expect(t.admit("c", now: at(1)) == .busy(ahead: 0))
        #expect(t.admit("d", now: at(1)) == .busy(ahead: 1))
        #expect(t.admit("e", now: at(1)) == .busy(ahead: 2))
        // Asking again keeps the place.
        #expect(t.admit("d", now: at(2)) == .busy(ahead: 1))
        #expect(t.waiting(now: at(2)) == ["c", "d", "e"])
        // A session ends: the free one is owed to c. Neither d, e nor a newcomer gets it.
        t.release("a")
        #expect(t.admit("d", now: at(3)) == .busy(ahead: 1))
        #expect(t.admit("f", now: at(3)) == .busy(ahead: 3))
        #expect(t.admit("b", now: at(3)) == .busy(ahead: 4))  // a further session of a sender served: owed to the line
        #expect(t.admit("c", now: at(3)) == .serve(sessions: 1))
        #expect(t.waiting(now: at(3)) == ["d", "e", "f"])
        // Two end at once: d and e, the front two, both get one, in whichever order they ask.
        t.release("b")
        t.release("c")
        #expect(t.admit("f", now: at(4)) == .busy(ahead: 2))
        #expect(t.admit("e", now: at(4)) == .serve(sessions: 1))
        #expect(t.admit("d", now: at(4)) == .serve(sessions: 1))
        #expect(t.waiting(now: at(4)) == ["f"])
        #expect(t.total == 2)
    }

    @Test("a sender that stops asking loses its place after the patience; the line moves up")
    func patience() {
        var t = Turns(capacity: 1, perSender: 8, patience: .seconds(10))
        #expect(t.admit("a", now: at(0)) == .serve(sessions: 1))
        #expect(t.admit("gone", now: at(0)) == .busy(ahead: 0))
        #expect(t.admit("b", now: at(1)) == .busy(ahead: 1))
        #expect(t.admit("b", now: at(9)) == .busy(ahead: 1))
        // 10 s after it last asked, "gone" still has its place; just past it, it has not.
        #expect(t.admit("b", now: at(10)) == .busy(ahead: 1))
        #expect(t.admit("b", now: at(10.5)) == .busy(ahead: 0))
        t.release("a")
        #expect(t.admit("b", now: at(11)) == .serve(sessions: 1))
        // Coming back, "gone" joins at the end like anyone.
        #expect(t.admit("gone", now: at(12)) == .busy(ahead: 0))
    }

    @Test("a sender turned away before it could ask takes its place in line; one being served does not")
    func refused() {
        var t = Turns(capacity: 1, perSender: 8)
        #expect(t.admit("a", now: at(0)) == .serve(sessions: 1))
        #expect(t.refused("b", now: at(0)) == 0)
        #expect(t.refused("c", now: at(0)) == 1)
        #expect(t.refused("b", now: at(1)) == 0)
        #expect(t.refused("a", now: at(1)) == 2)
        #expect(t.waiting(now: at(1)) == ["b", "c"])
        t.release("a")
        #expect(t.admit("c", now: at(2)) == .busy(ahead: 1))
        #expect(t.admit("b", now: at(2)) == .serve(sessions: 1))
    }

    @Test("release frees one session of that sender; an unknown or finished sender's release changes nothing")
    func release() {
        var t = Turns(capacity: 4, perSender: 4)
        _ = t.admit("a", now: at(0))
        _ = t.admit("a", now: at(0))
        t.release("a")
        #expect(t.serving == ["a": 1])
        t.release("a")
        #expect(t.serving == [:])
        #expect(t.total == 0)
        t.release("a")
        t.release("nobody")
        #expect(t.total == 0)
    }

    @Test("clients that do not wait in line (LocalSend) take only sessions no one in line is owed")
    func take() {
        var t = Turns(capacity: 2, perSender: 8)
        let phoneServed = t.take("phone", now: at(0))
        #expect(phoneServed)
        #expect(t.admit("a", now: at(0)) == .serve(sessions: 1))
        let phoneWhileFull = t.take("phone", now: at(0))
        #expect(!phoneWhileFull)
        #expect(t.admit("b", now: at(0)) == .busy(ahead: 0))
        t.release("phone")
        // The free session is owed to b.
        let phoneWhileOwed = t.take("phone", now: at(1))
        #expect(!phoneWhileOwed)
        #expect(t.admit("b", now: at(1)) == .serve(sessions: 1))
        t.release("a")
        let phoneAgain = t.take("phone", now: at(2))
        #expect(phoneAgain)
        #expect(t.total == 2)
    }

    @Test("the line is bounded: beyond it a sender hears its place at the end but is not remembered")
    func boundedLine() {
        var t = Turns(capacity: 1, perSender: 1, maxWaiting: 2)
        _ = t.admit("a", now: at(0))
        #expect(t.admit("b", now: at(0)) == .busy(ahead: 0))
        #expect(t.admit("c", now: at(0)) == .busy(ahead: 1))
        #expect(t.admit("d", now: at(0)) == .busy(ahead: 2))
        #expect(t.refused("e", now: at(0)) == 2)
        #expect(t.waiting(now: at(0)) == ["b", "c"])
    }

    @Test("200 senders taking turns through 8 sessions: each is served exactly in the order it first asked")
    func manySenders() {
        var t = Turns(capacity: 8, perSender: 4, patience: .seconds(1_000_000))
        var now = 0.0
        var served: [Int] = []
        var done: Set<Int> = []
        var serving: [Int] = []
        func ask(_ s: Int) {
            if case .serve = t.admit("s\(s)", now: at(now)) {
                served.append(s)
                done.insert(s)
                serving.append(s)
            }
        }
        // Every sender asks once in order; then, each round, one session ends and everyone
        // still waiting asks again, the later ones first (the worst order for fairness).
        for s in 0..<200 { ask(s) }
        while served.count < 200 {
            now += 1
            t.release("s\(serving.removeFirst())")
            for s in (0..<200).reversed() where !done.contains(s) { ask(s) }
        }
        #expect(served == Array(0..<200))
    }
}
