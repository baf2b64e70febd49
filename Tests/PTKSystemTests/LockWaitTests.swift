import Glibc
import PTKSystem
import PTKTestSupport
import PTKTestTags
import Testing

/// Every wait for a lock another process holds is bounded and says what it waits for (issue 54).
@Suite(.tags(.unit)) struct LockWaitTests {
    /// Collects what a wait says.
    final class Told: @unchecked Sendable {
        // `lines` is read and written under `lock`.
        private let lock = Lock()
        private var lines: [String] = []
        func add(_ line: String) { lock.withLock { lines.append(line) } }
        var all: [String] { lock.withLock { lines } }
    }

    @Test(
        "a lock file another holder keeps is given up after the limit, with an error naming it; the waiter is told once what it waits for"
    )
    func lockFileTimesOut() throws {
        let dir = makeTemporaryDirectory("ptk-lockwait")
        defer { removeTree(dir) }
        let folder = try FileDescriptor.open(dir, flags: [.readOnly, .directory])
        defer { folder.close() }
        // flock is per open file: a second open of the same file in this process is another holder.
        let holder = try FileDescriptor.open(dir + "/.lock", flags: [.readWrite, .create], mode: 0o644)
        defer { holder.close() }
        #expect(try holder.tryLock())
        let told = Told()
        let patience = LockPatience(
            limit: .milliseconds(600), announceAfter: .milliseconds(200), waiting: { told.add($0) })
        let started = Instant.now
        var ran = false
        do {
            try folder.withLockFileRefusingLinks(
                ".lock", path: dir + "/.lock", guards: "the test's files", patience: patience
            ) { ran = true }
            Issue.record("the lock was taken while another holder kept it")
        } catch let error as LockTimeoutError {
            #expect(
                error.description.contains(dir + "/.lock") && error.description.contains("the test's files")
                    && error.description.contains("fuser"))
        }
        let took = Instant.now - started
        #expect(!ran)
        #expect(took >= .milliseconds(600) && took < .seconds(3), "waited \(took)")
        #expect(
            told.all.count == 1 && told.all.first?.contains("waiting for the lock \(dir)/.lock") == true, "\(told.all)")
        // Let go, it is taken at once and nobody is told.
        holder.close()
        let free = Told()
        try folder.withLockFileRefusingLinks(
            ".lock", path: dir + "/.lock", guards: "the test's files",
            patience: LockPatience(limit: .seconds(5), waiting: { free.add($0) })
        ) { ran = true }
        #expect(ran && free.all.isEmpty)
    }

    @Test("times read from files: the range a stored time may take, and whole seconds of any time without a trap")
    func storedTimes() {
        #expect(WallTime(storedSeconds: 0)?.milliseconds == 0)
        #expect(WallTime(storedSeconds: 253_402_300_799) != nil)
        for planted: Int64 in [-1, 253_402_300_800, .max, .min] {
            #expect(WallTime(storedSeconds: planted) == nil, "\(planted)")
        }
        #expect(WallTime(milliseconds: .min).seconds == Int64.min / 1000 - 1)
        #expect(WallTime(milliseconds: .max).seconds == Int64.max / 1000)
        #expect(
            WallTime(milliseconds: -1).seconds == -1 && WallTime(milliseconds: -1000).seconds == -1
                && WallTime(milliseconds: 999).seconds == 0)
        #expect(!WallTime(milliseconds: .min).iso8601.isEmpty && !WallTime(milliseconds: .max).local.isEmpty)
    }
}
