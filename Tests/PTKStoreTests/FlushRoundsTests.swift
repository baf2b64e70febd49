import Glibc
import PTKDigest
import PTKProtocol
import PTKSystem
import PTKTestSupport
import PTKTestTags
import PTKVocabulary
import Testing

@testable import PTKStore

/// A file's flush that the test holds: the first call waits until `release`, so the photos
/// finished meanwhile gather for the next round.
private final class HeldFlush: @unchecked Sendable {
    // `held`, `calls` and `failing` are guarded by `state`.
    private let state = ConditionLock()
    private var held = true
    private var calls = 0
    /// Sizes of the files whose flush fails (EIO).
    var failingSizes: Set<Int64> = []
    /// Fail the flush of every directory whose path ends so (EIO); nil fails none.
    var failDirectoriesEndingWith: String?

    func file(_ fd: FileDescriptor) throws(SystemError) {
        let (first, failing) = state.withLock { () -> (Bool, Set<Int64>) in
            calls += 1
            state.broadcast()
            return (calls == 1, failingSizes)
        }
        if first { state.withLock { while held { state.wait() } } }
        if let size = try? fd.status().size, failing.contains(size) { throw SystemError(call: "fsync", errno: EIO) }
        try fd.sync()
    }

    func directory(_ fd: FileDescriptor) throws(SystemError) {
        if let suffix = state.withLock({ failDirectoriesEndingWith }), path(of: fd).hasSuffix(suffix) {
            throw SystemError(call: "fsync", errno: EIO)
        }
        try fd.sync()
    }

    func release() {
        state.withLock {
            held = false
            state.broadcast()
        }
    }
    /// Waits until the first flush is being held (its round has begun).
    func waitUntilHolding() {
        state.withLock { while calls == 0 { state.wait() } }
    }
    func configure(_ body: (HeldFlush) -> Void) { state.withLock { body(self) } }
}

/// The path a descriptor is open on, from /proc.
private func path(of fd: FileDescriptor) -> String {
    var buffer = [CChar](repeating: 0, count: 4096)
    let n = readlink("/proc/self/fd/\(fd.rawValue)", &buffer, buffer.count - 1)
    return n > 0 ? String(decoding: buffer[..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self) : ""
}

/// A store whose first round (photo "a.png" alone) is held in its data flush, so photos
/// finished meanwhile gather for the next round; `a` and its ticket come with it.
private func storeWithHeldRound() throws -> (StoreFixture, HeldFlush, IncomingFile, FlushTicket) {
    let f = try StoreFixture()
    let held = HeldFlush()
    rounds(f, held)
    let a = try written(makePNG(size: 2_000, seed: 1), in: f.store, name: "a.png")
    let ticket = a.startFinishing(notify: nil)
    held.waitUntilHolding()
    return (f, held, a, ticket)
}

/// The photo's file written whole (not finished yet).
private func written(_ bytes: [UInt8], in s: PhotoStore, name: String, folder: String = "") throws -> IncomingFile {
    let file = try s.begin(offer(for: bytes, name: name, folder: folder)).get()
    try file.append(bytes)
    return file
}

private func rounds(_ f: StoreFixture, _ held: HeldFlush) {
    f.store.rounds = FlushRounds(
        store: f.store,
        flush: FlushRounds.Flush(
            file: { fd throws(SystemError) in try held.file(fd) },
            directory: { fd throws(SystemError) in try held.directory(fd) }))
}

@Suite("Flush rounds: group commit of photos (issue 46)", .tags(.unit))
struct FlushRoundsTests {
    @Test("photos finished while a round runs share the next round; each is answered only after it")
    func photosShareARound() throws {
        let f = try StoreFixture()
        let held = HeldFlush()
        rounds(f, held)
        let first = makePNG(size: 2_000, seed: 1)
        let a = try written(first, in: f.store, name: "a.png")
        let aTicket = a.startFinishing(notify: nil)
        held.waitUntilHolding()
        // a's round is held in its file flush: b, c and d gather for the next one.
        let others = (2...4).map { makePNG(size: 2_000 + $0 * 100, seed: UInt64($0)) }
        let files = try others.enumerated().map { try written($1, in: f.store, name: "p\($0).png") }
        let tickets = files.map { $0.startFinishing(notify: nil) }
        #expect(
            aTicket.result == nil && tickets.allSatisfy { $0.result == nil },
            "nothing is answered before its round's flushes")
        #expect(!f.visible.contains("a.png"), "not renamed before its data is flushed")
        held.release()
        #expect(try a.conclude(aTicket).get().name == "a.png")
        for (i, file) in files.enumerated() {
            #expect(try file.conclude(tickets[i]).get().name == "p\(i).png")
            #expect(readFile(f.dir + "/p\(i).png") == others[i])
        }
        let counts = f.store.rounds.counts
        #expect(counts.rounds == 2 && counts.photos == 4, "\(counts)")
        #expect(f.incoming.isEmpty)
    }

    @Test("a photo whose data flush fails is failed alone, never renamed; the others of its round are saved")
    func oneFlushFails() throws {
        let (f, held, a, aTicket) = try storeWithHeldRound()
        let bytes = [makePNG(size: 3_000, seed: 2), makePNG(size: 3_500, seed: 3), makePNG(size: 4_000, seed: 4)]
        held.configure { $0.failingSizes = [3_500] }
        let files = try bytes.enumerated().map { try written($1, in: f.store, name: "p\($0).png") }
        let tickets = files.map { $0.startFinishing(notify: nil) }
        held.release()
        _ = try a.conclude(aTicket).get()
        let results = zip(files, tickets).map { $0.conclude($1) }
        #expect((try? results[0].get().name) == "p0.png")
        #expect((try? results[2].get().name) == "p2.png")
        guard case .failure(let failure) = results[1] else {
            Issue.record("the photo whose flush failed was answered \(results[1])")
            return
        }
        #expect(failure.kind == .io && failure.message.contains("fsync"))
        #expect(!f.visible.contains("p1.png"), "a photo whose data may not be on disk is not published")
        #expect(f.incoming.isEmpty, "its temporary file is deleted")
        #expect(readFile(f.dir + "/p2.png") == bytes[2])
    }

    @Test(
        "a directory whose flush fails fails the photos moved into it in that round, moved back and deleted; another folder's are saved"
    )
    func directoryFlushFails() throws {
        let (f, held, a, aTicket) = try storeWithHeldRound()
        // b and c in the directory itself, d in the folder "2024".
        let bytes = (0..<3).map { makePNG(size: 3_000 + $0 * 100, seed: UInt64($0 + 2)) }
        let files = try [(name: "b.png", folder: ""), (name: "c.png", folder: ""), (name: "d.png", folder: "2024")]
            .enumerated().map {
                try written(bytes[$0], in: f.store, name: $1.name, folder: $1.folder)
            }
        let tickets = files.map { $0.startFinishing(notify: nil) }
        held.configure { $0.failDirectoriesEndingWith = "/photos" }
        held.release()
        // a's round (alone) failed its directory flush too: a is failed and not published.
        #expect((try? a.conclude(aTicket).get()) == nil)
        let results = zip(files, tickets).map { $0.conclude($1) }
        for result in results.prefix(2) {
            guard case .failure(let failure) = result else {
                Issue.record("saved although its directory's flush failed")
                continue
            }
            #expect(failure.kind == .io)
        }
        #expect((try? results[2].get().name) == "2024/d.png", "the folder flushed fine: \(results[2])")
        #expect(readFile(f.dir + "/2024/d.png") == bytes[2])
        #expect(f.visible == ["2024"], "nothing else under a final name: \(f.visible)")
        #expect(f.incoming.isEmpty, "the temporaries are deleted: \(f.incoming)")
        // The store goes on: the next photo is saved once the directory flushes again.
        held.configure { $0.failDirectoriesEndingWith = nil }
        #expect(try store(makePNG(size: 1_000, seed: 9), in: f.store, name: "d.png").get().name == "d.png")
    }

    @Test(
        "a round takes at most 64 photos, each owner's in turn: one sender with hundreds waiting does not keep another's out of the next round"
    )
    func roundsAreShared() {
        func job(_ owner: Int) -> FlushRounds.Job {
            FlushRounds.Job(
                file: FileDescriptor(rawValue: -1), temporary: "", offeredName: "", type: .png, folder: "",
                saved: StoredPhoto(name: "", size: 0, sha256: ""), ticket: FlushTicket(notify: nil), owner: owner)
        }
        let waiting = (0..<200).map { _ in job(1) } + [job(2)] + (0..<10).map { _ in job(3) }
        let (round, rest) = FlushRounds.share(waiting, limit: 64)
        #expect(round.count == 64 && rest.count == waiting.count - 64)
        #expect(round.filter { $0.owner == 2 }.count == 1)
        #expect(round.filter { $0.owner == 3 }.count == 10)
        #expect(round.filter { $0.owner == 1 }.count == 53)
        // Each owner's oldest go first: what is left of owner 1 is its newest, in order.
        #expect(rest.allSatisfy { $0.owner == 1 })
        let few = (0..<5).map { _ in job(1) }
        #expect(FlushRounds.share(few, limit: 64).round.count == 5)
    }

    @Test("a lone photo waits for no other: its round starts at once")
    func lonePhoto() throws {
        let f = try StoreFixture()
        let started = Instant.now
        #expect(try store(makePNG(size: 5_000), in: f.store, name: "x.png").get().name == "x.png")
        #expect((Instant.now - started).seconds < 5)
        #expect(f.store.rounds.counts.rounds == 1)
    }

    @Test("many sessions finishing at once: every photo saved intact, in fewer rounds than photos")
    func concurrentSessions() throws {
        let f = try StoreFixture()
        let photos = (0..<32).map { makePNG(size: 20_000 + $0, seed: UInt64($0 + 10)) }
        let results = ResultsBox(count: photos.count)
        let group = ThreadGroup()
        for (i, bytes) in photos.enumerated() {
            try group.start(name: "session-\(i)") { results.set(i, store(bytes, in: f.store, name: "s\(i).png")) }
        }
        _ = group.join(until: .now + .seconds(60))
        for (i, bytes) in photos.enumerated() {
            #expect((try? results.get(i)?.get().name) == "s\(i).png")
            #expect(readFile(f.dir + "/s\(i).png") == bytes)
        }
        let counts = f.store.rounds.counts
        #expect(counts.photos == photos.count && counts.rounds <= photos.count, "\(counts)")
    }
}

private final class ResultsBox: @unchecked Sendable {
    // Guarded by `lock`.
    private let lock = Lock()
    private var results: [Result<StoredPhoto, StoreFailure>?]
    init(count: Int) { results = Array(repeating: nil, count: count) }
    func set(_ i: Int, _ r: Result<StoredPhoto, StoreFailure>) { lock.withLock { results[i] = r } }
    func get(_ i: Int) -> Result<StoredPhoto, StoreFailure>? { lock.withLock { results[i] } }
}
