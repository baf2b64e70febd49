import Foundation
import Glibc
import PTKSystem
import PTKTLS
import PTKTestSupport
import PTKTestTags
import PTKTransport
import Testing

/// A slow PUT: its head and the start of a PNG announced at 10 MB (its signature, IHDR and an
/// IDAT of 9,000,000 bytes, which the store's check takes as they come), from `source`.
private final class SlowPut {
    let connection: AppConnection
    init(port: UInt16, from source: String, context: TLSContext, authorization: String, name: String) throws {
        connection = try connect(port: port, from: source, context: context)
        let head =
            "PUT /dav/\(name) HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: \(authorization)\r\nContent-Length: 10000000\r\n\r\n"
        let start = Array(makePNG(size: 200, seed: 1).prefix(33)) + [0x00, 0x89, 0x54, 0x40] + Array("IDAT".utf8)
        try connection.write(Array(head.utf8) + start + [UInt8](repeating: 0, count: 1024))
    }

    /// One more kilobyte; false once the door has closed it.
    // a closed connection: false
    func trickle() -> Bool { (try? connection.write([UInt8](repeating: 0, count: 1024))) != nil }
}

@Suite("End to end: the WebDAV door against the third audit (issue 54)", .serialized, .tags(.endToEnd))
struct DAVAuditE2ETests {
    @Test(
        "inode reuse on ext4: up1's name never reads the photo another device sent after the admin removed up1's (5 rounds, flat layout)",
        .enabled(
            if: isRoot && FileManager.default.fileExists(atPath: "/usr/bin/unshare")
                && haveProgram("/usr/sbin/mkfs.ext4"),
            "needs root, unshare and mkfs.ext4 to mount a small ext4 file system in a private mount namespace"),
        .tags(.root))
    func inodeReuseOnExt4() throws {
        let root = makeTemporaryDirectory("ptk-ext4")
        defer { removeTree(root) }
        mkdir(root + "/photos", 0o755)
        let image = root + "/photos.ext4"
        let made = try run("/usr/sbin/mkfs.ext4", ["-q", "-F", "-N", "256", image, "32M"], absolute: true)
        #expect(made.status == 0, "\(made.stderr)")
        let d = try DaemonProcess(
            ["--web", "on", "--web-port", "0", "--layout", "flat", "--min-free", "0"], root: root,
            wrapper: [
                "/usr/bin/unshare", "-m", "--propagation", "private", "/bin/sh", "-c",
                "mount -o loop \"$1\" \"$0\" && shift && exec \"$@\"", root + "/photos", image,
            ])
        defer { _ = d.stop() }
        let view = "/proc/\(d.process.processIdentifier)/root" + d.dir
        let up1 = try d.appPassword("up1", access: "upload")
        let phone = try d.appPassword("phone", access: "upload")
        let admin = try d.appPassword("admin", access: "full")
        let s1 = try DAVSession(port: d.webPort, userAgent: "up1", authorization: up1.basic)
        let sp = try DAVSession(port: d.webPort, userAgent: "phone", authorization: phone.basic)
        let sa = try DAVSession(port: d.webPort, userAgent: "admin", authorization: admin.basic)
        var reused = 0
        for i in 0..<5 {
            let name = "IMG_00\(42 + i).png"
            let mine = makePNG(size: 4000, seed: UInt64(600 + i))
            var theirs = makePNG(size: 4000, seed: UInt64(700 + i))
            theirs = Array(theirs.prefix(mine.count)) + [UInt8](repeating: 0, count: max(0, mine.count - theirs.count))
            #expect(try s1.send("PUT", "/dav/\(name)", body: mine).status == 201)
            var st = stat()
            #expect(lstat(view + "/" + name, &st) == 0)
            let before = st.st_ino
            #expect(try sa.send("DELETE", "/dav/\(name)").status == 204)
            #expect(try sp.send("PUT", "/dav/\(name)", body: theirs).status == 201)
            #expect(lstat(view + "/" + name, &st) == 0)
            if st.st_ino == before { reused += 1 }
            let got = try s1.send("GET", "/dav/\(name)")
            #expect(
                got.status == 404 && got.body != theirs, "round \(i): \(got.status), inode \(before) -> \(st.st_ino)")
            let listing = try s1.send("PROPFIND", "/dav/", headers: [("Depth", "1")], body: finderPropfind)
            #expect(
                listing.status == 207 && !listedNames(listing.text, in: "/dav/").contains(name),
                "round \(i): \(listing.text.prefix(600))")
        }
        // Without a reuse the rounds prove nothing: ext4 gives the freed number to the next file.
        #expect(reused > 0, "no inode was reused in 5 rounds")
        print(
            "inode reuse on ext4: \(reused) of 5 rounds reused the removed photo's inode; none was readable by its old name"
        )
    }

    @Test(
        "ptk app-password remove: the full password's exclusive lock of /dav/ stops 423ing others at once, and its names and sidecars go"
    )
    func removeEndsLocks() throws {
        let d = try DaemonProcess.withDAV()
        defer { _ = d.stop() }
        let desk = try d.appPassword("desk", access: "full")
        let laptop = try d.appPassword("laptop", access: "full")
        let phone = try d.appPassword("phone", access: "upload")
        let sd = try DAVSession(port: d.webPort, userAgent: "desk", authorization: desk.basic)
        let sl = try DAVSession(port: d.webPort, userAgent: "laptop", authorization: laptop.basic)
        let sp = try DAVSession(port: d.webPort, userAgent: "phone", authorization: phone.basic)
        #expect(try sp.send("PUT", "/dav/p.png", body: makePNG(size: 3000, seed: 610)).status == 201)
        #expect(try sp.send("PUT", "/dav/._p.png", body: [1, 2, 3]).status == 201)
        #expect(
            try sd.send(
                "LOCK", "/dav/", headers: [("Depth", "infinity"), ("Timeout", "Second-3600")],
                body: lockInfo(owner: "desk")
            ).status == 200)
        #expect(try sl.send("PUT", "/dav/a.png", body: makePNG(size: 3000, seed: 611)).status == 423)
        let phoneID = try #require(
            listDirectory(d.stateDir + "/web/dav").first { $0.hasSuffix(".names") }?.split(separator: ".").first.map(
                String.init))
        for name in ["desk", "phone"] {
            let r = try library(d, ["app-password", "remove", name])
            #expect(r.status == 0, "\(r.stderr)")
        }
        #expect(try sl.send("PUT", "/dav/a.png", body: makePNG(size: 3000, seed: 611)).status == 201)
        #expect(
            !listDirectory(d.stateDir + "/web/dav").contains { $0.hasPrefix(phoneID) },
            "\(listDirectory(d.stateDir + "/web/dav"))")
        #expect(d.log.contains("was removed: its 1 lock(s)"), "\(d.log.suffix(1500))")
    }

    @Test(
        "300 requests with a 12,000-byte Basic user name and a wrong password: a bounded log (each line cut, at most the minute's budget)"
    )
    func longUserNames() throws {
        let d = try DaemonProcess.withDAV()
        defer { _ = d.stop() }
        let before = d.log.utf8.count
        let name = String(repeating: "U", count: 12_000)
        let auth = "Basic " + Data("\(name):wrong".utf8).base64EncodedString()
        var statuses: [Int: Int] = [:]
        let session = try DAVSession(port: d.webPort, userAgent: "flood", authorization: auth)
        for _ in 0..<300 {
            // a closed connection is counted as 0
            let status = (try? session.send("PROPFIND", "/dav/", headers: [("Depth", "0")]).status) ?? 0
            statuses[status, default: 0] += 1
        }
        // Plain HTTP on the TLS port, and handshakes that fail, from the same address.
        for _ in 0..<100 {
            let sock = try Socket.connect(
                to: SocketAddress(numericHost: "127.0.0.1", port: d.webPort)!, deadline: .now + .seconds(5))
            // refused or closed: what is logged is the point
            _ = try? sock.writeAll(Array("GET / HTTP/1.0\r\nUser-Agent: \(name)\r\n\r\n".utf8))
            sock.close()
        }
        sleep(for: .seconds(1))
        let grown = d.log.utf8.count - before
        let lines = d.log.split(separator: "\n").filter { $0.contains("from 127.0.0.1") }
        #expect((statuses[401] ?? 0) + (statuses[429] ?? 0) > 250, "\(statuses)")
        #expect(grown < 64 << 10, "the log grew by \(grown) bytes: \(d.log.suffix(3000))")
        #expect(lines.allSatisfy { $0.utf8.count <= 2_100 }, "\(lines.map(\.utf8.count).max() ?? 0)")
        #expect(!d.log.contains(String(repeating: "U", count: 200)))
        print(
            "300 wrong passwords with a 12,000-byte user name and 100 plain-HTTP probes: the log grew by \(grown) bytes, \(lines.count) lines"
        )
    }

    @Test(
        "300 connections to the v1 port that close at once or are not ptk sessions: at most the minute's budget of lines from that address"
    )
    func v1ConnectionLines() throws {
        let d = try DaemonProcess()
        defer { _ = d.stop() }
        let before = d.log.split(separator: "\n").count
        for i in 0..<300 {
            let sock = try Socket.connect(
                to: SocketAddress(numericHost: "127.0.0.1", port: d.port)!, deadline: .now + .seconds(5))
            // refused or closed: what is logged is the point
            if i % 2 == 1 { _ = try? sock.writeAll(Array("GET / HTTP/1.0\r\n\r\n".utf8)) }
            sock.close()
        }
        sleep(for: .seconds(2))
        let written = d.log.split(separator: "\n").dropFirst(before)
        let lines = written.count
        // Every line after the start, in full: a failure must say which lines went over.
        #expect(lines <= 31, "\(lines) lines:\n\(written.joined(separator: "\n"))")
        #expect(lines >= 10)
        // A sender is still served, and logged.
        #expect(try send(d, [photo(d.root, "after.png", size: 20_000, seed: 9)]).status == 0)
    }

    @Test(
        "80 slow PUTs from 10 addresses by one upload password: a browser and another password from elsewhere are still served"
    )
    func passwordShare() throws {
        let d = try DaemonProcess.withDAV()
        defer { _ = d.stop() }
        let flood = try d.appPassword("flood", access: "upload")
        let other = try d.appPassword("other", access: "upload")
        ignoreBrokenPipeSignal()
        let context = try TLSContext(server: false, identity: nil, flavor: .web)
        var opened: [SlowPut] = []
        for i in 0..<80 {
            if let p = try? SlowPut(
                port: d.webPort, from: "127.0.0.\(10 + i % 10)", context: context, authorization: flood.basic,
                name: "f\(i).png")
            {  // refused at once: not one of the 80
                opened.append(p)
            }
        }
        let puts = Locked(opened)
        // Keep them coming at 3 KB/s (faster than the door's 1 KiB/s floor) while the others ask.
        let stop = Locked(false)
        let trickled = Semaphore()
        try startThread(name: "trickle") {
            while !stop.value {
                for p in puts.value { _ = p.trickle() }
                usleep(330_000)
            }
            trickled.signal()
        }
        defer {
            stop.mutate { $0 = true }
            trickled.wait()
        }
        sleep(for: .seconds(3))
        print(
            "slow PUTs open: \(opened.count); refused for the password's share: \(d.log.components(separatedBy: "share of the connections").count - 1); 429 in the log: \(d.log.components(separatedBy: "answered 429").count - 1)"
        )
        let browser = try connect(port: d.webPort, from: "127.0.0.99", context: context)
        let page = try browser.request("GET", "/login", contentType: nil)
        #expect(
            page.status == 200,
            "the login page: \(page.status) \(String(decoding: page.body, as: UTF8.self).prefix(300))")
        let dav = try connect(port: d.webPort, from: "127.0.0.98", context: context)
        let listed = try dav.request(
            "PROPFIND", "/dav/", contentType: nil,
            extraHeaders: "Depth: 0\r\nAuthorization: \(other.basic)\r\nContent-Length: 0\r\n")
        #expect(listed.status == 207, "another password's PROPFIND: \(listed.status)")
        #expect(d.log.contains("share of the connections"), "\(d.log.suffix(2000))")
    }
}
