import Foundation
import PTKSystem
import PTKTestSupport
import PTKTestTags
import PTKTransport
import Testing

/// A file for `prepare`: a PNG of `size` bytes.
func pngFile(_ id: String, _ name: String, size: Int, seed: UInt64 = 1, hash: Bool = true, type: String = "image/png")
    -> (id: String, name: String, bytes: [UInt8], type: String, hash: String?)
{
    let bytes = makePNG(size: size, seed: seed)
    return (id, name, bytes, type, hash ? sha256Hex(bytes) : nil)
}

func tokens(_ json: [String: Any]) -> (String, [String: String]) {
    (json["sessionId"] as? String ?? "", json["files"] as? [String: String] ?? [:])
}

@Suite("End to end: LocalSend apps send to ptkd (issue 14)", .tags(.endToEnd))
struct LocalSendTests {
    @Test(
        "info (v1 and v2, GET with a body too) and register answer with ptkd's name and the fingerprint `ptk id localsend` prints"
    )
    func infoAndRegister() throws {
        let d = try DaemonProcess.withLocalSend(["--name", "Home Server"])
        let app = try LocalSendApp(port: d.localSendPort)
        let fingerprint = try run("ptk", ["--config", "/dev/null", "--state-dir", d.stateDir, "id", "localsend"])
        #expect(fingerprint.status == 0, "\(fingerprint.stderr)")
        let expected = fingerprint.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(expected.count == 64 && expected == expected.uppercased())
        let c = try app.connect()
        for (method, path, body) in [
            ("GET", "/api/localsend/v2/info", ""), ("GET", "/api/localsend/v1/info", "{}"),
            (
                "POST", "/api/localsend/v2/register",
                #"{"alias":"x","version":"2.2","deviceModel":null,"fingerprint":"f","port":53317,"protocol":"https"}"#
            ),
        ] {
            let r = try c.request(method, path, body: Array(body.utf8))
            #expect(r.status == 200, "\(path)")
            let json = try #require(try JSONSerialization.jsonObject(with: Data(r.body)) as? [String: Any])
            #expect(json["alias"] as? String == "Home Server")
            #expect(json["fingerprint"] as? String == expected)
            #expect(json["deviceType"] as? String == "headless")
            #expect(json["version"] as? String == "2.1")
            #expect(json["download"] as? Bool == false)
        }
        // Unknown routes and methods, on the same keep-alive connection.
        #expect(try c.request("GET", "/api/localsend/v2/nothing").status == 404)
        #expect(try c.request("DELETE", "/api/localsend/v2/info").status == 405)
        #expect(try c.request("GET", "/api/localsend/v2/info").status == 200)
        // The certificate is kept: a restart shows the same fingerprint.
        #expect(d.stop() == 0)
        let again = try DaemonProcess.withLocalSend(["--name", "Home Server"], root: d.root)
        let r = try LocalSendApp(port: again.localSendPort).connect().request("GET", "/api/localsend/v2/info")
        #expect(String(decoding: r.body, as: UTF8.self).contains(expected))
    }

    @Test(
        "a v2.1 app sends two PNGs at once (Content-Length and chunked without Content-Type); a GIF, and a JPEG with localsend-types = image/png, are skipped; names are made safe; bytes, log and library match",
        arguments: ["2.1", "2.2"])
    func sendPhotos(version: String) throws {
        let d = try DaemonProcess.withLocalSend(version == "2.2" ? ["--types", "image/png"] : [])
        let app = try LocalSendApp(port: d.localSendPort, alias: "Pixel 8", version: version)
        let a = pngFile("a", "DCIM/Screenshots/shot.png", size: 700_000, seed: 3)
        let b = pngFile("b", "../../etc/evil.png", size: 250_000, seed: 4, hash: false)
        // Not a type ptkd keeps (a GIF); or, with localsend-types = image/png, a JPEG.
        let jpeg =
            version == "2.2"
            ? pngFile("c", "photo.jpg", size: 1000, type: "image/jpeg")
            : pngFile("c", "anim.gif", size: 1000, type: "image/gif")
        let c = try app.connect()
        let (status, json) = try app.prepare([a, b, jpeg], on: c)
        #expect(status == 200)
        let (session, files) = tokens(json)
        #expect(Set(files.keys) == ["a", "b"])
        // Two uploads of one session at once, on two connections.
        let results = Locked<[Int]>([])
        let done = Semaphore()
        try startThread(name: "test") {
            let r = try? app.upload(session: session, fileID: "b", token: files["b"]!, bytes: b.bytes, chunked: 8192)
            results.mutate { $0.append(r?.status ?? -1) }
            done.signal()
        }
        let first = try app.upload(session: session, fileID: "a", token: files["a"]!, bytes: a.bytes, on: c)
        done.wait()
        #expect(first.status == 200, "\(first.body)")
        #expect(results.value == [200])
        #expect(Set(d.visible) == ["shot.png", "evil.png"])
        #expect(readFile(d.dir + "/shot.png") == a.bytes)
        #expect(readFile(d.dir + "/evil.png") == b.bytes)
        #expect(d.incoming.isEmpty)
        #expect(
            eventually { d.log.contains("\"Pixel 8\" (LocalSend \(app.fingerprint!.prefix(8))): saved \"shot.png\"") },
            "\(d.log)")
        #expect(eventually { d.log.contains("prepare-upload of 3 file(s): accepted 2") })
        // The library knows who sent them.
        #expect(waitForIndex(d, ["shot.png", "evil.png"]))
        let entry = try #require(try listed(d).first { $0["Name"] as? String == "shot.png" })
        #expect(entry["SenderName"] as? String == "Pixel 8")
        #expect(entry["SenderID"] as? String == "LocalSend \(app.fingerprint!)")
        // The session is over: the same address may start another; a used token is refused.
        #expect(try app.upload(session: session, fileID: "a", token: files["a"]!, bytes: a.bytes).status == 403)
        #expect(try app.prepare([pngFile("x", "x.png", size: 5000)]).status == 200)
    }

    @Test(
        "with image/jpeg in --types, a camera JPEG is saved as .jpg and indexed with its thumbnail; a cut JPEG or a PNG sent as JPEG is 400; other types are skipped"
    )
    func jpeg() throws {
        let d = try DaemonProcess.withLocalSend(["--types", "image/png,image/jpeg"])
        let app = try LocalSendApp(port: d.localSendPort, alias: "Pixel 8")
        let photo = makeJPEG(width: 800, height: 600, progressive: true, seed: 11)
        let cut = Array(makeJPEG(width: 300, height: 200, seed: 12).dropLast(100))
        let png = makePNG(size: 20_000, seed: 13)
        let files: [(id: String, name: String, bytes: [UInt8], type: String, hash: String?)] = [
            ("cam", "DCIM/Camera/PXL_20261130.jpg", photo, "image/jpeg", sha256Hex(photo)),
            ("cut", "cut.jpeg", cut, "image/jpeg", nil),
            ("png", "screenshot.jpg", png, "image/jpeg", sha256Hex(png)),
            ("heic", "IMG_1.heic", [1, 2, 3], "image/heic", nil),
        ]
        let (status, json) = try app.prepare(files)
        #expect(status == 200)
        let (session, tokens) = tokens(json)
        #expect(Set(tokens.keys) == ["cam", "cut", "png"])
        let saved = try app.upload(
            session: session, fileID: "cam", token: tokens["cam"]!, bytes: photo, chunked: 16_384)
        #expect(saved.status == 200, "\(saved.body)")
        let broken = try app.upload(session: session, fileID: "cut", token: tokens["cut"]!, bytes: cut)
        #expect(broken.status == 400)
        #expect(broken.body.contains("not a well-formed JPEG"))
        let mislabelled = try app.upload(session: session, fileID: "png", token: tokens["png"]!, bytes: png)
        #expect(mislabelled.status == 400)
        #expect(mislabelled.body.contains("does not start with the JPEG SOI marker"))
        #expect(d.visible == ["PXL_20261130.jpg"])
        #expect(readFile(d.dir + "/PXL_20261130.jpg") == photo)
        #expect(eventually { d.incoming.isEmpty }, "\(d.incoming)")
        #expect(waitForIndex(d, ["PXL_20261130.jpg"]))
        let entry = try #require(try listed(d).first)
        #expect(entry["Width"] as? Int == 800)
        #expect(entry["Height"] as? Int == 600)
        #expect(entry["Problem"] == nil, "\(entry)")
        let show = try library(d, ["show", "PXL_20261130"])
        #expect(show.stdout.contains("image:     JPEG, 800x600, 8-bit truecolour, progressive"), "\(show.stdout)")
        let thumb = d.root + "/thumb.jpg"
        let t = try library(d, ["thumbnail", "PXL_20261130", "-o", thumb])
        #expect(t.status == 0, "\(t.stderr)")
        // The gallery's largest thumbnail, a JPEG (the photo is opaque).
        #expect(readFile(thumb).map { Array($0.prefix(3)) } == [0xFF, 0xD8, 0xFF])
    }

    @Test("an app without a client certificate (before 1.18) sends too; a name taken gets \" (2)\"")
    func olderAppWithoutCertificate() throws {
        let d = try DaemonProcess.withLocalSend()
        let app = try LocalSendApp(port: d.localSendPort, certificate: false, version: "2.0")
        for seed in [5, 6] as [UInt64] {
            let f = pngFile("f", "same.png", size: 20_000, seed: seed)
            let (status, json) = try app.prepare([f])
            #expect(status == 200)
            let (session, files) = tokens(json)
            #expect(try app.upload(session: session, fileID: "f", token: files["f"]!, bytes: f.bytes).status == 200)
        }
        #expect(Set(d.visible) == ["same.png", "same (2).png"])
        #expect(eventually { d.log.contains("(no certificate)") })
    }

    @Test(
        "refusals: wrong token or session 403, a file twice 409, a second session 409, wrong sha256 422, not a PNG 400, a body longer or shorter than announced 400; nothing partial is left"
    )
    func refusals() throws {
        let d = try DaemonProcess.withLocalSend()
        let app = try LocalSendApp(port: d.localSendPort)
        let good = pngFile("good", "good.png", size: 30_000, seed: 1)
        var badHash = pngFile("hash", "hash.png", size: 30_000, seed: 2)
        badHash.hash = String(repeating: "0", count: 64)
        let text = Array(String(repeating: "not a png ", count: 100).utf8)
        let notPNG = (id: "text", name: "text.png", bytes: text, type: "image/png", hash: Optional(sha256Hex(text)))
        let long = pngFile("long", "long.png", size: 10_000, seed: 3)
        let (status, json) = try app.prepare([good, badHash, notPNG, long])
        #expect(status == 200)
        let (session, files) = tokens(json)
        // Another app at the address waits for this session (the same app starting over would replace it).
        #expect(try LocalSendApp(port: d.localSendPort).prepare([good]).status == 409)
        #expect(
            try app.upload(session: session, fileID: "good", token: files["hash"]!, bytes: good.bytes).status == 403)
        #expect(try app.upload(session: "nope", fileID: "good", token: files["good"]!, bytes: good.bytes).status == 403)
        let missing = try app.connect().request(
            "POST", "/api/localsend/v2/upload?sessionId=\(session)", body: good.bytes)
        #expect(missing.status == 400)
        #expect(
            try app.upload(session: session, fileID: "good", token: files["good"]!, bytes: good.bytes).status == 200)
        #expect(
            try app.upload(session: session, fileID: "good", token: files["good"]!, bytes: good.bytes).status == 409)
        let hash = try app.upload(session: session, fileID: "hash", token: files["hash"]!, bytes: badHash.bytes)
        #expect(hash.status == 422, "\(hash.body)")
        #expect(try app.upload(session: session, fileID: "text", token: files["text"]!, bytes: text).status == 400)
        // Chunked, more bytes than prepare-upload announced: cut off.
        let over = try app.upload(
            session: session, fileID: "long", token: files["long"]!, bytes: long.bytes + [0, 0, 0], chunked: 4096)
        #expect(over.status == 400, "\(over.body)")
        // Content-Length that is not the announced size: refused before the body.
        let c = try app.connect()
        let wrongLength = try c.request(
            "POST", "/api/localsend/v2/upload?sessionId=\(session)&fileId=long&token=\(files["long"]!)",
            body: Array(long.bytes.dropLast()))
        #expect(wrongLength.status == 400)
        // Failed files may be sent again, correctly.
        #expect(
            try app.upload(session: session, fileID: "long", token: files["long"]!, bytes: long.bytes).status == 200)
        #expect(Set(d.visible) == ["good.png", "long.png"])
        #expect(eventually { d.incoming.isEmpty }, "\(d.incoming)")
        #expect(eventually { d.log.contains("answered 422") })
    }

    @Test(
        "an upload cut off before (a partial in .incoming) is resumed when the app sends the whole file again, and lands intact"
    )
    func resumesPartial() throws {
        let root = makeTemporaryDirectory("ptk-e2e")
        defer { removeTree(root) }
        let f = pngFile("r", "resumed.png", size: 350_000, seed: 8)
        mkdir(root + "/photos", 0o755)
        mkdir(root + "/photos/.incoming", 0o700)
        // What ptkd keeps of an upload killed mid-file: whole 100 KiB pieces of it.
        writeFile(root + "/photos/.incoming/\(f.hash!)-\(f.bytes.count).part", Array(f.bytes.prefix(204_800)))
        let d = try DaemonProcess.withLocalSend(root: root)
        let app = try LocalSendApp(port: d.localSendPort)
        let (status, json) = try app.prepare([f])
        #expect(status == 200)
        let (session, files) = tokens(json)
        #expect(try app.upload(session: session, fileID: "r", token: files["r"]!, bytes: f.bytes).status == 200)
        #expect(readFile(d.dir + "/resumed.png") == f.bytes)
        #expect(d.incoming.isEmpty)
        #expect(eventually { d.log.contains("\"resumed.png\" (350 kB): resuming at byte 204800") }, "\(d.log)")
    }

    @Test("over the session limits an app's request is answered 429 (try again later), and served once a slot is free")
    func busy() throws {
        let d = try DaemonProcess.withLocalSend(["--max-sessions-per-address", "1"])
        let app = try LocalSendApp(port: d.localSendPort)
        let holder = try app.connect()
        #expect(try holder.request("GET", "/api/localsend/v2/info").status == 200)
        let refused = try app.prepare([pngFile("p", "p.png", size: 300_000)])
        #expect(refused.status == 429)
        #expect(
            eventually { d.log.contains("refused, 127.0.0.1 already has 1 sessions open; answered 429") }, "\(d.log)")
        holder.close()
        #expect(eventually { (try? app.prepare([pngFile("p", "p.png", size: 3000)]).status) == 200 })
    }

    @Test("cancel ends the session: its tokens are refused and the address may start again")
    func cancel() throws {
        let d = try DaemonProcess.withLocalSend()
        let app = try LocalSendApp(port: d.localSendPort)
        let f = pngFile("f", "f.png", size: 10_000)
        let (_, json) = try app.prepare([f])
        let (session, files) = tokens(json)
        let c = try app.connect()
        #expect(try c.request("POST", "/api/localsend/v2/cancel?sessionId=\(session)", contentType: nil).status == 200)
        #expect(try app.upload(session: session, fileID: "f", token: files["f"]!, bytes: f.bytes).status == 403)
        #expect(try app.prepare([f]).status == 200)
        #expect(eventually { d.log.contains("the sender cancelled") })
        #expect(d.visible.isEmpty)
    }

    @Test(
        "--localsend-pin: 401 without or with a wrong PIN, 429 after three wrong tries (even with the right one), from that address"
    )
    func pin() throws {
        let d = try DaemonProcess.withLocalSend(["--localsend-pin", "4711"])
        let app = try LocalSendApp(port: d.localSendPort)
        let f = pngFile("f", "f.png", size: 10_000)
        #expect(try app.prepare([f]).status == 401)
        #expect(try app.prepare([f], pin: "1").status == 401)
        #expect(try app.prepare([f], pin: "2").status == 401)
        #expect(try app.prepare([f], pin: "3").status == 429)
        #expect(try app.prepare([f], pin: "4711").status == 429)
        #expect(eventually { d.log.contains("too many wrong PINs") })
        let other = try DaemonProcess.withLocalSend(["--localsend-pin", "4711"])
        let (status, json) = try LocalSendApp(port: other.localSendPort).prepare([f], pin: "4711")
        #expect(status == 200)
        #expect(!tokens(json).0.isEmpty)
    }

    @Test(
        "--senders trusted: an app's certificate is refused (403) and pending under its alias; `ptk trust allow` admits it; without a certificate never"
    )
    func trusted() throws {
        let d = try DaemonProcess.withLocalSend(["--senders", "trusted"])
        let app = try LocalSendApp(port: d.localSendPort, alias: "Anna's phone")
        let f = pngFile("f", "f.png", size: 10_000)
        #expect(try app.prepare([f]).status == 403)
        let pending = try ptk(d, ["trust", "pending"])
        #expect(
            pending.stdout.hasPrefix("LocalSend  \(app.fingerprint!)  \"Anna's phone\" from 127.0.0.1:"),
            "\(pending.stdout)")
        let allowed = try ptk(d, ["trust", "allow", String(app.fingerprint!.prefix(10)).lowercased()])
        #expect(allowed.stdout == "trusted \(app.fingerprint!) as \"Anna's phone\"\n", "\(allowed.stderr)")
        #expect(try ptk(d, ["trust", "list"]).stdout == "LocalSend  \(app.fingerprint!)  Anna's phone\n")
        let (status, json) = try app.prepare([f])
        #expect(status == 200)
        let (session, files) = tokens(json)
        #expect(try app.upload(session: session, fileID: "f", token: files["f"]!, bytes: f.bytes).status == 200)
        let anonymous = try LocalSendApp(port: d.localSendPort, certificate: false)
        #expect(try anonymous.prepare([f]).status == 403)
        #expect(eventually { d.log.contains("the app showed no certificate") })
    }

    @Test(
        "hostile: plain HTTP gets 400, a bare connect-and-close is silent, garbage is 400, an oversized head 431, a slow request 408; ptkd keeps serving"
    )
    func hostile() throws {
        let d = try DaemonProcess.withLocalSend(["--handshake-timeout", "2", "--idle-timeout", "2"])
        let port = d.localSendPort
        let address = SocketAddress(numericHost: "127.0.0.1", port: port)!
        // Plain HTTP on the HTTPS port.
        let plain = try Socket.connect(to: address, deadline: .now + .seconds(2))
        let tcp = TCPStream(socket: plain, peer: address)
        let plainConnection = AppConnection(stream: tcp)
        try plainConnection.write(Array("GET /api/localsend/v2/info HTTP/1.1\r\n\r\n".utf8))
        #expect(try plainConnection.readResponse().status == 400)
        plainConnection.close()
        // Connect and close, without a byte.
        let bare = try Socket.connect(to: address, deadline: .now + .seconds(2))
        let bareAddress = try Socket.localAddress(bare)
        bare.close()
        let app = try LocalSendApp(port: port)
        // Garbage inside TLS.
        let g = try app.connect()
        try g.write(Array("\u{1}\u{2}\u{3} nonsense\r\n\r\n".utf8))
        #expect(try g.readResponse().status == 400)
        // A head over the limit.
        let big = try app.connect()
        #expect(
            try big.request(
                "GET", "/api/localsend/v2/info", extraHeaders: "X-Big: \(String(repeating: "a", count: 20_000))\r\n"
            ).status == 431)
        // Half a request, then silence: 408 after the timeout, the slot freed.
        let slow = try app.connect()
        try slow.write(Array("POST /api/localsend/v2/prepare-upload HTTP/1.1\r\nContent-Le".utf8))
        let started = Date()
        #expect(try slow.readResponse(timeout: 10).status == 408)
        #expect(Date().timeIntervalSince(started) < 6)
        // A body that stops halfway: the upload fails after the idle timeout, nothing is kept.
        let f = pngFile("f", "f.png", size: 50_000)
        let (_, json) = try app.prepare([f])
        let (session, files) = tokens(json)
        let half = try app.connect()
        try half.write(
            Array(
                "POST /api/localsend/v2/upload?sessionId=\(session)&fileId=f&token=\(files["f"]!) HTTP/1.1\r\nContent-Length: \(f.bytes.count)\r\n\r\n"
                    .utf8) + f.bytes.prefix(20_000))
        #expect(try half.readResponse(timeout: 10).status == 408)
        #expect(eventually { d.incoming.isEmpty })
        // Still serving, and the failed file may be sent again.
        #expect(try app.upload(session: session, fileID: "f", token: files["f"]!, bytes: f.bytes).status == 200)
        #expect(d.visible == ["f.png"])
        #expect(!d.log.contains("from \(bareAddress):"), "the bare connect-and-close is not logged")
        #expect(eventually { d.log.contains("plain HTTP on the HTTPS port; answered 400") })
        #expect(d.stop() == 0)
    }

    @Test("a TLS ClientHello on ptkd's protocol v1 port is a failed session, not a crash")
    func tlsOnTheProtocolPort() throws {
        let d = try DaemonProcess.withLocalSend()
        let app = try LocalSendApp(port: d.port)
        // ptkd answers the handshake (protocol v1 is TLS too) and then refuses HTTP as a frame.
        if let c = try? app.connect() {
            _ = try? c.request("GET", "/api/localsend/v2/info")
            c.close()
        }
        #expect(
            try LocalSendApp(port: d.localSendPort).connect().request("GET", "/api/localsend/v2/info").status == 200)
        #expect(d.stop() == 0)
    }
}

/// A value shared between threads of a test.
final class Locked<T>: @unchecked Sendable {
    private var v: T
    private let lock = NSLock()
    init(_ v: T) { self.v = v }
    var value: T {
        lock.lock()
        defer { lock.unlock() }
        return v
    }
    func mutate(_ f: (inout T) -> Void) {
        lock.lock()
        f(&v)
        lock.unlock()
    }
}

@Suite(
    "End to end: LocalSend discovery in a private network namespace",
    .enabled(if: canRunAvahi, "needs root, nsenter and unshare"), .serialized, .tags(.endToEnd, .root))
struct LocalSendDiscoveryTests {
    @Test(
        "ptkd joins the group when lo gains multicast, announces itself; an HTTPS app's announcement gets a register call, one on a port below 1024 a multicast answer"
    )
    func announceAndAnswer() throws {
        let host = try MDNSHost(startAvahi: false)
        let d = try DaemonProcess.withLocalSend(
            ["--name", "Attic"], wrapper: ["/usr/bin/nsenter", "-t", String(host.pid), "-n", "-m", "--"], mdns: true)
        // No multicast interface yet: nothing is announced, nothing fails.
        #expect(!d.log.contains("LocalSend discovery on"))
        try host.sh("ip link set lo multicast on && ip route add 224.0.0.0/4 dev lo")
        let peer = try run(
            "/usr/bin/nsenter",
            [
                "-t", String(host.pid), "-n", "-m", "--", "/usr/bin/python3",
                repositoryRoot() + "/Tests/Fixtures/localsend/peer.py", "--port", "53999", "--timeout", "20",
            ],
            timeout: 30, absolute: true)
        let events = peer.stdout.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        #expect(peer.status == 0, "\(peer.stdout) \(peer.stderr) \(d.log)")
        let heard = events.filter { $0["event"] as? String == "heard" }.compactMap { $0["message"] as? [String: Any] }
        let announcement = try #require(heard.first { $0["announce"] as? Bool == true }, "\(events)")
        #expect(announcement["alias"] as? String == "Attic")
        #expect(announcement["announcement"] as? Bool == true)
        #expect(announcement["deviceType"] as? String == "headless")
        #expect(announcement["protocol"] as? String == "https")
        #expect(announcement["port"] as? Int == Int(d.localSendPort))
        let fingerprint = try run("ptk", ["--config", "/dev/null", "--state-dir", d.stateDir, "id", "localsend"]).stdout
        #expect(announcement["fingerprint"] as? String == fingerprint.trimmingCharacters(in: .whitespacesAndNewlines))
        let register = try #require(events.first { $0["event"] as? String == "register" }?["message"] as? [String: Any])
        #expect(register["alias"] as? String == "Attic")
        #expect(register["port"] as? Int == Int(d.localSendPort))
        let answer = try #require(heard.first { $0["announce"] as? Bool == false })
        #expect(answer["alias"] as? String == "Attic")
        #expect(d.log.contains("LocalSend discovery on lo (127.0.0.1)"))
        #expect(d.log.contains("\"Test Phone\" at 127.0.0.1:53999 announced itself; registered with it"), "\(d.log)")
        #expect(
            d.log.contains(
                "\"Ghost\" at 127.0.0.2:9 announced itself; not registered (port 9 is outside 1024-65535), answered by multicast"
            ), "\(d.log)")
        // Its own announcements, looped back, are not answered.
        #expect(!d.log.contains("\"Attic\" at"))
        #expect(d.stop() == 0)
    }

    @Test(
        "when its wait for announcements fails, discovery says so once, tries again every second and goes on working",
        .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/strace"), "needs strace"))
    func pollFailureRecovers() throws {
        let host = try MDNSHost(startAvahi: false)
        let d = try DaemonProcess.withLocalSend(
            [], wrapper: ["/usr/bin/nsenter", "-t", String(host.pid), "-n", "-m", "--"], mdns: true)
        // strace counts calls per thread from when it attaches. The accept loop and the signal
        // watcher are inside their poll by now, and nothing connects: the next polls made are
        // the discovery thread's (every 5 s, to look at the interfaces). Its next three fail.
        let strace = try attachStrace(
            d, ["-e", "trace=poll", "-e", "inject=poll:error=ENOMEM:when=1..3", "-o", "/dev/null"])
        defer { if strace.isRunning { kill(strace.processIdentifier, SIGKILL) } }
        #expect(
            eventually(20) {
                d.log.contains("LocalSend: discovery waits for announcements again (after 3 failed wait(s))")
            }, "\(d.log)")
        let warnings =
            d.log.components(separatedBy: "warning: LocalSend: discovery cannot wait for announcements (").count - 1
        #expect(warnings == 1, "\(d.log)")
        #expect(d.log.contains("trying again every second"))
        // Gone before anything else polls (the stop's signal restarts the accept loop's poll).
        // SIGKILL: strace inherits the test's blocked SIGTERM; the kernel detaches its tracees.
        kill(strace.processIdentifier, SIGKILL)
        try #require(eventually { !strace.isRunning }, "strace did not end")
        // Still at work: an interface that gains multicast is joined and announced on.
        try host.sh("ip link set lo multicast on && ip route add 224.0.0.0/4 dev lo")
        #expect(eventually(20) { d.log.contains("LocalSend discovery on lo (127.0.0.1)") }, "\(d.log)")
        #expect(d.stop() == 0)
    }
}
