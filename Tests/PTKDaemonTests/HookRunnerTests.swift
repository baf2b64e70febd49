import Foundation
import PTKSystem
import PTKTestSupport
import Testing

@testable import PTKDaemon

private func job(_ n: Int64) -> (Int64) -> HookJob {
    { sequence in
        HookJob(sequence: sequence, name: "p\(n).png", path: "/photos/p\(n).png", size: n, sha256: String(repeating: "a", count: 64),
                mediaType: "image/png", senderName: "s", senderID: nil, senderAddress: "192.0.2.1:1", received: "2026-12-01T00:00:00.000Z",
                taken: nil, duplicate: false)
    }
}

@Suite("The on-saved queue")
struct HookRunnerTests {
    @Test("the queue file stays bounded when the hook never catches up, and is emptied once nothing is owed; the sequence goes on after a restart")
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
        let runner = try HookRunner(command: [script], timeout: .milliseconds(500), stateDirectory: state, killAfter: .seconds(1))
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
        writeFile(state + "/hooks/queue", HookRunner.line(job(1)(1)) + HookRunner.line(job(2)(2)) + Array(#"{"duplicate":fal"#.utf8))
        writeFile(state + "/hooks/done", Array("1\n".utf8))
        let runner = try HookRunner(command: ["/bin/true"], timeout: .seconds(10), stateDirectory: state)
        #expect(runner.owed == 1)
    }
}
