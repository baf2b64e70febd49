import Foundation
import PTKDigest
import PTKSystem
import PTKTestSupport
import PTKTestTags
import Testing

/// The version of `largeVideo`'s generator: the cached file's name carries it, so a change of
/// the generator (bump it) makes a new one.
private let largeVideoGenerator = 1
/// Where the generated video is kept between runs (it takes some 40 s of ffmpeg to make), as
/// scripts/system-root.sh keeps its root.
private let largeVideoCache = "/var/cache/ptk"
/// 4 GiB: the first byte no 32-bit offset reaches.
private let fourGiB: Int64 = 1 << 32

/// A 4.2 GiB H.264 MP4 of generated frames (ffmpeg's testsrc2 with noise, 1920x1080, every
/// frame a key frame at quantizer 1: some 4.3 MB a frame, 8 frames repeated 133 times, 35 s at
/// 30 frames a second), muxed by ffmpeg, whose chunk offsets past 4 GiB need `co64` and whose
/// `mdat` a 64-bit size. Kept in `largeVideoCache` when it can be written (then `temporary` is
/// false), else made in a temporary folder for the caller to remove. Its SHA-256 is kept beside it.
private func largeVideo() throws -> (path: String, sha256: String, size: Int64, folder: String, temporary: Bool) {
    let ffmpeg = try #require(findProgram("ffmpeg"), "needs ffmpeg (scripts/deps.sh --test)")
    let cached = (try? makeDirectories(largeVideoCache)) != nil && access(largeVideoCache, W_OK) == 0
    let folder = cached ? largeVideoCache : makeTemporaryDirectory("ptk-large-video")
    let path = folder + "/large-video-v\(largeVideoGenerator).mp4"
    if cached, let sha = try? String(contentsOfFile: path + ".sha256", encoding: .utf8),
        let size = (try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int64
    {
        return (path, sha.trimmingCharacters(in: .whitespacesAndNewlines), size, folder, false)
    }
    let frames = folder + "/large-video-v\(largeVideoGenerator).h264"
    defer { try? FileManager.default.removeItem(atPath: frames) }
    let coded = runTool(
        [
            ffmpeg, "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=s=1920x1080:r=30,noise=alls=100:allf=t+u",
            "-frames:v", "8", "-c:v", "libx264", "-preset", "ultrafast", "-qp", "1", "-g", "1", "-pix_fmt", "yuv420p",
            "-threads", "2", "-bsf:v", "h264_mp4toannexb", "-f", "h264", frames,
        ], timeout: 120)
    try #require(coded.status == 0, "ffmpeg: \(coded.output)")
    // The raw stream repeated (each frame an IDR with its parameter sets) and muxed as it comes.
    let muxed = runTool(
        [
            "/bin/sh", "-c",
            #"for i in $(seq 133); do cat "$1"; done | "$2" -v error -y -f h264 -framerate 30 -i - -c copy -f mp4 "$3""#,
            "sh", frames, ffmpeg, path + ".part",
        ], timeout: 600)
    try #require(muxed.status == 0, "ffmpeg: \(muxed.output)")
    let size = try #require((try? FileManager.default.attributesOfItem(atPath: path + ".part"))?[.size] as? Int64)
    let sha = try fileSHA256(path + ".part")
    try FileManager.default.moveItem(atPath: path + ".part", toPath: path)
    if cached { try sha.write(toFile: path + ".sha256", atomically: true, encoding: .utf8) }
    return (path, sha, size, folder, !cached)
}

/// The SHA-256 of the file at `path`.
private func fileSHA256(_ path: String) throws -> String {
    let fd = try FileDescriptor.open(path, flags: [.readOnly])
    defer { fd.close() }
    return try SHA256.hex(ofFile: fd, size: try fd.status().size).get()
}

/// `count` bytes of the file at `path` from `offset`.
private func bytes(of path: String, at offset: Int64, count: Int) throws -> [UInt8] {
    let fd = try FileDescriptor.open(path, flags: [.readOnly])
    defer { fd.close() }
    var out = [UInt8](repeating: 0, count: count)
    let n = try out.withUnsafeMutableBytes { try fd.readFully(fromAbsoluteOffset: offset, into: $0) }
    return Array(out.prefix(n))
}

/// The chunk offsets of the MP4 at `path` (every `co64` box in its `moov`), and whether it
/// has an `stco` (32-bit offsets) box at all.
private func chunkOffsets(_ path: String, size: Int64) throws -> (offsets: [Int64], hasStco: Bool) {
    var at: Int64 = 0
    var moov: [UInt8] = []
    while at < size {
        let head = try bytes(of: path, at: at, count: 16)
        var boxSize = Int64(head[0..<4].reduce(0) { $0 << 8 | UInt64($1) })
        if boxSize == 1 { boxSize = Int64(head[8..<16].reduce(0) { $0 << 8 | UInt64($1) }) }
        try #require(boxSize >= 8)
        if Array(head[4..<8]) == Array("moov".utf8) { moov = try bytes(of: path, at: at, count: Int(boxSize)) }
        at += boxSize
    }
    func be(_ i: Int, _ n: Int) -> Int64 { Int64(moov[i..<i + n].reduce(0) { $0 << 8 | UInt64($1) }) }
    var offsets: [Int64] = []
    var i = 0
    while let found = moov[i...].firstRange(of: Array("co64".utf8)) {
        // The box's type, then its version and flags, its entry count, and 8 bytes an entry.
        let count = Int(be(found.upperBound + 4, 4))
        for e in 0..<count { offsets.append(be(found.upperBound + 8 + e * 8, 8)) }
        i = found.upperBound
    }
    return (offsets, moov.firstRange(of: Array("stco".utf8)) != nil)
}

/// The processor time ptkd (`pid`) has used, user and system, in seconds.
private func cpuSeconds(_ pid: Int32) -> Double {
    let stat = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)) ?? ""
    // The fields after the command's ")": state is the first, utime the 12th, stime the 13th.
    let fields = stat.split(separator: ")").last?.split(separator: " ") ?? []
    guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { return 0 }
    return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
}

/// The peak resident memory of process `pid` in kB (VmHWM), from /proc.
private func peakKB(_ pid: Int32) -> Int {
    let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
    let line = status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") } ?? ""
    return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
}

@Suite("End to end: a 4.2 GiB MP4 with ptk-send (issue 58)", .serialized, .tags(.endToEnd, .slow, .alone))
struct LargeVideoTests {
    @Test(
        "a 4.2 GiB H.264 MP4 (co64 offsets past 4 GiB): ptk-send cut off past 4 GiB resumes there; saved identical, indexed with its poster; Range requests past 4 GiB on /photo/ID/original give its bytes"
    )
    func pastFourGiB() throws {
        let began = Date()
        let video = try largeVideo()
        defer { if video.temporary { removeTree(video.folder) } }
        let made = Date().timeIntervalSince(began)
        #expect(video.size > fourGiB + (200 << 20), "\(video.size)")
        let (offsets, hasStco) = try chunkOffsets(video.path, size: video.size)
        #expect(!hasStco && offsets.contains { $0 > fourGiB }, "\(offsets.max() ?? 0)")
        #expect(offsets.allSatisfy { $0 > 0 && $0 < video.size })
        let name = (video.path as NSString).lastPathComponent

        let d = try DaemonProcess(["--web", "on", "--web-port", "0"])
        // A first send, cut off (the sender killed) once more than 4 GiB and 64 MiB have arrived.
        let sender = Process()
        sender.executableURL = URL(fileURLWithPath: binDirectory + "/ptk-send")
        sender.arguments = ["--timeout", "20", "127.0.0.1:\(d.port)", video.path]
        sender.environment = ProcessInfo.processInfo.environment.merging(["XDG_CONFIG_HOME": d.senderConfig]) {
            _, new in new
        }
        sender.standardOutput = FileHandle.nullDevice
        sender.standardError = FileHandle.nullDevice
        let sending = Date()
        try sender.run()
        func partial() -> Int64 {
            guard let first = d.incoming.first else { return 0 }
            return (try? FileManager.default.attributesOfItem(atPath: d.dir + "/.incoming/" + first))?[.size]
                as? Int64 ?? 0
        }
        // ptk-send's memory meanwhile: its own (anonymous) and the file's pages it maps.
        var senderMemory = (anonymous: 0, file: 0)
        let arrived = eventually(150) {
            let status =
                (try? String(contentsOfFile: "/proc/\(sender.processIdentifier)/status", encoding: .utf8)) ?? ""
            func kB(_ key: String) -> Int {
                Int(
                    status.split(separator: "\n").first { $0.hasPrefix(key) }?.split(separator: " ").dropFirst().first
                        ?? "")
                    ?? 0
            }
            senderMemory = (max(senderMemory.anonymous, kB("RssAnon:")), max(senderMemory.file, kB("RssFile:")))
            return partial() > fourGiB + (64 << 20) || !sender.isRunning
        }
        kill(sender.processIdentifier, SIGKILL)
        sender.waitUntilExit()
        try #require(arrived && partial() > fourGiB, "\(partial()) bytes arrived\n\(d.log)")
        let cut = Date().timeIntervalSince(sending)
        let cutAt = partial()
        #expect(eventually(30) { d.log.contains(" ended after ") }, "\(d.log)")
        #expect(d.visible.isEmpty)

        // Sent again: resumed past 4 GiB, saved identical.
        let resuming = Date()
        let r = try send(d, [video.path])
        let resumed = Date().timeIntervalSince(resuming)
        #expect(r.status == 0, "\(r.stdout)\(r.stderr)")
        let words = r.stdout.split(separator: " ")
        let at = Int64(words.last?.dropLast(2) ?? "") ?? 0
        #expect(r.stdout.hasPrefix("\(video.path): saved as \"\(name)\" (resumed at byte "), "\(r.stdout)")
        #expect(at > fourGiB && at < video.size, "\(r.stdout)")
        let saved = d.dir + "/" + name
        #expect((try? FileManager.default.attributesOfItem(atPath: saved))?[.size] as? Int64 == video.size)
        #expect(try fileSHA256(saved) == video.sha256)
        #expect(d.incoming.isEmpty, "\(d.incoming)")

        // Indexed with its poster and preview, its size right.
        #expect(waitForIndex(d, [name], timeout: 120), "\(d.log)")
        let listed = try entry(d, name)
        #expect((listed["Size"] as? Int).map(Int64.init) == video.size, "\(listed)")
        #expect(listed["Problem"] == nil, "\(listed)")
        let id = try #require(listed["ID"] as? Int)
        #expect(FileManager.default.fileExists(atPath: d.dir + "/.ptk/thumbnails/\(id)-360.jpg"))
        #expect(
            eventually(60) { FileManager.default.fileExists(atPath: d.dir + "/.ptk/previews/\(id).jpg") }, "\(d.log)")

        // Ranges across and past 4 GiB, and the last bytes, from the web door.
        let b = try WebBrowser(port: d.webPort)
        try b.logIn(d)
        for (first, last) in [
            (fourGiB - 1000, fourGiB + 999), (fourGiB + (100 << 20), fourGiB + (100 << 20) + 65_535),
            (video.size - 4096, video.size - 1),
        ] {
            let got = try b.request("GET", "/photo/\(id)/original", headers: ["Range": "bytes=\(first)-\(last)"])
            #expect(got.status == 206, "\(first)-\(last): \(got.status)")
            #expect(got.head?.header("content-range") == "bytes \(first)-\(last)/\(video.size)")
            let want = try bytes(of: video.path, at: first, count: Int(last - first + 1))
            #expect(got.body == want, "\(first)-\(last)")
        }
        let suffix = try b.request("GET", "/photo/\(id)/original", headers: ["Range": "bytes=-100"])
        let last100 = try bytes(of: video.path, at: video.size - 100, count: 100)
        #expect(suffix.status == 206 && suffix.body == last100)
        let cpu = cpuSeconds(d.process.processIdentifier)
        print(
            "large video: \(video.size) bytes; made or found in \(String(format: "%.1f", made)) s; first send cut after \(cutAt) bytes, \(String(format: "%.1f", cut)) s; resumed at byte \(at) in \(String(format: "%.1f", resumed)) s; all in \(String(format: "%.1f", Date().timeIntervalSince(began))) s; ptkd used \(String(format: "%.1f", cpu)) s of CPU (its peak RSS \(peakKB(d.process.processIdentifier) / 1024) MB); ptk-send's peak RSS \(senderMemory.anonymous / 1024) MB of its own, \(senderMemory.file / 1024) MB of the file mapped"
        )
        #expect(d.stop() == 0)
    }
}
