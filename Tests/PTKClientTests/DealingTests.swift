import PTKClient
import Testing

private func files(_ specs: [(String, Int64)]) -> [LocalFile] {
    specs.map { LocalFile(path: "/p/" + $0.0, name: $0.0, size: $0.1) }
}

@Suite("Dealing files to parallel sessions")
struct DealingTests {
    @Test("equal files go round-robin, each session keeping the given order")
    func roundRobin() {
        let f = files((0..<10).map { ("IMG_\($0).png", 100) })
        #expect(dealFiles(f, sessions: 4) == [[0, 4, 8], [1, 5, 9], [2, 6], [3, 7]])
    }

    @Test("one session keeps every file in order; fewer files than sessions gives one session each")
    func bounds() {
        let f = files([("a.png", 5), ("b.png", 5), ("c.png", 5)])
        #expect(dealFiles(f, sessions: 1) == [[0, 1, 2]])
        #expect(dealFiles(f, sessions: 8) == [[0], [1], [2]])
        #expect(dealFiles([], sessions: 4) == [])
    }

    @Test("a big file does not hold back the small ones: they go to the lighter sessions")
    func bySize() {
        let f = files([("big.png", 1000), ("s1.png", 10), ("s2.png", 10), ("s3.png", 10), ("s4.png", 10)])
        #expect(dealFiles(f, sessions: 2) == [[0], [1, 2, 3, 4]])
    }

    @Test("files that would get the same name on the receiver stay in one session, in order")
    func sameName() {
        let f = files([("IMG.png", 10), ("b.png", 10), ("IMG", 10), ("c.png", 10), ("IMG.png", 10), ("IMG.PNG", 10)])
        let groups = dealFiles(f, sessions: 3)
        let withIMG = groups.filter { $0.contains(0) }
        #expect(withIMG.count == 1)
        #expect(withIMG.first.map { $0.filter { [0, 2, 4].contains($0) } } == [0, 2, 4])
        // "IMG.PNG" keeps its own ending on the receiver, so it is a different name.
        #expect(!withIMG[0].contains(5))
        #expect(groups.flatMap { $0 }.sorted() == Array(0..<6))
    }

    @Test("the receiver's exact naming rules decide: '.a.png', 'a', 'a (2).png' and 'a.png' stay in one session")
    func receiverRules() {
        let f = files([("a.png", 10), (".a.png", 10), ("x.png", 10), ("a", 10), ("y.png", 10), ("a (2).png", 10), ("z.png", 10)])
        for sessions in 2...4 {
            let groups = dealFiles(f, sessions: sessions)
            let withA = groups.filter { $0.contains(0) }
            #expect(withA.count == 1)
            #expect(withA[0].filter { [0, 1, 3, 5].contains($0) } == [0, 1, 3, 5])
        }
    }

    @Test("a receiver that serves one session (or does not say) gets every file in one session, in order")
    func planOneSession() {
        let f = files((0..<6).map { ("IMG_\($0).png", Int64(100 * ($0 + 1))) })
        #expect(planSessions(f, parallel: 4, receiverSessions: 1) == [[0, 1, 2, 3, 4, 5]])
        #expect(planSessions(f, parallel: 1, receiverSessions: 8) == [[0, 1, 2, 3, 4, 5]])
    }

    @Test("never more sessions than the receiver serves or --parallel allows; the first file is in the first")
    func planMany() {
        let f = files((0..<10).map { ("IMG_\($0).png", 100) })
        #expect(planSessions(f, parallel: 4, receiverSessions: 2) == [[0, 2, 4, 6, 8], [1, 3, 5, 7, 9]])
        #expect(planSessions(f, parallel: 4, receiverSessions: 8) == dealFiles(f, sessions: 4))
        #expect(planSessions(f, parallel: 8, receiverSessions: 3).count == 3)
        #expect(planSessions(Array(f.prefix(2)), parallel: 8, receiverSessions: 8) == [[0], [1]])
    }
}
