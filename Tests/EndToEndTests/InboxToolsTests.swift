import Foundation
import Glibc
import PTKTestSupport
import PTKTestTags
import Testing

/// The files below `dir` (ptk's own folders left out), as paths, with their bytes.
private func contents(_ dir: String) -> [String: [UInt8]] {
    var out: [String: [UInt8]] = [:]
    func walk(_ here: String, _ prefix: String) {
        for name in listDirectory(here) where name != ".ptk" && name != ".incoming" {
            let path = here + "/" + name
            var st = stat()
            guard lstat(path, &st) == 0 else { continue }
            if st.st_mode & S_IFMT == S_IFDIR {
                walk(path, prefix + name + "/")
            } else {
                out[prefix + name] = readFile(path) ?? []
            }
        }
    }
    walk(dir, "")
    return out
}

/// The folder a test's ptkd keeps its photos, state and log in (made if missing).
private func receiver(_ work: String) -> String {
    let path = work + "/receiver"
    mkdir(path, 0o755)
    return path
}

/// Photos of the three kinds, `count` in all, each different: PNGs, JPEGs and (where heif-enc
/// is installed) a few HEICs made from JPEGs.
private func cameraRoll(_ count: Int, in work: String) throws -> [String: [UInt8]] {
    var roll: [String: [UInt8]] = [:]
    let heifEnc = "/usr/bin/heif-enc"
    for i in 0..<count {
        switch i % 10 {
        case 0 where FileManager.default.isExecutableFile(atPath: heifEnc):
            let jpeg = work + "/src\(i).jpg"
            writeFile(jpeg, makeJPEG(width: 64, height: 48, seed: UInt64(i)))
            let heic = work + "/src\(i).heic"
            let made = try run(heifEnc, ["-q", "60", jpeg, "-o", heic], timeout: 120, absolute: true)
            #expect(made.status == 0, "\(made.stderr)")
            roll["IMG_\(1000 + i).HEIC"] = readFile(heic) ?? []
        case 1, 2, 3, 4:
            roll["IMG_\(1000 + i).JPG"] = makeJPEG(width: 96, height: 64, seed: UInt64(500 + i))
        default:
            roll["IMG_\(1000 + i).PNG"] = makePNG(size: 20_000 + i * 101, seed: UInt64(900 + i))
        }
    }
    return roll
}

@Suite(
    "End to end: ptkd's inbox fed by two real Syncthing instances on loopback (issue 56)", .serialized,
    .enabled(if: haveSyncthing || inboxToolsRequired, "needs syncthing"), .tags(.endToEnd, .slow))
struct SyncthingInboxTests {
    @Test(
        "a phone's 50 photos and a large one arrive through Syncthing: each taken exactly once, identical; Syncthing's temporaries never; deleting on the phone leaves the library; files synced while ptkd is stopped are taken once at start"
    )
    func phoneToInbox() throws {
        let work = makeTemporaryDirectory("ptk-syncthing-inbox")
        defer { removeTree(work) }
        let inbox = work + "/inbox"
        let pair = try SyncthingPair(phoneFolder: work + "/phone/Camera", inboxFolder: inbox + "/anna-phone")
        defer { pair.stop() }
        var d = try DaemonProcess(["--inbox", inbox, "--inbox-settle", "1s"], root: receiver(work))
        var roll = try cameraRoll(50, in: work)
        roll["PANO_0001.PNG"] = makePNG(size: 12_000_000, seed: 77)
        for (name, bytes) in roll { writeFile(in: pair.phoneFolder, "DCIM/" + name, bytes) }
        try pair.waitUntilInSync(timeout: 90)
        let expected = Dictionary(uniqueKeysWithValues: roll.map { ("DCIM/" + $0.key, $0.value) })
        #expect(eventually(60) { contents(d.dir) == expected }, "\(contents(d.dir).keys.sorted())\n\(d.log)")
        let took = d.log.components(separatedBy: "\n").filter { $0.contains(": took ") }
        #expect(took.count == roll.count, "taken \(took.count) times for \(roll.count) photos\n\(d.log)")
        #expect(!d.log.contains(".syncthing."), "a temporary was looked at: \(d.log)")
        // The sources stay where Syncthing keeps them.
        #expect(readFile(inbox + "/anna-phone/DCIM/PANO_0001.PNG") == roll["PANO_0001.PNG"])

        // Deleted on the phone: gone from the inbox, kept in the library.
        removeTree(pair.phoneFolder + "/DCIM")
        try pair.waitUntilInSync(timeout: 60)
        #expect(eventually(20) { !FileManager.default.fileExists(atPath: inbox + "/anna-phone/DCIM") })
        sleep(2)
        #expect(contents(d.dir) == expected, "\(d.log)")
        #expect(d.stop() == 0)

        // Synced while ptkd is stopped: taken once when it starts.
        let later = makePNG(size: 30_000, seed: 88)
        writeFile(in: pair.phoneFolder, "later/IMG_2000.PNG", later)
        try pair.waitUntilInSync(timeout: 60)
        d = try DaemonProcess(["--inbox", inbox, "--inbox-settle", "1s"], root: receiver(work))
        defer { _ = d.stop() }
        #expect(eventually(30) { readFile(d.dir + "/later/IMG_2000.PNG") == later }, "\(d.log)")
        sleep(2)
        #expect(d.log.components(separatedBy: ": took ").count == 2, "\(d.log)")
        #expect(d.stop() == 0)
    }

    @Test(
        "the phone killed mid-file: nothing is taken until Syncthing completes the file, then it is taken once"
    )
    func killedMidFile() throws {
        let work = makeTemporaryDirectory("ptk-syncthing-inbox")
        defer { removeTree(work) }
        let inbox = work + "/inbox"
        let pair = try SyncthingPair(
            phoneFolder: work + "/phone", inboxFolder: inbox + "/anna-phone", sendLimitKiBps: 20_480)
        defer { pair.stop() }
        let d = try DaemonProcess(["--inbox", inbox, "--inbox-settle", "1s"], root: receiver(work))
        defer { _ = d.stop() }
        let big = makePNG(size: 40_000_000, seed: 99)
        writeFile(pair.phoneFolder + "/BIG.PNG", big)
        let temporary = inbox + "/anna-phone/.syncthing.BIG.PNG.tmp"
        let midway = eventually(30) { (allocatedBytes(temporary) ?? 0) >= 8 << 20 }
        pair.killPhone()
        #expect(midway, "\(listDirectory(inbox + "/anna-phone"))\n\(pair.logs)")
        sleep(3)  // three settle times with the temporary there
        #expect(contents(d.dir).isEmpty, "taken mid-file: \(d.log)")
        try pair.startPhone()
        try pair.waitUntilInSync(timeout: 60)
        #expect(eventually(30) { readFile(d.dir + "/BIG.PNG") == big }, "\(d.log)")
        sleep(2)
        #expect(d.log.components(separatedBy: ": took ").count == 2, "\(d.log)")
        #expect(d.stop() == 0)
    }
}

@Suite(
    "End to end: a second receiver keeps a copy of the first one's photos through Syncthing (issue 56)",
    .serialized, .enabled(if: haveSyncthing || inboxToolsRequired, "needs syncthing"), .tags(.endToEnd, .slow))
struct TwoReceiversTests {
    @Test(
        "the first receiver's photos directory shared send-only (.ptk and .incoming ignored) into the second one's inbox: every photo sent to the first is taken by the second, identical, once"
    )
    func secondReceiver() throws {
        let work = makeTemporaryDirectory("ptk-two-receivers")
        defer { removeTree(work) }
        let first = try DaemonProcess([], root: receiver(work))
        defer { _ = first.stop() }
        // What Syncthing is told to leave out of the shared photos directory.
        writeFile(first.dir + "/.stignore", Array(".ptk\n.incoming\n".utf8))
        let inbox = work + "/second-inbox"
        let pair = try SyncthingPair(phoneFolder: first.dir, inboxFolder: inbox + "/livingroom")
        defer { pair.stop() }
        mkdir(work + "/second", 0o755)
        let second = try DaemonProcess(["--inbox", inbox, "--inbox-settle", "1s"], root: work + "/second")
        defer { _ = second.stop() }
        var sent: [String: [UInt8]] = [:]
        for i in 0..<5 {
            let path = photo(work, "beach\(i).png", size: 40_000 + i * 1_000, seed: UInt64(300 + i))
            sent["beach\(i).png"] = readFile(path)
            #expect(try send(first, [path]).status == 0)
        }
        try pair.waitUntilInSync(timeout: 60)
        #expect(eventually(30) { contents(second.dir) == sent }, "\(contents(second.dir).keys.sorted())\n\(second.log)")
        #expect(
            !FileManager.default.fileExists(atPath: inbox + "/livingroom/.ptk"), "the first one's library was synced")
        sleep(2)
        #expect(second.log.components(separatedBy: ": took ").count == sent.count + 1, "\(second.log)")
        #expect(second.stop() == 0)
        #expect(first.stop() == 0)
    }
}

@Suite(
    "End to end: ptkd's drop folder as a Samba share and an sftp target (issue 56)", .serialized,
    .enabled(
        if: (canRunSamba && canRunSFTP) || (inboxToolsRequired && geteuid() == 0),
        "needs root, smbd, smbclient and sshd"),
    .tags(.endToEnd, .root))
struct DropFolderToolsTests {
    @Test(
        "smbclient: a put killed midway leaves a truncated file that is not taken; the completed put is taken once and removed from the share"
    )
    func samba() throws {
        let work = makeTemporaryDirectory("ptk-samba-drop")
        defer { removeTree(work) }
        let drop = work + "/drop"
        let samba = try SambaShare(folder: drop)
        defer { samba.stop() }
        let d = try DaemonProcess(["--drop-folder", drop, "--inbox-settle", "1s"], root: receiver(work))
        defer { _ = d.stop() }
        let big = makePNG(size: 32_000_000, seed: 5)
        writeFile(work + "/IMG_0001.png", big)
        let left = try samba.putInterrupted(local: work + "/IMG_0001.png", remote: "IMG_0001.png", after: 2 << 20)
        #expect(left > 0 && left < big.count)
        sleep(3)
        #expect(contents(d.dir).isEmpty, "a truncated put was taken: \(d.log)")
        #expect(fileSize(samba.path("IMG_0001.png")) == left)
        let put = try samba.put(local: work + "/IMG_0001.png", remote: "IMG_0001.png")
        #expect(put.status == 0, "\(put.output)")
        #expect(eventually(30) { readFile(d.dir + "/IMG_0001.png") == big }, "\(d.log)")
        #expect(eventually(10) { fileSize(samba.path("IMG_0001.png")) == nil }, "the source was not removed")
        sleep(2)
        #expect(d.log.components(separatedBy: ": took ").count == 2, "\(d.log)")
        #expect(contents(d.dir).count == 1)
        #expect(d.stop() == 0)
    }

    @Test("sftp: a put cut midway is not taken; reput completes it and it is taken once")
    func sftp() throws {
        let work = makeTemporaryDirectory("ptk-sftp-drop")
        defer { removeTree(work) }
        let drop = work + "/drop"
        let sftp = try SFTPServer(folder: drop)
        defer { sftp.stop() }
        let d = try DaemonProcess(["--drop-folder", drop, "--inbox-settle", "1s"], root: receiver(work))
        defer { _ = d.stop() }
        let big = makePNG(size: 32_000_000, seed: 6)
        writeFile(work + "/IMG_0002.png", big)
        let left = try sftp.putInterrupted(local: work + "/IMG_0002.png", remote: "IMG_0002.png", after: 2 << 20)
        #expect(left > 0 && left < big.count)
        sleep(3)
        #expect(contents(d.dir).isEmpty, "a truncated put was taken: \(d.log)")
        let reput = try sftp.reput(local: work + "/IMG_0002.png", remote: "IMG_0002.png")
        #expect(reput.status == 0, "\(reput.output)")
        #expect(eventually(30) { readFile(d.dir + "/IMG_0002.png") == big }, "\(d.log)")
        #expect(eventually(10) { fileSize(sftp.path("IMG_0002.png")) == nil }, "the source was not removed")
        sleep(2)
        #expect(d.log.components(separatedBy: ": took ").count == 2, "\(d.log)")
        #expect(d.stop() == 0)
    }
}
