import Foundation
import PTKTestSupport
import PTKTestTags
import Testing

/// curl's `-T -` against `daemon`'s door: the body read from the file `input` on its standard
/// input, so curl sends it chunked without saying its length. Returns the status curl saw.
func curlFromStandardInput(_ daemon: DaemonProcess, _ password: AppPassword, _ input: String, _ url: String) throws -> (
    status: Int, stderr: String
) {
    let curl = findProgram("curl") ?? "/usr/bin/curl"
    // A shell only to give curl the file as its standard input: its arguments pass through as they are.
    let r = try run(
        "/bin/sh",
        [
            "-c", "exec \"$0\" \"$@\" < \"$PTK_STDIN\"", curl, "-sS", "--cacert", daemon.webCertificate,
            "-u", "\(password.user):\(password.password)", "-T", "-", "-o", "/dev/null", "-w", "%{http_code}", url,
        ],
        timeout: 60, absolute: true, environment: ["PTK_STDIN": input])
    return (Int(r.stdout) ?? 0, r.stderr)
}

@Suite(
    "End to end: WebDAV PUTs of undeclared length, curl -T - and rclone rcat (issue 55)", .serialized,
    .enabled(if: (haveProgram("curl") && haveProgram("rclone")) || davClientsRequired, "needs curl and rclone"),
    .tags(.endToEnd))
struct DAVUndeclaredLengthTests {
    @Test(
        "curl -T - and rclone rcat (streaming, no size said) store byte-identical photos; nothing is left in .incoming")
    func kept() throws {
        let d = try DaemonProcess.withDAV()
        let work = makeTemporaryDirectory("ptk-dav-undeclared")
        defer { removeTree(work) }
        let pw = try d.appPassword("pipe", access: "full")
        let png = makePNG(size: 300_000, seed: 71)
        writeFile(work + "/a.png", png)
        let put = try curlFromStandardInput(d, pw, work + "/a.png", d.davURL + "a.png")
        #expect(put.status == 201, "\(put.status) \(put.stderr)")
        let jpeg = makeJPEG(width: 400, height: 300, seed: 72)
        writeFile(work + "/b.jpg", jpeg)
        let rclone = Rclone(daemon: d, password: pw)
        defer { rclone.cleanUp() }
        // A cutoff of 0: rclone streams whatever the size, saying none.
        let rcat = try rclone.run(
            ["rcat", "-v", "--streaming-upload-cutoff", "0", "ptk:b.jpg"], stdin: work + "/b.jpg")
        #expect(rcat.status == 0, "\(rcat.stderr)")
        #expect(d.photoFiles == ["a.png": png, "b.jpg": jpeg], "\(d.photoFiles.keys.sorted())")
        #expect(listDirectory(d.dir + "/.incoming").isEmpty, "\(listDirectory(d.dir + "/.incoming"))")
        #expect(d.log.contains("saved \"a.png\" as \"a.png\""), "\(d.log)")
    }

    @Test(
        "over max-file-size, curl -T - is refused 413 once the body passes the limit, and no file is left under any name"
    )
    func tooLarge() throws {
        let d = try DaemonProcess.withDAV(["--max-file-size", "100000"])
        let work = makeTemporaryDirectory("ptk-dav-undeclared")
        defer { removeTree(work) }
        let pw = try d.appPassword("pipe", access: "full")
        writeFile(work + "/a.png", makePNG(size: 300_000, seed: 73))
        let put = try curlFromStandardInput(d, pw, work + "/a.png", d.davURL + "a.png")
        #expect(put.status == 413, "\(put.status) \(put.stderr)")
        #expect(d.photoFiles.isEmpty, "\(d.photoFiles.keys.sorted())")
        #expect(listDirectory(d.dir + "/.incoming").isEmpty, "\(listDirectory(d.dir + "/.incoming"))")
        // Under the limit the same way is kept.
        let small = makePNG(size: 50_000, seed: 74)
        writeFile(work + "/b.png", small)
        #expect(try curlFromStandardInput(d, pw, work + "/b.png", d.davURL + "b.png").status == 201)
        #expect(d.photoFiles == ["b.png": small], "\(d.photoFiles.keys.sorted())")
    }
    @Test(
        "ptkd stopping while curl -T - keeps sending ends the PUT at once: it exits well within its grace, nothing kept, nothing left in .incoming"
    )
    func stopWhileSpooling() throws {
        let d = try DaemonProcess.withDAV()
        let pw = try d.appPassword("pipe", access: "full")
        let curl = findProgram("curl") ?? "/usr/bin/curl"
        // A JPEG's head, then zeros (its scan data) forever, 64 KiB every 5 ms, until curl is gone.
        let feeder =
            "import sys,time\no=sys.stdout.buffer\no.write(bytes([0xFF,0xD8,0xFF,0xC0,0,11,8,0,16,0,16,1,1,0x11,0,0xFF,0xDA,0,8,1,1,0,0,0x3F,0]))\n"
            + "z=bytes(65536)\nwhile True:\n    o.write(z); o.flush(); time.sleep(0.005)\n"
        let client = Process()
        client.executableURL = URL(fileURLWithPath: "/bin/sh")
        client.arguments = [
            "-c", "python3 -c \"$PTK_FEEDER\" 2>/dev/null | exec \"$0\" \"$@\"", curl, "-sS", "--cacert",
            d.webCertificate,
            "-u", "\(pw.user):\(pw.password)", "-T", "-", "-o", "/dev/null", "-w", "%{http_code}",
            d.davURL + "endless.jpg",
        ]
        client.environment = ["PTK_FEEDER": feeder, "PATH": "/usr/bin:/bin"]
        let out = Pipe()
        client.standardOutput = out
        client.standardError = FileHandle.nullDevice
        try client.run()
        defer { if client.isRunning { kill(client.processIdentifier, SIGKILL) } }
        // The body is on its way (spooled) before ptkd is told to stop.
        #expect(eventually(20) { Self.spooling(d) }, "no spool seen")
        let started = Date()
        let status = d.stop(timeout: 10)
        let took = Date().timeIntervalSince(started)
        #expect(status == 0, "\(String(describing: status))")
        #expect(took < 3, "ptkd took \(took) s to stop (its sessions' grace is 4 s)")
        client.waitUntilExit()
        let answered = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        // 503, or the connection closed with no final answer (curl shows its last, 100 Continue, or none).
        #expect(["503", "100", "000"].contains(answered), "curl saw \(answered)")
        #expect(d.log.contains("endless.jpg"), "\(d.log)")
        print(
            "DAV stop while spooling: ptkd stopped in \(took) s; curl saw \(answered); log: \(d.log.split(separator: "\n").filter { $0.contains("endless") })"
        )
        #expect(d.visible.isEmpty, "\(d.visible)")
        #expect(d.incoming.isEmpty, "\(d.incoming)")
    }

    /// Whether ptkd holds a spool now (an unnamed file of .incoming open: "/proc/PID/fd" shows it "(deleted)" or as "#NUMBER").
    static func spooling(_ d: DaemonProcess) -> Bool {
        listDirectory("/proc/\(d.process.processIdentifier)/fd").contains { fd in
            guard
                let target = try? FileManager.default.destinationOfSymbolicLink(
                    atPath: "/proc/\(d.process.processIdentifier)/fd/\(fd)")
            else { return false }  // closed meanwhile
            return target.hasPrefix(d.dir + "/.incoming/") && target != d.dir + "/.incoming"
        }
    }
}
