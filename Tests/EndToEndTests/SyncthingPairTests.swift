import Foundation
import Glibc
import PTKTestSupport
import PTKTestTags
import Testing

/// The harness ptkd's inbox tests stand on (issue 56), tried alone: two real Syncthing
/// instances on loopback carry files from the phone's send-only folder into the inbox's
/// receive-only folder, byte-identical, and a sender killed mid-file leaves nothing under the
/// final name until it comes back.
@Suite(
    "End to end: two Syncthing instances on loopback (issue 56's harness)", .serialized,
    .enabled(if: haveSyncthing || inboxToolsRequired, "needs syncthing"), .tags(.endToEnd, .slow))
struct SyncthingPairTests {
    @Test(
        "5 files of a few hundred KB written on the phone arrive byte-identical in the inbox; every socket is on loopback; stop() leaves no process"
    )
    func filesArrive() throws {
        let work = makeTemporaryDirectory("ptk-syncthing-test")
        defer { removeTree(work) }
        let pair = try SyncthingPair(phoneFolder: work + "/phone/Camera", inboxFolder: work + "/inbox/anna-phone")
        var sent: [String: [UInt8]] = [:]
        for i in 1...5 {
            let name = i == 5 ? "DCIM/2024/IMG_000\(i).png" : "IMG_000\(i).png"
            sent[name] = makePNG(size: 200_000 + i * 37_000, seed: UInt64(i))
            writeFile(in: pair.phoneFolder, name, sent[name]!)
        }
        try pair.waitUntilInSync()
        for (name, bytes) in sent {
            let got = readFile(pair.inboxFolder + "/" + name)
            #expect(got == bytes, "\(name): \(got?.count ?? -1) of \(bytes.count) bytes\n\(pair.logs)")
        }
        // Nothing else: no temporary file left, the marker only.
        let top = listDirectory(pair.inboxFolder)
        #expect(top == [".stfolder", "DCIM", "IMG_0001.png", "IMG_0002.png", "IMG_0003.png", "IMG_0004.png"], "\(top)")
        let processes = pair.processIDs
        #expect(processes.count >= 2, "\(processes)")
        #expect(nonLoopbackSockets(of: processes) == [], "\(pair.logs)")
        pair.stop()
        #expect(processes.allSatisfy(hasEnded), "\(processes)")
    }

    @Test(
        "a 50 MB file: Syncthing's temporary name shows in the inbox midway; the phone killed midway leaves no file under the final name (only the temporary) until it comes back, then the file is byte-identical"
    )
    func killedSenderLeavesNoFinalName() throws {
        let work = makeTemporaryDirectory("ptk-syncthing-test")
        defer { removeTree(work) }
        // 20 MiB/s: the 50 MB take about 2.5 s, so the test sees them midway on a busy machine too.
        let pair = try SyncthingPair(
            phoneFolder: work + "/phone", inboxFolder: work + "/inbox/anna-phone", sendLimitKiBps: 20_480)
        let big = randomBytes(50_000_000)
        writeFile(pair.phoneFolder + "/VID_0001.mp4", big)
        let temporary = pair.inboxFolder + "/.syncthing.VID_0001.mp4.tmp"
        let final = pair.inboxFolder + "/VID_0001.mp4"
        // Midway: the temporary file (of the final size at once, sparse) holds 8 MiB and more.
        let midway = eventually(30) { (allocatedBytes(temporary) ?? 0) >= 8 << 20 }
        pair.killPhone()
        #expect(midway, "no temporary file with 8 MiB in the inbox: \(listDirectory(pair.inboxFolder))\n\(pair.logs)")
        #expect(fileSize(final) == nil, "the final name appeared before the phone was killed")
        // The phone is gone: for 3 s nothing appears under the final name, the temporary stays.
        let appeared = eventually(3) { fileSize(final) != nil }
        #expect(!appeared, "\(listDirectory(pair.inboxFolder))\n\(pair.logs)")
        #expect(fileSize(temporary) != nil, "\(listDirectory(pair.inboxFolder))")
        let partial = allocatedBytes(temporary) ?? 0
        #expect(partial < big.count, "the temporary file holds \(partial) bytes")
        try pair.startPhone()
        try pair.waitUntilInSync(timeout: 40)
        #expect(readFile(final) == big, "\(fileSize(final) ?? -1) bytes\n\(pair.logs)")
        #expect(fileSize(temporary) == nil, "\(listDirectory(pair.inboxFolder))")
        #expect(nonLoopbackSockets(of: pair.processIDs) == [], "\(pair.logs)")
    }
}
