import Foundation
import Glibc
import PTKTestSupport
import PTKTestTags
import Testing

/// ptkd's open files that are spools or partial uploads: links of /proc/PID/fd into `.incoming`
/// (a spool with no name shows as `.incoming/#NNN (deleted)`).
private func incomingFiles(of pid: Int32) -> [String] {
    let fds = "/proc/\(pid)/fd"
    return listDirectory(fds).compactMap { fd in
        guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: fds + "/" + fd) else {
            return nil
        }  // closed meanwhile
        // The store holds the folder itself open; its files are below it.
        return target.contains("/.incoming/") ? target : nil
    }
}

/// Probes from the security review of issue 55 (attack-55): every way a spool ends gives its file back.
@Suite(
    "End to end: a PUT of undeclared length leaves no open spool behind, however it ends", .serialized,
    .enabled(if: haveProgram("curl") && haveProgram("python3")), .tags(.endToEnd))
struct DAVUndeclaredEndingsTests {
    @Test(
        "413, not a photo, and a client killed mid-body: afterwards ptkd holds no file of .incoming open and .incoming is empty; a photo is then kept"
    )
    func noSpoolOutlivesItsRequest() throws {
        let d = try DaemonProcess.withDAV(["--max-file-size", "2000000"])
        let pid = d.process.processIdentifier
        let work = makeTemporaryDirectory("ptk-dav-endings")
        defer { removeTree(work) }
        let pw = try d.appPassword("pipe", access: "upload")
        writeFile(work + "/big.png", makePNG(size: 3_000_000, seed: 5503))
        #expect(try curlFromStandardInput(d, pw, work + "/big.png", d.davURL + "big.png").status == 413)
        writeFile(work + "/text.png", Array(repeating: UInt8(ascii: "x"), count: 500_000))
        let text = try curlFromStandardInput(d, pw, work + "/text.png", d.davURL + "text.png").status
        #expect(text == 400 || text == 415, "\(text)")
        // A body that keeps coming, 64 KiB every 100 ms (under max-file-size within the second), and curl killed after a second.
        let curl = findProgram("curl") ?? "/usr/bin/curl"
        let feeder =
            "import sys,time\no=sys.stdout.buffer\nz=bytes(65536)\nwhile True:\n    o.write(z); o.flush(); time.sleep(0.1)\n"
        let client = Process()
        client.executableURL = URL(fileURLWithPath: "/bin/sh")
        client.arguments = [
            "-c", "python3 -c \"$PTK_FEEDER\" 2>/dev/null | exec \"$0\" \"$@\"", curl, "-sS", "--cacert",
            d.webCertificate,
            "-u", "\(pw.user):\(pw.password)", "-T", "-", "-o", "/dev/null", "--max-time", "1", d.davURL + "cut.png",
        ]
        client.environment = ["PTK_FEEDER": feeder, "PATH": "/usr/bin:/bin"]
        client.standardOutput = FileHandle.nullDevice
        client.standardError = FileHandle.nullDevice
        try client.run()
        defer { if client.isRunning { kill(client.processIdentifier, SIGKILL) } }
        Thread.sleep(forTimeInterval: 0.6)
        #expect(!incomingFiles(of: pid).isEmpty, "the spool is open while the body comes")
        client.waitUntilExit()
        // ptkd sees the connection go on its next read.
        var left = incomingFiles(of: pid)
        for _ in 0..<50 where !left.isEmpty {
            Thread.sleep(forTimeInterval: 0.1)
            left = incomingFiles(of: pid)
        }
        #expect(left.isEmpty, "\(left)")
        #expect(listDirectory(d.dir + "/.incoming").isEmpty, "\(listDirectory(d.dir + "/.incoming"))")
        #expect(d.photoFiles.isEmpty, "\(d.photoFiles.keys.sorted())")
        let png = makePNG(size: 1_500_000, seed: 5504)
        writeFile(work + "/fits.png", png)
        #expect(try curlFromStandardInput(d, pw, work + "/fits.png", d.davURL + "fits.png").status == 201)
        #expect(incomingFiles(of: pid).isEmpty)
    }
}
