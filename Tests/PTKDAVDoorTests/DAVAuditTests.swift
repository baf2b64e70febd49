import Foundation
import Glibc
import PTKDAV
import PTKDigest
import PTKLibrary
import PTKSystem
import PTKTestSupport
import PTKTestTags
import PTKVocabulary
import Testing

@testable import PTKDAVDoor
@testable import PTKWebDoor

/// Writes `bytes` over the file at `path` in place: the same inode, the same path, other bytes
/// (what a removed photo's inode number given to the next file at its path looks like to a
/// name that trusts the number).
private func overwriteInPlace(_ path: String, _ bytes: [UInt8]) {
    let fd = open(path, O_WRONLY | O_TRUNC)
    #expect(fd >= 0, "cannot open \(path)")
    _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    close(fd)
}

private func inode(_ path: String) -> UInt64 {
    var st = stat()
    return lstat(path, &st) == 0 ? UInt64(st.st_ino) : 0
}

/// `bytes` with its last byte changed: the same size, other bytes.
private func altered(_ bytes: [UInt8]) -> [UInt8] {
    var b = bytes
    b[b.count - 1] ^= 0xFF
    return b
}

extension DoorFixture {
    /// The kept photo a password's name stands for.
    func keptFor(_ account: DAVAccount, _ name: String) -> String? {
        web.dav.names.with(account.id) { $0.files[DAVPath(name.split(separator: "/").map(String.init))]?.kept }
    }
}

/// The WebDAV door against the third audit (issue 54, findings 1 to 4): a name is for the bytes
/// it was given for, not for an inode number; names, locks and owners are bounded; a removed
/// password's state goes at the next request.
@Suite("WebDAV door: the third audit's findings, mended", .tags(.unit))
struct DAVAuditTests {
    // MARK: Finding 1: a name is for its bytes, not its inode number

    @Test(
        "another photo at a name's path with the name's inode number (reused) is not readable by the name: GET 404, PROPFIND lists nothing, the name is forgotten"
    )
    func reusedInode() throws {
        let f = try DoorFixture()
        let up1 = try f.appPassword("up1", .upload)
        let mine = makePNG(size: 900, seed: 540)
        #expect(f.dav(dav("PUT", "/dav/IMG_0042.png", up1, body: mine)).first.status == 201)
        let kept = try #require(f.keptFor(up1, "IMG_0042.png"))
        let before = inode(f.photos + "/" + kept)
        // The phone's photo, at the very path and inode, with the very size.
        let theirs = altered(mine)
        overwriteInPlace(f.photos + "/" + kept, theirs)
        #expect(inode(f.photos + "/" + kept) == before)
        let e = f.dav(
            dav("GET", "/dav/IMG_0042.png", up1), propfind("/dav/", up1), dav("HEAD", "/dav/IMG_0042.png", up1))
        #expect(e.responses.map(\.status) == [404, 207], "\(e.responses.map(\.status))")
        #expect(digest(e[0].body) != digest(theirs))
        #expect(listedNames(e[1]) == [], "\(e[1].text)")
        #expect(f.keptFor(up1, "IMG_0042.png") == nil)
        // The password may PUT a photo under that name again.
        let next = makePNG(size: 910, seed: 5400)
        #expect(f.dav(dav("PUT", "/dav/IMG_0042.png", up1, body: next)).first.status == 201)
        #expect(f.dav(dav("GET", "/dav/IMG_0042.png", up1)).first.body == next)
    }

    @Test("a shared name (bytes kept already) whose kept file now holds other bytes names nothing")
    func reusedInodeShared() throws {
        let f = try DoorFixture()
        let desk = try f.appPassword("desk", .full)
        let up1 = try f.appPassword("up1", .upload)
        let png = makePNG(size: 800, seed: 541)
        #expect(f.dav(dav("PUT", "/dav/holiday.png", desk, body: png)).first.status == 201)
        #expect(f.dav(dav("PUT", "/dav/mine.png", up1, body: png)).first.status == 201)
        #expect(f.dav(dav("GET", "/dav/mine.png", up1)).first.body == png)
        overwriteInPlace(f.photos + "/holiday.png", altered(png))
        let e = f.dav(dav("GET", "/dav/mine.png", up1), propfind("/dav/", up1))
        #expect(e.responses.map(\.status) == [404, 207], "\(e.responses.map(\.status))")
        #expect(listedNames(e[1]) == [])
    }

    @Test("a name whose photo the library removed (ptk rm) is gone from the name's password's view and its file")
    func removedByLibrary() throws {
        let f = try DoorFixture()
        let up1 = try f.appPassword("up1", .upload)
        let png = makePNG(size: 700, seed: 542)
        #expect(f.dav(dav("PUT", "/dav/gone.png", up1, body: png)).first.status == 201)
        let kept = try #require(f.keptFor(up1, "gone.png"))
        try f.reconcile()
        let library = try PhotoLibrary(directory: f.photos, create: false)
        #expect(try library.remove(exactly: kept))
        let e = f.dav(propfind("/dav/", up1), dav("GET", "/dav/gone.png", up1))
        #expect(e.responses.map(\.status) == [207, 404])
        #expect(listedNames(e[0]) == [])
        let file = try readTextFile(f.davState + "/\(up1.id).names")
        let live = try DAVNamesFileView(file)
        #expect(live.files.isEmpty, "\(file)")
    }

    @Test(
        "a names file of before marks (a bare inode number) is read: a name whose file holds its bytes still names it, one whose file holds others does not, even at its inode; the file is written again in the new form"
    )
    func oldNamesFile() throws {
        let f = try DoorFixture()
        let up1 = try f.appPassword("up1", .upload)
        let good = makePNG(size: 600, seed: 543)
        let bad = makePNG(size: 650, seed: 544)
        writeFile(f.photos + "/good.png", good)
        writeFile(f.photos + "/bad.png", altered(bad))
        let lines = [
            "D album",
            "F good.png good.png \(good.count) \(SHA256.hex(of: good)) 1700000000 \(inode(f.photos + "/good.png")) 0",
            "F album/bad.png bad.png \(bad.count) \(SHA256.hex(of: bad)) 1700000000 \(inode(f.photos + "/bad.png")) 0",
        ]
        try makeDirectories(f.davState, mode: 0o700)
        writeFile(f.davState + "/\(up1.id).names", Array((lines.joined(separator: "\n") + "\n").utf8))
        let e = f.dav(
            dav("GET", "/dav/good.png", up1), dav("GET", "/dav/album/bad.png", up1), propfind("/dav/album/", up1),
            propfind("/dav/", up1))
        #expect(e.responses.map(\.status) == [200, 404, 207, 207], "\(e.responses.map(\.status))")
        #expect(e[0].body == good)
        #expect(listedNames(e[2]) == [])
        #expect(listedNames(e[3]) == ["album", "good.png"])
        let text = try readTextFile(f.davState + "/\(up1.id).names")
        let view = try DAVNamesFileView(text)
        #expect(view.files.keys.sorted() == ["good.png"], "\(text)")
        #expect(view.folders == ["album"])
        // Every F line now has a mark or "-" where the inode number was.
        for line in text.split(separator: "\n") where line.hasPrefix("F ") {
            let mark = line.split(separator: " ")[6]
            #expect(mark == "-" || mark.split(separator: ":").count == 4, "\(line)")
        }
    }

    // MARK: Finding 3: names are bounded

    @Test(
        "a full password's names for bytes kept already stop at maxShared: the next is 507 and stores nothing; a new photo is still taken, and a name it used may be PUT again (an upload password's are bounded by bytes alone, before the body: DAVUploadAuditTests.fullNamesTellNothing)"
    )
    func sharedNamesCapped() throws {
        let f = try DoorFixture()
        f.web.dav.names = DAVNames(directory: f.davState, minFree: 0, maxShared: 3)
        let desk = try f.appPassword("desk", .full)
        let laptop = try f.appPassword("laptop", .full)
        let png = makePNG(size: 500, seed: 545)
        #expect(f.dav(dav("PUT", "/dav/kept.png", desk, body: png)).first.status == 201)
        let before = f.everything()
        let e = f.dav(
            dav("PUT", "/dav/a.png", laptop, body: png), dav("PUT", "/dav/b.png", laptop, body: png),
            dav("PUT", "/dav/c.png", laptop, body: png),
            dav("PUT", "/dav/d.png", laptop, body: png), dav("PUT", "/dav/a.png", laptop, body: png))
        #expect(e.responses.map(\.status) == [201, 201, 201, 507, 204], "\(e.responses.map(\.status))")
        #expect(e[3].text.contains("names for photos kept already"), "\(e[3].text)")
        #expect(f.everything() == before)
        #expect(f.dav(dav("PUT", "/dav/new.png", laptop, body: makePNG(size: 520, seed: 546))).first.status == 201)
        #expect(
            listedNames(f.dav(propfind("/dav/", laptop)).first) == ["a.png", "b.png", "c.png", "kept.png", "new.png"])
    }

    @Test(
        "names past maxBytes, or into the state file system's min-free, are refused before an upload password's body is read: 507, nothing stored"
    )
    func namesNeedRoom() throws {
        let f = try DoorFixture()
        let up1 = try f.appPassword("up1", .upload)
        f.web.dav.names = DAVNames(directory: f.davState, minFree: 0, maxBytes: 700)
        let long = String(repeating: "n", count: 150)
        let e = f.dav(
            dav("PUT", "/dav/\(long)1.png", up1, body: makePNG(size: 500, seed: 547)),
            dav("PUT", "/dav/\(long)2.png", up1, body: makePNG(size: 500, seed: 548)))
        #expect(e.responses.map(\.status) == [201, 507], "\(e.responses.map(\.status))")
        #expect(f.kept().count == 1, "\(f.kept())")
        let g = try DoorFixture()
        let up2 = try g.appPassword("up2", .upload)
        g.web.dav.names = DAVNames(directory: g.davState, minFree: Int64.max / 4)
        #expect(g.dav(dav("PUT", "/dav/x.png", up2, body: makePNG(size: 500, seed: 549))).first.status == 507)
        #expect(g.kept().isEmpty)
    }

    @Test(
        "the names file stays bounded while ptkd runs: 2,000 names given and forgotten leave a file of a few lines, read back as they are",
        .tags(.slow))
    func namesFileCompacted() throws {
        let root = makeTemporaryDirectory("ptk-names")
        defer { removeTree(root) }
        let names = DAVNames(directory: root)
        let keep = DAVNamed(
            kept: "k.png", size: 1, sha256: String(repeating: "a", count: 64), modified: 1, mark: nil, shared: false)
        names.setFile("p", DAVPath(["k.png"]), keep)
        for i in 0..<2_000 {
            let path = DAVPath(["dir", String(repeating: "x", count: 200) + "\(i).png"])
            let named = DAVNamed(
                kept: "kept.png", size: 10, sha256: String(repeating: "b", count: 64), modified: 2, mark: nil,
                shared: true)
            #expect(names.setFile("p", path, named) == nil)
            names.remove("p", path)
        }
        let size = (try fileStatus(root + "/p.names")).size
        #expect(size < 200 << 10, "\(size) bytes")
        let again = DAVNames(directory: root)
        #expect(again.with("p") { $0.files } == [DAVPath(["k.png"]): keep])
    }

    // MARK: Finding 2: small requests, big answers

    @Test(
        "a LOCK's owner is at most 1 KiB (400), and a password's owners 8 KiB in all (503): lockdiscovery cannot repeat megabytes for every member"
    )
    func lockOwnersBounded() throws {
        let f = try DoorFixture()
        let up1 = try f.appPassword("up1", .upload)
        let big = String(repeating: "o", count: 60_000)
        let owner = String(repeating: "p", count: 900)
        var requests = [dav("LOCK", "/dav/", up1, [("Depth", "infinity")], body: lockInfo("shared", owner: big))]
        for _ in 0..<9 {
            requests.append(dav("LOCK", "/dav/", up1, [("Depth", "infinity")], body: lockInfo("shared", owner: owner)))
        }
        let e = f.web(requests)
        #expect(
            e.responses.map(\.status) == [400] + Array(repeating: 200, count: 8) + [503], "\(e.responses.map(\.status))"
        )
        let listing = f.dav(propfind("/dav/", up1, depth: "0", props: ["lockdiscovery"]))
        #expect(listing.first.status == 207 && listing.first.body.count < 16 << 10, "\(listing.first.body.count)")
    }

    @Test(
        "a PROPFIND naming one property 2,500 times answers it once per response; more than 100 properties, or 8 KiB of names, is 400"
    )
    func propertiesBounded() throws {
        let f = try DoorFixture()
        let desk = try f.appPassword("desk", .full)
        for i in 0..<5 { writeFile(f.photos + "/p\(i).png", makePNG(size: 300, seed: UInt64(550 + i))) }
        let repeated = propfind("/dav/", desk, props: Array(repeating: "quota-available-bytes", count: 2_500))
        let many = propfind("/dav/", desk, props: (0..<101).map { "x\($0)" })
        let namespace = String(repeating: "n", count: 9_000)
        let long = dav(
            "PROPFIND", "/dav/", desk, [("Depth", "1")],
            body: Array(
                "<?xml version=\"1.0\"?><D:propfind xmlns:D=\"DAV:\"><D:prop><x xmlns=\"\(namespace)\"/></D:prop></D:propfind>"
                    .utf8))
        let e = f.dav(repeated, many, long)
        #expect(e.responses.map(\.status) == [207, 400, 400], "\(e.responses.map(\.status))")
        let text = e[0].text
        #expect(
            text.components(separatedBy: "<D:quota-available-bytes>").count - 1 == 6,
            "one per response: \(text.prefix(800))")
        #expect(e[0].body.count < 8 << 10)
    }

    // MARK: Finding 4: a removed password's state goes with it

    @Test(
        "a removed full password's exclusive lock of /dav/ no longer stands in anyone's way at the next request; its names and sidecars are gone at once"
    )
    func removedPasswordsLocks() throws {
        let f = try DoorFixture()
        let desk = try f.appPassword("desk", .full)
        let laptop = try f.appPassword("laptop", .full)
        let locked = f.dav(
            dav("LOCK", "/dav/", desk, [("Depth", "infinity"), ("Timeout", "Second-3600")], body: lockInfo()))
        #expect(locked.first.status == 200)
        #expect(f.dav(dav("PUT", "/dav/y.png", laptop, body: makePNG(size: 410, seed: 561))).first.status == 423)
        // An upload password's names and sidecars.
        let g = try DoorFixture()
        let gone = try g.appPassword("gone", .upload)
        let made = g.dav(
            dav("PUT", "/dav/p.png", gone, body: makePNG(size: 420, seed: 562)),
            dav("PUT", "/dav/.DS_Store", gone, body: [1]))
        #expect(made.responses.map(\.status) == [201, 201])
        #expect(listDirectory(g.davState).contains { $0.hasPrefix(gone.id) })

        #expect(try f.appPasswords.remove(name: "desk"))
        let after = f.dav(
            dav("PUT", "/dav/y.png", laptop, body: makePNG(size: 410, seed: 561)),
            propfind("/dav/", laptop, depth: "0", props: ["lockdiscovery"]))
        #expect(after.responses.map(\.status) == [201, 207], "\(after.responses.map(\.status))")
        #expect(!after[1].text.contains("activelock"), "\(after[1].text)")

        #expect(try g.appPasswords.remove(name: "gone"))
        let other = try g.appPassword("other", .upload)
        #expect(g.dav(propfind("/dav/", other)).first.status == 207)
        #expect(!listDirectory(g.davState).contains { $0.hasPrefix(gone.id) }, "\(listDirectory(g.davState))")
    }
}

/// What a names file says when read as DAVNames reads it (the test's own reading).
struct DAVNamesFileView {
    var files: [String: String] = [:]
    var folders: [String] = []

    init(_ text: String) throws {
        for line in text.split(separator: "\n") {
            let f = line.split(separator: " ").map(String.init)
            switch f.first {
            case "F": files[percentDecoded(f[1])] = percentDecoded(f[2])
            case "D": folders.append(percentDecoded(f[1]))
            case "R":
                let p = percentDecoded(f[1])
                files = files.filter { $0.key != p && !$0.key.hasPrefix(p + "/") }
                folders = folders.filter { $0 != p && !$0.hasPrefix(p + "/") }
            default: continue
            }
        }
    }
}
