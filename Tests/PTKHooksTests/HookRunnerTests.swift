import Foundation
import PTKSystem
import PTKTestSupport
import PTKTestTags
import Testing

@testable import PTKHooks

private func job(_ n: Int64) -> (Int64) -> HookJob {
    { sequence in
        HookJob(
            sequence: sequence, name: "p\(n).png", path: "/photos/p\(n).png", size: n,
            sha256: String(repeating: "a", count: 64),
            mediaType: "image/png", senderName: "s", senderID: nil, senderAddress: "192.0.2.1:1",
            received: "2026-12-01T00:00:00.000Z",
            taken: nil, duplicate: false)
    }
}

@Suite("The on-saved queue", .tags(.unit))
struct HookRunnerTests {
    @Test(
        "the queue file stays bounded when the hook never catches up, and is emptied once nothing is owed; the sequence goes on after a restart"
    )
    func queueFileBounded() throws {
        let state = makeTemporaryDirectory("ptk-hooks")
        defer { removeTree(state) }
        let runs = state + "/runs"
        let script = state + "/hook"
        writeFile(script, Array("#!/bin/sh\nsleep 0.02\necho \"$PTK_NAME\" >> \(runs)\n".utf8))
        chmod(script, 0o755)
        let runner = try HookRunner(command: [script], timeout: .seconds(10), stateDirectory: state, capacity: 4)
        try runner.start()
        var most = 0
        for n in 1...16 {
            #expect(eventually(10) { runner.owed < 4 })
            runner.enqueue(job(Int64(n)))
            most = max(most, (readFile(runner.queueFile) ?? []).filter { $0 == UInt8(ascii: "\n") }.count)
        }
        #expect(eventually(10) { runner.owed == 0 })
        #expect(most <= 8, "the queue file grew to \(most) lines")
        #expect(eventually(5) { (readFile(runner.queueFile) ?? [1]).isEmpty })
        #expect(String(decoding: readFile(runs) ?? [], as: UTF8.self) == (1...16).map { "p\($0).png\n" }.joined())
        #expect(String(decoding: readFile(runner.doneFile) ?? [], as: UTF8.self) == "16\n")
        _ = runner.stop(until: .now + .seconds(2))
        // A restart owes nothing, and numbers on from 17.
        let again = try HookRunner(command: [script], timeout: .seconds(10), stateDirectory: state, capacity: 4)
        #expect(again.owed == 0)
        again.enqueue(job(17))
        #expect(String(decoding: readFile(again.queueFile) ?? [], as: UTF8.self).contains("\"sequence\":17"))
    }

    @Test("a hook that closes its output and runs on is still stopped at its timeout")
    func closedOutputTimesOut() throws {
        let state = makeTemporaryDirectory("ptk-hooks")
        defer { removeTree(state) }
        let script = state + "/hook"
        writeFile(script, Array("#!/bin/sh\nexec >/dev/null 2>&1\nsleep 30\n".utf8))
        chmod(script, 0o755)
        let runner = try HookRunner(
            command: [script], timeout: .milliseconds(500), stateDirectory: state, killAfter: .seconds(1))
        try runner.start()
        runner.enqueue(job(1))
        #expect(eventually(15) { runner.owed == 0 }, "still running long after its timeout")
        _ = runner.stop(until: .now + .seconds(2))
    }

    @Test("a queue line cut short by a crash is passed over; the others are owed")
    func tornLine() throws {
        let state = makeTemporaryDirectory("ptk-hooks")
        defer { removeTree(state) }
        try makeDirectories(state + "/hooks")
        writeFile(
            state + "/hooks/queue",
            HookRunner.line(job(1)(1)) + HookRunner.line(job(2)(2)) + Array(#"{"duplicate":fal"#.utf8))
        writeFile(state + "/hooks/done", Array("1\n".utf8))
        let runner = try HookRunner(command: ["/bin/true"], timeout: .seconds(10), stateDirectory: state)
        #expect(runner.owed == 1)
    }
}

private func duplicate(_ n: Int64, sender: String = "s", alias: String = "s") -> (Int64) -> HookJob {
    { sequence in
        HookJob(
            sequence: sequence, name: "p\(n).png", path: "/photos/p\(n).png", size: n,
            sha256: String(repeating: "b", count: 64),
            mediaType: "image/png", senderName: HookJob.bounded(alias), senderID: sender, senderAddress: "192.0.2.1:1",
            received: "2026-12-01T00:00:00.000Z", taken: nil, duplicate: true)
    }
}

@Suite("The on-saved queue against floods and damage", .tags(.unit))
struct HookRunnerFloodTests {
    @Test(
        "a photo named again and again by one sender queues one run; another sender's duplicate and a real arrival still queue theirs"
    )
    func duplicatesOncePerSender() throws {
        let state = makeTemporaryDirectory("ptk-hooks")
        defer { removeTree(state) }
        // Not started: the runs stay owed, so what was queued can be counted.
        let runner = try HookRunner(command: ["/bin/true"], timeout: .seconds(10), stateDirectory: state, capacity: 100)
        var queued = 0
        for _ in 0..<10_000 where runner.enqueue(duplicateKey: "bbbb device-1", duplicate(1, sender: "device-1")) {
            queued += 1
        }
        #expect(queued == 1)
        #expect(runner.enqueue(duplicateKey: "bbbb device-2", duplicate(1, sender: "device-2")))
        #expect(runner.enqueue(job(2)))
        #expect(runner.owed == 3)
        let lines = (readFile(runner.queueFile) ?? []).filter { $0 == UInt8(ascii: "\n") }.count
        #expect(lines == 3)
    }

    @Test("duplicates beyond the limit queue nothing, and a photo that really arrived still gets its run")
    func duplicatesNeverCostARealRun() throws {
        let state = makeTemporaryDirectory("ptk-hooks")
        defer { removeTree(state) }
        let runner = try HookRunner(command: ["/bin/true"], timeout: .seconds(10), stateDirectory: state, capacity: 50)
        for n in 0..<500 { runner.enqueue(duplicateKey: "photo-\(n) sender", duplicate(Int64(n))) }
        #expect(runner.owed == 50)
        for n in 0..<200 { #expect(runner.enqueue(job(Int64(1000 + n)))) }
        #expect(runner.owed == 250)
    }

    @Test("a sender's name is cut to a few hundred bytes with a marker, so the hook still starts with a 200 KiB alias")
    func longAliasIsBounded() throws {
        let state = makeTemporaryDirectory("ptk-hooks")
        defer { removeTree(state) }
        let seen = state + "/seen"
        let script = state + "/hook"
        writeFile(script, Array("#!/bin/sh\nprintf '%s' \"$PTK_SENDER_NAME\" > \(seen)\n".utf8))
        chmod(script, 0o755)
        let alias = String(repeating: "é", count: 100_000)  // 200,000 bytes
        let bounded = HookJob.bounded(alias)
        #expect(bounded.utf8.count <= HookJob.textLimit)
        #expect(bounded.hasSuffix(HookJob.cutMarker))
        #expect(HookJob.bounded("short") == "short")
        let runner = try HookRunner(command: [script], timeout: .seconds(10), stateDirectory: state)
        try runner.start()
        runner.enqueue(duplicate(1, alias: alias))
        #expect(eventually(10) { runner.owed == 0 })
        #expect(String(decoding: readFile(seen) ?? [], as: UTF8.self) == bounded)
        #expect((readFile(runner.queueFile) ?? []).count < 4096)
        _ = runner.stop(until: .now + .seconds(2))
    }

    @Test(
        "a queue file that cannot be read to its end does not stop ptkd: what can be read is owed, the file is set aside and said so"
    )
    func damagedQueueStarts() throws {
        let state = makeTemporaryDirectory("ptk-hooks")
        defer { removeTree(state) }
        try makeDirectories(state + "/hooks")
        // Jobs, a line of 1 MB that ptkd never wrote, a job, and garbage.
        let junk = Array(repeating: UInt8(ascii: "x"), count: 1 << 20) + [UInt8(ascii: "\n")]
        writeFile(
            state + "/hooks/queue",
            HookRunner.line(job(1)(1)) + junk + HookRunner.line(job(2)(2)) + Array("not json\n".utf8))
        let runner = try HookRunner(command: ["/bin/true"], timeout: .seconds(10), stateDirectory: state)
        #expect(runner.owed == 2)
        // Rewritten to what is owed.
        let lines = String(decoding: readFile(runner.queueFile) ?? [], as: UTF8.self).split(separator: "\n")
        #expect(lines.count == 2)
        #expect(runner.enqueue(job(3)))
    }

    @Test("a queue that is a directory (cannot be opened as a file) is set aside, and ptkd starts with a new one")
    func unopenableQueueSetAside() throws {
        let state = makeTemporaryDirectory("ptk-hooks")
        defer { removeTree(state) }
        try makeDirectories(state + "/hooks/queue")
        let runner = try HookRunner(command: ["/bin/true"], timeout: .seconds(10), stateDirectory: state)
        #expect(runner.owed == 0)
        #expect(runner.enqueue(job(1)))
        #expect(String(decoding: readFile(runner.queueFile) ?? [], as: UTF8.self).contains("\"sequence\":1"))
        let names = (try? FileManager.default.contentsOfDirectory(atPath: state + "/hooks")) ?? []
        #expect(names.contains { $0.hasPrefix("queue.unreadable-") })
    }

    @Test("a queue of 300 MB (the audit's flood grew one to 361 MB) is read piece by piece: ptkd starts", .tags(.slow))
    func hugeQueueStarts() throws {
        let state = makeTemporaryDirectory("ptk-hooks")
        defer { removeTree(state) }
        try makeDirectories(state + "/hooks")
        // 300 MB of duplicate jobs with a 100 kB alias each, as an older ptkd could write them.
        let line = HookRunner.line(
            HookJob(
                sequence: 1, name: "p.png", path: "/photos/p.png", size: 1, sha256: String(repeating: "b", count: 64),
                mediaType: "image/png", senderName: String(repeating: "a", count: 100_000), senderID: nil,
                senderAddress: "192.0.2.1:1", received: "2026-12-01T00:00:00.000Z", taken: nil, duplicate: true))
        let fd = try FileDescriptor.open(state + "/hooks/queue", flags: [.writeOnly, .create], mode: 0o600)
        let block = Array(repeating: line, count: 100).flatMap { $0 }
        for _ in 0..<30 { try fd.writeAll(block) }
        fd.close()
        let runner = try HookRunner(command: ["/bin/true"], timeout: .seconds(10), stateDirectory: state, capacity: 100)
        // Lines over 64 KiB are not ptkd's: passed over; the file is rewritten small.
        #expect(runner.owed == 0)
        #expect((readFile(runner.queueFile) ?? [0]).isEmpty)
    }
}
