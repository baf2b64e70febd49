import PTKDigest
import PTKProtocol
import PTKSystem
import PTKTestSupport
import PTKTestTags
import PTKTransport
import PTKVocabulary
import Testing

@testable import PTKClient

/// A receiver played by a script over a `ScriptedStream`: the protocol's answers, with one fault.
final class FakeReceiver: @unchecked Sendable {
    // Each instance serves one stream on the sender's thread.
    enum Fault {
        case none
        /// ERROR busy instead of WELCOME.
        case busy
        /// ERROR busy instead of WELCOME, with this many senders waiting ahead.
        case busyAhead(Int)
        /// Nothing after HELLO.
        case silentAfterHello
        /// ERROR with this code after this many chunks.
        case errorAfterChunks(Int, ErrorCode)
        /// The connection is reset after this many chunks.
        case resetAfterChunks(Int)
        /// Nothing more after this many chunks.
        case silentAfterChunks(Int)
        /// REJECT offers of this name.
        case reject(String)
        /// WELCOME then closes cleanly, mid-session.
        case closeAfterWelcome
    }

    let fault: Fault
    let sessions: Int?
    /// WELCOME.types (nil: a receiver that predates section 7).
    var types: [String]?
    /// The HELLO it got, and every OFFER.
    var hello: Hello?
    var offers: [Offer] = []
    /// Hold ACKs back until the window is full or DONE comes, then send them together.
    let batchAcks: Bool
    var window = 0
    var chunks = 0
    var pendingAcks = 0
    var offer: Offer?
    var received: [UInt8] = []
    /// The files saved: name and bytes.
    var saved: [(String, [UInt8])] = []
    let stream: ScriptedStream

    init(fault: Fault = .none, sessions: Int? = 8, batchAcks: Bool = false, readSize: Int = 1 << 20) {
        self.fault = fault
        self.sessions = sessions
        self.batchAcks = batchAcks
        var respond: ((Frame, ScriptedStream) -> Void)!
        stream = ScriptedStream(readSize: readSize) { respond($0, $1) }
        respond = { [unowned self] frame, s in answer(frame, s) }
    }

    private func flushAcks(_ s: ScriptedStream) {
        for _ in 0..<pendingAcks { s.feed(.ack) }
        pendingAcks = 0
    }

    /// Called with the count of chunks received, after each one.
    var onChunk: ((Int) -> Void)?

    /// Set once the receiver has closed or reset: it answers nothing more.
    var gone = false

    private func answer(_ frame: Frame, _ s: ScriptedStream) {
        if gone { return }
        switch frame {
        case .hello(let h):
            switch fault {
            case .busy:
                s.feed(.error(Problem(.busy, "at the limit")))
                s.whenEmpty = .close
                return
            case .busyAhead(let n):
                s.feed(.error(Problem(.busy, "at the limit", waiting: n)))
                s.whenEmpty = .close
                return
            case .silentAfterHello:
                return
            default:
                break
            }
            window = min(h.window ?? 16, 8)
            s.feed(
                .welcome(
                    Welcome(
                        name: "fake", window: window, chunkSize: ProtocolLimits.chunkSize, maxFileSize: 1 << 30,
                        sessions: sessions, types: types)))
            hello = h
            if case .closeAfterWelcome = fault {
                s.whenEmpty = .close
                gone = true
            }
        case .offer(let o):
            if case .reject(let name) = fault, o.name == name {
                s.feed(.reject(Problem(.tooLarge, "not this one")))
                return
            }
            offer = o
            offers.append(o)
            received = []
            s.feed(.accept(Accept(offset: 0)))
        case .chunk(let bytes):
            chunks += 1
            received += bytes
            onChunk?(chunks)
            switch fault {
            case .errorAfterChunks(let n, let code) where chunks == n:
                s.feed(.error(Problem(code, "scripted")))
                s.whenEmpty = .close
                return
            case .resetAfterChunks(let n) where chunks >= n:
                s.whenEmpty = .reset
                gone = true
                return
            case .silentAfterChunks(let n) where chunks >= n:
                return
            default:
                break
            }
            pendingAcks += 1
            // The sender waits for every ACK of a file before DONE, and for one when its window is full.
            if !batchAcks || pendingAcks == window || Int64(received.count) == offer?.size { flushAcks(s) }
        case .done:
            flushAcks(s)
            guard let o = offer else { return }
            if SHA256.hex(of: received) == o.sha256 && Int64(received.count) == o.size {
                saved.append((o.name, received))
                s.feed(.saved(Saved(name: o.name, size: o.size, sha256: o.sha256)))
            } else {
                s.feed(.failed(Problem(.hashMismatch, "scripted check")))
            }
        case .bye:
            s.whenEmpty = .close
        default:
            break
        }
    }
}

/// Photos written to a temporary directory for a test.
final class PhotoFiles {
    let dir = makeTemporaryDirectory("ptk-client")
    var files: [LocalFile] = []
    var bytes: [[UInt8]] = []

    init(_ specs: [(String, Int)]) throws {
        for (i, (name, size)) in specs.enumerated() {
            let b = makePNG(size: size, seed: UInt64(i + 1))
            writeFile(dir + "/" + name, b)
            bytes.append(b)
            files.append(try LocalFile.check(dir + "/" + name))
        }
    }

    deinit { removeTree(dir) }
}

private func options(mapFiles: Bool = true) -> SendOptions {
    SendOptions(name: "tester", window: 8, timeout: .seconds(1), mapFiles: mapFiles)
}

/// Runs one Sender over `receiver`'s stream; returns the failure, if any, and the sender.
private func runSender(_ photos: PhotoFiles, _ receiver: FakeReceiver, mapFiles: Bool = true) -> (SendFailure?, Sender)
{
    let sender = Sender(files: photos.files, options: options(mapFiles: mapFiles))
    let stream = receiver.stream
    do throws(SendFailure) {
        try sender.run { () throws(SendFailure) in (stream, "fake") }
        return (nil, sender)
    } catch {
        return (error, sender)
    }
}

@Suite("Sender over a scripted receiver", .tags(.unit))
struct ScriptedSenderTests {
    @Test(
        "every file arrives byte-identical, with ACKs one by one, in batches, or one byte per read, mapped or read",
        arguments: [
            (false, 1 << 20, true), (true, 1 << 20, true), (false, 1, true), (true, 1, true), (true, 1 << 20, false),
            (false, 1, false),
        ])
    func happyPath(batchAcks: Bool, readSize: Int, mapFiles: Bool) throws {
        let photos = try PhotoFiles([("a.png", 250_000), ("b.png", 3_000), ("c.png", 1_000_000)])
        let receiver = FakeReceiver(batchAcks: batchAcks, readSize: readSize)
        let (failure, sender) = runSender(photos, receiver, mapFiles: mapFiles)
        #expect(failure == nil)
        #expect(receiver.saved.map(\.0) == ["a.png", "b.png", "c.png"])
        #expect(receiver.saved.map(\.1) == photos.bytes, "the bytes differ")
        #expect(sender.outcomes.count == 3)
        #expect(receiver.stream.written.last == .bye)
        #expect(receiver.stream.isClosed)
        // The sender never reads more than it was given: one byte at a time means many reads.
        if readSize == 1 { #expect(receiver.stream.reads > 100) }
    }

    @Test(
        "a photo truncated by another program while it is sent fails as a local file (from its map: not with SIGBUS)",
        arguments: [true, false])
    func truncatedWhileSending(mapFiles: Bool) throws {
        let photos = try PhotoFiles([("a.png", 1_000_000)])
        let receiver = FakeReceiver()
        let path = photos.dir + "/a.png"
        receiver.onChunk = { n in
            if n == 2 { writeFile(path, Array(photos.bytes[0][..<150_000])) }
        }
        let (failure, _) = runSender(photos, receiver, mapFiles: mapFiles)
        guard case .localFile(let message)? = failure else {
            Issue.record("expected a local-file failure, got \(String(describing: failure))")
            return
        }
        #expect(message.contains("a.png: the file changed or could not be read while sending"))
        #expect(receiver.saved.isEmpty)
    }

    @Test("a refused file is reported and the session goes on with the next")
    func rejectedFile() throws {
        let photos = try PhotoFiles([("a.png", 2_000), ("no.png", 2_000), ("c.png", 2_000)])
        let receiver = FakeReceiver(fault: .reject("no.png"))
        let (failure, sender) = runSender(photos, receiver)
        #expect(failure == nil)
        #expect(receiver.saved.map(\.0) == ["a.png", "c.png"])
        guard case .rejected(let p)? = sender.outcomes[1] else {
            Issue.record("no REJECT outcome")
            return
        }
        #expect(p.code == "too-large")
    }

    @Test("ERROR busy instead of WELCOME ends the session with that error, nothing sent")
    func busy() throws {
        let photos = try PhotoFiles([("a.png", 2_000)])
        let receiver = FakeReceiver(fault: .busy)
        let (failure, sender) = runSender(photos, receiver)
        guard case .remoteError(let p)? = failure else {
            Issue.record("expected ERROR busy, got \(String(describing: failure))")
            return
        }
        #expect(p.code == "busy")
        #expect(sender.outcomes.isEmpty)
        #expect(receiver.stream.written.count == 1)  // HELLO only
    }

    @Test("a receiver that goes silent is a lost connection, named as such, after HELLO or mid-file")
    func silence() throws {
        for fault in [FakeReceiver.Fault.silentAfterHello, .silentAfterChunks(3)] {
            let photos = try PhotoFiles([("a.png", 2_000_000)])
            let receiver = FakeReceiver(fault: fault)
            let (failure, sender) = runSender(photos, receiver)
            guard case .connectionLost(let m)? = failure else {
                Issue.record("\(fault): got \(String(describing: failure))")
                continue
            }
            #expect(m == "the receiver sent nothing for 1 s")
            #expect(sender.outcomes.isEmpty)
            #expect(receiver.stream.isClosed)
        }
    }

    @Test("ERROR mid-file ends the session with that error; the file has no outcome")
    func errorMidFile() throws {
        let photos = try PhotoFiles([("a.png", 2_000_000), ("b.png", 2_000)])
        let receiver = FakeReceiver(fault: .errorAfterChunks(5, .shuttingDown))
        let (failure, sender) = runSender(photos, receiver)
        guard case .remoteError(let p)? = failure else {
            Issue.record("got \(String(describing: failure))")
            return
        }
        #expect(p.code == "shutting-down")
        #expect(sender.outcomes.isEmpty)
        #expect(receiver.saved.isEmpty)
    }

    @Test("a reset mid-file, or a clean close after WELCOME, is a lost connection")
    func reset() throws {
        for fault in [FakeReceiver.Fault.resetAfterChunks(2), .closeAfterWelcome] {
            let photos = try PhotoFiles([("a.png", 1_000_000)])
            let (failure, _) = runSender(photos, FakeReceiver(fault: fault))
            guard case .connectionLost(let m)? = failure else {
                Issue.record("\(fault): got \(String(describing: failure))")
                continue
            }
            #expect(m == "the receiver closed the connection")
        }
    }
}

/// Hands out a new FakeReceiver stream per connection, made by `make` from the connection's number.
final class FakeNetwork: @unchecked Sendable {
    private let lock = Lock()
    private var receivers: [FakeReceiver] = []
    private let make: (Int) -> FakeReceiver

    init(_ make: @escaping (Int) -> FakeReceiver) { self.make = make }

    var connector: Connector {
        { () throws(SendFailure) in
            let r = self.lock.withLock { () -> FakeReceiver in
                let r = self.make(self.receivers.count)
                self.receivers.append(r)
                return r
            }
            return (r.stream, "fake")
        }
    }

    var connections: [FakeReceiver] { lock.withLock { receivers } }
    /// Every file saved over every connection, by name.
    var saved: [String: [UInt8]] {
        Dictionary(connections.flatMap(\.saved), uniquingKeysWith: { a, _ in a })
    }
}

/// Events as Delivery passes them on.
final class EventLog: @unchecked Sendable {
    private let lock = Lock()
    private var events: [SendProgress] = []
    func add(_ e: SendProgress) { lock.withLock { events.append(e) } }
    var finished: [Int] {
        lock.withLock { events.compactMap { if case .finished(let i, _) = $0 { i } else { nil } } }
    }
    /// What each `.waiting` said: senders ahead, and the pause.
    var waits: [(Int?, Duration)] {
        lock.withLock { events.compactMap { if case .waiting(let a, let s) = $0 { (a, s) } else { nil } } }
    }
}

/// Waits of 5 to 10 ms between tries, for `limit` seconds.
private func quickWaits(_ limit: Double = 5) -> WaitPolicy {
    WaitPolicy(limit: .seconds(limit), first: .milliseconds(10), longest: .milliseconds(20))
}

@Suite("Delivery: sessions, waiting for a turn and exit statuses, without a network", .tags(.unit))
struct DeliveryTests {
    private func deliver(
        _ photos: PhotoFiles, parallel: Int, _ network: FakeNetwork, log: EventLog = EventLog(),
        waiting: WaitPolicy = quickWaits()
    ) -> DeliveryResult {
        Delivery(
            files: photos.files, options: options(), parallel: parallel, connect: network.connector,
            waiting: waiting
        ) { log.add($0) }.run()
    }

    @Test("WELCOME.sessions 2 with --parallel 4: two sessions, every file saved once, exit 0")
    func twoSessions() throws {
        let photos = try PhotoFiles((0..<6).map { ("p\($0).png", 3_000 + $0) })
        let network = FakeNetwork { _ in FakeReceiver(sessions: 2) }
        let log = EventLog()
        let result = deliver(photos, parallel: 4, network, log: log)
        #expect(network.connections.count == 2)
        #expect(network.saved.count == 6)
        for (i, f) in photos.files.enumerated() { #expect(network.saved[f.name] == photos.bytes[i]) }
        #expect(log.finished.sorted() == Array(0..<6))
        #expect(result.exitStatus(peer: "x") == (.ok, nil))
        #expect(result.unsent.isEmpty)
    }

    @Test("a receiver that does not say sessions gets one session with every file in order")
    func noSessionsField() throws {
        let photos = try PhotoFiles((0..<4).map { ("p\($0).png", 2_000) })
        let network = FakeNetwork { _ in FakeReceiver(sessions: nil) }
        let result = deliver(photos, parallel: 4, network)
        #expect(network.connections.count == 1)
        #expect(network.connections[0].saved.map(\.0) == ["p0.png", "p1.png", "p2.png", "p3.png"])
        #expect(result.exitStatus(peer: "x").code == .ok)
    }

    @Test("WELCOME.sessions 4: the further sessions open one after another, and the files are shared among all four")
    func fourSessions() throws {
        let photos = try PhotoFiles((0..<12).map { ("p\($0).png", 150_000) })
        // No chunk is answered until the fourth session has connected (or 10 s pass): a loaded
        // machine could otherwise finish every file over three sessions before the fourth opens.
        let connected = CallCounter()
        let network = FakeNetwork { _ in
            let r = FakeReceiver(sessions: 4)
            _ = connected.next()
            r.onChunk = { _ in
                let deadline = Instant.now + .seconds(10)
                while connected.count < 4 && Instant.now < deadline { sleep(for: .milliseconds(5)) }
            }
            return r
        }
        let result = deliver(photos, parallel: 4, network)
        #expect(network.connections.count == 4)
        #expect(network.saved.count == 12)
        #expect(network.connections.reduce(0) { $0 + $1.saved.count } == 12, "a file was sent twice")
        #expect(result.exitStatus(peer: "x") == (.ok, nil))
    }

    @Test("a further session answered busy: no more are opened, and the sessions held send its share; exit 0")
    func busyFurtherSession() throws {
        let photos = try PhotoFiles((0..<8).map { ("p\($0).png", 2_000) })
        // Connection 0 is welcomed with 4 sessions; the next is busy: nothing more is opened.
        let network = FakeNetwork { n in n == 1 ? FakeReceiver(fault: .busyAhead(2)) : FakeReceiver(sessions: 4) }
        let log = EventLog()
        let result = deliver(photos, parallel: 4, network, log: log)
        #expect(network.connections.count == 2)
        #expect(network.connections[0].saved.map(\.0) == photos.files.map(\.name))
        #expect(result.failures.isEmpty)
        #expect(log.waits.isEmpty, "a sender that holds a session does not wait")
        #expect(result.exitStatus(peer: "x").code == .ok)
    }

    @Test("a further session left unanswered or unreachable is no failure either", arguments: [0, 1])
    func silentFurtherSession(kind: Int) throws {
        let photos = try PhotoFiles((0..<4).map { ("p\($0).png", 2_000) })
        let base = FakeNetwork { n in
            n == 1 && kind == 0 ? FakeReceiver(fault: .silentAfterHello) : FakeReceiver(sessions: 2)
        }
        let connect = base.connector
        let counter = CallCounter()
        let network: Connector = { () throws(SendFailure) in
            if counter.next() == 1 && kind == 1 { throw .unreachable("connection refused") }
            return try connect()
        }
        let result = Delivery(
            files: photos.files, options: options(), parallel: 2, connect: network, waiting: quickWaits()
        ).run()
        #expect(base.saved.count == 4)
        #expect(result.failures.isEmpty)
        #expect(result.exitStatus(peer: "x").code == .ok)
    }

    @Test(
        "the first session answered busy waits its turn: asked again after pauses, told its place; then every file is sent"
    )
    func waitsItsTurn() throws {
        let photos = try PhotoFiles((0..<3).map { ("p\($0).png", 2_000) })
        let network = FakeNetwork { n in
            switch n {
            case 0: return FakeReceiver(fault: .busyAhead(3))
            case 1: return FakeReceiver(fault: .busyAhead(0))
            case 2: return FakeReceiver(fault: .busy)  // a receiver that does not say the place
            default: return FakeReceiver(sessions: 1)
            }
        }
        let log = EventLog()
        let result = deliver(photos, parallel: 4, network, log: log)
        #expect(network.connections.count == 4)
        #expect(network.connections[3].saved.map(\.0) == ["p0.png", "p1.png", "p2.png"])
        #expect(log.waits.map(\.0) == [3, 0, nil])
        #expect(log.waits.allSatisfy { $0.1 >= .milliseconds(5) && $0.1 <= .milliseconds(20) })
        #expect(result.failures.isEmpty)
        #expect(result.exitStatus(peer: "x") == (.ok, nil))
    }

    @Test("a receiver that stays busy for the whole --wait: exit 69 naming its ERROR and the wait")
    func alwaysBusy() throws {
        let photos = try PhotoFiles([("a.png", 2_000)])
        let network = FakeNetwork { _ in FakeReceiver(fault: .busyAhead(5)) }
        let started = Instant.now
        let result = deliver(photos, parallel: 4, network, waiting: quickWaits(0.3))
        #expect(Instant.now - started >= .seconds(0.3))
        #expect(network.connections.count > 5)
        let (code, message) = result.exitStatus(peer: "host")
        #expect(code == .unreachable)
        #expect(
            message == "host: the receiver answered ERROR busy: at the limit; still busy after waiting 0.3 s (--wait)")
        #expect(result.unsent.isEmpty)  // nothing got anywhere: the error line says it all
    }

    @Test("--wait 0: a busy receiver is asked once, exit 69 at once")
    func noWaiting() throws {
        let photos = try PhotoFiles([("a.png", 2_000), ("b.png", 2_000)])
        let network = FakeNetwork { _ in FakeReceiver(fault: .busy) }
        let log = EventLog()
        let result = deliver(photos, parallel: 4, network, log: log, waiting: WaitPolicy(limit: .zero))
        #expect(network.connections.count == 1)
        #expect(log.waits.isEmpty)
        #expect(
            result.exitStatus(peer: "host") == (
                .unreachable, "host: the receiver answered ERROR busy: at the limit (--wait 0: not waiting for a turn)"
            ))
    }

    @Test("other refusals of the first session are not waited out: shutting down, unreachable")
    func otherRefusals() throws {
        let photos = try PhotoFiles([("a.png", 2_000)])
        let down = FakeNetwork { _ in
            let r = FakeReceiver()
            r.stream.feed(.error(Problem(.shuttingDown, "bye")))
            r.stream.whenEmpty = .close
            return r
        }
        let result = deliver(photos, parallel: 1, down)
        #expect(down.connections.count == 1)
        #expect(result.exitStatus(peer: "h") == (.unreachable, "h: the receiver answered ERROR shutting-down: bye"))
    }

    @Test("ERROR mid-file in one of two sessions: the others' files are saved, the rest listed as not sent, exit 69")
    func errorInOneSession() throws {
        let photos = try PhotoFiles([("big.png", 1_500_000), ("s1.png", 2_000), ("s2.png", 2_000)])
        let network = FakeNetwork { n in
            n == 0 ? FakeReceiver(fault: .errorAfterChunks(3, .shuttingDown), sessions: 2) : FakeReceiver(sessions: 2)
        }
        let result = deliver(photos, parallel: 2, network)
        let (code, message) = result.exitStatus(peer: "host")
        #expect(code == .unreachable)
        #expect(message == "host: the receiver answered ERROR shutting-down: scripted")
        #expect(!result.unsent.isEmpty)
        #expect(result.unsent.allSatisfy { result.outcomes[$0] == nil })
        #expect(result.outcomes.count + result.unsent.count == 3)
    }

    @Test(
        "a connection lost mid-file lists every unfinished photo as not sent, even when none was saved; a busy receiver lists none"
    )
    func lostBeforeAnySaved() throws {
        let photos = try PhotoFiles([("a.png", 500_000), ("b.png", 2_000)])
        let lost = deliver(photos, parallel: 1, FakeNetwork { _ in FakeReceiver(fault: .resetAfterChunks(2)) })
        #expect(lost.outcomes.isEmpty)
        #expect(lost.exitStatus(peer: "h").code == .unreachable)
        #expect(lost.unsent == [0, 1])
        let busy = deliver(photos, parallel: 1, FakeNetwork { _ in FakeReceiver(fault: .busy) }, waiting: quickWaits(0))
        #expect(busy.unsent.isEmpty)
    }

    @Test("a protocol error is exit 76; a refused file alone is exit 1")
    func statuses() throws {
        let photos = try PhotoFiles([("a.png", 2_000), ("no.png", 2_000)])
        let refused = deliver(photos, parallel: 1, FakeNetwork { _ in FakeReceiver(fault: .reject("no.png")) })
        #expect(refused.exitStatus(peer: "x") == (.notAllSaved, nil))

        let garbage = FakeNetwork { _ in
            let r = FakeReceiver()
            r.stream.feed(raw: Array("HTTP/1.1 400 Bad Request\r\n\r\n".utf8))
            return r
        }
        let result = deliver(photos, parallel: 1, garbage)
        #expect(result.exitStatus(peer: "x").code == .protocolError)
    }

    @Test("the first file is hashed while connecting: its OFFER carries the hash of the file as it was then")
    func firstFileHashedWhileConnecting() throws {
        let photos = try PhotoFiles([("first.png", 50_000), ("second.png", 40_000)])
        let changed = makePNG(size: 50_000, seed: 99)
        #expect(changed != photos.bytes[0])
        let network = FakeNetwork { _ in FakeReceiver(sessions: nil) }
        let connect = network.connector
        let path = photos.dir + "/first.png"
        // The connection takes long enough for the head start to finish; meanwhile another program
        // rewrites the first photo with other bytes of the same size.
        let slow: Connector = { () throws(SendFailure) in
            sleep(for: .milliseconds(500))
            writeFile(path, changed)
            return try connect()
        }
        let result = Delivery(files: photos.files, options: options(), parallel: 1, connect: slow).run()
        // The OFFER had the hash computed before the connection was up, so the receiver's check
        // refused the new bytes (had the hash waited for WELCOME it would have matched them);
        // the file after it was hashed by the session as usual.
        let offered = try #require(network.connections.first)
        #expect(offered.saved.map(\.0) == ["second.png"])
        guard case .failed(let problem)? = result.outcomes[0] else {
            Issue.record("first.png: \(String(describing: result.outcomes[0]))")
            return
        }
        #expect(problem.code == FileErrorCode.hashMismatch.rawValue)
        guard case .saved? = result.outcomes[1] else {
            Issue.record("second.png: \(String(describing: result.outcomes[1]))")
            return
        }
        #expect(result.exitStatus(peer: "x").code == .notAllSaved)
    }

    @Test("unreachable: exit 69 naming the peer, without waiting")
    func unreachable() throws {
        let photos = try PhotoFiles([("a.png", 2_000)])
        let counter = CallCounter()
        let result = Delivery(
            files: photos.files, options: options(), parallel: 4,
            connect: { () throws(SendFailure) in
                _ = counter.next()
                throw .unreachable("connection refused")
            }
        ).run()
        #expect(counter.count == 1)
        #expect(result.exitStatus(peer: "host:1") == (.unreachable, "cannot connect to host:1: connection refused"))
    }
}

@Suite("The exit status of a call whose receiver presented another ID", .tags(.unit))
struct IdentityMismatchStatusTests {
    let expected = DeviceID(parsing: String(repeating: "A", count: 52))!
    let presented = DeviceID(parsing: String(repeating: "B", count: 51) + "A")!

    func status(_ source: ExpectedReceiver.Source) -> (code: SendExitCode, message: String?) {
        DeliveryResult(
            outcomes: [:],
            failures: [
                .identityMismatch(expected: ExpectedReceiver(id: expected, source: source), presented: presented)
            ],
            fileCount: 1, gaveUpWaiting: nil
        ).exitStatus(peer: "tv")
    }

    @Test("the fix depends on where the expected ID came from, not on how it is written")
    func fixBySource() throws {
        let pinned = status(.pinned)
        #expect(pinned.code == .identityMismatch)
        #expect(try #require(pinned.message).contains("but --expect-id says \(expected)"))
        #expect(try #require(pinned.message).hasSuffix("check the ID on the receiver (`ptk id`)"))
        let remembered = status(
            .remembered(path: "/home/a/.config/ptk/known-receivers", firstSeen: WallTime(seconds: 0)))
        #expect(
            try #require(remembered.message).contains(
                "but /home/a/.config/ptk/known-receivers (first seen 1970-01-01 00:00:00 UTC) says"))
        #expect(try #require(remembered.message).hasSuffix("accept the new one with `ptk-send --forget tv`"))
        #expect(try #require(status(.advertised).message).contains("but its mDNS record (id=) says"))
    }
}

@Suite("Sender: the types a receiver keeps", .tags(.unit))
struct SenderTypesOverAStreamTests {
    @Test(
        "a receiver without WELCOME.types gets PNGs only; one that keeps JPEG gets it with its media type; the rest end notKept, and the call exits 0"
    )
    func types() throws {
        let dir = makeTemporaryDirectory("ptk-client")
        defer { removeTree(dir) }
        let png = makePNG(size: 5000, seed: 1)
        let jpeg = makeJPEG(width: 32, height: 32, seed: 2)
        let heic = try #require(readFile(fixturePath("heif/picture.heic")))
        writeFile(dir + "/a.png", png)
        writeFile(dir + "/b.png", jpeg)  // a JPEG named .png: offered as b.jpg, image/jpeg
        writeFile(dir + "/c.heic", heic)
        let files = try ["a.png", "b.png", "c.heic"].map { try LocalFile.check(dir + "/" + $0) }
        for (types, sent, notKept) in [
            (nil, ["a.png"], [1, 2]), (["image/png", "image/jpeg"], ["a.png", "b.jpg"], [2]),
            (["image/heic"], ["c.heic"], [0, 1]),
        ] as [([String]?, [String], [Int])] {
            let receiver = FakeReceiver()
            receiver.types = types
            let sender = Sender(files: files, options: SendOptions(name: "tester", window: 8, timeout: .seconds(1)))
            let stream = receiver.stream
            try sender.run { () throws(SendFailure) in (stream, "fake") }
            #expect(receiver.offers.map(\.name) == sent, "\(String(describing: types))")
            #expect(receiver.offers.map(\.mediaType) == sent.map { PhotoType(fileName: $0)!.mediaType })
            #expect(
                receiver.saved.map(\.1)
                    == receiver.offers.map { o in [png, jpeg, heic][files.firstIndex { $0.name == o.name }!] })
            let skipped = sender.outcomes.filter { if case .notKept = $0.value { true } else { false } }.map(\.key)
                .sorted()
            #expect(skipped == notKept)
            #expect(receiver.hello?.features == ["held", "late-answers"])
            let result = DeliveryResult(
                outcomes: sender.outcomes, failures: [], fileCount: files.count, gaveUpWaiting: nil)
            #expect(result.exitStatus(peer: "fake").code == .ok)
        }
        // --keep-folders announces "folders" too.
        let receiver = FakeReceiver()
        let sender = Sender(
            files: [files[0]], options: SendOptions(name: "tester", window: 8, timeout: .seconds(1), keepFolders: true))
        let stream = receiver.stream
        try sender.run { () throws(SendFailure) in (stream, "fake") }
        #expect(receiver.hello?.features == ["held", "late-answers", "folders"])
    }
}
