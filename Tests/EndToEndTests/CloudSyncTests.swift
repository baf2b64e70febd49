import Foundation
import Glibc
import PTKSystem
import PTKTestSupport
import PTKTestTags
import Testing

/// A Nextcloud or ownCloud sync client (Debian's `nextcloudcmd`, `owncloudcmd`) syncing a
/// local folder into the Nextcloud-compatible door on loopback, with its own HOME.
struct SyncClient {
    let program: String
    let daemon: DaemonProcess
    let password: AppPassword
    let home = makeTemporaryDirectory("ptk-sync")
    /// The folder the client syncs.
    var local: String { home + "/Pictures" }

    /// One sync run: its exit status and everything it logged.
    func sync() throws -> Finished {
        let binary = findProgram(program) ?? "/usr/bin/" + program
        let server = "https://127.0.0.1:\(daemon.webPort)"
        var args = ["-u", password.user, "-p", password.password, "--non-interactive"]
        if program == "owncloudcmd" {
            // owncloudcmd stops without an exclude list; it takes any certificate with or without --trust.
            writeFile(home + "/exclude.lst", [])
            args += ["--exclude", home + "/exclude.lst", local, server + "/"]
        } else {
            args += ["--trust", local, server]
        }
        return try EndToEndTests.run(
            binary, args, timeout: 120, absolute: true,
            environment: ["HOME": home, "XDG_CONFIG_HOME": home + "/config", "XDG_DATA_HOME": home + "/data"])
    }

    /// What a run's discovery decided for each item ("Discovered "a.png" ... CSYNC_INSTRUCTION_NEW").
    static func instructions(_ log: String) -> [String: String] {
        var out: [String: String] = [:]
        for line in log.split(separator: "\n") where line.contains("Discovered \"") {
            let s = String(line)
            guard let name = s.range(of: #"Discovered "[^"]*""#, options: .regularExpression),
                let what = s.range(of: #"CSYNC_INSTRUCTION_[A-Z_]+"#, options: .regularExpression)
            else { continue }
            out[String(s[name].dropFirst("Discovered \"".count).dropLast())] = String(s[what])
        }
        return out
    }

    /// The uploads a run finished ("PUT of "URL" FINISHED").
    static func puts(_ log: String) -> Int {
        log.split(separator: "\n").filter { $0.contains("PUT of \"") && $0.contains("FINISHED") }.count
    }

    func cleanUp() { removeTree(home) }
}

/// The 50 photos a phone's camera folder might hold: PNG, JPEG and a HEIC, in folders, each
/// with bytes of its own.
func cameraTree() -> [String: [UInt8]] {
    var tree: [String: [UInt8]] = [:]
    for i in 0..<30 { tree["Camera/IMG_\(1000 + i).png"] = makePNG(size: 3_000 + 97 * i, seed: 500 + UInt64(i)) }
    for i in 0..<19 {
        tree["Camera/2024/PXL_\(2000 + i).jpg"] = makeJPEG(width: 64 + i, height: 48, seed: 700 + UInt64(i))
    }
    tree["Screenshots/IMG_3000.heic"] = readFile(fixturePath("heif/picture.heic")) ?? []
    return tree
}

/// Sets a file's modification time (seconds since the epoch).
func setModified(_ path: String, _ seconds: Int) {
    var times = [timespec(tv_sec: seconds, tv_nsec: 0), timespec(tv_sec: seconds, tv_nsec: 0)]
    _ = utimensat(AT_FDCWD, path, &times, 0)
}

/// A file's modification time (seconds since the epoch), nil when it is not there.
func modified(_ path: String) -> Int? {
    var st = stat()
    return stat(path, &st) == 0 ? st.st_mtim.tv_sec : nil
}

@Suite(
    "End to end: the Nextcloud-compatible door with nextcloudcmd and owncloudcmd (issue 57)", .serialized,
    .enabled(if: haveProgram("nextcloudcmd") || davClientsRequired, "needs nextcloudcmd"), .tags(.endToEnd))
struct CloudSyncTests {
    /// Syncs the camera folder with `program` and an upload password: every photo arrives
    /// once, identical, with the time the client sent; a second run moves nothing; once ptkd
    /// indexed them (`layout` filing them where it files) a run deletes nothing on the client's
    /// side; a photo removed with `ptk rm` stays listed for it.
    func syncsOnce(_ program: String) throws {
        let d = try DaemonProcess.withDAV(["--layout", "sender/date"])
        defer { d.stop() }
        let client = SyncClient(program: program, daemon: d, password: try d.appPassword("phone", access: "upload"))
        defer { client.cleanUp() }
        let tree = cameraTree()
        writeTree(tree, in: client.local)
        let base = 1_650_000_000
        for (i, path) in tree.keys.sorted().enumerated() { setModified(client.local + "/" + path, base + i * 60) }

        let first = try client.sync()
        #expect(first.status == 0, "\(first.stderr.suffix(3000))")
        #expect(SyncClient.puts(first.stderr + first.stdout) == tree.count)
        // Each photo once, byte for byte, with the time the client gave it.
        let kept = d.photoFiles
        #expect(kept.count == tree.count, "\(kept.keys.sorted())")
        for (i, path) in tree.keys.sorted().enumerated() {
            let copies = kept.filter { $0.value == tree[path]! }
            #expect(copies.count == 1, "\(path): \(copies.keys.sorted())")
            if let stored = copies.keys.first { #expect(modified(d.dir + "/" + stored) == base + i * 60, "\(stored)") }
        }

        let second = try client.sync()
        #expect(second.status == 0, "\(second.stderr.suffix(3000))")
        let log2 = second.stderr + second.stdout
        #expect(SyncClient.puts(log2) == 0)
        let moved = SyncClient.instructions(log2).filter {
            !["CSYNC_INSTRUCTION_NONE", "CSYNC_INSTRUCTION_UPDATE_METADATA"].contains($0.value)
        }
        #expect(moved.isEmpty, "\(moved)")

        // Indexed (and filed by the layout): the client still sees what it sent, where it sent it.
        #expect(waitForIndexing(d))
        let victim = kept.first { $0.value == tree["Camera/IMG_1000.png"]! }!.key
        #expect(try library(d, ["rm", victim]).status == 0)
        let third = try client.sync()
        #expect(third.status == 0, "\(third.stderr.suffix(3000))")
        let log3 = third.stderr + third.stdout
        let removals = SyncClient.instructions(log3).filter { $0.value == "CSYNC_INSTRUCTION_REMOVE" }
        #expect(removals.isEmpty, "\(removals)")
        for (path, bytes) in tree {
            #expect(readFile(client.local + "/" + path).map { $0 == bytes } == true, "\(path)")
        }
        #expect(SyncClient.puts(log3) == 0)
        // A new photo in the same folder makes the client list that folder again: the removed
        // photo is still there for it, so nothing on its side goes.
        writeFile(client.local + "/Camera/IMG_1100.png", makePNG(size: 5_000, seed: 999))
        let fourth = try client.sync()
        #expect(fourth.status == 0, "\(fourth.stderr.suffix(3000))")
        #expect(SyncClient.puts(fourth.stderr + fourth.stdout) == 1)
        let fifth = try client.sync()
        #expect(fifth.status == 0, "\(fifth.stderr.suffix(3000))")
        let log5 = fifth.stderr + fifth.stdout
        #expect(
            SyncClient.instructions(log5)["Camera/IMG_1000.png"] == "CSYNC_INSTRUCTION_NONE", "\(log5.suffix(3000))")
        #expect(SyncClient.instructions(log5).filter { $0.value == "CSYNC_INSTRUCTION_REMOVE" }.isEmpty)
        for (path, bytes) in tree {
            #expect(readFile(client.local + "/" + path).map { $0 == bytes } == true, "\(path)")
        }
    }

    @Test func nextcloudcmdSyncsEachPhotoOnce() throws { try syncsOnce("nextcloudcmd") }

    @Test(.enabled(if: haveProgram("owncloudcmd") || davClientsRequired, "needs owncloudcmd"))
    func owncloudcmdSyncsEachPhotoOnce() throws { try syncsOnce("owncloudcmd") }

    /// A `full` password's client sees the directory: a photo removed on the receiver is
    /// removed on its side too (that is what it asked for), and nothing else is.
    @Test func fullClientSeesRemovals() throws {
        let d = try DaemonProcess.withDAV()
        defer { d.stop() }
        let client = SyncClient(program: "nextcloudcmd", daemon: d, password: try d.appPassword("desk", access: "full"))
        defer { client.cleanUp() }
        let tree = ["a.png": makePNG(size: 4_000, seed: 1), "b.png": makePNG(size: 4_100, seed: 2)]
        writeTree(tree, in: client.local)
        #expect(try client.sync().status == 0)
        #expect(d.photoFiles.mapValues { $0.count } == tree.mapValues { $0.count })
        #expect(d.photoFiles == tree, "the photos differ")
        #expect(waitForIndexing(d))
        #expect(try library(d, ["rm", "a.png"]).status == 0)
        let after = try client.sync()
        #expect(after.status == 0, "\(after.stderr.suffix(3000))")
        #expect(SyncClient.instructions(after.stderr + after.stdout)["a.png"] == "CSYNC_INSTRUCTION_REMOVE")
        #expect(!fileExists(client.local + "/a.png"))
        #expect(readFile(client.local + "/b.png").map { $0 == tree["b.png"] } == true)
    }

    /// A document beside the photos: refused with a message the client shows (and
    /// so exits 1), the photos beside it kept.
    @Test func documentsRefusedInWordsTheClientShows() throws {
        let d = try DaemonProcess.withDAV()
        defer { d.stop() }
        let client = SyncClient(
            program: "nextcloudcmd", daemon: d, password: try d.appPassword("phone", access: "upload"))
        defer { client.cleanUp() }
        let png = makePNG(size: 4_000, seed: 31)
        writeTree(["a.png": png, "notes.txt": Array("a shopping list\n".utf8)], in: client.local)
        let r = try client.sync()
        #expect(r.status == 1, "\(r.stderr.suffix(2000))")
        #expect(
            (r.stderr + r.stdout).contains("415 Unsupported Media Type")
                && (r.stderr + r.stdout).contains(
                    "(not a photo this receiver keeps (it keeps PNG, JPEG, HEIC, HEIF, MP4, MOV))"),
            "\(r.stderr.suffix(2000))")
        #expect(d.photoFiles.values.map { $0 == png } == [true])
    }
}
