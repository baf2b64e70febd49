import Foundation
import PTKTestSupport
import PTKTestTags
import Testing

/// curl's `-T -` against `daemon`'s door: the body read from the file `input` on its standard
/// input, so curl sends it chunked without saying its length. Returns the status curl saw.
func curlFromStandardInput(_ daemon: DaemonProcess, _ password: AppPassword, _ input: String, _ url: String) throws -> (status: Int, stderr: String) {
    let curl = findProgram("curl") ?? "/usr/bin/curl"
    // A shell only to give curl the file as its standard input: its arguments pass through as they are.
    let r = try run("/bin/sh", ["-c", "exec \"$0\" \"$@\" < \"$PTK_STDIN\"", curl, "-sS", "--cacert", daemon.webCertificate,
                                "-u", "\(password.user):\(password.password)", "-T", "-", "-o", "/dev/null", "-w", "%{http_code}", url],
                    timeout: 60, absolute: true, environment: ["PTK_STDIN": input])
    return (Int(r.stdout) ?? 0, r.stderr)
}

@Suite("End to end: WebDAV PUTs of undeclared length, curl -T - and rclone rcat (issue 55)", .serialized,
       .enabled(if: (haveProgram("curl") && haveProgram("rclone")) || davClientsRequired, "needs curl and rclone"), .tags(.endToEnd))
struct DAVUndeclaredLengthTests {
    @Test("curl -T - and rclone rcat (streaming, no size said) store byte-identical photos; nothing is left in .incoming")
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
        let rcat = try rclone.run(["rcat", "-v", "--streaming-upload-cutoff", "0", "ptk:b.jpg"], stdin: work + "/b.jpg")
        #expect(rcat.status == 0, "\(rcat.stderr)")
        #expect(d.photoFiles == ["a.png": png, "b.jpg": jpeg], "\(d.photoFiles.keys.sorted())")
        #expect(listDirectory(d.dir + "/.incoming").isEmpty, "\(listDirectory(d.dir + "/.incoming"))")
        #expect(d.log.contains("saved \"a.png\" as \"a.png\""), "\(d.log)")
    }

    @Test("over max-file-size, curl -T - is refused 413 once the body passes the limit, and no file is left under any name")
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
}
