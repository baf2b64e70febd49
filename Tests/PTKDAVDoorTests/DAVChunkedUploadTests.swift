import Glibc
import PTKDAV
import PTKDigest
import PTKSystem
import PTKTestSupport
import PTKTestTags
import PTKTrust
import Testing

@testable import PTKDAVDoor
@testable import PTKWebDoor

/// Chunked upload v2 below `/remote.php/dav/uploads/NAME/ID` over scripted connections: each
/// client's way of naming chunks, resuming from the listing, the MOVE of `.file` taking the
/// PUT's path (its answers and headers), and what is refused: path tricks, chunk names, missing
/// or lying chunks, the bounds, other passwords' folders.
@Suite("WebDAV door: chunked upload v2", .tags(.unit))
struct DAVChunkedUploadTests {
    static let uploads = "/remote.php/dav/uploads/phone"
    static let files = "/remote.php/dav/files/phone"

    /// `bytes` cut in `parts` pieces (the last takes the rest).
    static func split(_ bytes: [UInt8], _ parts: Int) -> [[UInt8]] {
        let step = bytes.count / parts
        return (0..<parts).map { i in Array(bytes[(i * step)..<(i == parts - 1 ? bytes.count : (i + 1) * step)]) }
    }

    /// Plays each request on a connection of its own (a refusal before the body closes its
    /// connection), in order, against the same receiver.
    static func each(_ f: DoorFixture, _ requests: [UInt8]...) -> [ParsedResponse] {
        requests.map { f.dav($0).first }
    }

    /// The files and folders below the door's upload folders on disk.
    static func onDisk(_ f: DoorFixture) -> [String] {
        func walk(_ folder: String, _ prefix: String) -> [String] {
            listDirectory(folder).flatMap { name -> [String] in
                let path = folder + "/" + name
                return isDirectory(path) ? [prefix + name + "/"] + walk(path, prefix + name + "/") : [prefix + name]
            }
        }
        return walk(f.web.dav.configuration.webDirectory + "/uploads", "").sorted()
    }

    /// The kept photo with these bytes, if one is.
    static func keptDigests(_ f: DoorFixture) -> [String] {
        f.kept().map { digest(readFile(f.photos + "/" + $0)) }
    }

    @Test(
        "nextcloudcmd's way: MKCOL with OC-Total-Length is 201, 16-digit indexes from 0, the listing gives each chunk's length, MOVE .file with a path Destination and X-OC-Mtime is 201 with OC-FileId, ETag and OC-ETag; the photo is whole and the folder gone"
    )
    func desktop() throws {
        let f = try DoorFixture()
        let phone = try f.appPassword("phone", .upload)
        let png = makePNG(size: 30_000, seed: 700)
        let parts = Self.split(png, 3)
        let folder = Self.uploads + "/3735928559"
        var requests = [dav("MKCOL", folder, phone, [("OC-Total-Length", "\(png.count)")])]
        for (i, part) in parts.enumerated() {
            requests.append(dav("PUT", folder + "/" + String(format16(i)), phone, body: part))
        }
        requests.append(propfind(folder, phone, props: ["resourcetype", "getcontentlength"]))
        requests.append(
            dav(
                "MOVE", folder + "/.file", phone,
                [
                    ("Destination", Self.files + "/IMG_0001.png"), ("OC-Total-Length", "\(png.count)"),
                    ("X-OC-Mtime", "1693894314"),
                ]))
        requests.append(propfind(folder, phone))
        let e = f.web(requests)
        #expect(e.responses.map(\.status) == [201, 201, 201, 201, 207, 201, 404], "\(e.responses)")
        let listed = multistatus(e[4]) ?? []
        #expect(listed.count == 4 && listed.first?.isCollection == true, "\(e[4].text)")
        #expect(listed.dropFirst().map(\.name) == (0..<3).map(format16))
        #expect(listed.dropFirst().map { $0.text("getcontentlength") } == parts.map { "\($0.count)" })
        let moved = e[5]
        #expect(moved.header("oc-fileid") != nil && moved.header("x-oc-mtime") == "accepted")
        #expect(moved.header("etag") == "\"\(sha256Hex(png))\"" && moved.header("oc-etag") == moved.header("etag"))
        #expect(Self.keptDigests(f) == [digest(png)], "\(f.kept())")
        #expect(f.incoming().isEmpty)
        #expect(Self.onDisk(f) == [phone.id + "/"], "\(Self.onDisk(f))")
        // The name is listed where it was put, with the time it was sent with.
        let listing = f.dav(propfind(Self.files + "/", phone, props: ["getlastmodified", "getcontentlength"]))
        let entry = multistatus(listing.first)?.first { $0.name == "IMG_0001.png" }
        #expect(entry?.text("getcontentlength") == "\(png.count)", "\(listing.first.text)")
        #expect(entry?.text("getlastmodified") == DAVDates.httpDate(1_693_894_314))
        // The same bytes again to the same name: 204, stored once.
        let again = f.dav(
            dav("MKCOL", folder, phone), dav("PUT", folder + "/" + format16(0), phone, body: png),
            dav("MOVE", folder + "/.file", phone, [("Destination", Self.files + "/IMG_0001.png")]))
        #expect(again.responses.map(\.status) == [201, 201, 204], "\(again.responses)")
        #expect(f.kept().count == 1)
        // Other bytes to that name: 409 as for a PUT, nothing stored, the folder kept for the client.
        let other = makePNG(size: 5_000, seed: 701)
        let conflict = f.dav(
            dav("MKCOL", folder, phone), dav("PUT", folder + "/" + format16(0), phone, body: other),
            dav("MOVE", folder + "/.file", phone, [("Destination", Self.files + "/IMG_0001.png")]),
            propfind(folder, phone))
        #expect(conflict.responses.map(\.status) == [201, 201, 409, 207], "\(conflict.responses)")
        #expect(f.kept().count == 1 && f.incoming().isEmpty)
    }

    @Test(
        "the apps' ways: 6 digits from 1 (Android), unpadded from 1 (nc-py-api) with an absolute Destination, 16-digit byte offsets (owncloudcmd): each assembles in numeric order"
    )
    func otherClients() throws {
        let f = try DoorFixture()
        let phone = try f.appPassword("phone", .upload)
        func android(_ parts: [[UInt8]]) -> [String] { parts.indices.map { "00000" + String($0 + 1) } }
        func unpadded(_ parts: [[UInt8]]) -> [String] { parts.indices.map { String($0 + 1) } }
        func offsets(_ parts: [[UInt8]]) -> [String] {
            var offset = 0
            var names: [String] = []
            for part in parts {
                let digits = String(offset)
                names.append(String(repeating: "0", count: 16 - digits.count) + digits)
                offset += part.count
            }
            return names
        }
        let namings: [(String, ([[UInt8]]) -> [String])] = [
            ("android", android), ("nc-py-api-" + String(repeating: "Ab1", count: 18) + "xy", unpadded),
            ("owncloud", offsets),
        ]
        var expected: [String] = []
        for (i, (id, names)) in namings.enumerated() {
            let png = makePNG(size: 12_000 + 1000 * i, seed: 710 + UInt64(i))
            expected.append(digest(png))
            // 12 pieces: "10" sorts before "2" by text, not by number.
            let parts = Self.split(png, 12)
            let folder = Self.uploads + "/" + id
            let destination = "https://ptk.test" + Self.files + "/\(id).png"
            var requests = [dav("MKCOL", folder, phone, [("Destination", destination)])]
            // Sent out of order: the numbers decide.
            for (name, part) in zip(names(parts), parts).reversed() {
                requests.append(dav("PUT", folder + "/" + name, phone, [("Destination", destination)], body: part))
            }
            requests.append(dav("MOVE", folder + "/.file", phone, [("Destination", destination), ("Overwrite", "T")]))
            let e = f.web(requests)
            #expect(
                e.responses.map(\.status) == [201] + Array(repeating: 201, count: 12) + [201], "\(id): \(e.responses)")
        }
        #expect(Set(Self.keptDigests(f)) == Set(expected), "\(f.kept())")
    }

    @Test(
        "resuming: a chunk sent again replaces it (204), the listing after an interruption shows what came, and the rest completes the photo"
    )
    func resume() throws {
        let f = try DoorFixture()
        let phone = try f.appPassword("phone", .upload)
        let png = makePNG(size: 20_000, seed: 720)
        let parts = Self.split(png, 5)
        let folder = Self.uploads + "/md5ofthefile"
        let first = f.dav(
            dav("MKCOL", folder, phone), dav("PUT", folder + "/000001", phone, body: parts[0]),
            dav("PUT", folder + "/000002", phone, body: Array(parts[1].prefix(10))),
            dav("PUT", folder + "/000002", phone, body: parts[1]), dav("PUT", folder + "/000003", phone, body: parts[2])
        )
        #expect(first.responses.map(\.status) == [201, 201, 201, 204, 201], "\(first.responses)")
        // A new connection: the app lists the folder and goes on from the highest number.
        let listing = f.dav(propfind(folder, phone, props: ["getcontentlength", "resourcetype"]))
        let entries: [DAVEntry] = Array((multistatus(listing.first) ?? []).dropFirst())
        #expect(entries.map(\.name) == ["000001", "000002", "000003"], "\(listing.first.text)")
        let lengths: [Int] = entries.compactMap { (e: DAVEntry) -> Int? in
            e.text("getcontentlength").flatMap { Int($0) }
        }
        let sent: Int = parts[0].count + parts[1].count + parts[2].count
        #expect(lengths.reduce(0, +) == sent)
        let rest = f.dav(
            dav("MKCOL", folder, phone), dav("PUT", folder + "/000004", phone, body: parts[3]),
            dav("PUT", folder + "/000005", phone, body: parts[4]),
            dav("MOVE", folder + "/.file", phone, [("Destination", Self.files + "/resumed.png")]))
        #expect(rest.responses.map(\.status) == [405, 201, 201, 201], "\(rest.responses)")
        #expect(Self.keptDigests(f) == [digest(png)])
    }

    @Test(
        "missing or lying chunks: a gap in the numbers, a total other than OC-Total-Length or the MKCOL's, are 400 with nothing stored and the folder kept; not a photo is 415"
    )
    func missingChunks() throws {
        let f = try DoorFixture()
        let phone = try f.appPassword("phone", .upload)
        let png = makePNG(size: 9_000, seed: 730)
        let parts = Self.split(png, 3)
        let move = { (folder: String, headers: [(String, String)]) in
            dav("MOVE", folder + "/.file", phone, [("Destination", Self.files + "/x.png")] + headers)
        }
        let e = Self.each(
            f, dav("MKCOL", Self.uploads + "/gap", phone), dav("PUT", Self.uploads + "/gap/1", phone, body: parts[0]),
            dav("PUT", Self.uploads + "/gap/3", phone, body: parts[2]), move(Self.uploads + "/gap", []),
            dav("MKCOL", Self.uploads + "/late", phone), dav("PUT", Self.uploads + "/late/2", phone, body: parts[1]),
            move(Self.uploads + "/late", []),
            dav("MKCOL", Self.uploads + "/lie", phone), dav("PUT", Self.uploads + "/lie/1", phone, body: parts[0]),
            move(Self.uploads + "/lie", [("OC-Total-Length", "\(png.count)")]),
            dav("MKCOL", Self.uploads + "/said", phone, [("OC-Total-Length", "\(png.count)")]),
            dav("PUT", Self.uploads + "/said/1", phone, body: parts[0]), move(Self.uploads + "/said", []),
            dav("PUT", Self.uploads + "/said/2", phone, body: png),
            dav("MKCOL", Self.uploads + "/text", phone),
            dav("PUT", Self.uploads + "/text/1", phone, body: Array(String(repeating: "not a photo ", count: 50).utf8)),
            move(Self.uploads + "/text", []), propfind(Self.uploads + "/text", phone))
        #expect(
            e.map(\.status) == [
                201, 201, 201, 400, 201, 201, 400, 201, 201, 400, 201, 201, 400, 413, 201, 201, 415, 207,
            ],
            "\(e.map(\.status))")
        #expect(e[3].text.contains("missing") && e[9].text.contains("OC-Total-Length"), "\(e[3].text) \(e[9].text)")
        #expect(f.kept().isEmpty && f.incoming().isEmpty, "\(f.everything())")
        #expect((multistatus(e[17])?.count ?? 0) == 2)
    }

    @Test(
        "names: out-of-range or non-digit chunks, path tricks in the id, encoded slashes, another password's folders and Destinations outside the password's files are refused"
    )
    func hostileNames() throws {
        let f = try DoorFixture()
        let phone = try f.appPassword("phone", .upload)
        let other = try f.appPassword("other", .upload)
        let png = makePNG(size: 3_000, seed: 740)
        let base = Self.uploads + "/ok"
        let e = Self.each(
            f, dav("MKCOL", base, phone),
            dav("PUT", base + "/12345678901234567", phone, body: png), dav("PUT", base + "/abc", phone, body: png),
            dav("PUT", base + "/-1", phone, body: png), dav("PUT", base + "/1e3", phone, body: png),
            dav("MKCOL", Self.uploads + "/..", phone), dav("MKCOL", Self.uploads + "/%2e%2e", phone),
            dav("MKCOL", Self.uploads + "/.hidden", phone), dav("MKCOL", Self.uploads + "/a%2Fb", phone),
            dav("MKCOL", Self.uploads + "/" + String(repeating: "a", count: 129), phone),
            dav("MKCOL", Self.uploads + "/a%20b", phone), dav("PUT", base + "/1/2", phone, body: png),
            dav("PUT", base + "/1", phone, body: png),
            dav("MOVE", base + "/.file", phone, [("Destination", "/remote.php/dav/files/other/x.png")]),
            dav("MOVE", base + "/.file", phone, [("Destination", Self.files + "/../x.png")]),
            dav("MOVE", base + "/.file", phone, [("Destination", Self.files + "/a%2Fb.png")]),
            dav("MOVE", base + "/.file", phone, [("Destination", "https://elsewhere.test" + Self.files + "/x.png")]),
            dav("MOVE", base + "/.file", phone, [("Destination", Self.files + "/.incoming/x.png")]),
            dav("MOVE", base + "/1", phone, [("Destination", Self.files + "/x.png")]))
        #expect(
            e.map(\.status) == [
                201, 400, 400, 400, 400, 400, 400, 400, 400, 400, 400, 404, 201, 403, 400, 400, 403, 403, 403,
            ],
            "\(e.map(\.status))")
        // Another password's upload folders are not there for this one, whatever it asks.
        let theirs = Self.each(
            f, propfind(Self.uploads + "/ok", other), dav("PUT", Self.uploads + "/ok/2", other, body: png),
            dav("DELETE", Self.uploads + "/ok", other), dav("MKCOL", "/remote.php/dav/uploads/other/mine", phone),
            propfind("/remote.php/dav/uploads/other/", phone), dav("MKCOL", "/remote.php/dav/uploads", phone))
        #expect(theirs.map(\.status) == [404, 404, 404, 404, 404, 404], "\(theirs.map(\.status))")
        #expect(f.kept().isEmpty)
        let mine = f.dav(propfind(Self.uploads + "/ok", phone))
        #expect(listedNames(mine.first) == ["1"], "\(mine.first.text)")
    }

    @Test(
        "bounds: a chunk past max-file-size or chunks adding up past it are 413; past the folders per password 507; min-free 507 before writing; DELETE of a folder and of a chunk 204, then 404"
    )
    func bounds() throws {
        let png = makePNG(size: 10_000, seed: 750)
        let f = try DoorFixture { $0.maxFileSize = 15_000 }
        f.web.dav.uploads.limits.maxFolders = 4
        let phone = try f.appPassword("phone", .upload)
        let big = [UInt8](repeating: 7, count: 15_001)
        let e = Self.each(
            f, dav("MKCOL", Self.uploads + "/a", phone), dav("PUT", Self.uploads + "/a/1", phone, body: big),
            dav("PUT", Self.uploads + "/a/1", phone, body: png), dav("PUT", Self.uploads + "/a/2", phone, body: png),
            dav("MKCOL", Self.uploads + "/b", phone, [("OC-Total-Length", "15001")]),
            dav("MKCOL", Self.uploads + "/b", phone), dav("MKCOL", Self.uploads + "/c", phone),
            dav("MKCOL", Self.uploads + "/d", phone), dav("MKCOL", Self.uploads + "/e", phone),
            dav("DELETE", Self.uploads + "/a/1", phone), dav("DELETE", Self.uploads + "/a/1", phone),
            dav("DELETE", Self.uploads + "/a", phone), dav("DELETE", Self.uploads + "/a", phone),
            dav("MKCOL", Self.uploads + "/e", phone))
        #expect(
            e.map(\.status) == [201, 413, 201, 413, 413, 201, 201, 201, 507, 204, 404, 204, 404, 201],
            "\(e.map(\.status))")
        let tight = try DoorFixture { $0.minFree = Int64.max / 4 }
        let ann = try tight.appPassword("phone", .upload)
        let full = tight.dav(
            dav("MKCOL", Self.uploads + "/a", ann), dav("PUT", Self.uploads + "/a/1", ann, body: png))
        #expect(full.responses.map(\.status) == [201, 507], "\(full.responses)")
        #expect(Self.onDisk(tight) == [ann.id + "/", ann.id + "/a/"], "\(Self.onDisk(tight))")
    }

    @Test(
        "what is on disk survives a restart (a stale folder is removed, a half-written chunk too); a removed password loses its folders"
    )
    func restartAndForget() throws {
        let f = try DoorFixture()
        let phone = try f.appPassword("phone", .upload)
        let png = makePNG(size: 6_000, seed: 760)
        let e = f.dav(
            dav("MKCOL", Self.uploads + "/kept", phone, [("OC-Total-Length", "\(png.count)")]),
            dav("PUT", Self.uploads + "/kept/1", phone, body: png), dav("MKCOL", Self.uploads + "/stale", phone))
        #expect(e.responses.map(\.status) == [201, 201, 201])
        let directory = f.web.dav.configuration.webDirectory + "/uploads"
        writeFile(directory + "/" + phone.id + "/.part-99", [1, 2, 3])
        let old = timespec(tv_sec: 1_000_000, tv_nsec: 0)
        #expect(utimensat(AT_FDCWD, directory + "/" + phone.id + "/stale", [old, old], 0) == 0)
        let again = DAVUploads(
            directory: directory, limits: f.web.dav.uploads.limits, keep: [phone.id], now: DAVEndpoint.now)
        #expect(again.folders(of: phone.id).keys.sorted() == ["kept"])
        #expect(again.folder(phone.id, "kept")?.total == Int64(png.count))
        #expect(again.folder(phone.id, "kept")?.chunks[1]?.size == Int64(png.count))
        #expect(
            Self.onDisk(f) == [phone.id + "/", phone.id + "/kept/", phone.id + "/kept/.total", phone.id + "/kept/1"])
        f.web.dav.uploads = again
        let moved = f.dav(dav("MOVE", Self.uploads + "/kept/.file", phone, [("Destination", Self.files + "/k.png")]))
        #expect(moved.first.status == 201, "\(moved.first)")
        let f2 = f.dav(dav("MKCOL", Self.uploads + "/next", phone), dav("MKCOL", Self.uploads + "/old", phone))
        #expect(f2.responses.map(\.status) == [201, 201])
        // A day untouched: the next look removes them.
        f.web.dav.uploads.sweep(now: DAVEndpoint.now + 86_401)
        #expect(f.web.dav.uploads.folders(of: phone.id).isEmpty)
        #expect(Self.onDisk(f) == [phone.id + "/"], "\(Self.onDisk(f))")
        #expect(f.dav(propfind(Self.uploads + "/next", phone)).first.status == 404)
        #expect(f.dav(dav("MKCOL", Self.uploads + "/next", phone)).first.status == 201)
        f.web.dav.forget(password: phone.id)
        #expect(Self.onDisk(f).isEmpty, "\(Self.onDisk(f))")
        #expect(f.web.dav.uploads.make(phone.id, "x", total: nil, now: 0)?.status == 401)
    }

    @Test("If-Match on a PUT and on the MOVE of .file: 412 unless it names the photo's ETag (\"*\": any photo)")
    func ifMatch() throws {
        let f = try DoorFixture()
        let phone = try f.appPassword("phone", .upload)
        let png = makePNG(size: 4_000, seed: 770)
        let tag = "\"\(sha256Hex(png))\""
        let folder = Self.uploads + "/m"
        let e = Self.each(
            f, dav("PUT", Self.files + "/a.png", phone, [("If-Match", "*")], body: png),
            dav("PUT", Self.files + "/a.png", phone, body: png),
            dav("PUT", Self.files + "/a.png", phone, [("If-Match", "\"other\"")], body: png),
            dav("PUT", Self.files + "/a.png", phone, [("If-Match", "\"x\", " + tag)], body: png),
            dav("MKCOL", folder, phone), dav("PUT", folder + "/1", phone, body: png),
            dav("MOVE", folder + "/.file", phone, [("Destination", Self.files + "/a.png"), ("If-Match", "\"other\"")]),
            dav("MOVE", folder + "/.file", phone, [("Destination", Self.files + "/a.png"), ("If-Match", tag)]))
        #expect(e.map(\.status) == [412, 201, 412, 204, 201, 201, 412, 204], "\(e.map(\.status))")
    }

    @Test("the numbering check: indexes from 0 or 1, byte offsets, and what has gaps")
    func gaps() {
        #expect(DAVUploads.gap([]) == nil)
        #expect(DAVUploads.gap([(0, 5), (1, 5), (2, 1)]) == nil)
        #expect(DAVUploads.gap([(1, 5), (2, 5)]) == nil)
        #expect(DAVUploads.gap([(0, 5), (5, 5), (10, 1)]) == nil)
        #expect(DAVUploads.gap([(1, 5), (3, 5)]) != nil)
        #expect(DAVUploads.gap([(2, 5)]) != nil)
        #expect(DAVUploads.gap([(0, 5), (5, 5), (11, 1)]) != nil)
        #expect(DAVUploads.validID("nc-py-api-abc_DEF.1") && !DAVUploads.validID(".x") && !DAVUploads.validID(""))
        #expect(DAVUploads.chunkNumber("0000000000000010") == 10 && DAVUploads.chunkNumber("+1") == nil)
    }
}

/// `i` as 16 digits (nextcloudcmd's chunk names).
func format16(_ i: Int) -> String {
    let digits = "\(i)"
    return String(repeating: "0", count: 16 - digits.count) + digits
}
