import Foundation
import PTKTestSupport
import PTKTestTags
import Testing

/// curl's answer: the status, the response's headers (names lowercased) and its body.
struct CurlResult {
    var status: Int
    var headers: [String: String]
    var body: [UInt8]
    var stderr: String
}

/// Runs curl against `daemon`'s door, trusting its web certificate (which names 127.0.0.1):
/// `-u user:password` when `password` is given, `args` after.
func curl(_ daemon: DaemonProcess, _ password: AppPassword?, _ args: [String]) throws -> CurlResult {
    let work = makeTemporaryDirectory("ptk-curl")
    defer { removeTree(work) }
    let r = try run(
        findProgram("curl") ?? "/usr/bin/curl",
        ["-sS", "--cacert", daemon.webCertificate, "-D", work + "/headers", "-o", work + "/body", "-w", "%{http_code}"]
            + (password.map { ["-u", "\($0.user):\($0.password)"] } ?? []) + args,
        timeout: 30, absolute: true)
    var headers: [String: String] = [:]
    let text = String(decoding: readFile(work + "/headers") ?? [], as: UTF8.self)
    // The last response's head only (a 100 Continue may come first).
    for line in (text.components(separatedBy: "\r\n\r\n").filter { !$0.isEmpty }.last ?? "").components(
        separatedBy: "\r\n")
    {
        guard let colon = line.firstIndex(of: ":") else { continue }
        headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
    }
    return CurlResult(
        status: Int(r.stdout) ?? 0, headers: headers, body: readFile(work + "/body") ?? [], stderr: r.stderr)
}

@Suite(
    "End to end: WebDAV door with curl (issue 44)", .serialized,
    .enabled(if: haveProgram("curl") || davClientsRequired, "needs curl"), .tags(.endToEnd))
struct DAVCurlTests {
    @Test(
        "PUT with Content-Length and chunked (X-Expected-Entity-Length) stores byte-identical photos that GET (and Range) return; no credentials is 401 with a Basic challenge, OPTIONS too"
    )
    func putAndGet() throws {
        let d = try DaemonProcess.withDAV()
        let work = makeTemporaryDirectory("ptk-dav-curl")
        defer { removeTree(work) }
        let pw = try d.appPassword("laptop", access: "full")
        #expect(pw.user.isEmpty == false && pw.password.count >= 16 && pw.access == "full", "\(pw)")
        #expect(pw.url.hasPrefix("https://") && pw.url.hasSuffix(":\(d.webPort)/dav/"), "\(pw.url)")

        // Without credentials: 401 and the challenge, for GET, PROPFIND and OPTIONS alike
        // (Explorer needs the 401 on its first OPTIONS).
        for method in ["GET", "OPTIONS", "PROPFIND", "PUT"] {
            let r = try curl(d, nil, ["-X", method, d.davURL])
            #expect(r.status == 401, "\(method): \(r.status) \(r.stderr)")
            #expect(r.headers["www-authenticate"].map(isPTKChallenge) == true, "\(method): \(r.headers)")
        }
        // A wrong password is 401 too.
        let wrong = AppPassword(url: pw.url, user: pw.user, password: pw.password + "x", access: "full")
        #expect(try curl(d, wrong, [d.davURL]).status == 401)

        let options = try curl(d, pw, ["-X", "OPTIONS", d.davURL])
        #expect(options.status == 200, "\(options.status) \(options.headers)")
        #expect(
            options.headers["dav"].map { $0.replacingOccurrences(of: " ", with: "").hasPrefix("1,2") } == true,
            "\(options.headers)")
        #expect(options.headers["ms-author-via"] == "DAV", "\(options.headers)")

        // Content-Length.
        let png = makePNG(size: 30_000, seed: 41)
        writeFile(work + "/a.png", png)
        let put = try curl(d, pw, ["-T", work + "/a.png", d.davURL + "a.png"])
        #expect(put.status == 201, "\(put.status) \(put.stderr)")
        #expect(d.photoFiles["a.png"] == png, "\(d.photoFiles.keys.sorted())")

        // Chunked, with the length announced as Finder announces it.
        let jpeg = makeJPEG(width: 120, height: 90, seed: 42)
        writeFile(work + "/b.jpg", jpeg)
        #expect(try curl(d, pw, ["-X", "MKCOL", d.davURL + "Trip"]).status == 201)
        let chunked2 = try curl(
            d, pw,
            [
                "-T", work + "/b.jpg", "-H", "Transfer-Encoding: chunked",
                "-H", "X-Expected-Entity-Length: \(jpeg.count)", d.davURL + "Trip/b.jpg",
            ])
        #expect(chunked2.status == 201, "\(chunked2.status) \(chunked2.stderr)")
        #expect(d.photoFiles["Trip/b.jpg"] == jpeg, "\(d.photoFiles.keys.sorted())")

        // HEIC, type from the bytes, whatever the name says.
        let heic = readFile(fixturePath("heif/portrait-exif.heic")) ?? []
        writeFile(work + "/c.heic", heic)
        #expect(try curl(d, pw, ["-T", work + "/c.heic", d.davURL + "Trip/c.heic"]).status == 201)
        #expect(d.photoFiles["Trip/c.heic"] == heic)

        // GET, HEAD and a Range give the bytes back.
        let get = try curl(d, pw, [d.davURL + "a.png"])
        #expect(get.status == 200 && get.body == png, "\(get.status) \(get.body.count)")
        #expect(get.headers["content-length"] == "\(png.count)")
        let getB = try curl(d, pw, [d.davURL + "Trip/b.jpg"])
        #expect(getB.status == 200 && getB.body == jpeg)
        let head = try curl(d, pw, ["-I", d.davURL + "Trip/c.heic"])
        #expect(head.status == 200 && head.headers["content-length"] == "\(heic.count)", "\(head.headers)")
        let range = try curl(d, pw, ["-r", "100-199", d.davURL + "a.png"])
        #expect(range.status == 206 && range.body == Array(png[100..<200]), "\(range.status) \(range.headers)")
        #expect(range.headers["content-range"] == "bytes 100-199/\(png.count)", "\(range.headers)")

        // A Depth 1 PROPFIND lists them; infinity is refused.
        let list = try curl(d, pw, ["-X", "PROPFIND", "-H", "Depth: 1", d.davURL + "Trip/"])
        #expect(list.status == 207)
        #expect(
            listedNames(String(decoding: list.body, as: UTF8.self), in: "/dav/Trip/") == ["b.jpg", "c.heic"],
            "\(String(decoding: list.body, as: UTF8.self))")
        #expect(try curl(d, pw, ["-X", "PROPFIND", "-H", "Depth: infinity", d.davURL]).status == 403)
        #expect(d.stop() == 0)
    }

    @Test(
        "a text file is 415 and never stored; other bytes onto a kept name are 409 (the photo stays); the same bytes again store nothing twice"
    )
    func refusals() throws {
        let d = try DaemonProcess.withDAV()
        let work = makeTemporaryDirectory("ptk-dav-curl")
        defer { removeTree(work) }
        let pw = try d.appPassword("scanner", access: "upload")
        writeFile(work + "/notes.txt", Array("not a photo\n".utf8))
        let text = try curl(d, pw, ["-T", work + "/notes.txt", d.davURL + "notes.png"])
        #expect(text.status == 415, "\(text.status)")
        #expect(try curl(d, pw, ["-T", work + "/notes.txt", d.davURL + "notes.txt"]).status == 415)
        #expect(d.photoFiles.isEmpty, "\(d.photoFiles.keys.sorted())")

        let first = makePNG(size: 12_000, seed: 51)
        writeFile(work + "/first.png", first)
        #expect(try curl(d, pw, ["-T", work + "/first.png", d.davURL + "IMG_1.png"]).status == 201)
        let other = makePNG(size: 12_000, seed: 52)
        writeFile(work + "/other.png", other)
        let conflict = try curl(d, pw, ["-T", work + "/other.png", d.davURL + "IMG_1.png"])
        #expect(conflict.status == 409, "\(conflict.status)")
        let again = try curl(d, pw, ["-T", work + "/first.png", d.davURL + "IMG_1.png"])
        #expect(again.status == 204 || again.status == 201, "\(again.status)")
        #expect(d.photoFiles == ["IMG_1.png": first], "\(d.photoFiles.keys.sorted())")
        #expect(try curl(d, pw, [d.davURL + "IMG_1.png"]).body == first)

        // An upload password neither deletes, moves nor copies.
        #expect(try curl(d, pw, ["-X", "DELETE", d.davURL + "IMG_1.png"]).status == 403)
        #expect(
            try curl(d, pw, ["-X", "MOVE", "-H", "Destination: \(d.davURL)IMG_2.png", d.davURL + "IMG_1.png"]).status
                == 403)
        #expect(
            try curl(d, pw, ["-X", "COPY", "-H", "Destination: \(d.davURL)IMG_2.png", d.davURL + "IMG_1.png"]).status
                == 403)
        #expect(d.photoFiles == ["IMG_1.png": first])
        #expect(d.stop() == 0)
    }

    @Test("ptk app-password remove: the next request with that password is 401 at once, on a kept connection too")
    func removeRevokes() throws {
        let d = try DaemonProcess.withDAV()
        let pw = try d.appPassword("old-phone", access: "upload")
        let keep = try d.appPassword("new-phone", access: "upload")
        let session = try DAVSession(port: d.webPort, userAgent: "curl-like", authorization: pw.basic)
        #expect(try session.send("PROPFIND", "/dav/", headers: [("Depth", "0")]).status == 207)
        #expect(try curl(d, pw, ["-X", "PROPFIND", "-H", "Depth: 0", d.davURL]).status == 207)
        let removed = try library(d, ["app-password", "remove", "old-phone"])
        #expect(removed.status == 0, "\(removed.stderr)")
        #expect(try curl(d, pw, ["-X", "PROPFIND", "-H", "Depth: 0", d.davURL]).status == 401)
        // The connection opened before the removal does not keep the password alive.
        #expect(try session.send("PROPFIND", "/dav/", headers: [("Depth", "0")]).status == 401)
        #expect(try curl(d, keep, ["-X", "PROPFIND", "-H", "Depth: 0", d.davURL]).status == 207)
        // Removing it again is an error, with a nonzero exit.
        #expect(try library(d, ["app-password", "remove", "old-phone"]).status != 0)
        #expect(d.stop() == 0)
    }
}
