import Foundation
import Glibc
import PTKDigest
import PTKProtocol
import PTKSystem
import PTKTestSupport
import PTKTestTags
import PTKVocabulary
import Testing

/// Today's folder name in ptkd's date layouts (the test and ptkd share a time zone).
private var today: String {
    let d = WallTime.now.localDay
    func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
    return "\(d.year)-\(two(d.month))-\(two(d.day))"
}

/// Every regular file below `dir`, as paths relative to it, hidden ones (.ptk, .incoming) left out.
private func tree(_ dir: String, _ prefix: String = "") -> [String] {
    var out: [String] = []
    for name in listDirectory(dir + "/" + prefix) where !name.hasPrefix(".") {
        let path = prefix + name
        var st = stat()
        guard lstat(dir + "/" + path, &st) == 0 else { continue }
        if st.st_mode & S_IFMT == S_IFDIR {
            out += tree(dir, path + "/")
        } else if st.st_mode & S_IFMT == S_IFREG {
            out.append(path)
        }
    }
    return out.sorted()
}

/// A ptkd configuration file with `lines`, in a directory of its own; returns its path.
private func configFile(_ lines: String) -> String {
    let dir = makeTemporaryDirectory("ptk-conf")
    writeFile(dir + "/ptkd.conf", Array(lines.utf8))
    return dir + "/ptkd.conf"
}

/// A hook script at `path` running `body` (sh).
private func hookScript(_ path: String, _ body: String) {
    writeFile(path, Array("#!/bin/sh\n\(body)\n".utf8))
    chmod(path, 0o755)
}

@Suite("End to end: where photos land and what happens next (issue 28)", .tags(.endToEnd))
struct ArrivalsTests {
    @Test(
        "layout = sender/date: two senders and a LocalSend app land in their folders; SAVED and the log give the path; ptk finds, lists and moves them; the gallery shows folders; a new layout moves nothing"
    )
    func folders() throws {
        let d = try DaemonProcess.withLocalSend(["--layout", "sender/date"])
        let a1 = photo(d.root, "a1.png", size: 30_000, seed: 1)
        let a2 = photo(d.root, "a2.png", size: 30_000, seed: 2)
        let alice = try send(d, [a1, a2], ["--name", "alice", "--parallel", "1"])
        #expect(alice.status == 0, "\(alice.stderr)")
        #expect(
            alice.stdout == "\(a1): saved as \"alice/\(today)/a1.png\"\n\(a2): saved as \"alice/\(today)/a2.png\"\n")
        // Bob's a1.png is another photo of the same name.
        let other = makeTemporaryDirectory("ptk-bob")
        defer { removeTree(other) }
        let b1 = photo(other, "a1.png", size: 40_000, seed: 3)
        let bob = try send(d, [b1], ["--name", "bob"])
        #expect(bob.stdout == "\(b1): saved as \"bob/\(today)/a1.png\"\n", "\(bob.stderr)")
        let app = try LocalSendApp(port: d.localSendPort, alias: "Anna's Phone")
        let x = pngFile("f1", "x.png", size: 20_000, seed: 4)
        let (status, json) = try app.prepare([x])
        #expect(status == 200)
        let (session, files) = tokens(json)
        #expect(try app.upload(session: session, fileID: "f1", token: files["f1"] ?? "", bytes: x.bytes).status == 200)
        // The log is written by a thread of its own: the line may follow the answer by a moment.
        #expect(eventually { d.log.contains("saved \"Anna's Phone/\(today)/x.png\"") }, "\(d.log)")
        let expected = [
            "alice/\(today)/a1.png", "alice/\(today)/a2.png", "bob/\(today)/a1.png", "Anna's Phone/\(today)/x.png",
        ]
        #expect(tree(d.dir) == expected.sorted())
        #expect(readFile(d.dir + "/bob/\(today)/a1.png") == readFile(b1))
        #expect(waitForIndex(d, Set(expected)), "\(d.log)")

        // A bare name finds the one photo of that name; a clash lists the paths; a path finds either.
        let shown = try library(d, ["show", "a2"])
        #expect(
            shown.status == 0 && shown.stdout.contains("name:      alice/\(today)/a2.png"),
            "\(shown.stdout) \(shown.stderr)")
        let clash = try library(d, ["show", "a1"])
        #expect(clash.status == 1)
        #expect(
            clash.stderr.contains(
                "'a1' names 2 photos: alice/\(today)/a1.png, bob/\(today)/a1.png; give its folder too"),
            "\(clash.stderr)")
        #expect(try library(d, ["show", "bob/\(today)/a1"]).stdout.contains("sha256:    \(sha256Hex(readFile(b1)!))"))
        // rename moves a photo between folders (made as needed), never replacing one.
        let moved = try library(d, ["rename", "alice/\(today)/a2.png", "bob/kept/a2"])
        #expect(moved.status == 0, "\(moved.stderr)")
        #expect(moved.stdout == "renamed 'alice/\(today)/a2.png' to 'bob/kept/a2.png'\n")
        #expect(readFile(d.dir + "/bob/kept/a2.png") == readFile(a2))
        #expect(try library(d, ["rename", "bob/kept/a2", "alice/\(today)/a1"]).status == 1, "never replaces")
        #expect(try library(d, ["rename", "bob/kept/a2", "../escape"]).status == 1)
        #expect(try library(d, ["list"]).stdout.contains("bob/kept/a2.png"))
        // The gallery: a section per folder, links that keep the path.
        #expect(try library(d, ["gallery"]).status == 0)
        let page = String(decoding: readFile(d.dir + "/.ptk/gallery/index.html") ?? [], as: UTF8.self)
        for folder in ["alice/\(today)/", "bob/\(today)/", "bob/kept/", "Anna&#39;s Phone/\(today)/"] {
            #expect(page.contains("<h2>\(folder)</h2>"), "no section \(folder)")
        }
        #expect(page.contains("href=\"../../bob/kept/a2.png\""))
        // Another layout files new photos its way and moves nothing already saved.
        #expect(d.stop() == 0)
        let flat = try DaemonProcess(["--layout", "flat"], root: d.root)
        let c = photo(d.root, "c.png", size: 10_000, seed: 5)
        #expect(try send(flat, [c]).stdout == "\(c): saved as \"c.png\"\n")
        #expect(tree(d.dir) == (expected.filter { !$0.hasSuffix("a2.png") } + ["bob/kept/a2.png", "c.png"]).sorted())
    }

    @Test(
        "hostile sender names (../.., /etc, ., control characters, 300 bytes, a name that is a symlink in the directory) all land inside, one level each"
    )
    func hostileSenders() throws {
        let outside = makeTemporaryDirectory("ptk-outside")
        defer { removeTree(outside) }
        let d = try DaemonProcess.withLocalSend(["--layout", "sender"])
        #expect(symlink(outside, d.dir + "/evil") == 0)
        let long = String(repeating: "n", count: 300)
        let cases: [(alias: String, folder: String)] = [
            ("../..", "_.."), ("/etc", "_etc"), (".", "unknown"), ("a\u{1}b\u{1B}[31m", "ab[31m"),
            (long, String(repeating: "n", count: 200)),
            ("evil", "evil (2)"),
        ]
        for (i, c) in cases.enumerated() {
            let app = try LocalSendApp(port: d.localSendPort, alias: c.alias)
            let f = pngFile("f", "p\(i).png", size: 5_000, seed: UInt64(10 + i))
            let (status, json) = try app.prepare([f])
            #expect(status == 200, "\(c.alias)")
            let (session, files) = tokens(json)
            #expect(
                try app.upload(session: session, fileID: "f", token: files["f"] ?? "", bytes: f.bytes).status == 200,
                "\(c.alias)")
            #expect(readFile(d.dir + "/\(c.folder)/p\(i).png") == f.bytes, "\(c.alias) -> \(tree(d.dir))")
        }
        // Over protocol v1 too: HELLO.name is the sender's name.
        let p = photo(d.root, "v1.png", size: 5_000, seed: 30)
        let r = try send(d, [p], ["--name", "../../tmp"])
        #expect(r.stdout == "\(p): saved as \"_.._tmp/v1.png\"\n", "\(r.stdout) \(r.stderr)")
        #expect(listDirectory(outside).isEmpty, "something was written through the symlink")
        #expect(tree(d.dir).count == cases.count + 1, "\(tree(d.dir))")
        for path in tree(d.dir) { #expect(path.split(separator: "/").count == 2, "\(path)") }
    }

    @Test(
        "duplicates = skip: a re-sent roll moves less than a chunk per photo and stores nothing new; a sender without \"held\" and a LocalSend app store nothing new either; keep stores it again"
    )
    func resentRoll() throws {
        let d = try DaemonProcess.withLocalSend()
        let roll = (0..<20).map { photo(d.root, "IMG_\($0).png", size: 150_000 + $0, seed: UInt64(100 + $0)) }
        let proxy = try SequentialProxy(to: d.port, pauseAfterFirst: 0)
        defer { proxy.stop() }
        func sendRoll() throws -> (Finished, Int) {
            let before = proxy.bytesSent
            let r = try run(
                "ptk-send", ["--parallel", "1", "--timeout", "20", "127.0.0.1:\(proxy.port)"] + roll,
                environment: ["XDG_CONFIG_HOME": d.senderConfig])
            return (r, proxy.bytesSent - before)
        }
        let (first, firstBytes) = try sendRoll()
        #expect(first.status == 0, "\(first.stderr)")
        let (second, secondBytes) = try sendRoll()
        #expect(second.status == 0, "\(second.stderr)")
        #expect(
            second.stdout == roll.map { "\($0): already there as \"\(($0 as NSString).lastPathComponent)\"\n" }.joined()
        )
        #expect(firstBytes > 20 * 150_000)
        #expect(secondBytes < 20 * ProtocolLimits.chunkSize / 10, "the second send moved \(secondBytes) bytes")
        #expect(tree(d.dir).count == 20)
        // The log is written by a thread of its own: the line may follow the answer by a moment.
        #expect(eventually { d.log.contains("is already kept as \"IMG_3.png\"; nothing new stored") }, "\(d.log)")

        // A sender that does not announce "held" sends the bytes; nothing new is stored after DONE.
        let bytes = readFile(roll[0])!
        let raw = try RawPeer(port: d.port)
        try raw.hello()
        try raw.send(.offer(Offer(name: "other name.png", size: Int64(bytes.count), sha256: sha256Hex(bytes))))
        #expect(try raw.receive() == .accept(Accept(offset: 0)))
        for chunk in chunks(of: bytes) {
            try raw.send(.chunk(chunk))
            #expect(try raw.receive() == .ack)
        }
        try raw.send(.done)
        #expect(
            try raw.receive()
                == .saved(Saved(name: "IMG_0.png", size: Int64(bytes.count), sha256: sha256Hex(bytes), duplicate: true))
        )
        raw.close()

        // LocalSend: a file whose SHA-256 the app gives is left out of the answer (all of them: 204);
        // one without is uploaded, and then nothing new is stored.
        let app = try LocalSendApp(port: d.localSendPort)
        let held = roll.prefix(3).enumerated().map {
            (
                id: "h\($0.offset)", name: "phone \($0.offset).png", bytes: readFile($0.element)!, type: "image/png",
                hash: Optional(sha256Hex(readFile($0.element)!))
            )
        }
        #expect(try app.prepare(held).status == 204)
        // The log is written by a thread of its own: the line may follow the answer by a moment.
        #expect(
            eventually { d.log.contains("\"phone 0.png\" is already kept as \"IMG_0.png\"; not asked for") }, "\(d.log)"
        )
        var unhashed = held[0]
        unhashed.hash = nil
        let (status, json) = try app.prepare([unhashed])
        #expect(status == 200)
        let (session, files) = tokens(json)
        #expect(
            try app.upload(session: session, fileID: "h0", token: files["h0"] ?? "", bytes: unhashed.bytes).status
                == 200)
        #expect(
            eventually {
                d.log.contains("\"phone 0.png\" (")
                    && d.log.contains("is already kept as \"IMG_0.png\"; nothing new stored")
            }, "\(d.log)")
        #expect(tree(d.dir).count == 20)
        #expect(d.incoming.isEmpty)
        #expect(d.stop() == 0)

        // duplicates = keep: stored again under the next free name.
        let keep = try DaemonProcess(["--duplicates", "keep"], root: d.root)
        #expect(try send(keep, [roll[0]]).stdout == "\(roll[0]): saved as \"IMG_0 (2).png\"\n")
    }

    @Test(
        "duplicates = skip with late answers: the same bytes twice in one session, the second offered while the first waits for its round, store nothing new (issue 46)"
    )
    func duplicateInFlight() throws {
        let d = try DaemonProcess()
        let bytes = makePNG(size: 250_000, seed: 78)
        let sha = sha256Hex(bytes)
        let raw = try RawPeer(port: d.port)
        try raw.send(.hello(Hello(name: "raw", window: 16, features: ["late-answers"])))
        guard case .welcome? = try raw.receive() else { throw HarnessError("no WELCOME") }
        func sendBytes() throws {
            for chunk in chunks(of: bytes) {
                try raw.send(.chunk(chunk))
                #expect(try raw.receive() == .ack)
            }
        }
        try raw.send(.offer(Offer(name: "first.png", size: Int64(bytes.count), sha256: sha)))
        #expect(try raw.receive() == .accept(Accept(offset: 0)))
        try sendBytes()
        // DONE and the same bytes' OFFER at once: the first is answered before the second is decided.
        try raw.send(.done)
        try raw.send(.offer(Offer(name: "second.png", size: Int64(bytes.count), sha256: sha)))
        #expect(try raw.receive() == .saved(Saved(name: "first.png", size: Int64(bytes.count), sha256: sha)))
        #expect(try raw.receive() == .accept(Accept(offset: 0)))
        try sendBytes()
        try raw.send(.done)
        #expect(
            try raw.receive()
                == .saved(Saved(name: "first.png", size: Int64(bytes.count), sha256: sha, duplicate: true)))
        try raw.send(.bye)
        raw.close()
        #expect(d.visible == ["first.png"])
        #expect(d.stop() == 0)
    }

    @Test(
        "a late-answers sender that closes right after DONE: its photo is in the library with its sender, and the same bytes sent again are already there, one file (issue 54)"
    )
    func closedAfterDone() throws {
        let d = try DaemonProcess()
        let src = makeTemporaryDirectory()
        defer { removeTree(src) }
        let bytes = makePNG(size: 250_000, seed: 79)
        let raw = try RawPeer(port: d.port)
        try raw.send(.hello(Hello(name: "impatient", window: 16, features: ["late-answers"])))
        guard case .welcome? = try raw.receive() else { throw HarnessError("no WELCOME") }
        try raw.send(.offer(Offer(name: "lost0.png", size: Int64(bytes.count), sha256: sha256Hex(bytes))))
        #expect(try raw.receive() == .accept(Accept(offset: 0)))
        for chunk in chunks(of: bytes) {
            try raw.send(.chunk(chunk))
            #expect(try raw.receive() == .ack)
        }
        try raw.send(.done)
        raw.close()
        #expect(
            eventually {
                d.log.contains("saved \"lost0.png\"") && d.log.contains("(not answered: the session had ended)")
            }, "\(d.log)")
        #expect(waitForIndex(d, ["lost0.png"]))
        let entry = try #require(try listed(d).first)
        #expect(entry["SenderName"] as? String == "impatient", "\(entry)")
        writeFile(src + "/lost0.png", bytes)
        #expect(try send(d, [src + "/lost0.png"]).stdout == "\(src)/lost0.png: already there as \"lost0.png\"\n")
        #expect(d.visible == ["lost0.png"])
        #expect(d.stop() == 0)
    }

    @Test(
        "a resumed upload that was whole when its session broke off ends at once: ACCEPT at its size, nothing sent again"
    )
    func wholePartialResumed() throws {
        let d = try DaemonProcess()
        let bytes = makePNG(size: 250_001, seed: 77)
        let sha = sha256Hex(bytes)
        // A session that sent every chunk and broke off before DONE.
        let raw = try RawPeer(port: d.port)
        try raw.hello()
        try raw.send(.offer(Offer(name: "whole.png", size: Int64(bytes.count), sha256: sha)))
        #expect(try raw.receive() == .accept(Accept(offset: 0)))
        for chunk in chunks(of: bytes) {
            try raw.send(.chunk(chunk))
            #expect(try raw.receive() == .ack)
        }
        raw.close()
        #expect(eventually { d.log.contains("0 photo(s) saved") })
        #expect(d.incoming == ["\(sha)-\(bytes.count).part"])
        // A sender that takes "held" gets ACCEPT at the end; DONE publishes it.
        let again = try RawPeer(port: d.port)
        try again.send(.hello(Hello(name: "raw", window: 4, features: ["held"])))
        guard case .welcome? = try again.receive() else {
            Issue.record("no WELCOME")
            return
        }
        try again.send(.offer(Offer(name: "whole.png", size: Int64(bytes.count), sha256: sha)))
        #expect(try again.receive() == .accept(Accept(offset: Int64(bytes.count))))
        try again.send(.done)
        #expect(try again.receive() == .saved(Saved(name: "whole.png", size: Int64(bytes.count), sha256: sha)))
        #expect(readFile(d.dir + "/whole.png") == bytes)
        #expect(d.incoming.isEmpty)
    }

    @Test(
        "on-saved: run for each photo saved and each duplicate, in order, with the path and PTK_ variables; a failing one is logged with its status"
    )
    func hookRuns() throws {
        let root = makeTemporaryDirectory("ptk-hook")
        defer { removeTree(root) }
        hookScript(
            root + "/hook",
            """
            { echo "args=$*"; env | grep '^PTK_' | sort; echo; } >> \(root)/runs
            case "$PTK_NAME" in fail*) echo "about to fail"; exit 3;; esac
            """)
        let conf = configFile("on-saved = \(root)/hook \"first word\"\n")
        defer { removeTree(parentDirectory(of: conf)) }
        let d = try DaemonProcess(["--config", conf], root: root)
        // Hooks run on a thread of their own, named for ps -L and top -H.
        let pid = d.process.processIdentifier
        #expect(
            eventually {
                listDirectory("/proc/\(pid)/task").contains {
                    readFile("/proc/\(pid)/task/\($0)/comm") == Array("hook\n".utf8)
                }
            })
        let a = photo(root, "a.png", size: 20_000, seed: 1)
        let f = photo(root, "fail.png", size: 20_000, seed: 2)
        let r = try send(d, [a, f, a], ["--parallel", "1"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(
            eventually {
                d.log.contains("the hook for \"a.png\" ran") && d.log.contains("exit status 3")
                    && d.log.components(separatedBy: "on-saved: the hook for").count == 4
            }, "\(d.log)")
        let runs = String(decoding: readFile(root + "/runs") ?? [], as: UTF8.self).components(separatedBy: "\n\n")
            .filter { !$0.isEmpty }
        try #require(runs.count == 3, "\(runs)")
        let id = try run("ptk-send", ["--id"], environment: ["XDG_CONFIG_HOME": d.senderConfig]).stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let bytes = readFile(a)!
        #expect(runs[0].hasPrefix("args=first word \(d.dir)/a.png\n"), "\(runs[0])")
        for line in [
            "PTK_NAME=a.png", "PTK_PATH=\(d.dir)/a.png", "PTK_SIZE=\(bytes.count)", "PTK_SHA256=\(sha256Hex(bytes))",
            "PTK_MEDIA_TYPE=image/png", "PTK_SENDER_ID=\(id)", "PTK_SENDER_ADDRESS=127.0.0.1:",
        ] {
            #expect(runs[0].contains("\n" + line), "\(line) in \(runs[0])")
        }
        #expect(runs[0].contains("\nPTK_SENDER_NAME=") && runs[0].contains("\nPTK_RECEIVED=20"))
        #expect(!runs[0].contains("PTK_DUPLICATE"))
        #expect(runs[1].contains("PTK_NAME=fail.png"))
        #expect(runs[2].contains("PTK_NAME=a.png") && runs[2].contains("PTK_DUPLICATE=1"), "\(runs[2])")
        #expect(eventually { d.log.contains("on-saved \"fail.png\": about to fail") })
        #expect(eventually { d.log.contains("on-saved: the hook for \"fail.png\" failed after") })
        #expect(d.stop() == 0)
        // Nothing owed: a restart runs nothing again.
        let again = try DaemonProcess(["--config", conf], root: root)
        usleep(500_000)
        #expect(
            String(decoding: readFile(root + "/runs") ?? [], as: UTF8.self).components(separatedBy: "\n\n").filter {
                !$0.isEmpty
            }.count == 3)
        #expect(again.stop() == 0)
    }

    @Test(
        "on-saved: a hook that hangs is stopped with SIGTERM, then SIGKILL; one that prints a lot is logged in part; neither delays SAVED"
    )
    func hookLimits() throws {
        let root = makeTemporaryDirectory("ptk-hook")
        defer { removeTree(root) }
        hookScript(
            root + "/hook",
            """
            case "$PTK_NAME" in
              stubborn*) trap '' TERM; while :; do sleep 0.1; done;;
              loud*) seq 1 100000;;
            esac
            echo "$PTK_NAME" >> \(root)/done
            """)
        let conf = configFile("on-saved = \(root)/hook\non-saved-timeout = 1s\n")
        defer { removeTree(parentDirectory(of: conf)) }
        let d = try DaemonProcess(["--config", conf], root: root)
        let paths = ["stubborn.png", "loud.png", "after.png"].enumerated().map {
            photo(root, $0.element, size: 10_000, seed: UInt64($0.offset + 1))
        }
        let r = try send(d, paths, ["--parallel", "1"])
        #expect(r.status == 0, "\(r.stderr)")
        // SAVED came without waiting for the hooks: the first is still running.
        #expect(readFile(root + "/done") == nil)
        #expect(
            eventually(20) {
                String(decoding: readFile(root + "/done") ?? [], as: UTF8.self) == "loud.png\nafter.png\n"
            }, "\(d.log)")
        #expect(
            eventually { d.log.contains("the hook for \"stubborn.png\" has run 1 s; stopping it (SIGTERM)") },
            "\(d.log)")
        #expect(eventually { d.log.contains("the hook for \"stubborn.png\" did not stop; killing it (SIGKILL)") })
        #expect(
            eventually {
                d.log.contains("the hook for \"stubborn.png\" failed after") && d.log.contains("killed by signal 9")
            })
        #expect(
            eventually { d.log.contains("on-saved \"loud.png\": 200\n") }
                && !d.log.contains("on-saved \"loud.png\": 201\n"))
        #expect(eventually { d.log.contains("on-saved \"loud.png\": 99800 more line(s) of output not logged") })
        #expect(d.stop() == 0)
    }

    @Test("on-saved: ptkd killed with photos queued runs every hook after the restart (at least once, in order)")
    func hookQueueSurvivesKill() throws {
        let root = makeTemporaryDirectory("ptk-hook")
        defer { removeTree(root) }
        hookScript(root + "/hook", "sleep 0.3; echo \"$PTK_NAME\" >> \(root)/done")
        let conf = configFile("on-saved = \(root)/hook\n")
        defer { removeTree(parentDirectory(of: conf)) }
        let d = try DaemonProcess(["--config", conf], root: root)
        let names = (0..<6).map { "q\($0).png" }
        let paths = names.enumerated().map { photo(root, $0.element, size: 10_000, seed: UInt64($0.offset + 1)) }
        let r = try send(d, paths, ["--parallel", "1"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(d.stop(signal: SIGKILL) != 0)
        let doneBefore = String(decoding: readFile(root + "/done") ?? [], as: UTF8.self).split(separator: "\n").count
        #expect(doneBefore < 6, "the hooks ran too fast to test a restart")
        let again = try DaemonProcess(["--config", conf], root: root)
        #expect(
            eventually(20) {
                Set(
                    String(decoding: readFile(root + "/done") ?? [], as: UTF8.self).split(separator: "\n").map(
                        String.init)) == Set(names)
            },
            "\(again.log)")
        #expect(again.log.contains("hook run(s) owed from before the restart"), "\(again.log)")
        // In arrival order (a run cut off by the kill may finish late and repeat a name: at least once).
        var order: [String] = []
        for name in String(decoding: readFile(root + "/done") ?? [], as: UTF8.self).split(separator: "\n").map(
            String.init) where !order.contains(name)
        {
            order.append(name)
        }
        #expect(order == names)
        #expect(again.stop() == 0)
    }

    @Test(
        "ptk watch --json sees three sends in order, one line each; --since goes on after an id; it exits 0 on SIGTERM and when its output is closed"
    )
    func watch() throws {
        let d = try DaemonProcess()
        #expect(try send(d, [photo(d.root, "before.png", size: 5_000, seed: 9)]).status == 0)
        #expect(waitForIndex(d, ["before.png"]))
        let watcher = Process()
        watcher.executableURL = URL(fileURLWithPath: binDirectory + "/ptk")
        watcher.arguments = ["--config", "/dev/null", "--dir", d.dir, "--state-dir", d.stateDir, "watch", "--json"]
        let out = Pipe()
        watcher.standardOutput = out
        try watcher.run()
        // Never left hanging: stopped after 30 s whatever happens (its output then ends).
        let pid = watcher.processIdentifier
        DispatchQueue.global().asyncAfter(deadline: .now() + 30) { kill(pid, SIGKILL) }
        usleep(500_000)  // "now" is taken at start: before.png is not printed
        for i in 0..<3 {
            #expect(try send(d, [photo(d.root, "w\(i).png", size: 5_000 + i, seed: UInt64(20 + i))]).status == 0)
        }
        var text = ""
        let deadline = Date() + 20
        while text.split(separator: "\n").count < 3 && Date() < deadline {
            let data = out.fileHandleForReading.availableData
            if data.isEmpty { break }
            text += String(decoding: data, as: UTF8.self)
        }
        let objects = text.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        #expect(objects.map { $0["Name"] as? String } == ["w0.png", "w1.png", "w2.png"], "\(text)")
        #expect(objects.allSatisfy { $0["Indexed"] as? Bool == true && $0["Width"] != nil && $0["SHA256"] != nil })
        let ids = objects.compactMap { $0["ID"] as? Int }
        #expect(ids.count == 3 && ids == ids.sorted())
        kill(watcher.processIdentifier, SIGTERM)
        watcher.waitUntilExit()
        #expect(watcher.terminationReason == .exit && watcher.terminationStatus == 0)
        // --since the first id: the two after it, as text lines that start with the id; closing
        // the output (head) ends it with status 0.
        let since = try run(
            "/bin/bash",
            [
                "-c",
                "set -o pipefail; '\(binDirectory)/ptk' --config /dev/null --dir '\(d.dir)' watch --since \(ids[0]) | head -n 2",
            ],
            timeout: 20, absolute: true)
        #expect(since.status == 0, "\(since.stderr)")
        let lines = since.stdout.split(separator: "\n")
        #expect(
            lines.count == 2 && lines[0].hasPrefix("\(ids[1])  w1.png") && lines[1].hasPrefix("\(ids[2])  w2.png"),
            "\(since.stdout)")
        #expect(try library(d, ["watch", "--since", "soon"]).status == 64)
    }
}
