import Glibc
import PTKSystem
import PTKTestSupport
import PTKTestTags
import PTKVocabulary
import Testing

@testable import PTKStore

/// A store's file flushes that the test holds: each waits while `holding`, so the photos started
/// meanwhile stay in flight; the flush of a file of a size in `failing` fails (EIO).
private final class Gate: @unchecked Sendable {
    // `holding`, `calls` and `failing` are guarded by `state`.
    private let state = ConditionLock()
    private var holding = true
    private var calls = 0
    private var failing: Set<Int64> = []

    func flush(_ fd: FileDescriptor) throws(SystemError) {
        let failing = state.withLock { () -> Set<Int64> in
            calls += 1
            state.broadcast()
            while holding { state.wait() }
            return self.failing
        }
        if let size = try? fd.status().size, failing.contains(size) {  // unreadable: flushed as any other
            throw SystemError(call: "fsync", errno: EIO)
        }
        try fd.sync()
    }

    func fail(size: Int64) { state.withLock { _ = failing.insert(size) } }
    func open() {
        state.withLock {
            holding = false
            state.broadcast()
        }
    }
    func waitUntilHolding() { state.withLock { while calls == 0 { state.wait() } } }
}

/// Counts `notify` calls (from the flusher's thread).
private final class Wakes: @unchecked Sendable {
    private let lock = Lock()
    private var n = 0
    func signal() { lock.withLock { n += 1 } }
    var count: Int { lock.withLock { n } }
}

/// A store whose file flushes pass through `gate`.
private func gated(_ f: StoreFixture, _ gate: Gate) {
    f.store.rounds = FlushRounds(
        store: f.store,
        flush: FlushRounds.Flush(
            file: { fd throws(SystemError) in try gate.flush(fd) },
            directory: { fd throws(SystemError) in try fd.sync() }))
}

/// `bytes` written as `name` under the fixture's root, open for reading.
private func source(_ f: StoreFixture, _ name: String, _ bytes: [UInt8]) throws -> FileDescriptor {
    writeFile(f.root + "/" + name, bytes)
    return try FileDescriptor.open(f.root + "/" + name, flags: [.readOnly])
}

private func request(_ name: String, _ bytes: [UInt8]) -> StoreRequest {
    StoreRequest(name: name, size: Int64(bytes.count), sha256: "", type: .png)
}

/// `PhotoStore.startTaking`, `take` in two halves (issue 56): the inbox door reads the next
/// file while the photos it has read wait for their flush rounds.
@Suite("The store: taking open files with their flush rounds in flight", .tags(.unit))
struct TakeInFlightTests {
    @Test(
        "several photos in flight at once: each read while the others wait for their rounds, each published once, identical"
    )
    func severalInFlight() throws {
        let f = try StoreFixture()
        let gate = Gate()
        gated(f, gate)
        let wakes = Wakes()
        let photos = (0..<5).map { makePNG(size: 300_000 + $0 * 1_000, seed: UInt64(40 + $0)) }
        let sources = try photos.enumerated().map { try source(f, "s\($0.offset).png", $0.element) }
        defer { for s in sources { s.close() } }
        var flying: [FinishingPhoto] = []
        for (i, bytes) in photos.enumerated() {
            flying.append(
                f.store.startTaking(request("p\(i).png", bytes), from: sources[i], notify: { wakes.signal() }, owner: 7)
            )
            if i == 0 { gate.waitUntilHolding() }
        }
        // The first round is held: nothing is published yet, and every photo is still in flight.
        #expect(flying.allSatisfy { !$0.isOver })
        #expect(f.visible.isEmpty, "\(f.visible)")
        gate.open()
        var names: [String] = []
        for (i, photo) in flying.enumerated().reversed() {
            guard case .success(let saved) = photo.conclude() else {
                Issue.record("photo \(i) not published")
                continue
            }
            #expect(photo.sha256 == saved.sha256)
            #expect(readFile(f.dir + "/" + saved.name) == photos[i])
            // Concluded once: the same answer again, nothing done twice.
            guard case .success(let again) = photo.conclude() else {
                Issue.record("photo \(i) answered otherwise the second time")
                continue
            }
            #expect(again == saved)
            names.append(saved.name)
        }
        #expect(Set(names) == Set((0..<5).map { "p\($0).png" }))
        #expect(f.visible.sorted() == names.sorted())
        #expect(f.incoming.isEmpty, "\(f.incoming)")
        #expect(wakes.count == 5)
    }

    @Test(
        "one that fails its checks, and one whose flush fails, fail alone: the others are published, nothing is left behind"
    )
    func failureFailsAlone() throws {
        let f = try StoreFixture()
        let gate = Gate()
        gated(f, gate)
        let good = [makePNG(size: 200_000, seed: 50), makePNG(size: 210_000, seed: 51)]
        let cut = Array(makePNG(size: 220_000, seed: 52).prefix(150_000))
        let unflushable = makePNG(size: 230_000, seed: 53)
        gate.fail(size: Int64(unflushable.count))
        let all = [good[0], cut, unflushable, good[1]]
        let sources = try all.enumerated().map { try source(f, "s\($0.offset).png", $0.element) }
        defer { for s in sources { s.close() } }
        let flying = all.enumerated().map {
            f.store.startTaking(request("p\($0.offset).png", $0.element), from: sources[$0.offset], notify: nil)
        }
        // The cut one failed its check as it was read: answered at once, no digest to give.
        #expect(flying[1].isOver)
        #expect(flying[1].sha256 == nil)
        gate.open()
        let results = flying.map { $0.conclude() }
        guard case .success(let a) = results[0], case .success(let d) = results[3] else {
            Issue.record("the good photos were not published: \(results)")
            return
        }
        #expect(readFile(f.dir + "/" + a.name) == good[0])
        #expect(readFile(f.dir + "/" + d.name) == good[1])
        guard case .failure(let notAPhoto) = results[1], case .failure(let io) = results[2] else {
            Issue.record("a failing photo was published: \(results)")
            return
        }
        #expect(notAPhoto.kind == .notAPhoto)
        #expect(io.kind == .io)
        #expect(f.visible.sorted() == [a.name, d.name].sorted())
        #expect(f.incoming.isEmpty, "\(f.incoming)")
    }

    @Test(
        "photos let go with their rounds outstanding (the door stopping) are concluded as they go: published whole, nothing partial under a final name, nothing left in .incoming"
    )
    func letGoInFlight() throws {
        let f = try StoreFixture()
        let gate = Gate()
        gated(f, gate)
        let photos = (0..<3).map { makePNG(size: 250_000 + $0, seed: UInt64(60 + $0)) }
        let sources = try photos.enumerated().map { try source(f, "s\($0.offset).png", $0.element) }
        defer { for s in sources { s.close() } }
        // The rounds open a moment after the photos are let go, from another thread.
        let opener = ThreadGroup()
        do {
            let flying = photos.enumerated().map {
                f.store.startTaking(request("p\($0.offset).png", $0.element), from: sources[$0.offset], notify: nil)
            }
            gate.waitUntilHolding()
            #expect(flying.allSatisfy { !$0.isOver })
            try opener.start(name: "opener") {
                usleep(100_000)
                gate.open()
            }
        }
        _ = opener.join(until: .now + .seconds(10))
        #expect(f.store.rounds.stop(until: .now + .seconds(10)))
        #expect(f.visible.sorted() == ["p0.png", "p1.png", "p2.png"])
        for (i, bytes) in photos.enumerated() { #expect(readFile(f.dir + "/p\(i).png") == bytes) }
        #expect(f.incoming.isEmpty, "\(f.incoming)")
    }

    @Test("the same bytes from two sources in flight at once are stored once, when duplicates are looked for")
    func sameBytesInFlight() throws {
        let f = try StoreFixture()
        f.store.findHeld = { _, _ in nil }  // duplicates = skip, nothing kept before
        let gate = Gate()
        gated(f, gate)
        let bytes = makePNG(size: 200_000, seed: 70)
        let a = try source(f, "a.png", bytes)
        let b = try source(f, "b.png", bytes)
        defer {
            a.close()
            b.close()
        }
        let first = f.store.startTaking(request("a.png", bytes), from: a, notify: nil)
        gate.waitUntilHolding()
        // As the inbox door does: the photo in flight with these bytes, once its round saves it.
        let opener = ThreadGroup()
        try opener.start(name: "opener") {
            usleep(100_000)
            gate.open()
        }
        let second = f.store.startTaking(request("b.png", bytes), from: b, notify: nil) { sha256, size in
            guard first.sha256 == sha256, case .success(let saved) = first.waitForRound(), saved.size == size else {
                return nil
            }
            return saved.name
        }
        _ = opener.join(until: .now + .seconds(10))
        guard case .success(let one) = first.conclude(), case .success(let two) = second.conclude() else {
            Issue.record("not taken")
            return
        }
        #expect(!one.isDuplicate)
        #expect(two.isDuplicate)
        #expect(two.name == one.name)
        #expect(f.visible == ["a.png"])
        #expect(f.incoming.isEmpty, "\(f.incoming)")
    }
}
