import Foundation
import Glibc
import PTKSystem
import PTKTestSupport
import PTKTestTags
import Testing

/// The photos in `dir` (ptk's own folders left out), flat: the tests below drop files in the root.
private func photos(_ dir: String) -> [String] {
    listDirectory(dir).filter { !$0.hasPrefix(".") }.sorted()
}

/// `count` unique photos written into `staging` (not watched), then moved into `folder` one
/// after another (rename: each appears whole at once, all within a moment). Their bytes by name.
private func dropAtOnce(_ count: Int, staging: String, into folder: String, seed: UInt64) -> [String: [UInt8]] {
    var made: [String: [UInt8]] = [:]
    for i in 0..<count {
        let name = String(format: "IMG_%04d.png", i)
        let bytes = makePNG(size: 20_000 + i * 7, seed: seed + UInt64(i))
        writeFile(staging + "/" + name, bytes)
        made[name] = bytes
    }
    for name in made.keys.sorted() { _ = rename(staging + "/" + name, folder + "/" + name) }
    return made
}

private func makeFolders(_ paths: String...) {
    // Test setup: the writes below fail if one is missing.
    for path in paths { try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true) }
}

/// The inbox door reads the next file while the photos it has read wait for their flush rounds
/// (issue 56, bench/inbox): many files at once, each still taken exactly once.
@Suite("End to end: many files dropped at once into watched folders (issue 56)", .tags(.endToEnd))
struct InboxBurstTests {
    @Test("200 photos moved into a drop folder at once: each taken exactly once, identical, and the folder emptied")
    func twoHundredAtOnce() throws {
        let root = makeTemporaryDirectory("ptk-inbox")
        defer { removeTree(root) }
        let drop = root + "/drop"
        let staging = root + "/staging"
        makeFolders(drop, staging)
        let d = try DaemonProcess(["--drop-folder", drop, "--inbox-settle", "1s"])
        defer { _ = d.stop() }
        let made = dropAtOnce(200, staging: staging, into: drop, seed: 1_000)
        #expect(eventually(60) { photos(d.dir).count >= 200 && listDirectory(drop).isEmpty }, "\(d.log)")
        #expect(photos(d.dir) == made.keys.sorted(), "\(d.log)")
        for (name, bytes) in made { #expect(readFile(d.dir + "/" + name) == bytes, "\(name)") }
        #expect(d.log.components(separatedBy: "drop-folder \(drop): took ").count == 201, "\(d.log)")
        #expect(listDirectory(d.dir + "/.incoming").isEmpty)
        #expect(d.stop() == 0)
    }

    @Test("the same bytes under 20 names, moved into an inbox at once: stored once, every source taken and said")
    func sameBytesAtOnce() throws {
        let root = makeTemporaryDirectory("ptk-inbox")
        defer { removeTree(root) }
        let inbox = root + "/inbox"
        let staging = root + "/staging"
        makeFolders(inbox, staging)
        let d = try DaemonProcess(["--inbox", inbox, "--inbox-settle", "1s"], root: root)
        defer { _ = d.stop() }
        let bytes = makePNG(size: 300_000, seed: 77)
        let names = (0..<20).map { String(format: "copy-%02d.png", $0) }
        for name in names { writeFile(staging + "/" + name, bytes) }
        for name in names { _ = rename(staging + "/" + name, inbox + "/" + name) }
        #expect(eventually(30) { d.log.components(separatedBy: "inbox \(inbox): took ").count == 21 }, "\(d.log)")
        #expect(photos(d.dir).count == 1, "\(photos(d.dir)) \(d.log)")
        #expect(d.log.components(separatedBy: "(its bytes were kept already)").count == 20, "\(d.log)")
        #expect(photos(d.dir).first.flatMap { readFile(d.dir + "/" + $0) } == bytes)
        #expect(d.stop() == 0)
    }

    @Test(
        "ptkd stopped while 200 photos are being taken, then started again: each photo once, none lost, nothing half-taken left"
    )
    func stoppedMidway() throws {
        let root = makeTemporaryDirectory("ptk-inbox")
        defer { removeTree(root) }
        let drop = root + "/drop"
        let staging = root + "/staging"
        makeFolders(drop, staging)
        var d = try DaemonProcess(["--drop-folder", drop, "--inbox-settle", "1s"], root: root)
        let made = dropAtOnce(200, staging: staging, into: drop, seed: 2_000)
        #expect(eventually(30) { d.log.contains("drop-folder \(drop): took ") }, "\(d.log)")
        #expect(d.stop() == 0)
        let firstLog = d.log
        let takenFirst = firstLog.components(separatedBy: "drop-folder \(drop): took ").count - 1
        // Everything said taken is in the photos directory and gone from the folder, and every
        // photo is in one place or the other (a few may be in both: not yet removed).
        let kept = Set(photos(d.dir))
        let left = Set(listDirectory(drop))
        #expect(kept.count >= takenFirst)
        #expect(kept.union(left) == Set(made.keys), "\(firstLog)")
        for name in kept { #expect(readFile(d.dir + "/" + name) == made[name], "\(name) half-taken") }
        #expect(listDirectory(d.dir + "/.incoming").filter { !$0.hasPrefix(".") }.isEmpty)

        d = try DaemonProcess(["--drop-folder", drop, "--inbox-settle", "1s"], root: root)
        defer { _ = d.stop() }
        #expect(eventually(60) { listDirectory(drop).isEmpty && photos(d.dir).count >= 200 }, "\(d.log)")
        #expect(photos(d.dir) == made.keys.sorted(), "taken twice or lost: \(photos(d.dir).count) \(d.log)")
        for (name, bytes) in made { #expect(readFile(d.dir + "/" + name) == bytes, "\(name)") }
        #expect(d.stop() == 0)
    }
}
