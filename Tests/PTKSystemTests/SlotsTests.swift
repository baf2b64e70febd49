import Glibc
import PTKSystem
import PTKTestTags
import Testing

@Suite("Slots and the CPU count", .tags(.unit))
struct SlotsTests {
    @Test("at most `limit` taken; a slot given back can be taken again; a limit of 0 never gives one")
    func limits() {
        let slots = Slots(limit: 2)
        #expect(slots.tryTake())
        #expect(slots.tryTake())
        #expect(!slots.tryTake())
        #expect(slots.taken == 2)
        slots.give()
        #expect(slots.taken == 1)
        #expect(slots.tryTake())
        #expect(!slots.tryTake())
        let none = Slots(limit: 0)
        #expect(!none.tryTake())
        #expect(none.taken == 0)
        #expect(Slots(limit: -3).limit == 0)
    }

    @Test("many threads taking and giving never hold more than the limit")
    func concurrent() throws {
        let slots = Slots(limit: 3)
        let peak = Slots(limit: 1000)  // counts holders, to find the most at once
        let most = Lock()
        nonisolated(unsafe) var highest = 0
        let done = Semaphore()
        for _ in 0..<8 {
            try startThread(name: "test") {
                for _ in 0..<2000 {
                    guard slots.tryTake() else { continue }
                    _ = peak.tryTake()
                    most.withLock { highest = max(highest, peak.taken) }
                    peak.give()
                    slots.give()
                }
                done.signal()
            }
        }
        for _ in 0..<8 { done.wait() }
        #expect(slots.taken == 0)
        #expect(most.withLock { highest } <= 3)
        #expect(most.withLock { highest } >= 1)
    }

    @Test("the CPUs this process may use: at least one, at most those online")
    func processorCount() {
        let n = availableProcessorCount()
        #expect(n >= 1)
        #expect(n <= Int(sysconf(Int32(_SC_NPROCESSORS_CONF))))
    }
}
