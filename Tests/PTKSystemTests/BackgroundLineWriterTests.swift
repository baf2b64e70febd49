import Glibc
import PTKSystem
import PTKTestTags
import Testing

/// A pipe whose buffer holds only one page, so a writer fills it quickly.
private func smallPipe() throws -> (read: FileDescriptor, write: FileDescriptor) {
    var fds: [CInt] = [0, 0]
    try #require(pipe(&fds) == 0)
    let setPipeSize: CInt = 1031  // F_SETPIPE_SZ, which Glibc's Swift overlay does not export
    _ = fcntl(fds[1], setPipeSize, 4096)
    let readEnd = FileDescriptor(rawValue: fds[0])
    readEnd.setNonBlockingAndCloseOnExec()  // readAll stops when the pipe is empty
    return (readEnd, FileDescriptor(rawValue: fds[1]))
}

private func readAll(_ fd: FileDescriptor) -> String {
    var out: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65536)
    while let n = buffer.withUnsafeMutableBytes({ try? fd.read(into: $0) }), n > 0 { out += buffer[..<n] }
    return String(decoding: out, as: UTF8.self)
}

/// Set by another thread, waited for with a deadline (a test must not hang when the code is wrong).
private final class Flag: @unchecked Sendable {
    private let state = ConditionLock()
    private var raised = false
    func raise() {
        state.withLock {
            raised = true
            state.broadcast()
        }
    }
    func wait(until deadline: Instant) -> Bool {
        state.withLock {
            while !raised { if !state.wait(until: deadline) { return raised } }
            return true
        }
    }
}

@Suite("Logging that never blocks", .tags(.unit))
struct BackgroundLineWriterTests {
    @Test(
        "a reader that stops reading costs lines, never the logging thread; the loss is reported once it reads again",
        .tags(.slow))
    func stalledReader() throws {
        let (r, w) = try smallPipe()
        defer {
            r.close()
            w.close()
        }
        let writer = BackgroundLineWriter(fd: w, capacity: 100)
        let line = String(repeating: "x", count: 100)
        let done = Flag()
        try startThread(name: "test") {
            // 40 times what the pipe and the queue hold together.
            for i in 0..<4000 { writer.write("\(i) \(line)") }
            done.raise()
        }
        #expect(done.wait(until: .now + .seconds(10)), "logging blocked on a reader that does not read")
        #expect(!writer.flush(until: .now + .seconds(0.2)), "everything was written into a full pipe?")
        // The reader comes back.
        var text = ""
        let deadline = Instant.now + .seconds(10)
        while !text.contains("dropped") && Instant.now < deadline {
            text += readAll(r)
            sleep(for: .milliseconds(20))
        }
        // Read until the writer has nothing left.
        while !writer.flush(until: .now + .seconds(0.05)) && Instant.now < deadline { text += readAll(r) }
        #expect(writer.flush(until: .now + .seconds(0.05)))
        text += readAll(r)
        let lines = text.split(separator: "\n")
        #expect(lines.first == "0 \(line)")
        let reports = lines.filter { $0.hasPrefix("warning: ") }
        #expect(!reports.isEmpty)
        #expect(reports.allSatisfy { $0.hasSuffix("log line(s) dropped: standard error was not being read") })
        let dropped = reports.map { Int($0.split(separator: " ")[1]) ?? -100_000 }.reduce(0, +)
        // Every line is either written, whole and in order, or counted as dropped.
        let written = lines.filter { !$0.hasPrefix("warning: ") }
        #expect(written.count + dropped == 4000)
        let numbers = written.map { Int($0.split(separator: " ")[0]) ?? -1 }
        #expect(numbers == numbers.sorted() && written.allSatisfy { $0.hasSuffix(line) })
    }

    @Test(
        "stop writes what is queued and ends the writing thread; later lines are written at once, by the caller",
        .tags(.slow))
    func stop() throws {
        let (r, w) = try smallPipe()
        defer {
            r.close()
            w.close()
        }
        let group = ThreadGroup()
        let writer = BackgroundLineWriter(fd: w, capacity: 100, group: group)
        writer.write("before")
        #expect(group.count == 1)
        #expect(writer.stop(until: .now + .seconds(10)))
        #expect(readAll(r) == "before\n")
        #expect(group.join(until: .now + .seconds(10)), "the writing thread did not end")
        // Written before write returns: no thread is needed (or started) for it.
        writer.write("after")
        #expect(readAll(r) == "after\n")
        #expect(writer.flush(until: .now))
        #expect(group.count == 0)
    }

    @Test("lines from many threads come out whole and all of them, when the reader keeps up")
    func manyThreads() throws {
        let (r, w) = try smallPipe()
        defer {
            r.close()
            w.close()
        }
        let writer = BackgroundLineWriter(fd: w, capacity: 10_000)
        let finished = Semaphore()
        for t in 0..<4 {
            try startThread(name: "test") {
                for i in 0..<500 { writer.write("thread \(t) line \(i)") }
                finished.signal()
            }
        }
        var text = ""
        let collector = Flag()
        nonisolated(unsafe) var collected = ""
        try startThread(name: "test") {
            var t = ""
            while t.split(separator: "\n").count < 2000 {
                t += readAll(r)
                sleep(for: .milliseconds(5))
            }
            collected = t
            collector.raise()
        }
        for _ in 0..<4 { finished.wait() }
        #expect(writer.flush(until: .now + .seconds(10)))
        #expect(collector.wait(until: .now + .seconds(10)))
        text = collected
        let lines = Set(text.split(separator: "\n").map(String.init))
        #expect(lines.count == 2000)
        #expect(lines.contains("thread 3 line 499"))
        #expect(!text.contains("dropped"))
    }
}
