import PTKSystem
import PTKTestTags
import Testing

@Suite("Parallel runner", .tags(.unit))
struct ParallelRunnerTests {
    @Test(
        "every call runs once, on at most `limit` threads at once; each call's error comes back at its index; runs after the first reuse the threads"
    )
    func runsEachOnce() throws {
        let group = ThreadGroup()
        let runner = ParallelRunner(name: "test-runner", limit: 3, group: group)
        let counts = Counts(64)
        for _ in 0..<3 {
            let failures = runner.run(64) { i throws(SystemError) in
                counts.enter(i)
                sleep(for: .milliseconds(2))
                counts.leave()
                if i % 10 == 7 { throw SystemError(call: "test", errno: 5) }
            }
            #expect(failures.count == 64)
            #expect(failures.indices.allSatisfy { (failures[$0] != nil) == ($0 % 10 == 7) })
        }
        #expect(counts.each == Array(repeating: 3, count: 64))
        #expect(counts.most <= 3)
        #expect(runner.run(0) { _ throws(SystemError) in }.isEmpty)
        runner.stop()
        #expect(group.join(until: .now + .seconds(10)))
    }
}

private final class Counts: @unchecked Sendable {
    private let lock = Lock()
    private var running = 0
    private var highest = 0
    private var calls: [Int]
    init(_ n: Int) { calls = Array(repeating: 0, count: n) }
    var most: Int { lock.withLock { highest } }
    var each: [Int] { lock.withLock { calls } }
    func enter(_ i: Int) {
        lock.withLock {
            calls[i] += 1
            running += 1
            highest = max(highest, running)
        }
    }
    func leave() { lock.withLock { running -= 1 } }
}
