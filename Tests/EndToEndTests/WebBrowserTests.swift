import Foundation
import PTKSystem
import PTKTestSupport
import PTKTestTags
import PTKVocabulary
import Testing

/// The web interface in headless Chromium (Tests/Browser/web_test.py through WebDriver),
/// against the real ptkd, with photos sent by the real ptk-send.
@Suite(
    "Web interface in a real browser", .serialized,
    .enabled(
        if: ["/usr/bin/chromium", "/usr/bin/chromedriver"].allSatisfy {
            FileManager.default.isExecutableFile(atPath: $0)
        }
            && ["/usr/bin/convert", "/usr/bin/heif-enc"].allSatisfy { FileManager.default.isExecutableFile(atPath: $0) }
            && (try? run("/usr/bin/python3", ["-c", "import selenium"], absolute: true).status) == 0,
        "needs chromium, chromium-driver, python3-selenium, imagemagick and libheif-examples (scripts/deps.sh --test)"),
    .tags(.endToEnd))
struct WebBrowserTests {
    static let hostileName = "<img src=x onerror=alert(1)>.png"
    static let heicName = "fractal.heic"
    /// For the gallery's rows (issue 58): a PNG with transparent pixels, a 32x32 palette icon,
    /// and a photo whose name does not fit its place.
    static let glassName = "glass.png"
    static let iconName = "icon.png"
    static let longName = "a photo with a rather long name that cannot fit in its place in the gallery.png"
    /// Photos of realistic content, more than a gallery page (200).
    static let realistic = 204

    /// `count` JPEGs of 2016x1512 (every third one 1512x2016, a portrait: the gallery's rows mix
    /// aspect ratios) with a photo's detail (ImageMagick's fractal plasma, blurred, with noise:
    /// noisier per thumbnail pixel than a 4032x3024 photo of it, so the byte figures err high),
    /// each its own bytes (a comment segment numbers it), and a HEIC of it.
    static func realisticPhotos(_ work: String, count: Int) throws -> [String] {
        var bases: [[UInt8]] = []
        for seed in 1...3 {
            let base = work + "/base\(seed).jpg"
            let made = try run(
                "/usr/bin/convert",
                [
                    "-size", seed == 3 ? "1512x2016" : "2016x1512", "-seed", "\(seed)", "plasma:fractal", "-blur",
                    "0x1", "-attenuate", "0.3", "+noise", "Gaussian", "-quality", "90", base,
                ], timeout: 120, absolute: true)
            #expect(made.status == 0, "\(made.stderr)")
            bases.append(try #require(readFile(base)))
        }
        let heic = work + "/" + heicName
        let encoded = try run(
            "/usr/bin/heif-enc", ["-q", "60", work + "/base1.jpg", "-o", heic], timeout: 120, absolute: true)
        #expect(encoded.status == 0, "\(encoded.stderr)")
        var paths = [heic]
        for i in 0..<count {
            let text = Array("photo \(i)".utf8)
            let base = bases[i % bases.count]
            let path = work + "/r\(1000 + i).jpg"
            writeFile(
                path, Array(base.prefix(2)) + [0xFF, 0xFE, 0, UInt8(text.count + 2)] + text + Array(base.dropFirst(2)))
            paths.append(path)
        }
        return paths
    }

    @Test(
        "log in by link; the gallery's bytes and sharpness at 390 px (3x) and 1280 px, its justified rows, checkerboard only behind transparency, names cut with an ellipsis, a small PNG's thumbnail lossless; the viewer's keys, swipes and way back; a HEIC's preview; times in the browser's zone; upload three photos; rename, note, rate, delete agree with ptk list; hostile text stays text; no CSRF token 403; no cookie, login page; screenshots"
    )
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
        let glass = makeImagePNG(width: 400, height: 300, alpha: true) { x, y in
            [UInt8(x & 255), UInt8(y & 255), 160, x < 200 ? 0 : 255]
        }
        let long = makeImagePNG(width: 600, height: 400) { x, y in [UInt8((x * y) & 255), UInt8(x & 255), 90] }
        for (name, bytes) in [(Self.glassName, glass), (Self.iconName, paletteIconPNG().png), (Self.longName, long)] {
            writeFile(work + "/" + name, bytes)
            sent.append(work + "/" + name)
        }
        let s = try send(d, sent, ["--name", "<script>window.__ptk_xss=1</script>"])
        #expect(s.status == 0, "\(s.stderr)")
        let started = WallTime.now
        let realistic = try Self.realisticPhotos(work, count: Self.realistic)
        let made = WallTime.now
        let r0 = try send(d, realistic)
        #expect(r0.status == 0, "\(r0.stderr)")
        let names = Set(
            [Self.hostileName, "beach.png", "sunset.png", Self.glassName, Self.iconName, Self.longName]
                + realistic.map { lastPathComponent($0) })
        #expect(waitForIndex(d, names, timeout: 300))
        print(
            "figure: \(realistic.count) realistic photos made in \((made.milliseconds - started.milliseconds) / 1000) s, sent and indexed in "
                + "\((WallTime.now.milliseconds - made.milliseconds) / 1000) s")
        #expect(
            try library(
                d, ["note", Self.hostileName, "<script>window.__ptk_xss=2</script> and </textarea><b>bold</b>"]
            ).status == 0)
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
        let r = try run(
            "/usr/bin/python3",
            [
                repositoryRoot() + "/Tests/Browser/web_test.py", "--base", base, "--link", base + link,
                "--dir", d.dir, "--ptk", ptk, "--shots", shots, "--upload",
            ] + uploads + [
                "--hostile", Self.hostileName, "--heic", Self.heicName, "--glass", Self.glassName, "--icon",
                Self.iconName, "--long", Self.longName,
            ],
            timeout: 300, absolute: true)
        print(
            r.stdout.split(separator: "\n").filter { $0.hasPrefix("figure:") || $0.hasPrefix("FAIL") }.joined(
                separator: "\n"))
        #expect(r.status == 0, "\(r.stdout)\n\(r.stderr)\n\(d.log)")
        for shot in [
            "gallery-390x844.png", "gallery-1280x800.png", "rows-390x844.png", "rows-1280x800.png",
            "gallery-noscript-390x844.png", "photo-390x844.png",
            "upload-390x844.png",
            "login-390x844.png",
            "viewer-390x844.png", "viewer-1280x800.png", "viewer-1920x1080.png", "photo-heic-390x844.png",
        ] {
            #expect(FileManager.default.fileExists(atPath: shots + "/" + shot), "\(shot)")
        }
    }
}
