import Foundation
import Glibc
import PTKTestSupport
import PTKTestTags
import Testing

/// The harness ptkd's drop-folder tests stand on (issue 56), tried alone: a real smbd on a
/// loopback port and smbclient put files into the share byte-identical, and a put killed
/// midway leaves a truncated file under its final name that a second put completes.
@Suite(
    "End to end: smbd and smbclient on loopback (issue 56's harness)", .serialized,
    .enabled(
        if: canRunSamba || (inboxToolsRequired && geteuid() == 0),
        "needs root, smbd, smbclient, smbpasswd and samba-vfs-modules"),
    .tags(.endToEnd, .root))
struct SambaShareTests {
    @Test(
        "smbclient put: a photo, and one in a folder made with mkdir, arrive byte-identical; smbd listens on loopback only; stop() leaves no process"
    )
    func putArrives() throws {
        let work = makeTemporaryDirectory("ptk-samba-test")
        defer { removeTree(work) }
        let samba = try SambaShare(folder: work + "/drop")
        let photo = makePNG(size: 700_000, seed: 3)
        writeFile(work + "/IMG_0001.png", photo)
        let put = try samba.put(local: work + "/IMG_0001.png", remote: "IMG_0001.png")
        #expect(put.status == 0, "\(put.output)\n\(samba.log)")
        #expect(readFile(samba.path("IMG_0001.png")) == photo, "\(put.output)\n\(samba.log)")
        let nested = samba.command(#"mkdir "DCIM"; put "\#(work)/IMG_0001.png" "DCIM/IMG 0002.png""#)
        #expect(nested.status == 0, "\(nested.output)")
        #expect(readFile(samba.path("DCIM/IMG 0002.png")) == photo, "\(nested.output)")
        #expect(listDirectory(samba.folder) == ["DCIM", "IMG_0001.png"])
        let processes = samba.processIDs
        #expect(!processes.isEmpty)
        #expect(nonLoopbackSockets(of: processes) == [], "\(samba.log)")
        samba.stop()
        #expect(processes.allSatisfy(hasEnded), "\(processes)")
    }

    @Test(
        "a put killed midway leaves a truncated file (a prefix of the photo) under its final name; a second full put makes it byte-identical"
    )
    func killedPutThenComplete() throws {
        let work = makeTemporaryDirectory("ptk-samba-test")
        defer { removeTree(work) }
        let samba = try SambaShare(folder: work + "/drop")
        let photo = makePNG(size: 32 << 20, seed: 11)
        writeFile(work + "/IMG_0003.png", photo)
        let size = try samba.putInterrupted(local: work + "/IMG_0003.png", remote: "IMG_0003.png", after: 2 << 20)
        let left = readFile(samba.path("IMG_0003.png")) ?? []
        #expect(size >= 2 << 20 && size < photo.count, "\(size) of \(photo.count) bytes")
        #expect(left.count == size && Array(photo.prefix(left.count)) == left, "not a prefix: \(left.count) bytes")
        let again = try samba.put(local: work + "/IMG_0003.png", remote: "IMG_0003.png")
        #expect(again.status == 0, "\(again.output)\n\(samba.log)")
        #expect(readFile(samba.path("IMG_0003.png")) == photo, "\(samba.log)")
    }
}
