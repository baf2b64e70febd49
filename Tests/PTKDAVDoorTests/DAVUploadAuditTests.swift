import Dispatch
import Foundation
import Glibc
import PTKDAV
import PTKHTTP
import PTKSystem
import PTKTestSupport
import PTKTestTags
import PTKTransport
import PTKTrust
import Testing

@testable import PTKDAVDoor
@testable import PTKWebDoor

/// A client's bytes in pieces; `before[i]` runs when the server first asks for piece `i` (on
/// the server's thread, inside its read), so a test can act while a request is on its way:
/// its head read and authorised, its body not yet in. Once the pieces are read the client
/// closes.
final class GatedHTTPStream: ByteStream, @unchecked Sendable {
    // Used by the one thread that runs the server; `written` is read after it is done.
    private var pieces: [[UInt8]]
    private var before: [Int: () -> Void]
    private var next = 0
    private(set) var written: [UInt8] = []

    init(_ pieces: [[UInt8]], before: [Int: () -> Void]) {
        self.pieces = pieces
        self.before = before
    }

    func read(into buffer: UnsafeMutableRawBufferPointer, deadline: Instant, interruptible: Bool) throws(TransportError)
        -> Int
    {
        while next < pieces.count, pieces[next].isEmpty { next += 1 }
        guard next < pieces.count else { return 0 }
        if let action = before.removeValue(forKey: next) { action() }
        let n = min(buffer.count, pieces[next].count)
        buffer.copyBytes(from: pieces[next][..<n])
        pieces[next].removeFirst(n)
        return n
    }

    func write(_ bytes: UnsafeRawBufferPointer, deadline: Instant) throws(TransportError) { written += bytes }
    func shutdownWrite() {}
    func close() {}
}

extension DoorFixture {
    /// Plays `stream` to the web door on one connection; the responses.
    func converse(_ stream: GatedHTTPStream) -> [ParsedResponse] {
        let server = web.httpsServer()
        let http = server.connection(over: stream)
        _ = server.conversation.converse(
            http, certificate: nil, deadline: .now + .seconds(5), respond: web.handler(id: 9, peer: peer))
        return ParsedResponse.all(in: stream.written)
    }

    /// The files of the door's state directory that belong to `account` (its names, its sidecars).
    func stateOf(_ account: DAVAccount) -> [String] {
        listDirectory(davState).filter { $0.hasPrefix(account.id) }
    }
}

/// A PROPPATCH body: `<D:propertyupdate>` declaring `namespaces` (prefix, URI) on its root, with
/// one `<D:remove><D:prop>` of `properties` (raw XML).
private func propertyUpdate(_ namespaces: [(String, String)], _ properties: String) -> [UInt8] {
    let declarations = namespaces.map { " xmlns:\($0.0)=\"\($0.1)\"" }.joined()
    return Array(
        ("<?xml version=\"1.0\"?><D:propertyupdate xmlns:D=\"DAV:\"\(declarations)><D:remove><D:prop>" + properties
            + "</D:prop></D:remove></D:propertyupdate>").utf8)
}

/// An independent audit of the WebDAV door as an upload password, after issue 54's first
/// round (the probes of `attack-dav`): small requests made big answers or big trees, removed
/// passwords' writes in flight left state, two PUTs of one name stored a photo unseen, and a
/// full names cap told whether the receiver kept given bytes.
@Suite("WebDAV door: an upload password's audit after issue 54's first round", .tags(.unit))
struct DAVUploadAuditTests {
    // MARK: Finding 1: PROPPATCH answers are bounded

    @Test(
        "a PROPPATCH naming one long namespace thousands of times, or more than 100 properties, is 400 with a short answer; 100 distinct names are answered, each once, in a bounded answer"
    )
    func proppatchBounded() throws {
        let f = try DoorFixture()
        let up1 = try f.appPassword("up1", .upload)
        // The audit's shape: a namespace declared once on the root, named by every property.
        let long = propertyUpdate(
            [("a", "u:" + String(repeating: "a", count: 2_000))], String(repeating: "<a:x/>", count: 9_000))
        let many = propertyUpdate([("a", "u:n")], (0...100).map { "<a:x\($0)/>" }.joined())
        let hundred = propertyUpdate(
            [("b", "u:" + String(repeating: "b", count: 74))], (0..<100).map { "<b:p\($0)/>" }.joined())
        let repeated = propertyUpdate([("c", "u:c")], String(repeating: "<c:x/>", count: 5_000))
        #expect(long.count <= 64 << 10)
        let e = f.dav(
            dav("PROPPATCH", "/dav/", up1, body: long), dav("PROPPATCH", "/dav/", up1, body: many),
            dav("PROPPATCH", "/dav/", up1, body: hundred), dav("PROPPATCH", "/dav/", up1, body: repeated))
        #expect(e.responses.map(\.status) == [400, 400, 207, 207], "\(e.responses.map(\.status))")
        #expect(e.responses.allSatisfy { $0.body.count < 16 << 10 }, "\(e.responses.map(\.body.count))")
        let answered = try #require(multistatus(e[2])?.first)
        #expect(answered.properties.count == 100)
        #expect(answered.properties.values.allSatisfy { $0.status == 200 })
        #expect(multistatus(e[3])?.first?.properties.count == 1)
    }

    // MARK: Finding 3: If headers are bounded

    @Test("an If header of 3,000 tokens is 400 at once (it was a quadratic look at each)")
    func ifHeaderBounded() throws {
        let f = try DoorFixture()
        let up1 = try f.appPassword("up1", .upload)
        let header = "(" + (0..<3_000).map { "<\(String($0, radix: 16))>" }.joined() + ")"
        let started = ContinuousClock.now
        let e = f.dav(
            dav("LOCK", "/dav/", up1, [("If", header)]),
            dav("PUT", "/dav/a.png", up1, [("If", header)], body: makePNG(size: 300, seed: 5401)))
        #expect(e.responses.map(\.status) == [400, 400], "\(e.responses.map(\.status))")
        #expect(e[0].text.contains("conditions"), "\(e[0].text)")
        #expect(ContinuousClock.now - started < .seconds(2))
        #expect(f.kept().isEmpty)
    }

    // MARK: Finding 2 and 5: a password removed while its request is on its way keeps nothing

    @Test(
        "a full password removed while its LOCK body trickles takes no lock: 401, and the other passwords write at once"
    )
    func removedWhileLocking() throws {
        let f = try DoorFixture()
        let desk = try f.appPassword("desk", .full)
        let laptop = try f.appPassword("laptop", .full)
        let lock = dav("LOCK", "/dav/", desk, [("Depth", "infinity"), ("Timeout", "Second-3600")], body: lockInfo())
        let cut = lock.count - 40
        let stream = GatedHTTPStream(
            [Array(lock[..<cut]), Array(lock[cut...])],
            before: [
                1: {
                    #expect((try? f.appPasswords.remove(name: "desk")) == true)
                    // Another password's request: the door drops what the removed one held.
                    #expect(f.dav(dav("OPTIONS", "/dav/", laptop)).first.status == 200)
                }
            ])
        let answers = f.converse(stream)
        #expect(answers.map(\.status) == [401], "\(answers.map(\.status))")
        #expect(answers.first?.header("www-authenticate")?.hasPrefix("Basic") == true)
        let after = f.dav(
            dav("PUT", "/dav/y.png", laptop, body: makePNG(size: 410, seed: 5402)),
            propfind("/dav/", laptop, depth: "0", props: ["lockdiscovery"]))
        #expect(after.responses.map(\.status) == [201, 207], "\(after.responses.map(\.status))")
        #expect(!after[1].text.contains("activelock"), "\(after[1].text)")
    }

    @Test(
        "an upload password removed while its PUT's body is on its way: 401, no photo under a final name, its names file not made again"
    )
    func removedWhilePutting() throws {
        let f = try DoorFixture()
        let up1 = try f.appPassword("up1", .upload)
        let other = try f.appPassword("other", .upload)
        #expect(f.dav(dav("PUT", "/dav/first.png", up1, body: makePNG(size: 500, seed: 5403))).first.status == 201)
        #expect(!f.stateOf(up1).isEmpty)
        let before = f.kept()
        let put = dav("PUT", "/dav/late.png", up1, body: makePNG(size: 3_000, seed: 5404))
        let cut = put.count - 2_000
        let stream = GatedHTTPStream(
            [Array(put[..<cut]), Array(put[cut...])],
            before: [
                1: {
                    #expect((try? f.appPasswords.remove(name: "up1")) == true)
                    #expect(f.dav(dav("OPTIONS", "/dav/", other)).first.status == 200)
                    #expect(f.stateOf(up1).isEmpty)
                }
            ])
        let answers = f.converse(stream)
        #expect(answers.map(\.status) == [401], "\(answers.map(\.status))")
        #expect(f.kept() == before, "\(f.kept())")
        #expect(f.incoming().isEmpty)
        #expect(f.stateOf(up1).isEmpty, "\(f.stateOf(up1))")
    }

    @Test(
        "an upload password removed while its sidecar's body is on its way, with no other request: 401, its sidecars folder not made again"
    )
    func removedWhileWritingSidecar() throws {
        let f = try DoorFixture()
        let up1 = try f.appPassword("up1", .upload)
        #expect(f.dav(dav("PUT", "/dav/._a", up1, body: [1, 2, 3])).first.status == 201)
        #expect(!f.stateOf(up1).isEmpty)
        let put = dav("PUT", "/dav/._late", up1, body: [1, 2, 3, 4, 5])
        let stream = GatedHTTPStream(
            [Array(put.dropLast(3)), Array(put.suffix(3))],
            before: [
                1: {
                    #expect((try? f.appPasswords.remove(name: "up1")) == true)
                }
            ])
        let answers = f.converse(stream)
        #expect(answers.map(\.status) == [401], "\(answers.map(\.status))")
        #expect(f.stateOf(up1).isEmpty, "\(f.stateOf(up1))")
    }

    // MARK: Finding 7: one PUT of a name at a time

    @Test(
        "two PUTs of one new name at once: the second is 423 before its body is read, one photo is stored, and the name names it"
    )
    func onePutPerName() throws {
        let f = try DoorFixture()
        let up1 = try f.appPassword("up1", .upload)
        let first = makePNG(size: 4_000, seed: 5405)
        let second = makePNG(size: 4_100, seed: 5406)
        let put = dav("PUT", "/dav/race.png", up1, body: first)
        let reached = DispatchSemaphore(value: 0)
        let go = DispatchSemaphore(value: 0)
        let done = DispatchSemaphore(value: 0)
        let stream = GatedHTTPStream(
            [Array(put[..<(put.count - 3_000)]), Array(put.suffix(3_000))],
            before: [
                1: {
                    reached.signal()
                    _ = go.wait(timeout: .now() + 10)
                }
            ])
        nonisolated(unsafe) var answers: [ParsedResponse] = []
        nonisolated(unsafe) let fixture = f
        try startThread(name: "first PUT") {
            answers = fixture.converse(stream)
            done.signal()
        }
        #expect(reached.wait(timeout: .now() + 10) == .success)
        let other = f.dav(dav("PUT", "/dav/race.png", up1, body: second))
        go.signal()
        #expect(done.wait(timeout: .now() + 10) == .success)
        #expect(other.first.status == 423, "\(other.first)")
        #expect(answers.map(\.status) == [201], "\(answers.map(\.status))")
        #expect(f.kept().count == 1, "\(f.kept())")
        let e = f.dav(propfind("/dav/", up1), dav("GET", "/dav/race.png", up1))
        #expect(listedNames(e[0]) == ["race.png"])
        #expect(digest(e[1].body) == digest(first))
    }

    // MARK: Finding 6: a full names bound tells nothing of what the receiver keeps

    @Test(
        "an upload password at its names' bound is refused alike (507, same words, before its body) whether or not the receiver keeps the bytes; names for bytes kept already have no count of their own"
    )
    func fullNamesTellNothing() throws {
        let f = try DoorFixture()
        f.web.dav.names = DAVNames(directory: f.davState, minFree: 0, maxShared: 2, maxBytes: 1_600)
        let desk = try f.appPassword("desk", .full)
        let up1 = try f.appPassword("up1", .upload)
        let known = makePNG(size: 500, seed: 5407)
        #expect(f.dav(dav("PUT", "/dav/known.png", desk, body: known)).first.status == 201)
        // Its names fill with names for bytes kept already, alike with new photos' names.
        var statuses: [Int] = []
        for i in 0..<20 {
            let status = f.dav(dav("PUT", "/dav/n\(i).png", up1, body: known)).first.status
            statuses.append(status)
            if status != 201 { break }
        }
        #expect(statuses.filter { $0 == 201 }.count > 2, "\(statuses)")
        #expect(statuses.last == 507, "\(statuses)")
        let before = f.kept()
        let kept = f.dav(dav("PUT", "/dav/probe1.png", up1, body: known))
        let fresh = f.dav(dav("PUT", "/dav/probe2.png", up1, body: makePNG(size: 500, seed: 5408)))
        #expect(kept.first.status == 507 && fresh.first.status == 507, "\(kept.first) \(fresh.first)")
        #expect(kept.first.text == fresh.first.text)
        #expect(!kept.first.text.contains("kept already"), "\(kept.first.text)")
        #expect(f.kept() == before)
        #expect(f.incoming().isEmpty)
    }

    // MARK: Finding 8: the sidecar lock, quota

    @Test("one password's sidecars being written (its lock held) do not hold back another password's", .tags(.slow))
    func sidecarLocksPerPassword() throws {
        let root = makeTemporaryDirectory("ptk-sidecars")
        defer { removeTree(root) }
        let sidecars = DAVSidecars(directory: root)
        let held = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let done = DispatchSemaphore(value: 0)
        try startThread(name: "holder") {
            _ = sidecars.with("a") { _ in
                held.signal()
                _ = release.wait(timeout: .now() + 10)
            }
        }
        #expect(held.wait(timeout: .now() + 10) == .success)
        try startThread(name: "other password") {
            _ = sidecars.write("b", ".DS_Store", [1, 2, 3], minFree: 0)
            _ = sidecars.children("b", of: "")
            done.signal()
        }
        let unblocked = done.wait(timeout: .now() + 3) == .success
        release.signal()
        #expect(unblocked, "password b waited for password a's lock")
        #expect(done.wait(timeout: .now() + 10) == .success || unblocked)
        #expect(sidecars.entry("b", ".DS_Store")?.size == 3)
    }

    @Test(
        "an upload password's quota-used-bytes are the bytes of the photos its names name, new or kept already: not the file system's, not other passwords'"
    )
    func uploadQuotaIsItsOwn() throws {
        let f = try DoorFixture()
        let desk = try f.appPassword("desk", .full)
        let up1 = try f.appPassword("up1", .upload)
        let theirs = makePNG(size: 200_000, seed: 5409)
        let mine = makePNG(size: 1_000, seed: 5410)
        let shared = makePNG(size: 3_000, seed: 5411)
        let e = f.dav(
            dav("PUT", "/dav/theirs.png", desk, body: theirs), dav("PUT", "/dav/shared.png", desk, body: shared),
            dav("PUT", "/dav/mine.png", up1, body: mine), dav("PUT", "/dav/again.png", up1, body: shared))
        #expect(e.responses.map(\.status) == [201, 201, 201, 201])
        let quota = f.dav(
            propfind("/dav/", up1, depth: "0", props: ["quota-used-bytes", "quota-available-bytes"]),
            propfind("/dav/", desk, depth: "0", props: ["quota-used-bytes"]))
        let own = try #require(multistatus(quota[0])?.first)
        #expect(own.text("quota-used-bytes") == "\(mine.count + shared.count)", "\(quota[0].text)")
        #expect(own.status("quota-available-bytes") == 200)
        let all = try #require(multistatus(quota[1])?.first?.text("quota-used-bytes").flatMap { Int64($0) })
        #expect(all >= Int64(theirs.count))
    }

    // MARK: The same shape: a head that makes ptkd read a whole photo

    @Test(
        "a full password's PUT head onto a kept photo the library has no hash for reads nothing of the photo until the body is in"
    )
    func putOntoHashesAfterTheBody() throws {
        let f = try DoorFixture { $0.maxFileSize = 64 << 30 }
        let desk = try f.appPassword("desk", .full)
        let size: Int64 = 16 << 30
        let fd = open(f.photos + "/huge.png", O_WRONLY | O_CREAT, 0o644)
        #expect(fd >= 0 && ftruncate(fd, off_t(size)) == 0)
        close(fd)
        defer { unlink(f.photos + "/huge.png") }
        let head = Array(
            ("PUT /dav/huge.png HTTP/1.1\r\nHost: ptk.test\r\nAuthorization: \(desk.authorization.1)\r\nContent-Length: \(size)\r\n\r\n")
                .utf8)
        let started = ContinuousClock.now
        _ = f.dav(head + [0x89, 0x50, 0x4E, 0x47])
        #expect(ContinuousClock.now - started < .seconds(2), "\(ContinuousClock.now - started)")
    }
}
