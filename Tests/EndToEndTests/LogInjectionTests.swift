import Foundation
import Glibc
import PTKDigest
import PTKProtocol
import PTKSystem
import PTKTestSupport
import PTKTestTags
import PTKTransport
import Testing

/// The scalars no line of ptkd's log, and nothing ptk-send prints, may hold raw (issue 41,
/// finding 4): C0 controls, DEL, C1, the line and paragraph separators and the bidi controls.
/// Written out here rather than taken from PTKSystem, so the test does not trust the code it checks.
private func isRawControl(_ s: Unicode.Scalar) -> Bool {
    switch s.value {
    case 0x00...0x1F, 0x7F...0x9F, 0x2028, 0x2029, 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: return true
    default: return false
    }
}

/// The lines of `text` (split on "\n" only) that hold a raw control scalar.
private func linesWithControls(_ text: String) -> [String] {
    text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        .filter { $0.unicodeScalars.contains(where: isRawControl) }
}

/// The lines of `text` a reader would take for a warning ptkd never wrote.
private func forgedLines(_ text: String) -> [String] {
    text.split(separator: "\n").map(String.init).filter { $0.hasPrefix("warning: FORGED") }
}

/// Creates `path` (bytes, not UTF-8 necessarily) holding `bytes`, or a folder when `bytes` is nil.
private func make(_ path: [UInt8], _ bytes: [UInt8]?) {
    let c = (path + [0]).map { CChar(bitPattern: $0) }
    guard let bytes else {
        #expect(mkdir(c, 0o755) == 0)
        return
    }
    let fd = open(c, O_CREAT | O_WRONLY | O_EXCL, 0o644)
    #expect(fd >= 0)
    _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    close(fd)
}

/// Removes what `make` made (removeTree lists names as text, which cannot name these).
private func unmake(_ path: [UInt8]) {
    let c = (path + [0]).map { CChar(bitPattern: $0) }
    if unlink(c) != 0 { rmdir(c) }
}

/// A v1 receiver that answers as a hostile one would: a WELCOME whose name carries escape
/// sequences, a REJECT (or ERROR) whose message clears the screen, rings the bell and holds a
/// NUL, and a SAVED name with a bidi override. Plaintext; one connection at a time.
final class HostileReceiver: @unchecked Sendable {
    static let name = "evil\u{1B}]0;pwned\u{7}\u{202E}gnp.exe\u{2028}warning: FORGED"
    static let message = "\u{1B}[2J\u{0}\u{7}\u{9B}31m\nwarning: FORGED LINE\u{85}"
    static let savedName = "x\u{202E}gnp.exe\u{1B}[31m.png"

    let listener: FileDescriptor
    let port: UInt16
    private let lock = Lock()
    private var stopped = false

    /// `error`: answer HELLO with ERROR instead of serving the session.
    init(error: Bool = false) throws {
        listener = try Socket.listen(on: SocketAddress(numericHost: "127.0.0.1", port: 0)!)
        port = try Socket.localAddress(listener).port
        try startThread(name: "hostile-receiver") { [self] in
            let deadline = Instant.now + .seconds(60)
            while Instant.now < deadline && !lock.withLock({ stopped }) {
                guard let (socket, address) = try? Socket.accept(listener) else {
                    usleep(5_000)
                    continue
                }
                serve(
                    FramedConnection(stream: TCPStream(socket: socket, peer: address), timeout: .seconds(10)),
                    error: error)
            }
            listener.close()
        }
    }

    func stop() { lock.withLock { stopped = true } }

    private func serve(_ c: FramedConnection, error: Bool) {
        var offers = 0
        var current: Offer?
        while let frame = try? c.receive() {
            switch frame {
            case .hello:
                if error {
                    try? c.send(.error(Problem(code: "unauthorized", message: Self.message)))
                    c.closeGracefully()
                    return
                }
                try? c.send(.welcome(Welcome(name: Self.name, window: 16, maxFileSize: 1 << 30, types: ["image/png"])))
            case .offer(let o):
                offers += 1
                current = o
                // The first file is refused; the others are taken.
                try? c.send(
                    offers == 1 ? .reject(Problem(code: "refused", message: Self.message)) : .accept(Accept(offset: 0)))
            case .chunk: try? c.send(.ack)
            case .done:
                if let o = current { try? c.send(.saved(Saved(name: Self.savedName, size: o.size, sha256: o.sha256))) }
            default:
                c.closeGracefully()
                return
            }
        }
    }
}

@Suite(
    "End to end: no peer's text forges a log line or reaches a terminal raw (issue 41, finding 4)", .serialized,
    .tags(.endToEnd))
struct LogInjectionTests {
    @Test(
        "a v1 OFFER whose name or media type holds a newline and controls logs one escaped line each; no forged warning"
    )
    func v1Offer() throws {
        let d = try DaemonProcess()
        let peer = try RawPeer(port: d.port)
        try peer.hello(window: 4)
        // The audit's case: accepted, then FAILED not-png, logged with the name.
        let junk = [UInt8](repeating: 0x41, count: 20_000)
        let forged = "a.png\nwarning: FORGED LINE\u{85}\u{9B}2J\u{2028}\u{202E}gnp\u{1B}[2J\u{0}\u{7}"
        try peer.send(.offer(Offer(name: forged, size: Int64(junk.count), sha256: SHA256.hex(of: junk))))
        switch try peer.receive() {
        case .accept?:
            try peer.send(.chunk(junk))
            guard case .failed? = try peer.receive() else {
                Issue.record("no FAILED")
                return
            }
        case .reject?: break
        case let other:
            Issue.record("neither ACCEPT nor REJECT: \(String(describing: other))")
            return
        }
        // A media type with a newline: REJECTed, its message (with the type) logged.
        try peer.send(
            .offer(
                Offer(
                    name: "b.png", size: 100, sha256: String(repeating: "0", count: 64),
                    mediaType: "image/x\nwarning: FORGED TYPE\u{1B}[2J")))
        guard case .reject? = try peer.receive() else {
            Issue.record("no REJECT")
            return
        }
        try peer.send(.bye)
        peer.close()
        #expect(eventually { d.log.contains("warning: FORGED TYPE") && d.log.contains(": ended after") }, "\(d.log)")
        let log = d.log
        #expect(forgedLines(log).isEmpty, "\(log)")
        #expect(linesWithControls(log).isEmpty, "\(linesWithControls(log).map(\.debugDescription))")
        // Quoted and escaped where it enters the line.
        #expect(
            log.contains(#""a.png\nwarning: FORGED LINE\u{85}\u{9B}2J\u{2028}\u{202E}gnp\u{1B}[2J\u{0}\u{7}""#),
            "\(log)")
        #expect(log.contains(#"image/x\nwarning: FORGED TYPE\u{1B}[2J"#), "\(log)")
    }

    @Test(
        "a LocalSend fileName and alias with \\n, U+0085, U+2028, U+202E and ESC log escaped lines; no forged warning")
    func localSend() throws {
        let d = try DaemonProcess.withLocalSend()
        let alias = "Phone\u{85}\u{9B}\u{2028}\u{202E}\u{1B}[2J\nwarning: FORGED ALIAS"
        let app = try LocalSendApp(port: d.localSendPort, alias: alias)
        let name = "c.png\nwarning: FORGED LINE\u{85}x\u{2028}y\u{202E}gnp.exe\u{1B}[2J"
        let good = pngFile("a", name, size: 3000, seed: 5)
        // The same name on bytes that are no photo: refused, with the name in the line.
        let bad: (id: String, name: String, bytes: [UInt8], type: String, hash: String?) =
            ("b", name + "2", [UInt8](repeating: 0x42, count: 2000), "image/png", nil)
        let (status, json) = try app.prepare([good, bad])
        #expect(status == 200, "\(json)")
        let (session, ids) = tokens(json)
        if let t = ids["a"] { _ = try app.upload(session: session, fileID: "a", token: t, bytes: good.bytes) }
        if let t = ids["b"] { _ = try app.upload(session: session, fileID: "b", token: t, bytes: bad.bytes) }
        // Sent again with its hash: "already kept" names it too (logged before the answer).
        _ = try app.prepare([good])
        #expect(eventually { d.log.contains("prepare-upload of 1 file(s)") }, "\(d.log)")
        let log = d.log
        #expect(forgedLines(log).isEmpty, "\(log)")
        #expect(linesWithControls(log).isEmpty, "\(linesWithControls(log).map(\.debugDescription))")
        #expect(log.contains(#""c.png\nwarning: FORGED LINE\u{85}x\u{2028}y\u{202E}gnp.exe\u{1B}[2J""#), "\(log)")
        #expect(log.contains(#""Phone\u{85}\u{9B}\u{2028}\u{202E}\u{1B}[2J\nwarning: FORGED ALIAS""#), "\(log)")
    }

    @Test(
        "ptk-send prints a hostile receiver's REJECT, name and saved name with no ESC, NUL or BEL; --json stays JSON that reads back the same text"
    )
    func hostileReceiver() throws {
        let receiver = try HostileReceiver()
        defer { receiver.stop() }
        let dir = makeTemporaryDirectory("ptk-hostile")
        defer { removeTree(dir) }
        let refused = photo(dir, "first.png", size: 2000, seed: 1)
        let taken = photo(dir, "second.png", size: 2500, seed: 2)
        let jpeg = dir + "/third.jpg"
        writeFile(jpeg, makeJPEG(width: 20, height: 20, seed: 3))
        let args = [
            "--plaintext", "--parallel", "1", "--timeout", "10", "127.0.0.1:\(receiver.port)", refused, taken, jpeg,
        ]
        let r = try run("ptk-send", args)
        #expect(r.status == 1, "\(r.stderr)")
        for output in [r.stdout, r.stderr] {
            #expect(
                !output.unicodeScalars.contains { $0 == "\u{1B}" || $0 == "\u{0}" || $0 == "\u{7}" },
                "\(output.debugDescription)")
            #expect(linesWithControls(output).isEmpty, "\(output.debugDescription)")
            #expect(forgedLines(output).isEmpty, "\(output.debugDescription)")
        }
        #expect(
            r.stdout.contains(
                #"\#(refused): refused: refused: \u{1B}[2J\u{0}\u{7}\u{9B}31m\nwarning: FORGED LINE\u{85}"#),
            "\(r.stdout)")
        #expect(r.stdout.contains(#"\#(taken): saved as "x\u{202E}gnp.exe\u{1B}[31m.png""#), "\(r.stdout)")
        #expect(
            r.stdout.contains(#"not sent: evil\u{1B}]0;pwned\u{7}\u{202E}gnp.exe\u{2028}warning: FORGED keeps PNG"#),
            "\(r.stdout)")

        let j = try run("ptk-send", ["--json"] + args)
        #expect(j.status == 1, "\(j.stderr)")
        #expect(j.stdout.unicodeScalars.filter(isRawControl).allSatisfy { $0 == "\n" }, "\(j.stdout.debugDescription)")
        let objects = try j.stdout.split(separator: "\n").map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        #expect(objects.count == 4)
        let byPath = Dictionary(objects.compactMap { o in (o["path"] as? String).map { ($0, o) } }) { a, _ in a }
        #expect(byPath[refused]?["reason"] as? String == "refused: " + HostileReceiver.message)
        #expect(byPath[taken]?["name"] as? String == HostileReceiver.savedName)
        #expect(
            (byPath[jpeg]?["reason"] as? String)?.hasPrefix(HostileReceiver.name + " keeps PNG") == true, "\(objects)")
        let summary = try #require(objects.last?["summary"] as? [String: Any])
        #expect(summary["receiver"] as? String == HostileReceiver.name)
    }

    @Test("ptk-send's error line for a hostile ERROR holds no ESC, NUL or BEL")
    func hostileError() throws {
        let receiver = try HostileReceiver(error: true)
        defer { receiver.stop() }
        let dir = makeTemporaryDirectory("ptk-hostile")
        defer { removeTree(dir) }
        let r = try run(
            "ptk-send",
            ["--plaintext", "--timeout", "10", "127.0.0.1:\(receiver.port)", photo(dir, "a.png", size: 2000)])
        #expect(r.status == 76, "\(r.stderr)")
        #expect(linesWithControls(r.stderr).isEmpty, "\(r.stderr.debugDescription)")
        #expect(forgedLines(r.stderr).isEmpty, "\(r.stderr.debugDescription)")
        #expect(
            r.stderr.hasPrefix(
                #"ptk-send: 127.0.0.1:\#(receiver.port): the receiver answered ERROR unauthorized: \u{1B}[2J\u{0}\u{7}\u{9B}31m\nwarning: FORGED LINE\u{85}"#
            ),
            "\(r.stderr)")
    }

    @Test("a file whose name is not UTF-8 is sent, its name offered with U+FFFD and the substitution said; --json too")
    func notUTF8File() throws {
        let d = try DaemonProcess()
        let src = makeTemporaryDirectory("ptk-bytes")
        defer { removeTree(src) }
        let png = makePNG(size: 3000, seed: 11)
        let path = Array((src + "/caf").utf8) + [0xE9] + Array(".png".utf8)
        make(path, png)
        defer { unmake(path) }
        // The argument's bytes come from printf: the harness passes arguments as Strings.
        func ptkSend(_ flags: String) throws -> Finished {
            try run(
                "/bin/sh",
                [
                    "-c",
                    "exec '\(binDirectory)/ptk-send' \(flags) --timeout 20 127.0.0.1:\(d.port) \"\(src)/$(printf 'caf\\351.png')\"",
                ],
                absolute: true, environment: ["XDG_CONFIG_HOME": d.senderConfig])
        }
        let r = try ptkSend("")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(
            withoutFirstContact(r.stderr)
                == "ptk-send: \"\(src)/caf\\xE9.png\" is sent as \"caf\u{FFFD}.png\" (its name is not UTF-8)\n",
            "\(r.stderr)")
        #expect(r.stdout == "\(src)/caf\\xE9.png: saved as \"caf\u{FFFD}.png\"\n", "\(r.stdout)")
        #expect(readFile(d.dir + "/caf\u{FFFD}.png") == png)

        let j = try ptkSend("--json")
        #expect(j.status == 0, "\(j.stderr)")
        #expect(j.stderr.contains("is sent as \"caf\u{FFFD}.png\""), "\(j.stderr)")
        let first = try #require(
            j.stdout.split(separator: "\n").first.flatMap {
                try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
            })
        #expect(first["path"] as? String == "\(src)/caf\\xE9.png", "\(first)")
        #expect(
            first["status"] as? String == "already-there" && first["name"] as? String == "caf\u{FFFD}.png", "\(first)")
    }

    @Test(
        "a folder sent with --keep-folders whose entries' names are not UTF-8: each photo sent, named with U+FFFD, said so"
    )
    func notUTF8Folder() throws {
        let d = try DaemonProcess()
        let src = makeTemporaryDirectory("ptk-bytes")
        defer { removeTree(src) }
        let png = makePNG(size: 3000, seed: 12)
        let folder = Array((src + "/dir").utf8) + [0xE9]
        let file = folder + Array("/b".utf8) + [0xE8] + Array(".png".utf8)
        make(folder, nil)
        make(file, png)
        defer {
            unmake(file)
            unmake(folder)
        }
        let r = try send(d, [src], ["--keep-folders", "--json"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(
            withoutFirstContact(r.stderr)
                == "ptk-send: \"\(src)/dir\\xE9/b\\xE8.png\" is sent as \"dir\u{FFFD}/b\u{FFFD}.png\" (its name is not UTF-8)\n",
            "\(r.stderr)")
        let first = try #require(
            r.stdout.split(separator: "\n").first.flatMap {
                try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
            })
        #expect(
            first["status"] as? String == "saved" && first["path"] as? String == "\(src)/dir\\xE9/b\\xE8.png",
            "\(r.stdout)")
        #expect(readFile(d.dir + "/dir\u{FFFD}/b\u{FFFD}.png") == png, "\(listDirectory(d.dir))")
    }
}
