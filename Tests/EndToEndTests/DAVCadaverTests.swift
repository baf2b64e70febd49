import Foundation
import PTKTestSupport
import PTKTestTags
import Testing

/// cadaver asks on its terminal whether to accept a certificate no CA signed, and rejects it
/// outright when standard input is not a terminal ("Certificate rejected."), so it runs on a
/// pseudo-terminal: this driver waits for each prompt, answers "y" to the certificate, then
/// types one command per `dav:...>` prompt and prints the whole session. Credentials come from
/// $HOME/.netrc, which cadaver reads.
let cadaverDriver = #"""
    import os, pty, re, select, sys, time

    url, commands = sys.argv[1], sys.argv[2:]
    pid, fd = pty.fork()
    if pid == 0:
        os.execvp("cadaver", ["cadaver", url])
    transcript = b""
    mark = 0

    def wait_for(pattern, timeout=20):
        global transcript, mark
        deadline = time.time() + timeout
        while time.time() < deadline:
            m = re.search(pattern, transcript[mark:])
            if m:
                mark += m.end()
                return True
            r, _, _ = select.select([fd], [], [], 0.2)
            if r:
                try:
                    data = os.read(fd, 65536)
                except OSError:
                    return False
                if not data:
                    return False
                transcript += data
        return False

    ok = True
    if wait_for(rb"\(y/n\) ?"):
        os.write(fd, b"y\n")
    else:
        ok = False
    for command in commands + ["quit"]:
        if not ok or not wait_for(rb"dav:[^\r\n]*> ?$|dav:[^\r\n]*> "):
            ok = False
            break
        os.write(fd, command.encode() + b"\n")
    deadline = time.time() + 10
    while time.time() < deadline:
        r, _, _ = select.select([fd], [], [], 0.2)
        if r:
            try:
                data = os.read(fd, 65536)
            except OSError:
                break
            if not data:
                break
            transcript += data
    try:
        os.kill(pid, 9)
    except ProcessLookupError:
        pass
    sys.stdout.write(transcript.decode("utf-8", "replace").replace("\r\n", "\n"))
    sys.exit(0 if ok else 3)
    """#

@Suite(
    "End to end: WebDAV door with cadaver (issue 44)", .serialized,
    .enabled(if: (haveProgram("cadaver") && haveProgram("python3")) || davClientsRequired, "needs cadaver and python3"),
    .tags(.endToEnd))
struct DAVCadaverTests {
    @Test(
        "cadaver on a terminal: accepts the certificate, mkcol, put (PNG, JPEG; a text file is refused 415), ls, lock, discover, unlock, get; the photos land byte-identical"
    )
    func scriptedSession() throws {
        let d = try DaemonProcess.withDAV()
        let pw = try d.appPassword("cadaver", access: "full")
        let home = makeTemporaryDirectory("ptk-cadaver")
        defer { removeTree(home) }
        writeFile(home + "/.netrc", Array("machine 127.0.0.1 login \(pw.user) password \(pw.password)\n".utf8))
        chmod(home + "/.netrc", 0o600)
        writeFile(home + "/driver.py", Array(cadaverDriver.utf8))
        let png = makePNG(size: 25_000, seed: 61)
        let jpeg = makeJPEG(width: 100, height: 70, seed: 62)
        writeFile(home + "/a.png", png)
        writeFile(home + "/b.jpg", jpeg)
        writeFile(home + "/notes.txt", Array("shopping list\n".utf8))
        let commands = [
            "mkcol Trip", "cd Trip", "put \(home)/a.png a.png", "put \(home)/b.jpg b.jpg",
            "put \(home)/notes.txt notes.txt",
            "ls", "lock a.png", "discover a.png", "unlock a.png", "get a.png \(home)/back.png",
        ]
        let r = try run(
            findProgram("python3") ?? "/usr/bin/python3", [home + "/driver.py", d.davURL] + commands, timeout: 90,
            absolute: true,
            environment: ["HOME": home, "TERM": "dumb", "LANG": "C.UTF-8"])
        let out = r.stdout
        #expect(r.status == 0, "the driver lost cadaver's prompt: \(out) \(r.stderr)")
        #expect(out.contains("Do you wish to accept the certificate?"), "\(out)")
        #expect(out.contains("Creating `Trip': succeeded."), "\(out)")
        #expect(
            out.range(
                of: #"Uploading \S+/a\.png to `/dav/Trip/a\.png':(?:\n(?!Uploading)[^\n]*)*? succeeded\."#,
                options: .regularExpression) != nil, "\(out)")
        #expect(
            out.range(
                of: #"Uploading \S+/b\.jpg to `/dav/Trip/b\.jpg':(?:\n(?!Uploading)[^\n]*)*? succeeded\."#,
                options: .regularExpression) != nil, "\(out)")
        #expect(
            out.range(
                of:
                    #"Uploading \S+/notes\.txt to `/dav/Trip/notes\.txt':(?:\n(?!Uploading)[^\n]*)*? failed:\n415 Unsupported Media Type"#,
                options: .regularExpression) != nil, "\(out)")
        // Each upload and download: its progress lines, then "succeeded." (or "failed:" and the status).
        // ls: both photos with their sizes, no text file.
        #expect(out.range(of: #"\n\s*a\.png\s+\#(png.count)\s"#, options: .regularExpression) != nil, "\(out)")
        #expect(out.range(of: #"\n\s*b\.jpg\s+\#(jpeg.count)\s"#, options: .regularExpression) != nil, "\(out)")
        #expect(!out.contains(" notes.txt "), "\(out)")
        #expect(out.contains("Locking `a.png': succeeded."), "\(out)")
        #expect(out.contains("Discovering locks on `a.png'"), "\(out)")
        #expect(
            out.range(
                of: #"Lock token <opaquelocktoken:[^>]+>|Lock token <urn:uuid:[^>]+>"#, options: .regularExpression)
                != nil, "\(out)")
        #expect(out.contains("Unlocking `a.png': succeeded."), "\(out)")
        #expect(
            out.range(
                of: #"Downloading `/dav/Trip/a\.png' to \S+back\.png:(?:\n[^\n]*)*? succeeded\."#,
                options: .regularExpression) != nil, "\(out)")
        #expect(readFile(home + "/back.png") == png)
        #expect(d.photoFiles == ["Trip/a.png": png, "Trip/b.jpg": jpeg], "\(d.photoFiles.keys.sorted())")
        #expect(d.stop() == 0)
    }
}
