import Foundation
import PTKLocalSend
import PTKSystem
import PTKTLS
import PTKTestSupport
import PTKTestTags
import PTKTransport
import PTKVocabulary
import Testing

/// A TLS connection to ptkd's `port` from the loopback address `source` (127.0.0.2, ...): the
/// tests' peers at other addresses.
func connect(port: UInt16, from source: String, context: TLSContext) throws -> AppConnection {
    let address = SocketAddress(numericHost: "127.0.0.1", port: port)!
    let sock = try Socket.connect(
        to: address, from: SocketAddress(numericHost: source, port: 0)!, deadline: .now + .seconds(5))
    return AppConnection(
        stream: try TLSStream(socket: sock, peer: address, context: context, deadline: .now + .seconds(5)))
}

private func hookConfig(_ root: String, _ body: String) -> String {
    writeFile(root + "/hook", Array("#!/bin/sh\n\(body)\n".utf8))
    chmod(root + "/hook", 0o755)
    writeFile(root + "/ptkd.conf", Array("on-saved = \(root)/hook\n".utf8))
    return root + "/ptkd.conf"
}

/// Lines in a file (0 when there is none).
private func lineCount(_ path: String) -> Int { (readFile(path) ?? []).filter { $0 == UInt8(ascii: "\n") }.count }

@Suite("End to end: the audits' floods and forgeries (issues 40 and 41)", .serialized, .tags(.endToEnd))
struct AuditFloodTests {
    @Test(
        "a prepare-upload naming a kept photo 10,000 times with a 120 kB alias queues one hook run; another app's photo still gets its run"
    )
    func duplicateFloodQueuesOneRun() throws {
        let root = makeTemporaryDirectory("ptk-audit")
        let conf = hookConfig(root, "printf '%s %s\\n' \"$PTK_NAME\" \"${PTK_DUPLICATE:-0}\" >> \(root)/runs")
        let d = try DaemonProcess.withLocalSend(["--config", conf], root: root)
        defer {
            _ = d.stop()
            removeTree(root)
        }
        let app = try LocalSendApp(port: d.localSendPort, alias: String(repeating: "A", count: 120_000))
        let f = pngFile("f", "f.png", size: 20_000, seed: 5)
        let (status, json) = try app.prepare([f])
        #expect(status == 200)
        let (session, files) = tokens(json)
        #expect(try app.upload(session: session, fileID: "f", token: files["f"]!, bytes: f.bytes).status == 200)
        #expect(eventually { lineCount(root + "/runs") == 1 }, "\(d.log.suffix(2000))")
        // 10,000 entries, each the kept photo's hash: answered 204, and one run for all of them.
        let mentions = (0..<10_000).map {
            (id: "d\($0)", name: "d\($0).png", bytes: f.bytes, type: "image/png", hash: f.hash)
        }
        let started = Date()
        #expect(try app.prepare(mentions).status == 204)
        #expect(try app.prepare(Array(mentions.prefix(100))).status == 204)
        let floodSeconds = Date().timeIntervalSince(started)
        let other = try LocalSendApp(port: d.localSendPort, alias: "Other phone")
        let g = pngFile("g", "g.png", size: 20_000, seed: 6)
        let (s2, j2) = try other.prepare([g])
        #expect(s2 == 200)
        let (session2, files2) = tokens(j2)
        #expect(try other.upload(session: session2, fileID: "g", token: files2["g"]!, bytes: g.bytes).status == 200)
        #expect(
            eventually(20) { String(decoding: readFile(root + "/runs") ?? [], as: UTF8.self).contains("g.png 0") },
            "\(d.log.suffix(3000))")
        sleep(for: .milliseconds(500))
        let runs = String(decoding: readFile(root + "/runs") ?? [], as: UTF8.self).split(separator: "\n")
        #expect(runs.filter { $0.hasSuffix(" 1") }.count == 1, "duplicate runs: \(runs.count)")
        #expect(!d.log.contains("Argument list too long") && !d.log.contains("not running it"))
        // The queue holds what is owed, bounded: no 120 kB alias in it.
        #expect((readFile(d.stateDir + "/hooks/queue") ?? []).count < 8192)
        print(
            "duplicate flood: 10,100 mentions in \(String(format: "%.2f", floodSeconds)) s queued \(runs.count - 2) duplicate run(s)"
        )
    }

    @Test(
        "a queue file ptkd cannot read (a directory in its place, lines of 100 kB) does not stop ptkd: it starts, says so, and runs new hooks"
    )
    func damagedQueueDoesNotStopPtkd() throws {
        let root = makeTemporaryDirectory("ptk-audit")
        let conf = hookConfig(root, "echo \"$PTK_NAME\" >> \(root)/runs")
        try makeDirectories(root + "/state/hooks/queue")
        let d = try DaemonProcess(["--config", conf], root: root)
        defer {
            _ = d.stop()
            removeTree(root)
        }
        #expect(d.log.contains("is set aside as"), "\(d.log)")
        let r = try send(d, [photo(root, "a.png", size: 20_000, seed: 1)])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(eventually { lineCount(root + "/runs") == 1 })
    }

    @Test(
        "an upload's certificate must be the one that prepared the session: another app with the token gets 403, the app itself 200"
    )
    func uploadCertificateChecked() throws {
        let d = try DaemonProcess.withLocalSend()
        defer { _ = d.stop() }
        let app = try LocalSendApp(port: d.localSendPort)
        let thief = try LocalSendApp(port: d.localSendPort)
        let anonymous = try LocalSendApp(port: d.localSendPort, certificate: false)
        let f = pngFile("f", "f.png", size: 20_000, seed: 7)
        let (session, files) = tokens(try app.prepare([f]).json)
        #expect(try thief.upload(session: session, fileID: "f", token: files["f"]!, bytes: f.bytes).status == 403)
        #expect(try anonymous.upload(session: session, fileID: "f", token: files["f"]!, bytes: f.bytes).status == 403)
        #expect(d.visible.isEmpty)
        #expect(try app.upload(session: session, fileID: "f", token: files["f"]!, bytes: f.bytes).status == 200)
        #expect(readFile(d.dir + "/f.png") == f.bytes)
        #expect(d.log.contains("is not the session's"))
    }

    @Test(
        "64 prepare-upload bodies of 3.8 MiB at once from apps without a certificate: ptkd stays under 150 MB; the bodies over its budget get 503, and it keeps serving"
    )
    func largeBodiesBounded() throws {
        let d = try DaemonProcess.withLocalSend(["--max-sessions", "80", "--max-sessions-per-address", "80"])
        defer { _ = d.stop() }
        let before = d.residentKB
        // One body of ~3.8 MiB: 20,000 entries of long names.
        var entries: [String] = []
        for i in 0..<9_000 {
            entries.append(
                #""e\#(i)":{"id":"e\#(i)","fileName":"\#(String(repeating: "n", count: 350))\#(i).png","size":10,"fileType":"image/png"}"#
            )
        }
        let body = Array(
            (#"{"info":{"alias":"flood","version":"2.1"},"files":{"# + entries.joined(separator: ",") + "}}").utf8)
        #expect(body.count > 3_500_000)
        let app = try LocalSendApp(port: d.localSendPort, certificate: false)
        let statuses = Locked<[Int]>([])
        var most = 0
        let done = Semaphore()
        for _ in 0..<64 {
            try startThread(name: "flood") {
                let status =
                    (try? app.connect().request("POST", "/api/localsend/v2/prepare-upload", body: body).status) ?? -1
                statuses.mutate { $0.append(status) }
                done.signal()
            }
        }
        let deadline = Date() + 60
        while statuses.value.count < 64 && Date() < deadline {
            most = max(most, d.residentKB)
            usleep(20_000)
        }
        for _ in 0..<64 { done.wait() }
        let counts = Dictionary(grouping: statuses.value, by: { $0 }).mapValues(\.count)
        print("large-body flood: RSS \(before / 1024) MB before, at most \(most / 1024) MB during; answers \(counts)")
        #expect(most < 150 * 1024, "RSS reached \(most / 1024) MB")
        #expect(counts[503, default: 0] > 0 && counts[200, default: 0] > 0, "\(counts)\n\(d.log.suffix(3000))")
        // Still serving: a small prepare-upload is answered.
        let later = try LocalSendApp(port: d.localSendPort)
        #expect(
            try later.prepare(
                [pngFile("s", "s.png", size: 1000)],
                on: connect(port: d.localSendPort, from: "127.0.0.20", context: later.context)
            ).status == 200)
    }

    @Test(
        "slow bodies from 12 connections on 3 addresses take every slot, yet a browser and an app from other addresses are served at once; each slow body ends in 408"
    )
    func slowBodiesDoNotLockOut() throws {
        let d = try DaemonProcess([
            "--web", "on", "--web-port", "0", "--localsend", "on", "--localsend-port", "0", "--max-sessions", "8",
        ])
        defer { _ = d.stop() }
        let web = d.loggedPort("web interface on port")
        let localSend = d.localSendPort
        let context = try TLSContext(server: false, identity: nil, flavor: .web)
        // 4 + 4 + 4 connections (the limit is 8 sessions + 4 in their handshake), each a login
        // form of 4,000 bytes sent a byte every 2 s.
        var holders: [AppConnection] = []
        for source in ["127.0.0.2", "127.0.0.3", "127.0.0.4"] {
            for _ in 0..<4 {
                let c = try connect(port: web, from: source, context: context)
                try c.write(
                    Array(
                        "POST /login HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 4000\r\n\r\npassword="
                            .utf8))
                holders.append(c)
            }
        }
        sleep(for: .milliseconds(300))
        // A too-long login form is not read at all.
        let long = try connect(port: web, from: "127.0.0.5", context: context)
        try long.write(Array("POST /login HTTP/1.1\r\nHost: x\r\nContent-Length: 60000\r\n\r\n".utf8))
        #expect(try long.readResponse(timeout: 5).status == 413)
        let started = Date()
        let browser = try connect(port: web, from: "127.0.0.9", context: context)
        let page = try browser.request("GET", "/login", contentType: nil)
        let appContext = try TLSContext(
            server: false, identity: try Identity.ephemeral(.rsa, commonName: "LocalSend User"), flavor: .https)
        let info = try connect(port: localSend, from: "127.0.0.10", context: appContext).request(
            "GET", "/api/localsend/v2/info", contentType: nil)
        let waited = Date().timeIntervalSince(started)
        #expect(page.status == 200 && info.status == 200, "\(page.status) \(info.status)\n\(d.log.suffix(3000))")
        #expect(waited < 3, "served after \(waited) s")
        // The slow bodies that were not displaced end in 408 once they fall behind 1 KiB/s after
        // 10 s: a byte every 2 s from each, until ptkd answers or closes.
        var ends: [Int?] = Array(repeating: nil, count: holders.count)
        let until = Date() + 25
        while ends.contains(where: { $0 == nil }) && Date() < until {
            for (i, c) in holders.enumerated() where ends[i] == nil {
                if (try? c.write([UInt8(ascii: "x")])) == nil {
                    ends[i] = 0
                    continue
                }
                if let r = try? c.readResponse(timeout: 0.05) { ends[i] = r.status }
            }
            sleep(for: .seconds(2))
        }
        print(
            "slow-body flood: a new browser and app served in \(String(format: "%.2f", waited)) s; holders ended with \(ends)"
        )
        #expect(ends.allSatisfy { $0 == 408 || $0 == 0 }, "\(ends)")
        #expect(d.log.contains("the request's body came slower than 1 KiB/s"), "\(d.log.suffix(2000))")
    }

    @Test(
        "wrong passwords spread over 10 addresses spend the receiver's budget: the right one from an 11th gets 429 for the minute, said once in the log"
    )
    func passwordBudgetAcrossAddresses() throws {
        let d = try DaemonProcess.withWeb()
        defer { _ = d.stop() }
        try d.setWebPassword("correct horse")
        let context = try TLSContext(server: false, identity: nil, flavor: .web)
        var statuses: [Int] = []
        for i in 0..<20 {
            let c = try connect(port: d.webPort, from: "127.0.0.\(10 + i % 10)", context: context)
            statuses.append(
                try c.request(
                    "POST", "/login", body: Array("password=wrong\(i)".utf8),
                    contentType: "application/x-www-form-urlencoded"
                ).status)
            c.close()
        }
        #expect(
            statuses.prefix(10).allSatisfy { $0 == 401 } && statuses.dropFirst(10).allSatisfy { $0 == 429 },
            "\(statuses)")
        let right = try connect(port: d.webPort, from: "127.0.0.30", context: context)
        #expect(
            try right.request(
                "POST", "/login", body: Array("password=correct+horse".utf8),
                contentType: "application/x-www-form-urlencoded"
            ).status == 429)
        #expect(d.log.components(separatedBy: "every guess is refused").count == 2, "logged once")
    }

    @Test("wrong PINs over 10 addresses: then even the right PIN waits (429)")
    func pinBudgetAcrossAddresses() throws {
        let d = try DaemonProcess.withLocalSend(["--localsend-pin", "4711"])
        defer { _ = d.stop() }
        let app = try LocalSendApp(port: d.localSendPort)
        let f = pngFile("f", "f.png", size: 1000)
        var statuses: [Int] = []
        let body = try JSONSerialization.data(withJSONObject: [
            "info": app.info, "files": ["f": ["id": "f", "fileName": "f.png", "size": 1000, "fileType": "image/png"]],
        ])
        for i in 0..<12 {
            let c = try connect(port: d.localSendPort, from: "127.0.0.\(10 + i % 10)", context: app.context)
            statuses.append(
                try c.request("POST", "/api/localsend/v2/prepare-upload?pin=\(1000 + i)", body: Array(body)).status)
        }
        #expect(
            statuses.prefix(10).allSatisfy { $0 == 401 } && statuses.dropFirst(10).allSatisfy { $0 == 429 },
            "\(statuses)")
        #expect(try app.prepare([f], pin: "4711").status == 429)
    }

    @Test(
        "one address locked out for wrong PINs and guessing on spends nothing of the receiver's budget: the administrator's password still works"
    )
    func lockedOutPinsSpendNothing() throws {
        let d = try DaemonProcess([
            "--web", "on", "--web-port", "0", "--localsend", "on", "--localsend-port", "0", "--localsend-pin", "4711",
        ])
        defer { _ = d.stop() }
        try d.setWebPassword("correct horse")
        let app = try LocalSendApp(port: d.localSendPort)
        let body = try JSONSerialization.data(withJSONObject: [
            "info": app.info, "files": ["f": ["id": "f", "fileName": "f.png", "size": 1000, "fileType": "image/png"]],
        ])
        var statuses: [Int] = []
        for i in 0..<30 {
            let c = try connect(port: d.localSendPort, from: "127.0.0.2", context: app.context)
            statuses.append(
                try c.request("POST", "/api/localsend/v2/prepare-upload?pin=\(1000 + i)", body: Array(body)).status)
        }
        #expect(statuses.prefix(2) == [401, 401] && statuses.dropFirst(2).allSatisfy { $0 == 429 }, "\(statuses)")
        let context = try TLSContext(server: false, identity: nil, flavor: .web)
        let admin = try connect(port: d.loggedPort("web interface on port"), from: "127.0.0.9", context: context)
        #expect(
            try admin.request(
                "POST", "/login", body: Array("password=correct+horse".utf8),
                contentType: "application/x-www-form-urlencoded"
            ).status == 303)
    }

    @Test("300 refused LocalSend apps with fresh certificates under senders = trusted: the pending list keeps 100")
    func pendingBounded() throws {
        let d = try DaemonProcess.withLocalSend(["--senders", "trusted"])
        defer { _ = d.stop() }
        let f = pngFile("f", "f.png", size: 1000)
        for i in 0..<300 {
            let app = try LocalSendApp(
                port: d.localSendPort, identity: try Identity.ephemeral(.ecP256, commonName: "app \(i)"),
                alias: "app \(i)")
            #expect(try app.prepare([f]).status == 403)
        }
        // Written within a second of the last refusal.
        #expect(eventually(5) { (try? ptk(d, ["trust", "pending"]).stdout.contains("\"app 299\"")) == true })
        let pending = try ptk(d, ["trust", "pending"]).stdout.split(separator: "\n")
        #expect(pending.count == 100)
        #expect(!pending.contains { $0.contains("\"app 199\"") })
    }

    @Test(
        "senders = trusted, 8 sessions: two addresses holding 10 half-open TLS connections each and reconnecting at once do not keep a trusted sender out"
    )
    func handshakeHoldersDoNotLockOutTrusted() throws {
        let root = makeTemporaryDirectory("ptk-audit")
        let d = try DaemonProcess(["--senders", "trusted", "--max-sessions", "8"], root: root)
        defer {
            _ = d.stop()
            removeTree(root)
        }
        let id = try run("ptk-send", ["--id"], environment: ["XDG_CONFIG_HOME": d.senderConfig]).stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(try ptk(d, ["trust", "allow", id, "laptop"]).status == 0)
        let stop = Locked(false)
        let opened = Locked(0)
        let done = Semaphore()
        let holders = 20
        for n in 0..<holders {
            let source = n % 2 == 0 ? "127.0.0.2" : "127.0.0.3"
            try startThread(name: "holder") {
                let address = SocketAddress(numericHost: "127.0.0.1", port: d.port)!
                while !stop.value {
                    guard
                        let sock = try? Socket.connect(
                            to: address, from: SocketAddress(numericHost: source, port: 0)!,
                            deadline: .now + .seconds(2))
                    else {
                        usleep(10_000)
                        continue
                    }
                    opened.mutate { $0 += 1 }
                    _ = try? sock.writeAll([0x16])
                    // Held until ptkd closes it (or the test ends), then again at once.
                    var byte: UInt8 = 0
                    while !stop.value {
                        let ready = (try? poll([(sock, .readable)], until: .now + .milliseconds(200))) ?? []
                        if let r = ready.first, !r.isEmpty {
                            if (try? withUnsafeMutableBytes(of: &byte) { try sock.read(into: $0) }) ?? 0 <= 0 { break }
                        }
                    }
                    sock.close()
                }
                done.signal()
            }
        }
        sleep(for: .seconds(1))
        let started = Date()
        let r = try send(d, [photo(root, "a.png", size: 50_000, seed: 3)], ["--timeout", "30"])
        let seconds = Date().timeIntervalSince(started)
        stop.mutate { $0 = true }
        for _ in 0..<holders { done.wait() }
        print(
            "pre-handshake flood: the trusted sender was served in \(String(format: "%.2f", seconds)) s; holders opened \(opened.value) connections"
        )
        #expect(r.status == 0, "\(r.stderr)\n\(d.log.suffix(3000))")
        #expect(seconds < 5, "served after \(seconds) s")
        #expect(d.visible == ["a.png"])
    }
}

@Suite("End to end: a sender's name reaches no terminal raw (issue 41, finding 4)", .tags(.endToEnd))
struct SenderNameControlTests {
    @Test(
        "an app named with a newline, C1 CSI and a bidi override: `ptk list` and `ptk trust pending` print no control and no forged line"
    )
    func namesInPtkOutput() throws {
        let alias = "Phone\u{9B}2J\u{202E}gnp\nwarning: FORGED\u{2028}x"
        let d = try DaemonProcess.withLocalSend()
        defer { _ = d.stop() }
        let app = try LocalSendApp(port: d.localSendPort, alias: alias)
        let f = pngFile("f", "f.png", size: 20_000, seed: 9)
        let (session, files) = tokens(try app.prepare([f]).json)
        #expect(try app.upload(session: session, fileID: "f", token: files["f"]!, bytes: f.bytes).status == 200)
        var listed = ""
        #expect(
            eventually {
                listed = (try? library(d, ["list"]).stdout) ?? ""
                return listed.contains("f.png")
            }, "\(listed)")
        let shown = try library(d, ["show", "f.png"]).stdout
        for text in [listed, shown] {
            #expect(!text.split(separator: "\n").contains { $0.hasPrefix("warning: FORGED") })
            #expect(
                !text.unicodeScalars.contains { $0 != "\n" && isTerminalControl($0) },
                "\(text.unicodeScalars.filter { isTerminalControl($0) }.map { String($0.value, radix: 16) })")
        }
        let trusted = try DaemonProcess.withLocalSend(["--senders", "trusted"])
        defer { _ = trusted.stop() }
        #expect(try LocalSendApp(port: trusted.localSendPort, alias: alias).prepare([f]).status == 403)
        var pending = ""
        #expect(
            eventually(5) {
                pending = (try? ptk(trusted, ["trust", "pending"]).stdout) ?? ""
                return pending.contains("Phone")
            })
        #expect(!pending.unicodeScalars.contains { $0 != "\n" && isTerminalControl($0) })
        #expect(!pending.split(separator: "\n").contains { $0.hasPrefix("warning: FORGED") })
    }
}

@Suite("End to end: ptk export into a folder others may write (third audit)", .tags(.endToEnd))
struct ExportStagingTests {
    @Test(
        "symlinks planted at every staging name a process ID could give lead nowhere: the package is made, the folder they point to stays empty"
    )
    func plantedStagingLinks() throws {
        let d = try DaemonProcess()
        defer { _ = d.stop() }
        let r = try send(d, [photo(d.root, "pic.png", size: 20_000, seed: 4)])
        #expect(r.status == 0, "\(r.stderr)")
        let shared = d.root + "/shared"
        let victim = d.root + "/victim"
        try makeDirectories(shared)
        try makeDirectories(victim)
        chmod(shared, 0o1777)
        // The old staging name was ".pic.ptk.tmp-PID": every PID the export could get.
        let next = Int(getpid())
        for pid in next..<(next + 400) { symlink(victim, shared + "/.pic.ptk.tmp-\(pid)") }
        let exported = try library(d, ["export", "pic.png", "-o", shared])
        #expect(exported.status == 0, "\(exported.stderr)")
        #expect(listDirectory(victim).isEmpty, "\(listDirectory(victim))")
        #expect(readFile(shared + "/pic.ptk/photo.data") == readFile(d.dir + "/pic.png"))
        #expect(try fileStatus(shared + "/pic.ptk").permissions & 0o777 == 0o755)
    }
}
