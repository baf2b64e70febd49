import PTKClient
import PTKTestTags
import Testing

private func files(_ specs: [(String, Int64)]) -> [LocalFile] {
    specs.map { LocalFile(path: "/p/" + $0.0, name: $0.0, size: $0.1) }
}

@Suite("The list sessions take their files from", .tags(.unit))
struct WorkListTests {
    /// Takes files for the sessions in turn, as `(session, file)`, until none is left for any.
    private func deal(_ list: inout WorkList, sessions: [Int]) -> [(Int, Int)] {
        var out: [(Int, Int)] = []
        var going = true
        while going {
            going = false
            for s in sessions {
                if let f = list.next(for: s) {
                    out.append((s, f))
                    going = true
                }
            }
        }
        return out
    }

    @Test("one session takes every file in the given order, same-named ones included")
    func oneSession() {
        var list = WorkList(files([("a.png", 10), ("big.png", 10), ("b.png", 10), ("a.png", 10)]))
        #expect(deal(&list, sessions: [0]).map(\.1) == [0, 1, 2, 3])
        #expect(list.next(for: 0) == nil)
    }

    @Test("files that would get the same name on the receiver go to the session that took the first, in order")
    func sameName() {
        let f = files([("IMG.png", 10), ("b.png", 10), ("IMG", 10), ("c.png", 10), ("IMG.png", 10), ("IMG.PNG", 10)])
        var list = WorkList(f)
        let dealt = deal(&list, sessions: [0, 1, 2])
        #expect(dealt.map(\.1).sorted() == Array(0..<6))
        let ofIMG = dealt.filter { [0, 2, 4].contains($0.1) }
        #expect(Set(ofIMG.map(\.0)) == [0])
        #expect(ofIMG.map(\.1) == [0, 2, 4])
        // "IMG.PNG" keeps its own ending on the receiver, so it is another name.
        #expect(dealt.first { $0.1 == 5 }?.0 != nil)
    }

    @Test("the receiver's exact naming rules decide: '.a.png', 'a', 'a (2).png' and 'a.png' go to one session")
    func receiverRules() {
        let f = files([
            ("a.png", 10), (".a.png", 10), ("x.png", 10), ("a", 10), ("y.png", 10), ("a (2).png", 10), ("z.png", 10),
        ])
        var list = WorkList(f)
        let dealt = deal(&list, sessions: [0, 1])
        #expect(dealt.filter { [0, 1, 3, 5].contains($0.1) }.map(\.0) == [0, 0, 0, 0])
        #expect(dealt.filter { [0, 1, 3, 5].contains($0.1) }.map(\.1) == [0, 1, 3, 5])
    }

    @Test("a session that ended frees its names; files it gave back are taken again, in their places")
    func ended() {
        var list = WorkList(files([("a.png", 10), ("b.png", 10), ("a.png", 10), ("c.png", 10)]))
        #expect(list.next(for: 0) == 0)
        #expect(list.next(for: 1) == 1)
        #expect(list.next(for: 1) == 3)  // file 2 is session 0's name
        #expect(list.next(for: 1) == nil)
        #expect(list.next(for: 0) == 2)
        list.ended(0, returning: [2])
        #expect(list.left == [2])
        #expect(list.next(for: 1) == 2)
        #expect(list.next(for: 1) == nil)
        #expect(WorkList([]).left.isEmpty)
    }
}

@Suite("Waiting for a busy receiver", .tags(.unit))
struct WaitPolicyTests {
    @Test(
        "by attempt: pauses double from 0.25 s up to 5 s, each a random time between half and all of that",
        arguments: [(0, 0.25), (1, 0.5), (2, 1.0), (3, 2.0), (4, 4.0), (5, 5.0), (40, 5.0), (10_000, 5.0)])
    func byAttempt(attempt: Int, most: Double) {
        let w = WaitPolicy()
        let most = Duration.seconds(most)
        #expect(w.pause(attempt: attempt, ahead: nil, random: 0) == most / 2)
        #expect(w.pause(attempt: attempt, ahead: nil, random: 0.5) == most * 0.75)
        #expect(w.pause(attempt: attempt, ahead: nil, random: 0.999_999) <= most)
        for _ in 0..<100 {
            let p = w.pause(attempt: attempt, ahead: nil, random: Double.random(in: 0..<1))
            #expect(p >= most / 2 && p <= most)
        }
    }

    @Test(
        "by place in line, when the receiver says it: the first four ask within 0.25 s, the next eight within 0.5 s, ...",
        arguments: [
            (0, 0.25), (3, 0.25), (4, 0.5), (11, 0.5), (12, 1.0), (27, 1.0), (28, 2.0), (60, 4.0), (124, 5.0),
            (1 << 40, 5.0),
        ])
    func byPlace(ahead: Int, most: Double) {
        let w = WaitPolicy()
        let most = Duration.seconds(most)
        // The attempt does not count when the place is known.
        #expect(w.pause(attempt: 9, ahead: ahead, random: 1) == most)
        #expect(w.pause(attempt: 0, ahead: ahead, random: 0) == most / 2)
    }

    @Test("out-of-range inputs stay within the bounds")
    func bounds() {
        let w = WaitPolicy(limit: .seconds(1), first: .milliseconds(10), longest: .milliseconds(50))
        #expect(w.pause(attempt: -3, ahead: nil, random: -1) == .milliseconds(5))
        #expect(w.pause(attempt: 0, ahead: -5, random: 2) == .milliseconds(10))
        #expect(w.pause(attempt: Int.max, ahead: nil, random: 1) == .milliseconds(50))
    }
}
