import Foundation
import PTKDigest
import PTKTestSupport
import PTKTestTags
import Testing

/// A phone camera's videos made by Debian's ffmpeg in `work`: an H.264 MP4 with sound turned
/// 90 degrees (its track matrix, as a phone held upright writes it), an HEVC QuickTime MOV (as
/// an iPhone records), and the MP4 cut short. Fails the test when ffmpeg is missing.
func cameraVideos(in work: String) throws -> (mp4: [UInt8], mov: [UInt8], cut: [UInt8]) {
    let ffmpeg = try #require(findProgram("ffmpeg"), "needs ffmpeg (scripts/deps.sh --test)")
    let source = ["-v", "error", "-y", "-f", "lavfi", "-i", "testsrc=size=320x240:rate=30", "-t", "2"]
    let plain = try run(
        ffmpeg,
        source + [
            "-f", "lavfi", "-i", "sine=frequency=440", "-t", "2", "-c:v", "libx264", "-pix_fmt", "yuv420p",
            "-c:a", "aac", work + "/plain.mp4",
        ], absolute: true)
    #expect(plain.status == 0, "\(plain.stderr)")
    let turned = try run(
        ffmpeg,
        [
            "-v", "error", "-y", "-i", work + "/plain.mp4", "-c", "copy", "-metadata:s:v:0", "rotate=90",
            work + "/VID_20261204.mp4",
        ], absolute: true)
    #expect(turned.status == 0, "\(turned.stderr)")
    let mov = try run(
        ffmpeg,
        source + [
            "-c:v", "libx265", "-x265-params", "log-level=error", "-tag:v", "hvc1", "-pix_fmt", "yuv420p",
            work + "/IMG_0042.MOV",
        ], absolute: true)
    #expect(mov.status == 0, "\(mov.stderr)")
    let mp4Bytes = try #require(readFile(work + "/VID_20261204.mp4"))
    let movBytes = try #require(readFile(work + "/IMG_0042.MOV"))
    let cut = Array(mp4Bytes.prefix(mp4Bytes.count * 2 / 3))
    writeFile(work + "/cut.mp4", cut)
    return (mp4Bytes, movBytes, cut)
}

@Suite("End to end: videos kept through every door (issue 58)", .serialized, .tags(.endToEnd))
struct VideoDoorTests {
    @Test(
        "ptk-send sends an H.264 MP4 and an HEVC MOV: saved identical under their names, listed; a cut MP4 fails with the reason and leaves nothing; with --types image/png they are not sent"
    )
    func ptkSend() throws {
        let d = try DaemonProcess([])
        let work = makeTemporaryDirectory("ptk-videos")
        defer { removeTree(work) }
        let v = try cameraVideos(in: work)
        let sent = try send(d, [work + "/VID_20261204.mp4", work + "/IMG_0042.MOV"])
        #expect(sent.status == 0, "\(sent.stdout)\(sent.stderr)")
        #expect(readFile(d.dir + "/VID_20261204.mp4") == v.mp4)
        #expect(readFile(d.dir + "/IMG_0042.MOV") == v.mov)
        #expect(eventually { d.log.contains("saved \"IMG_0042.MOV\"") }, "\(d.log)")
        let cut = try send(d, [work + "/cut.mp4"])
        #expect(cut.status == 1)
        #expect(cut.stdout.contains("cut.mp4: failed: not-png: not a well-formed MP4: "), "\(cut.stdout)")
        #expect(FileManager.default.fileExists(atPath: d.dir + "/cut.mp4") == false)
        #expect(eventually { d.incoming.isEmpty }, "\(d.incoming)")
        #expect(waitForIndex(d, ["VID_20261204.mp4", "IMG_0042.MOV"]))
        let list = try library(d, ["list", "--json"])
        #expect(list.stdout.contains("\"MediaType\" : \"video/quicktime\""), "\(list.stdout)")
        #expect(list.stdout.contains("\"Name\" : \"IMG_0042.MOV\""), "\(list.stdout)")
        d.stop()

        let photosOnly = try DaemonProcess(["--types", "image/png"])
        let refused = try send(photosOnly, [work + "/VID_20261204.mp4"])
        #expect(refused.status == 0, "\(refused.stderr)")
        #expect(refused.stdout.contains("VID_20261204.mp4: not sent: "), "\(refused.stdout)")
        #expect(refused.stdout.contains(" keeps PNG; this is an MP4\n"), "\(refused.stdout)")
        #expect(photosOnly.visible.isEmpty, "\(photosOnly.visible)")
    }

    @Test(
        "WebDAV: curl PUTs an MP4 and a MOV, saved identical and read back; a cut MP4 is refused with the reason, nothing kept"
    )
    func webDAV() throws {
        let d = try DaemonProcess.withDAV()
        let work = makeTemporaryDirectory("ptk-videos-dav")
        defer { removeTree(work) }
        let v = try cameraVideos(in: work)
        let pw = try d.appPassword("phone", access: "full")
        for name in ["VID_20261204.mp4", "IMG_0042.MOV"] {
            let put = try curl(d, pw, ["-T", work + "/" + name, d.davURL + name])
            #expect(put.status == 201, "\(name): \(put.status) \(String(decoding: put.body, as: UTF8.self))")
        }
        #expect(d.photoFiles["VID_20261204.mp4"] == v.mp4)
        #expect(d.photoFiles["IMG_0042.MOV"] == v.mov)
        let back = try curl(d, pw, [d.davURL + "IMG_0042.MOV"])
        #expect(
            back.status == 200 && back.body == v.mov && back.headers["content-type"] == "video/quicktime",
            "\(back.headers)")
        let cut = try curl(d, pw, ["-T", work + "/cut.mp4", d.davURL + "cut.mp4"])
        #expect(cut.status == 400 || cut.status == 415, "\(cut.status)")
        #expect(
            String(decoding: cut.body, as: UTF8.self).contains("not a well-formed MP4"),
            "\(String(decoding: cut.body, as: UTF8.self))")
        #expect(d.photoFiles["cut.mp4"] == nil)
        #expect(eventually { d.incoming.isEmpty }, "\(d.incoming)")
    }

    @Test("LocalSend: an app sends an MP4 and a MOV with their media types; both saved identical; a cut MP4 is 400")
    func localSend() throws {
        let d = try DaemonProcess.withLocalSend()
        let work = makeTemporaryDirectory("ptk-videos-ls")
        defer { removeTree(work) }
        let v = try cameraVideos(in: work)
        let app = try LocalSendApp(port: d.localSendPort, alias: "Pixel 8")
        let files: [(id: String, name: String, bytes: [UInt8], type: String, hash: String?)] = [
            ("mp4", "DCIM/Camera/VID_20261204.mp4", v.mp4, "video/mp4", sha256Hex(v.mp4)),
            ("mov", "IMG_0042.MOV", v.mov, "video/quicktime", sha256Hex(v.mov)),
            ("cut", "cut.mp4", v.cut, "video/mp4", nil),
        ]
        let (status, json) = try app.prepare(files)
        #expect(status == 200)
        let (session, tokens) = tokens(json)
        #expect(Set(tokens.keys) == ["mp4", "mov", "cut"])
        for (id, bytes) in [("mp4", v.mp4), ("mov", v.mov)] {
            let r = try app.upload(session: session, fileID: id, token: tokens[id] ?? "", bytes: bytes, chunked: 16_384)
            #expect(r.status == 200, "\(id): \(r.body)")
        }
        let cut = try app.upload(session: session, fileID: "cut", token: tokens["cut"] ?? "", bytes: v.cut)
        #expect(cut.status == 400, "\(cut.body)")
        #expect(readFile(d.dir + "/VID_20261204.mp4") == v.mp4)
        #expect(readFile(d.dir + "/IMG_0042.MOV") == v.mov)
        #expect(FileManager.default.fileExists(atPath: d.dir + "/cut.mp4") == false)
        #expect(eventually { d.log.contains("not a well-formed MP4") }, "\(d.log)")
    }
}
