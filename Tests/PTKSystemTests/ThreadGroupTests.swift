import Glibc
import PTKSystem
import PTKTestTags
import Synchronization
import Testing

/// What a thread's thread-local clean-up did, seen from the joining thread.
private let cleanedUp = Atomic<Int>(0)

/// A thread-specific value whose destructor runs as the thread ends, after its body returned,
/// and takes 100 ms: as OpenSSL's clean-up of a thread does (a detached thread that has said it
/// is done may still be in it).
private let slowCleanUpKey: pthread_key_t = {
    var key = pthread_key_t()
    pthread_key_create(&key) { _ in
        usleep(100_000)
        cleanedUp.add(1, ordering: .sequentiallyConsistent)
    }
    return key
}()

/// Set by the thread of `noDeadline`.
private let slowThreadDone = Atomic<Bool>(false)

/// A gate a thread waits at until the test opens it (with a deadline, so a wrong result never hangs).
private final class Gate: @unchecked Sendable {
    private let state = ConditionLock()
    private var open = false
    func pass() { state.withLock { while !open { if !state.wait(until: .now + .seconds(10)) { return } } } }
    func openUp() {
        state.withLock {
            open = true
            state.broadcast()
        }
    }
}

@Suite("Threads joined by the service that started them", .tags(.unit))
struct ThreadGroupTests {
    @Test("join returns once the threads' thread-local clean-up has run, not when their bodies return")
    func joinWaitsForCleanUp() throws {
        let group = ThreadGroup()
        let before = cleanedUp.load(ordering: .sequentiallyConsistent)
        for _ in 0..<3 {
            try group.start(name: "test") { pthread_setspecific(slowCleanUpKey, UnsafeRawPointer(bitPattern: 1)) }
        }
        #expect(group.join(until: .now + .seconds(10)))
        let cleaned = cleanedUp.load(ordering: .sequentiallyConsistent) - before
        #expect(cleaned == 3)
        #expect(group.count == 0)
    }

    @Test("a thread still running at the deadline: join says so and keeps it; a later join gets it")
    func deadline() throws {
        let group = ThreadGroup()
        let gate = Gate()
        try group.start(name: "test") { gate.pass() }
        try group.start(name: "test") {}
        let start = Instant.now
        #expect(!group.join(until: .now + .milliseconds(200)))
        #expect(Instant.now - start >= .milliseconds(190))
        #expect(group.count == 1, "the thread that ended is joined, the running one kept")
        gate.openUp()
        #expect(group.join(until: .now + .seconds(10)))
        #expect(group.count == 0)
    }

    @Test("threads whose work is done are joined by the next start: a long-lived group holds only those running")
    func reapedOnStart() throws {
        let group = ThreadGroup()
        for _ in 0..<200 {
            try group.start(name: "test") {}
            usleep(200)
        }
        // Each start joins those that ended before it; the last few may still be ending.
        #expect(group.count < 20, "\(group.count) threads kept unjoined")
        #expect(group.join(until: nil))
        #expect(group.count == 0)
    }

    @Test("join with no deadline waits for as long as it takes")
    func noDeadline() throws {
        let group = ThreadGroup()
        try group.start(name: "test") {
            usleep(300_000)
            slowThreadDone.store(true, ordering: .sequentiallyConsistent)
        }
        #expect(group.join(until: nil))
        let done = slowThreadDone.load(ordering: .sequentiallyConsistent)
        #expect(done)
    }
}
