import Foundation
import Glibc
import PTKProtocol
import PTKSystem
import PTKTestSupport
import PTKTestTags
import PTKTransport
import PTKVocabulary
import Testing

/// `bytes` at `dir`/`path`, its folders made.
private func put(_ dir: String, _ path: String, _ bytes: [UInt8]) { writeFile(in: dir, path, bytes) }

/// ptk-send's --json output: the per-file objects and the summary.
private func parsed(_ stdout: String) throws -> (files: [[String: Any]], summary: [String: Any]) {
    let objects = try stdout.split(separator: "\n").map {
        try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
    }
    let summary = try #require(objects.last?["summary"] as? [String: Any], "no summary object last")
    return (Array(objects.dropLast()), summary)
}

/// A receiver as it was before protocol section 7: plaintext, and no WELCOME.types. It saves
/// nothing; it records every OFFER and answers SAVED.
final class OldReceiver: @unchecked Sendable {
    let listener: FileDescriptor
    let port: UInt16
    private let lock = Lock()
    private var offersSeen: [Offer] = []
    private var stopped = false
    var offers: [Offer] { lock.withLock { offersSeen } }

    /// Stops accepting (the thread ends within a few milliseconds) and closes the socket.
    func stop() { lock.withLock { stopped = true } }

    init() throws {
        listener = try Socket.listen(on: SocketAddress(numericHost: "127.0.0.1", port: 0)!)
        port = try Socket.localAddress(listener).port
        try startThread(name: "old-receiver") { [self] in
            let deadline = Instant.now + .seconds(60)
            while Instant.now < deadline && !lock.withLock({ stopped }) {
                // Nothing waiting (or a failed accept): look again shortly.
                guard let (socket, address) = try? Socket.accept(listener) else {
                    usleep(5_000)
                    continue
                }
                serve(FramedConnection(stream: TCPStream(socket: socket, peer: address), timeout: .seconds(10)))
            }
            listener.close()
        }
    }

    private func serve(_ c: FramedConnection) {
        var offer: Offer?
        while let frame = try? c.receive() {
            switch frame {
            case .hello: try? c.send(.welcome(Welcome(name: "oldbox", window: 16, maxFileSize: 1 << 30)))
            case .offer(let o):
                lock.withLock { offersSeen.append(o) }
                offer = o
                try? c.send(.accept(Accept(offset: 0)))
            case .chunk: try? c.send(.ack)
            case .done:
                if let o = offer { try? c.send(.saved(Saved(name: o.name, size: o.size, sha256: o.sha256))) }
            default:
                c.closeGracefully()
                return
            }
        }
    }
}

@Suite(
    "End to end: ptk-send sends every type the receiver keeps, and folders (issue 30)", .serialized, .tags(.endToEnd))
struct SendFoldersTests {
    @Test(
        "a folder of 40 mixed PNG, JPEG, HEIC and text files to a receiver keeping PNG and JPEG: those saved byte-identical, HEIC and text reported, exit 0; --json parsed"
    )
    func mixedFolder() throws {
        let d = try DaemonProcess(["--types", "image/png,image/jpeg", "--name", "livingroom"])
        let root = d.root + "/Camera"
        let heic = try #require(readFile(fixturePath("heif/picture.heic")))
        var kept: [String: [UInt8]] = [:]
        for i in 0..<15 {
            let b = makePNG(size: 3_000 + i, seed: UInt64(i + 1))
            put(root, "png/p\(i).png", b)
            kept["p\(i).png"] = b
        }
        for i in 0..<12 {
            let b = makeJPEG(width: 40, height: 30, seed: UInt64(i + 100))
            put(root, "jpeg/j\(i).jpg", b)
            kept["j\(i).jpg"] = b
        }
        for i in 0..<8 { put(root, "heic/h\(i).heic", heic) }
        for i in 0..<5 { put(root, "notes/n\(i).txt", Array("note \(i)".utf8)) }
        put(root, ".trash/old.png", makePNG(size: 2000, seed: 999))
        let r = try send(d, [root], ["--json"])
        #expect(r.status == 0, "\(r.stderr)")
        let (files, summary) = try parsed(r.stdout)
        #expect(files.count == 40)
        let byStatus = Dictionary(grouping: files) { $0["status"] as? String ?? "" }
        #expect(
            byStatus["saved"]?.count == 27 && byStatus["not-kept"]?.count == 8 && byStatus["left-out"]?.count == 5,
            "\(byStatus.keys)")
        for f in byStatus["not-kept"] ?? [] {
            #expect(f["reason"] as? String == "livingroom keeps PNG and JPEG; this is a HEIC", "\(f)")
        }
        #expect((byStatus["left-out"] ?? []).allSatisfy { $0["reason"] as? String == "not a photo" })
        #expect(
            summary["saved"] as? Int == 27 && summary["notKept"] as? Int == 8 && summary["leftOut"] as? Int == 5
                && summary["failed"] as? Int == 0)
        #expect(summary["receiverTypes"] as? [String] == ["image/png", "image/jpeg"])
        #expect(Set(d.visible) == Set(kept.keys))
        for (name, bytes) in kept { #expect(readFile(d.dir + "/" + name) == bytes, "\(name)") }
        // The hidden folder was skipped altogether: not even listed.
        #expect(!r.stdout.contains(".trash"))
        // Without --json: a line per file, HEIC and text included.
        let again = try send(d, [root + "/heic", root + "/notes"])
        #expect(again.status == 0)
        #expect(
            again.stdout.contains("\(root)/heic/h0.heic: not sent: livingroom keeps PNG and JPEG; this is a HEIC\n"),
            "\(again.stdout)")
        #expect(again.stdout.contains("\(root)/notes/n4.txt: left out: not a photo"))
    }

    @Test("exit 1 only when a photo of a kept type failed: a cut JPEG among good ones")
    func failedPhotoIsExitOne() throws {
        let d = try DaemonProcess(["--types", "image/png,image/jpeg"])
        let root = d.root + "/batch"
        let good = makeJPEG(width: 40, height: 30, seed: 5)
        put(root, "a.jpg", good)
        put(root, "b.jpg", Array(makeJPEG(width: 40, height: 30, seed: 6).dropLast(2)))
        put(root, "c.heic", try #require(readFile(fixturePath("heif/picture.heic"))))
        let r = try send(d, [root], ["--json"])
        #expect(r.status == 1)
        let (files, summary) = try parsed(r.stdout)
        let b = try #require(files.first { ($0["path"] as? String)?.hasSuffix("/b.jpg") == true })
        #expect(
            b["status"] as? String == "failed"
                && (b["reason"] as? String)?.contains("not-png: not a well-formed JPEG") == true, "\(b)")
        #expect(summary["saved"] as? Int == 1 && summary["failed"] as? Int == 1 && summary["notKept"] as? Int == 1)
        #expect(d.visible == ["a.jpg"])
    }

    @Test(
        "a JPEG named .png is offered and saved as a JPEG (.jpg); a HEIC goes to a receiver that keeps it, with its thumbnail"
    )
    func typeFromBytes() throws {
        let d = try DaemonProcess()
        let jpeg = makeJPEG(width: 64, height: 48, seed: 9)
        writeFile(d.root + "/holiday.png", jpeg)
        let heic = try #require(readFile(fixturePath("heif/portrait-exif.heic")))
        writeFile(d.root + "/IMG_0001.HEIC", heic)
        let r = try send(d, [d.root + "/holiday.png", d.root + "/IMG_0001.HEIC"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("\(d.root)/holiday.png: saved as \"holiday.jpg\""), "\(r.stdout)")
        #expect(r.stdout.contains("\(d.root)/IMG_0001.HEIC: saved as \"IMG_0001.HEIC\""), "\(r.stdout)")
        #expect(readFile(d.dir + "/holiday.jpg") == jpeg && readFile(d.dir + "/IMG_0001.HEIC") == heic)
        #expect(waitForIndex(d, ["holiday.jpg", "IMG_0001.HEIC"]))
        let list = try library(d, ["list"]).stdout
        #expect(
            list.contains("IMG_0001.HEIC") && list.contains("200x300") && list.contains("2024-07-03 14:22"), "\(list)")
        // The receiver's log says which type arrived.
        #expect(eventually { d.log.contains("saved \"holiday.jpg\"") })
    }

    @Test(
        "--keep-folders with hostile folder names: each made safe, below the layout's folder for the sender; at most 4 levels; without it, flat"
    )
    func keepFolders() throws {
        let d = try DaemonProcess(["--layout", "sender"])
        let root = d.root + "/Pictures"
        let names = [
            "2024/summer", "%2e%2e", " space", "back\\slash", "ctl\u{1}x", String(repeating: "é", count: 120),
            "a/b/c/d",
        ]
        var expected: [String: [UInt8]] = [:]
        for (i, folder) in names.enumerated() {
            let bytes = makePNG(size: 2_000 + i, seed: UInt64(i + 50))
            put(root, folder + "/p\(i).png", bytes)
            let safe = folder.split(separator: "/").map { FileName.folderComponent(String($0)) }.prefix(3)
            expected["alice/" + (safe + ["p\(i).png"]).joined(separator: "/")] = bytes
        }
        let r = try send(d, [root], ["--keep-folders", "--name", "alice"])
        #expect(r.status == 0, "\(r.stderr)")
        for (path, bytes) in expected {
            #expect(readFile(d.dir + "/" + path) == bytes, "\(path) in \(r.stdout)")
            #expect(r.stdout.contains("saved as \"\(path)\""), "\(path)")
        }
        #expect(readFile(d.dir + "/alice/%2e%2e/p1.png") != nil, "an encoded '..' is only a name")
        #expect(readFile(d.dir + "/alice/a/b/c/p6.png") != nil, "4 levels in all: the sender's folder and 3 of its own")
        // Nothing was written outside the directory.
        #expect(
            listDirectory(d.root).sorted()
                == ["Pictures", "photos", "ptkd-\(ObjectIdentifier(d).hashValue).log", "sender-config", "state"]
                .sorted(), "\(listDirectory(d.root))")
        // Without --keep-folders the same folder sends flat names (into the sender's folder).
        let flat = try DaemonProcess(["--layout", "sender"])
        put(flat.root + "/P", "2024/summer/x.png", makePNG(size: 2000, seed: 77))
        let f = try send(flat, [flat.root + "/P"], ["--name", "alice"])
        #expect(f.status == 0 && f.stdout.contains("saved as \"alice/x.png\""), "\(f.stdout)")
    }

    @Test("a receiver without WELCOME.types (before section 7) gets PNGs only; the others are reported, exit 0")
    func oldReceiver() throws {
        let old = try OldReceiver()
        defer { old.stop() }
        let dir = makeTemporaryDirectory("ptk-old")
        defer { removeTree(dir) }
        put(dir, "a.png", makePNG(size: 3000, seed: 1))
        put(dir, "b.jpg", makeJPEG(width: 16, height: 16, seed: 2))
        put(dir, "c.heic", try #require(readFile(fixturePath("heif/picture.heic"))))
        let r = try run(
            "ptk-send", ["--plaintext", "--timeout", "10", "127.0.0.1:\(old.port)", dir],
            environment: ["XDG_CONFIG_HOME": dir + "/config"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(old.offers.map(\.name) == ["a.png"] && old.offers.map(\.mediaType) == ["image/png"])
        #expect(r.stdout.contains("\(dir)/b.jpg: not sent: oldbox keeps PNG; this is a JPEG"), "\(r.stdout)")
        #expect(r.stdout.contains("\(dir)/c.heic: not sent: oldbox keeps PNG; this is a HEIC"), "\(r.stdout)")
    }

    @Test("on a terminal the run ends with a summary on standard error")
    func summaryOnATerminal() throws {
        let d = try DaemonProcess(["--types", "image/png", "--name", "livingroom"])
        let root = d.root + "/s"
        put(root, "a.png", makePNG(size: 3000, seed: 1))
        put(root, "b.jpg", makeJPEG(width: 16, height: 16, seed: 2))
        put(root, "c.txt", Array("text".utf8))
        let command = "XDG_CONFIG_HOME=\(d.senderConfig) \(binDirectory)/ptk-send 127.0.0.1:\(d.port) \(root)"
        let tty = try run("/usr/bin/script", ["-qec", command, "/dev/null"], absolute: true)
        #expect(
            tty.stdout.contains(
                "ptk-send: 1 saved, 1 not kept by livingroom (it keeps PNG), 1 left out (not photos); "),
            "\(tty.stdout)")
    }
}
