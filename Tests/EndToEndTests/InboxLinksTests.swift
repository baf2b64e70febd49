import Foundation
import Glibc
import PTKSystem
import PTKTestSupport
import PTKTestTags
import Testing

/// Bytes `pid` has caused to be sent to storage so far (`/proc/PID/io`'s write_bytes).
private func bytesWritten(_ pid: Int32) -> Int64? {
    guard let text = try? String(contentsOfFile: "/proc/\(pid)/io", encoding: .utf8) else { return nil }
    for line in text.split(separator: "\n") where line.hasPrefix("write_bytes:") {
        return Int64(line.split(separator: " ").last ?? "")
    }
    return nil
}

/// `path`'s status (lstat), or nil.
private func status(_ path: String) -> stat? {
    var st = stat()
    return lstat(path, &st) == 0 ? st : nil
}

private func makeFolder(_ path: String) {
    // Test setup: the writes below fail if it is missing.
    try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
}

/// `path`'s bytes flushed to disk, so that only ptkd's own writes are counted after.
private func flush(_ path: String) {
    let fd = open(path, O_RDONLY)
    guard fd >= 0 else { return }
    fsync(fd)
    close(fd)
}

/// `bytes` written over the start of `path` in place (no truncation, the same inode).
private func writeInPlace(_ path: String, _ bytes: [UInt8]) throws {
    let fd = try FileDescriptor.open(path, flags: [.writeOnly])
    defer { fd.close() }
    try fd.writeAll(bytes)
}

@Suite("End to end: an inbox's photos by hard link (inbox-links = yes) and by reflink (issue 56)", .tags(.endToEnd))
struct InboxLinksTests {
    @Test(
        "inbox-links = yes: the photo is the source's inode (nlink 2), ptkd writes none of its bytes; a write in place is said as an error and its bytes taken as a new photo by copy"
    )
    func hardLinkAndWriteInPlace() throws {
        let root = makeTemporaryDirectory("ptk-links")
        defer { removeTree(root) }
        let inbox = root + "/inbox"
        makeFolder(inbox + "/phone")
        let d = try DaemonProcess(["--inbox", inbox, "--inbox-links", "yes", "--inbox-settle", "1s"], root: root)
        defer { _ = d.stop() }
        let pid = d.process.processIdentifier
        let bytes = makePNG(size: 8 << 20, seed: 31)
        let source = inbox + "/phone/a.png"
        writeFile(source, bytes)
        flush(source)
        let before = try #require(bytesWritten(pid))
        #expect(eventually(30) { d.log.contains(#"took "phone/a.png" as "a.png""#) }, "\(d.log)")
        let written = try #require(bytesWritten(pid)) - before
        let photo = try #require(status(d.dir + "/a.png"))
        let sourceStatus = try #require(status(source))
        #expect(photo.st_ino == sourceStatus.st_ino && photo.st_dev == sourceStatus.st_dev && photo.st_nlink == 2)
        #expect(readFile(d.dir + "/a.png") == bytes)
        #expect(
            d.log.contains("takes photos as hard links to their sources (inbox-links = yes): no byte copied"),
            "\(d.log)")
        // The library's index and thumbnail are written; none of the photo's 8 MiB.
        print("inbox-links: ptkd wrote \(written) bytes to storage for an 8 MiB photo")
        #expect(written < 2 << 20, "ptkd wrote \(written) bytes taking an 8 MiB photo by hard link")

        // A writer that breaks the promise: new bytes over the old, in place.
        let edited = makePNG(size: 8 << 20, seed: 32)
        try #require(edited.count == bytes.count)
        try writeInPlace(source, edited)
        #expect(
            eventually(30) { d.log.contains(#"took "phone/a.png" as "a (2).png""#) }, "\(d.log)")
        #expect(
            d.log.contains(
                #"error: inbox \#(inbox): the photo "a.png" changed: its bytes were written in place through its inbox source "phone/a.png""#
            ), "\(d.log)")
        // The new bytes are a photo of their own, a copy; the linked photo holds them too (said).
        let copy = try #require(status(d.dir + "/a (2).png"))
        #expect(copy.st_ino != sourceStatus.st_ino && copy.st_nlink == 1)
        #expect(readFile(d.dir + "/a (2).png") == edited)
        #expect(readFile(d.dir + "/a.png") == edited)
        let shown = try library(d, ["show", "a (2).png"])
        #expect(shown.stdout.contains("inbox \(inbox)/phone/a.png"), "\(shown.stdout) \(shown.stderr)")
        // Written in place again: said again, and still never linked.
        let again = makePNG(size: 8 << 20, seed: 33)
        try writeInPlace(source, again)
        #expect(eventually(30) { d.log.contains(#"took "phone/a.png" as "a (3).png""#) }, "\(d.log)")
        #expect(status(d.dir + "/a (3).png")?.st_nlink == 1)
        #expect(d.log.components(separatedBy: "error: inbox").count == 3, "\(d.log)")
        #expect(d.stop() == 0)
    }

    @Test(
        "an inbox on a file system with reflinks: the photo is a reflink (shared extents, ptkd writes none of its bytes), identical; an edit of the source in place leaves it as it was",
        .tags(.root), .enabled(if: geteuid() == 0, "needs root (a loop device)"))
    func reflink() throws {
        let volume = try ReflinkVolume()
        defer { volume.remove() }
        let inbox = volume.path + "/inbox"
        makeFolder(inbox + "/phone")
        let d = try DaemonProcess(["--inbox", inbox, "--inbox-settle", "1s"], root: volume.path)
        defer { _ = d.stop() }
        let pid = d.process.processIdentifier
        let bytes = makePNG(size: 8 << 20, seed: 41)
        let source = inbox + "/phone/a.png"
        writeFile(source, bytes)
        flush(source)
        let before = try #require(bytesWritten(pid))
        #expect(eventually(30) { d.log.contains(#"took "phone/a.png" as "a.png""#) }, "\(d.log)")
        let written = try #require(bytesWritten(pid)) - before
        #expect(readFile(d.dir + "/a.png") == bytes)
        #expect(status(d.dir + "/a.png")?.st_ino != status(source)?.st_ino)
        #expect(d.log.contains("takes photos by reflink: no byte copied"), "\(d.log)")
        let extents = runTool(["filefrag", "-v", d.dir + "/a.png"])
        #expect(extents.output.contains("shared"), "\(extents.output)")
        print("reflink: ptkd wrote \(written) bytes to storage for an 8 MiB photo")
        #expect(written < 2 << 20, "ptkd wrote \(written) bytes taking an 8 MiB photo by reflink")
        // The source edited in place: the photo stays; the new bytes are a new photo.
        let edited = makePNG(size: 8 << 20, seed: 42)
        try writeInPlace(source, edited)
        #expect(eventually(30) { d.log.contains(#"took "phone/a.png" as "a (2).png""#) }, "\(d.log)")
        #expect(readFile(d.dir + "/a.png") == bytes)
        #expect(readFile(d.dir + "/a (2).png") == edited)
        #expect(!d.log.contains("error:"), "\(d.log)")
        #expect(d.stop() == 0)
    }
}
