import Foundation
import PTKTestSupport
import PTKTestTags
import Testing

/// Runs `command` (a shell line) with standard input read from `input`: a client that streams
/// a pipe, as `curl -T -` and `rclone rcat` do, and so sends no length.
func runReading(_ input: String, _ command: String, environment: [String: String] = [:]) throws -> Finished {
    try run("/bin/sh", ["-c", "exec " + command + " < '\(input)'"], timeout: 60, absolute: true, environment: environment)
}

/// Photos sent as chunked bodies of no announced length (issue 55, item 1): `curl -T -` and
/// `rclone rcat` read a pipe and cannot say how long it is.
@Suite("End to end: chunked PUTs of no announced length (curl -T -, rclone rcat)", .serialized,
       .enabled(if: (haveProgram("curl") && haveProgram("rclone")) || davClientsRequired, "needs curl and rclone"), .tags(.endToEnd))
struct DAVUnsizedE2ETests {
    @Test("curl -T - from a pipe: a JPEG is stored byte-identical (201, then GET gives it back); text is 415, a photo over max-file-size 413, neither leaves a file")
    func curlFromPipe() throws {
        let d = try DaemonProcess.withDAV(["--max-file-size", "200000"])
        let work = makeTemporaryDirectory("ptk-dav-pipe")
        defer { removeTree(work) }
        let pw = try d.appPassword("script", access: "full")
        let jpeg = makeJPEG(width: 160, height: 120, seed: 51)
        writeFile(work + "/a.jpg", jpeg)
        let curlLine = "curl -sS --cacert '\(d.webCertificate)' -u '\(pw.user):\(pw.password)' -o /dev/null -w '%{http_code}' -T -"
        let put = try runReading(work + "/a.jpg", curlLine + " '\(d.davURL)piped.jpg'")
        #expect(put.stdout == "201", "\(put.stdout) \(put.stderr)")
        #expect(d.photoFiles["piped.jpg"] == jpeg ? true : false, "\(d.photoFiles.keys.sorted())")
        let get = try curl(d, pw, [d.davURL + "piped.jpg"])
        #expect(get.status == 200, "\(get.status)")
        #expect(get.body == jpeg ? true : false)

        writeFile(work + "/t.txt", Array(String(repeating: "not a photo\n", count: 1_000).utf8))
        let text = try runReading(work + "/t.txt", curlLine + " '\(d.davURL)note.jpg'")
        #expect(text.stdout == "415", "\(text.stdout) \(text.stderr)")

        var big = makePNG(size: 300_000, seed: 52)
        if big.count <= 200_000 { big = makePNG(size: 600_000, seed: 52) }
        writeFile(work + "/big.png", big)
        let over = try runReading(work + "/big.png", curlLine + " '\(d.davURL)big.png'")
        #expect(over.stdout == "413", "\(over.stdout) \(over.stderr)")
        #expect(Set(d.photoFiles.keys) == ["piped.jpg"], "\(d.photoFiles.keys.sorted())")
        #expect(listDirectory(d.dir + "/.incoming").isEmpty, "\(listDirectory(d.dir + "/.incoming"))")
        #expect(d.stop() == 0)
    }

    @Test("rclone rcat from a pipe: stored byte-identical under its name, and rclone lists it (rclone's WebDAV backend cannot stream: it spools the pipe and sends its length)")
    func rcloneRcat() throws {
        let d = try DaemonProcess.withDAV()
        let pw = try d.appPassword("rcat", access: "full")
        let rclone = Rclone(daemon: d, password: pw)
        defer { rclone.cleanUp() }
        let png = makePNG(size: 400_000, seed: 53)
        writeFile(rclone.home + "/in.png", png)
        let obscured = try run(findProgram("rclone") ?? "/usr/bin/rclone", ["obscure", pw.password], absolute: true)
        let environment = ["HOME": rclone.home, "XDG_CACHE_HOME": rclone.home + "/cache", "RCLONE_CONFIG_PTK_TYPE": "webdav",
                           "RCLONE_CONFIG_PTK_URL": d.davURL, "RCLONE_CONFIG_PTK_VENDOR": "other", "RCLONE_CONFIG_PTK_USER": pw.user,
                           "RCLONE_CONFIG_PTK_PASS": obscured.stdout.trimmingCharacters(in: .whitespacesAndNewlines)]
        // A cut-off of 0: rclone does not hold a small photo in memory; its WebDAV backend has no
        // streaming upload, so it spools the pipe to a file and PUTs it with a Content-Length.
        let rcat = try runReading(rclone.home + "/in.png",
                                  "rclone rcat --streaming-upload-cutoff 0 --ca-cert '\(d.webCertificate)' --config '\(rclone.home)/rclone.conf' --retries 1 --low-level-retries 1 ptk:Scans/in.png",
                                  environment: environment)
        #expect(rcat.status == 0, "\(rcat.stderr)")
        #expect(d.photoFiles["Scans/in.png"] == png ? true : false, "\(d.photoFiles.keys.sorted())")
        let listed = try rclone.run(["lsf", "-R", "--files-only", "ptk:"])
        #expect(listed.stdout.split(separator: "\n").map(String.init) == ["Scans/in.png"], "\(listed.stdout) \(listed.stderr)")
        #expect(d.stop() == 0)
    }
}
