import Foundation
import Glibc
import PTKTestSupport
import PTKTestTags
import Testing

/// The harness ptkd's drop-folder tests stand on for sftp and scp (issue 56), tried alone: a
/// real sshd on a loopback port takes sftp and scp puts byte-identical, and an sftp put cut
/// midway leaves a truncated file under its final name that `reput` or a second `put` completes.
@Suite(
    "End to end: sshd with sftp and scp on loopback (issue 56's harness)", .serialized,
    .enabled(
        if: canRunSFTP || (inboxToolsRequired && geteuid() == 0), "needs root, sshd, sftp, scp and ssh-keygen"),
    .tags(.endToEnd, .root))
struct SFTPServerTests {
    @Test(
        "sftp put and scp: photos arrive byte-identical; sshd listens on loopback only; stop() leaves no process"
    )
    func putArrives() throws {
        let work = makeTemporaryDirectory("ptk-sftp-test")
        defer { removeTree(work) }
        let sftp = try SFTPServer(folder: work + "/drop")
        let photo = makePNG(size: 900_000, seed: 5)
        writeFile(work + "/IMG_0001.png", photo)
        let put = try sftp.put(local: work + "/IMG_0001.png", remote: "IMG_0001.png")
        #expect(put.status == 0, "\(put.output)\n\(sftp.log)")
        #expect(readFile(sftp.path("IMG_0001.png")) == photo, "\(put.output)\n\(sftp.log)")
        let nested = try sftp.batch([
            "mkdir \(try toolQuoted(sftp.path("DCIM")))",
            "put \(try toolQuoted(work + "/IMG_0001.png")) \(try toolQuoted(sftp.path("DCIM/IMG 0002.png")))",
        ])
        #expect(nested.status == 0, "\(nested.output)")
        #expect(readFile(sftp.path("DCIM/IMG 0002.png")) == photo, "\(nested.output)")
        let copied = sftp.scp(local: work + "/IMG_0001.png", remote: "IMG_0003.png")
        #expect(copied.status == 0, "\(copied.output)\n\(sftp.log)")
        #expect(readFile(sftp.path("IMG_0003.png")) == photo, "\(copied.output)")
        #expect(listDirectory(sftp.folder) == ["DCIM", "IMG_0001.png", "IMG_0003.png"])
        let processes = sftp.processIDs
        #expect(!processes.isEmpty)
        #expect(nonLoopbackSockets(of: processes) == [], "\(sftp.log)")
        sftp.stop()
        #expect(processes.allSatisfy(hasEnded), "\(processes)")
    }

    @Test(
        "an sftp put cut midway leaves a truncated file (a prefix of the photo) under its final name; reput completes it, and so does a second full put of another cut one"
    )
    func cutPutThenComplete() throws {
        let work = makeTemporaryDirectory("ptk-sftp-test")
        defer { removeTree(work) }
        let sftp = try SFTPServer(folder: work + "/drop")
        let photo = makePNG(size: 32 << 20, seed: 13)
        writeFile(work + "/IMG_0004.png", photo)
        for (name, resume) in [("IMG_0004.png", true), ("IMG_0005.png", false)] {
            let size = try sftp.putInterrupted(local: work + "/IMG_0004.png", remote: name, after: 2 << 20)
            let left = readFile(sftp.path(name)) ?? []
            #expect(size >= 2 << 20 && size < photo.count, "\(name): \(size) of \(photo.count) bytes")
            #expect(left.count == size && Array(photo.prefix(left.count)) == left, "\(name): not a prefix")
            let again =
                resume
                ? try sftp.reput(local: work + "/IMG_0004.png", remote: name)
                : try sftp.put(local: work + "/IMG_0004.png", remote: name)
            #expect(again.status == 0, "\(again.output)\n\(sftp.log)")
            #expect(readFile(sftp.path(name)) == photo, "\(name)\n\(sftp.log)")
        }
    }
}
