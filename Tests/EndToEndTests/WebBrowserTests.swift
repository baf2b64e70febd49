import Foundation
import PTKSystem
import PTKTestSupport
import Testing

/// The web interface in headless Chromium (Tests/Browser/web_test.py through WebDriver),
/// against the real ptkd, with photos sent by the real ptk-send.
@Suite("Web interface in a real browser", .serialized,
       .enabled(if: ["/usr/bin/chromium", "/usr/bin/chromedriver"].allSatisfy { FileManager.default.isExecutableFile(atPath: $0) }
                && (try? run("/usr/bin/python3", ["-c", "import selenium"], absolute: true).status) == 0,
                "needs chromium, chromium-driver and python3-selenium (scripts/deps.sh --test)"))
struct WebBrowserTests {
    static let hostileName = "<img src=x onerror=alert(1)>.png"

    @Test("log in by link; thumbnails; upload three photos; rename, note, rate, delete agree with ptk list; hostile text stays text; no CSRF token 403; no cookie, login page; screenshots")
    func browser() throws {
        let d = try DaemonProcess.withWeb()
        let work = d.root + "/work"
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        // Photos already there: one whose name is markup, from a sender whose name is a script.
        var sent: [String] = []
        for (i, name) in [Self.hostileName, "beach.png", "sunset.png"].enumerated() {
            let path = work + "/" + name
            writeFile(path, makePNG(size: 30_000 + i * 1000, seed: UInt64(40 + i)))
            sent.append(path)
        }
        let s = try send(d, sent, ["--name", "<script>window.__ptk_xss=1</script>"])
        #expect(s.status == 0, "\(s.stderr)")
        #expect(waitForIndex(d, [Self.hostileName, "beach.png", "sunset.png"]))
        #expect(try library(d, ["note", Self.hostileName, "<script>window.__ptk_xss=2</script> and </textarea><b>bold</b>"]).status == 0)
        // Three photos to upload from the browser: a PNG, a JPEG named .png (the page reads
        // its type from its bytes: it is saved as up2.jpg), and another PNG.
        let uploads = [work + "/up1.png", work + "/up2.png", work + "/up3.png"]
        writeFile(uploads[0], makePNG(size: 40_000, seed: 51))
        writeFile(uploads[1], makeJPEG(width: 64, height: 48, seed: 52))
        writeFile(uploads[2], makePNG(size: 400_000, seed: 53))
        let link = try WebTests.link(d, name: "browser-test")
        let base = "https://127.0.0.1:\(d.webPort)"
        let shots = repositoryRoot() + "/.build/screenshots"
        let ptk = "'\(binDirectory)/ptk' --config /dev/null --dir '\(d.dir)' --state-dir '\(d.stateDir)'"
        let r = try run("/usr/bin/python3", [repositoryRoot() + "/Tests/Browser/web_test.py", "--base", base, "--link", base + link,
                                             "--dir", d.dir, "--ptk", ptk, "--shots", shots, "--upload"] + uploads + ["--hostile", Self.hostileName],
                        timeout: 300, absolute: true)
        #expect(r.status == 0, "\(r.stdout)\n\(r.stderr)\n\(d.log)")
        for shot in ["gallery-390x844.png", "gallery-1280x800.png", "photo-390x844.png", "upload-390x844.png", "login-390x844.png"] {
            #expect(FileManager.default.fileExists(atPath: shots + "/" + shot), "\(shot)")
        }
    }
}
