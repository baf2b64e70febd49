import Foundation
import Glibc
import PTKTestSupport
import PTKTestTags
import Testing

// Chunked upload v2 of the Nextcloud-compatible door (issue 57) with real clients against a
// real ptkd over TLS on loopback: nextcloudcmd with a photo large enough for its NG chunking,
// nc-py-api's upload_stream, and the Android app's sequence (written from its source,
// docs in /work/i57/nextcloud-spec.md section 3) killed mid-chunk and resumed from the listing;
// then what a hostile client tries.

/// Whether nc-py-api can be imported by python3.
let haveNcPyAPI: Bool = {
    guard haveProgram("python3") else { return false }
    return (try? run(findProgram("python3") ?? "/usr/bin/python3", ["-c", "import nc_py_api"], absolute: true).status)
        == 0
}()

/// A client script (Python 3, standard library only) written to a temporary file.
struct CloudScript {
    let path: String

    init(_ source: String) {
        let dir = makeTemporaryDirectory("ptk-cloud-script")
        path = dir + "/script.py"
        writeFile(path, Array(source.utf8))
    }

    func run(_ args: [String], timeout: Double = 120) throws -> Finished {
        try EndToEndTests.run(
            findProgram("python3") ?? "/usr/bin/python3", [path] + args, timeout: timeout, absolute: true)
    }

    /// The Android app's chunked v2 upload (AND-LIB ChunkedFileUploadRemoteOperation): MKCOL of
    /// uploads/NAME/MD5 with an absolute Destination, PROPFIND Depth 1 to resume (digit names of
    /// at most 6 characters: their lengths summed, the highest number taken), PUT 000001...
    /// with the Destination, MOVE .file with X-OC-Mtime and OC-Total-Length. `stop` > 0: after
    /// that many chunks in all, half of the next is sent and the process dies (exit 9).
    /// Prints one JSON object: the statuses and the chunk numbers it sent.
    static let android = CloudScript(
        #"""
        import hashlib, http.client, json, os, ssl, sys, base64, urllib.parse
        import xml.etree.ElementTree as ET
        url, user, password, path, name, chunk, stop, mtime = sys.argv[1:9]
        chunk, stop = int(chunk), int(stop)
        u = urllib.parse.urlsplit(url)
        ctx = ssl._create_unverified_context()
        conn = http.client.HTTPSConnection(u.hostname, u.port, context=ctx, timeout=60)
        auth = "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()
        data = open(path, "rb").read()
        upload = f"/remote.php/dav/uploads/{user}/" + hashlib.md5(data).hexdigest()
        dest = f"https://{u.hostname}:{u.port}/remote.php/dav/files/{user}/" + urllib.parse.quote(name)
        out = {"statuses": [], "sent": []}
        def req(method, target, headers=None, body=None):
            h = {"Authorization": auth}
            h.update(headers or {})
            conn.request(method, target, body=body, headers=h)
            r = conn.getresponse()
            text = r.read()
            out["statuses"].append(r.status)
            return r, text
        req("MKCOL", upload, {"Destination": dest})
        r, text = req("PROPFIND", upload, {"Depth": "1", "Content-Type": "application/xml"},
            b'<?xml version="1.0"?><d:propfind xmlns:d="DAV:"><d:prop><d:getcontentlength/><d:resourcetype/></d:prop></d:propfind>')
        done, last = 0, 0
        for resp in ET.fromstring(text).findall("{DAV:}response"):
            leaf = resp.find("{DAV:}href").text.rstrip("/").split("/")[-1]
            if resp.find(".//{DAV:}collection") is not None or not leaf.isdigit() or len(leaf) > 6:
                continue
            done += int(resp.find(".//{DAV:}getcontentlength").text)
            last = max(last, int(leaf))
        out["resumedAt"] = [last, done]
        offset, number = done, last
        while offset < len(data):
            number += 1
            piece = data[offset:offset + chunk]
            target = upload + "/%06d" % number
            if stop and number > stop:
                conn.putrequest("PUT", target)
                conn.putheader("Authorization", auth)
                conn.putheader("Content-Length", str(len(piece)))
                conn.endheaders()
                conn.send(piece[: len(piece) // 2])
                print(json.dumps(out), flush=True)
                os._exit(9)
            req("PUT", target, {"Destination": dest, "OC-Total-Length": str(len(data))}, piece)
            out["sent"].append(number)
            offset += len(piece)
        r, _ = req("MOVE", upload + "/.file", {"Destination": dest, "Overwrite": "T", "X-OC-Mtime": mtime,
            "OC-Total-Length": str(len(data))})
        out["fileid"] = r.getheader("OC-FileId")
        out["mtime"] = r.getheader("X-OC-MTime")
        print(json.dumps(out))
        """#)

    /// Plays requests on one keep-alive connection (a new one after the door closed it):
    /// argv[1] a JSON file {"url", "requests": [{"m", "p", "h", "auth": [user, password],
    /// "body": null | N (N bytes) | "file:PATH"}]}. Prints the statuses as a JSON list.
    static let replay = CloudScript(
        #"""
        import http.client, json, ssl, sys, base64, urllib.parse
        spec = json.load(open(sys.argv[1]))
        u = urllib.parse.urlsplit(spec["url"])
        ctx = ssl._create_unverified_context()
        conn = None
        statuses = []
        for q in spec["requests"]:
            body = q.get("body")
            if isinstance(body, int): body = b"x" * body
            elif isinstance(body, str): body = open(body[5:], "rb").read()
            h = dict(q.get("h", {}))
            h["Authorization"] = "Basic " + base64.b64encode(("%s:%s" % tuple(q["auth"])).encode()).decode()
            for attempt in range(2):
                try:
                    if conn is None:
                        conn = http.client.HTTPSConnection(u.hostname, u.port, context=ctx, timeout=60)
                    conn.request(q["m"], q["p"], body=body, headers=h)
                    r = conn.getresponse()
                    r.read()
                    statuses.append(r.status)
                    if r.getheader("Connection", "").lower() == "close":
                        conn.close(); conn = None
                    break
                except (http.client.HTTPException, OSError):
                    conn = None
                    if attempt: statuses.append(0)
        print(json.dumps(statuses))
        """#)
}

extension DaemonProcess {
    /// The door's base URL, as the compatible clients are given it.
    var cloudURL: String { "https://127.0.0.1:\(webPort)" }

    /// The kept photos' bytes, by digest.
    var keptDigests: Set<String> { Set(photoFiles.values.map { sha256Hex($0) }) }
}

/// Statuses printed as a JSON list, or the printed text when it is not one.
func statuses(_ r: Finished) -> [Int] {
    (try? JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [Int]) ?? []
}

@Suite("End to end: chunked upload v2 with real clients (issue 57)", .serialized, .tags(.endToEnd, .slow))
struct CloudChunkedTests {
    /// Syncs a folder holding a 25 MB photo and a small one with `program` (nextcloudcmd or
    /// owncloudcmd) twice: the large one goes through NG chunking and arrives whole with its
    /// mtime, the second run transfers nothing.
    func syncTwice(_ program: String, _ extra: [String]) throws {
        let d = try DaemonProcess.withWeb()
        defer { _ = d.stop() }
        let password = try d.appPassword("desk", access: "upload")
        let home = makeTemporaryDirectory("ptk-ncc")
        defer { removeTree(home) }
        let local = home + "/Photos"
        try FileManager.default.createDirectory(atPath: local, withIntermediateDirectories: true)
        let big = makePNG(size: 25_000_000, seed: 5701)
        let small = makePNG(size: 40_000, seed: 5702)
        writeFile(local + "/big.png", big)
        writeFile(local + "/small.png", small)
        writeFile(home + "/exclude.lst", [])
        let time = timespec(tv_sec: 1_700_000_000, tv_nsec: 0)
        #expect(utimensat(AT_FDCWD, local + "/big.png", [time, time], 0) == 0)
        let sync = {
            try run(
                findProgram(program) ?? "/usr/bin/" + program,
                ["-u", password.user, "-p", password.password, "--trust", "--non-interactive"]
                    + extra.map { $0.replacingOccurrences(of: "HOME", with: home) } + [local, d.cloudURL + "/"],
                timeout: 300, absolute: true, environment: ["HOME": home, "XDG_CONFIG_HOME": home + "/.config"])
        }
        let first = try sync()
        #expect(first.status == 0, "\(first.stderr.suffix(3000))")
        #expect(d.keptDigests == [sha256Hex(big), sha256Hex(small)], "\(d.photoFiles.keys.sorted())")
        // NG chunking: 10 MB first, then as the client's timing says; so two chunks or more.
        #expect(d.log.contains("chunk(s) of the upload folder"), "\(d.log.suffix(3000))")
        let keptBig = d.photoFiles.first { sha256Hex($0.value) == sha256Hex(big) }?.key ?? "?"
        let st = try FileManager.default.attributesOfItem(atPath: d.dir + "/" + keptBig)
        #expect((st[.modificationDate] as? Date)?.timeIntervalSince1970 == 1_700_000_000, "\(st)")
        // The upload folder is gone once the photo is kept.
        #expect(
            listDirectory(d.stateDir + "/web/uploads").flatMap { listDirectory(d.stateDir + "/web/uploads/" + $0) }
                == [])
        let lines = d.log.split(separator: "\n").count
        let second = try sync()
        #expect(second.status == 0, "\(second.stderr.suffix(3000))")
        let added = d.log.split(separator: "\n").dropFirst(lines)
        #expect(!added.contains { $0.contains("assembled") || $0.contains("saved") }, "\(added)")
        #expect(d.photoFiles.count == 2)
        #expect(readFile(local + "/big.png") == big)
    }

    @Test(
        "nextcloudcmd syncs a 25 MB photo through NG chunking (16-digit indexes): it arrives whole with its mtime from X-OC-Mtime; a second run transfers nothing",
        .enabled(if: haveProgram("nextcloudcmd") || davClientsRequired, "needs nextcloudcmd (nextcloud-desktop-cmd)"))
    func nextcloudcmd() throws { try syncTwice("nextcloudcmd", []) }

    @Test(
        "owncloudcmd the same (16-digit byte offsets, OC-Total-File-Length)",
        .enabled(if: haveProgram("owncloudcmd") || davClientsRequired, "needs owncloudcmd (owncloud-client-cmd)"))
    func owncloudcmd() throws { try syncTwice("owncloudcmd", ["--exclude", "HOME/exclude.lst"]) }

    @Test(
        "nc-py-api's upload_stream sends a 12 MB photo in 5 MiB chunks (unpadded numbers from 1, no OC-Total-Length); it arrives whole",
        .enabled(if: haveNcPyAPI || davClientsRequired, "needs nc-py-api (pip install nc-py-api)"))
    func ncPyAPI() throws {
        let d = try DaemonProcess.withWeb()
        defer { _ = d.stop() }
        let password = try d.appPassword("script", access: "upload")
        let photo = makePNG(size: 12_000_000, seed: 5703)
        let file = d.root + "/twelve.png"
        writeFile(file, photo)
        let script = CloudScript(
            #"""
            import sys, niquests
            # niquests 3.21 ignores a Session's verify = False (npa_nc_cert=False): asked per request instead.
            _request = niquests.Session.request
            def request(self, *args, **kwargs):
                kwargs["verify"] = False
                return _request(self, *args, **kwargs)
            niquests.Session.request = request
            from nc_py_api import Nextcloud
            url, user, password, path = sys.argv[1:5]
            nc = Nextcloud(nextcloud_url=url, nc_auth_user=user, nc_auth_pass=password, npa_nc_cert=False)
            with open(path, "rb") as fp:
                node = nc.files.upload_stream("twelve.png", fp, chunk_size=5 * 1024 * 1024)
            print(node)
            """#)
        let r = try script.run([d.cloudURL, password.user, password.password, file])
        #expect(r.status == 0, "\(r.stdout) \(r.stderr.suffix(3000))")
        #expect(d.keptDigests == [sha256Hex(photo)], "\(d.photoFiles.keys.sorted())")
        #expect(d.log.contains("assembled the 3 chunk(s)"), "\(d.log.suffix(3000))")
    }

    @Test(
        "the Android app's chunked upload killed halfway through chunk 4 resumes from the PROPFIND listing and completes the photo, its mtime from X-OC-Mtime",
        .enabled(if: haveProgram("python3") || davClientsRequired, "needs python3"))
    func androidResume() throws {
        let d = try DaemonProcess.withWeb()
        defer { _ = d.stop() }
        let password = try d.appPassword("phone", access: "upload")
        let photo = makePNG(size: 6_000_000, seed: 5704)
        let file = d.root + "/IMG_0001.png"
        writeFile(file, photo)
        let args = { (stop: Int) in
            [d.cloudURL, password.user, password.password, file, "IMG_0001.png", "1000000", "\(stop)", "1690000000"]
        }
        let killed = try CloudScript.android.run(args(3))
        #expect(killed.status == 9, "\(killed.stdout) \(killed.stderr)")
        let first = try JSONSerialization.jsonObject(with: Data(killed.stdout.utf8)) as? [String: Any]
        #expect(first?["sent"] as? [Int] == [1, 2, 3], "\(killed.stdout)")
        #expect(d.photoFiles.isEmpty)
        let resumed = try CloudScript.android.run(args(0))
        #expect(resumed.status == 0, "\(resumed.stdout) \(resumed.stderr)")
        let second = try JSONSerialization.jsonObject(with: Data(resumed.stdout.utf8)) as? [String: Any]
        #expect(second?["resumedAt"] as? [Int] == [3, 3_000_000], "\(resumed.stdout)")
        #expect(second?["sent"] as? [Int] == [4, 5, 6], "\(resumed.stdout)")
        #expect((second?["statuses"] as? [Int])?.last == 201, "\(resumed.stdout)")
        #expect(second?["mtime"] as? String == "accepted" && second?["fileid"] is String, "\(resumed.stdout)")
        #expect(d.keptDigests == [sha256Hex(photo)])
        let kept = d.photoFiles.keys.first ?? "?"
        let st = try FileManager.default.attributesOfItem(atPath: d.dir + "/" + kept)
        #expect((st[.modificationDate] as? Date)?.timeIntervalSince1970 == 1_690_000_000, "\(st)")
    }

    @Test(
        "hostile: chunk names out of range, repeated chunks, lying totals, chunks past max-file-size, another password's folders, 101 folders, path tricks in the id and the Destination",
        .enabled(if: haveProgram("python3") || davClientsRequired, "needs python3"))
    func hostile() throws {
        let d = try DaemonProcess.withWeb(["--max-file-size", "2M"])
        defer { _ = d.stop() }
        let phone = try d.appPassword("phone", access: "upload")
        let other = try d.appPassword("other", access: "upload")
        let photo = makePNG(size: 1_500_000, seed: 5705)
        let file = d.root + "/p.png"
        writeFile(file, photo)
        let head = Array(photo.prefix(1_000_000))
        let tail = Array(photo.dropFirst(1_000_000))
        writeFile(d.root + "/head", head)
        writeFile(d.root + "/tail", tail)
        let up = "/remote.php/dav/uploads/phone"
        let files = "/remote.php/dav/files/phone"
        let mine = [phone.user, phone.password]
        func q(_ m: String, _ p: String, _ h: [String: String] = [:], body: Any? = nil, auth: [String]? = nil)
            -> [String: Any]
        {
            ["m": m, "p": p, "h": h, "auth": auth ?? mine, "body": body ?? NSNull()]
        }
        var requests: [[String: Any]] = [
            q("MKCOL", up + "/a"),  // 201
            q("PUT", up + "/a/12345678901234567", body: 10), q("PUT", up + "/a/abc", body: 10),  // 400 400
            q("PUT", up + "/a/1", body: 10), q("PUT", up + "/a/1", body: "file:" + d.root + "/head"),  // 201 204
            q("PUT", up + "/a/2", body: 1_100_000),  // 413: past max-file-size in all
            q("MOVE", up + "/a/.file", ["Destination": files + "/p.png", "OC-Total-Length": "1500000"]),  // 400: lies
            q("PUT", up + "/a/2", body: "file:" + d.root + "/tail"),  // 201
            q("MOVE", up + "/a/.file", ["Destination": "/remote.php/dav/files/other/p.png"]),  // 403
            q("MOVE", up + "/a/.file", ["Destination": files + "/../p.png"]),  // 400
            q("MOVE", up + "/a/.file", ["Destination": files + "/x%2Fp.png"]),  // 400
            q("PROPFIND", up + "/a", ["Depth": "1"], auth: [other.user, other.password]),  // 404
            q("PROPFIND", "/remote.php/dav/uploads/other/a", ["Depth": "1"]),  // 404
            q("MKCOL", up + "/..%2Fx"), q("MKCOL", up + "/%2e%2e"), q("MKCOL", up + "/.x"),  // 400 400 400
            q("MOVE", up + "/a/.file", ["Destination": files + "/p.png", "X-OC-Mtime": "1690000000"]),  // 201
            q("PROPFIND", up + "/a", ["Depth": "1"]),  // 404: gone
            q("DELETE", up + "/a"),  // 404
        ]
        for i in 0..<100 { requests.append(q("MKCOL", up + "/f\(i)")) }
        requests.append(q("MKCOL", up + "/f100"))  // 507
        let spec = try JSONSerialization.data(withJSONObject: ["url": d.cloudURL, "requests": requests])
        writeFile(d.root + "/spec.json", Array(spec))
        let r = try CloudScript.replay.run([d.root + "/spec.json"], timeout: 300)
        let got = statuses(r)
        let expected =
            [201, 400, 400, 201, 204, 413, 400, 201, 403, 400, 400, 404, 404, 400, 400, 400, 201, 404, 404]
            + Array(repeating: 201, count: 100) + [507]
        #expect(got == expected, "\(r.stdout) \(r.stderr.suffix(2000))")
        #expect(d.keptDigests == [sha256Hex(photo)])
        #expect(!d.log.contains(phone.password) && !d.log.contains(other.password))
    }
}
