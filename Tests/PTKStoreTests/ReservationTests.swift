import Foundation
import Glibc
import PTKSystem
import PTKTestSupport
import PTKTestTags
import PTKVocabulary
import Testing

@testable import PTKStore

/// A file system seen through `freeSpaceForTests`: `base` bytes free less what the test says
/// was written, the lowest free space any check saw kept.
final class FakeDisk: @unchecked Sendable {
    // Every field is read and changed with `lock` held.
    private let lock = Lock()
    private let base: Int64
    private var written: Int64 = 0
    private var lowestSeen: Int64

    init(free: Int64) {
        base = free
        lowestSeen = free
    }

    /// Free bytes now.
    var free: Int64 { lock.withLock { base - written } }
    /// The least free space there was after any write.
    var lowest: Int64 { lock.withLock { lowestSeen } }

    /// `bytes` were written to it.
    func wrote(_ bytes: Int64) {
        lock.withLock {
            written += bytes
            lowestSeen = min(lowestSeen, base - written)
        }
    }

    /// Makes `store` ask this disk for its free space.
    func serve(_ store: PhotoStore) { store.freeSpaceForTests = { self.free } }
}

/// A JPEG of `size` bytes: a head, zeros as its scan data, EOI.
func zerosJPEG(_ size: Int) -> [UInt8] {
    let head: [UInt8] = [
        0xFF, 0xD8, 0xFF, 0xC0, 0x00, 0x0B, 0x08, 0x00, 0x10, 0x00, 0x10, 0x01, 0x01, 0x11, 0x00,
        0xFF, 0xDA, 0x00, 0x08, 0x01, 0x01, 0x00, 0x00, 0x3F, 0x00,
    ]
    return head + [UInt8](repeating: 0, count: size - head.count - 2) + [0xFF, 0xD9]
}

/// The least free space seen on a file system, sampled from many threads.
final class LeastFree: @unchecked Sendable {
    // `least` is read and changed with `lock` held; `folder` stays open for the test.
    private let lock = Lock()
    private var least = Int64.max
    private let folder: FileDescriptor
    init(_ folder: FileDescriptor) { self.folder = folder }
    func sample() {
        guard let free = try? folder.availableSpace() else { return }  // unreadable: nothing to sample this time
        lock.withLock { least = min(least, free) }
    }
    var value: Int64 { lock.withLock { least } }

    /// A count many threads add to.
    final class Count: @unchecked Sendable {
        // `n` is read and changed with `lock` held.
        private let lock = Lock()
        private var n = 0
        func add() { lock.withLock { n += 1 } }
        var value: Int { lock.withLock { n } }
    }
}

@Suite("Reservation: bytes promised to uploads in flight count against min-free", .tags(.unit))
struct ReservationTests {
    let mib: Int64 = 1 << 20

    @Test(
        "a sized begin reserves its size: two begun together cannot both take the same free bytes; given back on every ending"
    )
    func sizedBeginsReserve() throws {
        let f = try StoreFixture(minFree: 30 << 20)
        FakeDisk(free: (30 << 20) + (10 << 20)).serve(f.store)
        func begin(_ name: String, _ size: Int64) -> Result<IncomingFile, StoreFailure> {
            f.store.begin(StoreRequest(name: name, size: size, sha256: "", type: .jpeg))
        }
        let first = try begin("a.jpg", 6 * mib).get()
        #expect(f.store.ledger.total == 6 * mib)
        guard case .failure(let refused) = begin("b.jpg", 6 * mib) else {
            Issue.record("a second 6 MiB begin took the bytes the first was promised")
            return
        }
        #expect(refused.kind == .noSpace && refused.message.contains("promised to uploads in flight"), "\(refused)")
        // A lone upload is told what it was before.
        let alone = try StoreFixture(minFree: 30 << 20)
        FakeDisk(free: 30 << 20).serve(alone.store)
        guard case .failure(let lone) = alone.store.begin(StoreRequest(name: "c.jpg", size: 5, sha256: "", type: .jpeg))
        else {
            Issue.record("begun")
            return
        }
        #expect(
            lone.message == "5 more bytes would leave less than the \(30 << 20)-byte reserve (\(30 << 20) bytes free)")
        let small = try begin("c.jpg", 4 * mib).get()
        // Abandoned: given back.
        first.abandon(keepForResume: false)
        #expect(f.store.ledger.total == 4 * mib)
        // Written and finished: given back as written, the rest at the end.
        let photo = zerosJPEG(Int(4 * mib))
        try small.append(Array(photo.prefix(1 << 20)))
        #expect(f.store.ledger.total == 3 * mib)
        try small.append(Array(photo.dropFirst(1 << 20)))
        _ = try small.finish().get()
        #expect(f.store.ledger.total == 0)
        // Refused at finish (too short), dropped without a word (deinit): given back.
        let short = try begin("d.jpg", 2 * mib).get()
        try short.append(Array(photo.prefix(1000)))
        #expect(throws: StoreFailure.self) { try short.finish().get() }
        do { _ = try begin("e.jpg", 3 * mib).get() }
        #expect(f.store.ledger.total == 0)
        #expect(f.incoming.isEmpty)
    }

    @Test(
        "a spool reserves as it grows, in steps: five spools together stop at min-free, the one file system's free bytes counted once"
    )
    func spoolsShareTheRoom() throws {
        let minFree = 30 * mib
        let f = try StoreFixture(minFree: minFree)
        let disk = FakeDisk(free: minFree + 10 * mib)
        disk.serve(f.store)
        let spools = try (0..<5).map { _ in try f.store.openSpool().get() }
        let piece = [UInt8](repeating: 0, count: 1 << 20)
        var refused: [StoreFailure?] = Array(repeating: nil, count: spools.count)
        while refused.contains(where: { $0 == nil }) {
            for (i, spool) in spools.enumerated() where refused[i] == nil {
                do throws(StoreFailure) {
                    try piece.withUnsafeBytes { b in Result { () throws(StoreFailure) in try spool.append(b) } }.get()
                    disk.wrote(Int64(piece.count))
                } catch { refused[i] = error }
            }
        }
        #expect(refused.allSatisfy { $0?.kind == .noSpace }, "\(refused)")
        #expect(disk.lowest >= minFree, "free space went to \(disk.lowest), under the \(minFree)-byte reserve")
        #expect(spools.map(\.size).reduce(0, +) >= 10 * mib - SpoolFile.reserveStep)
        // Nothing of them has a name; closed, they give their promise back.
        #expect(f.incoming.isEmpty)
        for spool in spools { spool.close() }
        #expect(f.store.ledger.total == 0)
    }

    @Test(
        "many uploads at once, spooled and sized, on many threads: the free space never goes under min-free, and all is given back"
    )
    func concurrentUploadsKeepTheReserve() throws {
        let minFree = 30 * mib
        let f = try StoreFixture(minFree: minFree)
        let disk = FakeDisk(free: minFree + 20 * mib)
        disk.serve(f.store)
        let store = f.store
        let saved = Counter()
        DispatchQueue.concurrentPerform(iterations: 16) { i in
            let piece = [UInt8](repeating: 0, count: 256 << 10)
            if i % 2 == 0 {
                // A spool, written until it is refused.
                guard case .success(let spool) = store.openSpool() else { return }
                defer { spool.close() }
                while true {
                    let written = piece.withUnsafeBytes { b in Result { () throws(StoreFailure) in try spool.append(b) }
                    }
                    guard case .success = written else { return }
                    disk.wrote(Int64(piece.count))
                }
            } else {
                // Sized photos of 3 MiB, one after another, until one is refused.
                let photo = zerosJPEG(3 << 20)
                for n in 0..<100 {
                    guard
                        case .success(let file) = store.begin(
                            StoreRequest(name: "p\(i)-\(n).jpg", size: Int64(photo.count), sha256: "", type: .jpeg))
                    else { return }
                    var at = 0
                    while at < photo.count {
                        let end = min(at + piece.count, photo.count)
                        // a write that fails ends this uploader
                        guard (try? file.append(Array(photo[at..<end]))) != nil else { return }
                        disk.wrote(Int64(end - at))
                        at = end
                    }
                    guard case .success = file.finish() else { return }
                    _ = saved.next()
                }
            }
        }
        // A check may come between a write and the fake disk hearing of it: a piece a thread at most.
        #expect(
            disk.lowest >= minFree - 16 * (256 << 10),
            "free space went to \(disk.lowest), under the \(minFree)-byte reserve")
        #expect(store.ledger.total == 0)
        #expect(f.incoming.isEmpty)
    }
    /// A 40 MiB tmpfs mounted here (as root: `mount -t tmpfs -o size=40m tmpfs /tmp/attack-spool-tmpfs`) runs the test below.
    static let tmpfs = "/tmp/attack-spool-tmpfs"
    static var tmpfsMounted: Bool {
        guard let mounts = readFile("/proc/mounts") else { return false }
        return String(decoding: mounts, as: UTF8.self).split(separator: "\n").contains {
            $0.split(separator: " ").dropFirst().first == Substring(tmpfs)
        }
    }

    @Test(
        "on a real 40 MiB tmpfs with a 30 MiB reserve: five spools and five sized uploads at once never take the free space under the reserve",
        .enabled(if: ReservationTests.tmpfsMounted, "needs a 40 MiB tmpfs at /tmp/attack-spool-tmpfs"))
    func realFileSystem() throws {
        let minFree = 30 * mib
        let dir = "\(Self.tmpfs)/reservation-\(getpid())"
        removeTree(dir)
        defer { removeTree(dir) }
        let store = try PhotoStore(settings: StoreSettings(directory: dir, minFree: minFree, checkingThreads: 1))
        let folder = try FileDescriptor.open(dir, flags: [.readOnly, .directory])
        defer { folder.close() }
        let least = LeastFree(folder)
        // Ten threads (not a pool's few: all must reach the barrier): each takes its first
        // piece, then all write on together, as many connections whose bodies began at once.
        let arrived = LeastFree.Count()
        let done = DispatchGroup()
        for i in 0..<10 {
            done.enter()
            Thread {
                defer { done.leave() }
                let piece = [UInt8](repeating: 0, count: 64 << 10)
                func barrier() {
                    arrived.add()
                    while arrived.value < 10 { usleep(1000) }
                }
                if i % 2 == 0 {
                    guard case .success(let spool) = store.openSpool() else { return barrier() }
                    defer { spool.close() }
                    let first = piece.withUnsafeBytes { b in Result { () throws(StoreFailure) in try spool.append(b) } }
                    barrier()
                    guard case .success = first else { return }
                    while case .success = piece.withUnsafeBytes({ b in
                        Result { () throws(StoreFailure) in try spool.append(b) }
                    }) { least.sample() }
                } else {
                    let photo = zerosJPEG(3 << 20)
                    var waited = false
                    for n in 0..<20 {
                        let begun = store.begin(
                            StoreRequest(name: "p\(i)-\(n).jpg", size: Int64(photo.count), sha256: "", type: .jpeg))
                        if !waited {
                            waited = true
                            barrier()
                        }
                        guard case .success(let file) = begun else { return }
                        var at = 0
                        while at < photo.count {
                            let end = min(at + piece.count, photo.count)
                            // a write that fails ends this uploader
                            guard (try? file.append(Array(photo[at..<end]))) != nil else { return }
                            least.sample()
                            at = end
                        }
                        guard case .success = file.finish() else { return }
                    }
                }
            }.start()
        }
        done.wait()
        let seen = least.value
        print("Reservation on a 40 MiB tmpfs: the least free space seen was \(seen) bytes (min-free \(minFree))")
        #expect(seen >= minFree, "free space went to \(seen), under the \(minFree)-byte reserve")
        #expect(store.ledger.total == 0)
        #expect(listDirectory(dir + "/.incoming").isEmpty)
    }
}
