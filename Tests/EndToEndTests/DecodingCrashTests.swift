import Foundation
import PTKTestSupport
import PTKTestTags
import Testing

/// strace, as a wrapper of ptkd that kills it (SIGKILL) at the first `pread64` of `path`: the
/// store writes a file and hands its SHA-256 to the indexer, so the first read of a video saved
/// there by name is FFmpeg's, looking for the poster's picture (ptk_video.c reads with pread).
private func killingAtFirstRead(of path: String) throws -> [String] {
    let strace = try #require(findProgram("strace"), "needs strace (scripts/deps.sh --test)")
    return [
        strace, "-f", "-qq", "-o", "/dev/null", "-P", path, "-e", "trace=pread64", "-e",
        "inject=pread64:signal=SIGKILL",
    ]
}

/// The process `pid` started (strace's ptkd), from /proc.
private func tracedChild(of pid: Int32) -> Int32? {
    let text = (try? String(contentsOfFile: "/proc/\(pid)/task/\(pid)/children", encoding: .utf8)) ?? ""
    return text.split(separator: " ").first.flatMap { Int32($0) }
}

@Suite("End to end: a decode that kills ptkd is not taken up again (issue 58)", .serialized, .tags(.endToEnd))
struct DecodingCrashTests {
    @Test(
        "ptkd killed by SIGKILL while FFmpeg reads a video for its poster leaves its mark; restarted (under the same kill), it keeps the video without a poster, with the reason, logged once, never decodes it again, and indexes the next file"
    )
    func killedWhileDecoding() throws {
        let root = makeTemporaryDirectory("ptk-decode-kill")
        defer { removeTree(root) }
        let work = root + "/work"
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        _ = try cameraVideos(in: work)
        let clip = work + "/VID_20261204.mp4"
        let sent = try #require(readFile(clip))
        let wrapper = try killingAtFirstRead(of: root + "/photos/VID_20261204.mp4")
        let first = try DaemonProcess([], root: root, wrapper: wrapper)
        // The reply may or may not reach ptk-send before the indexer takes the video up: the
        // file is saved (and flushed) before either.
        _ = try send(first, [clip])
        #expect(eventually(60) { !first.process.isRunning }, "ptkd was not killed while decoding\n\(first.log)")
        #expect(readFile(first.dir + "/VID_20261204.mp4") == sent)
        let marks = listDirectory(first.dir + "/.ptk").filter { $0.hasPrefix("decoding-") }
        #expect(marks.count == 1, "\(listDirectory(first.dir + "/.ptk"))")
        let mark = String(decoding: readFile(first.dir + "/.ptk/" + (marks.first ?? "")) ?? [], as: UTF8.self)
        #expect(mark.contains("name=VID_20261204.mp4\n") && mark.contains("size=\(sent.count)\n"), "\(mark)")
        // Started again under the same strace: decoding the video again would kill it again.
        let again = try DaemonProcess([], root: root, wrapper: wrapper)
        let next = photo(work, "next.png", size: 3000, seed: 5)
        #expect(try send(again, [next]).status == 0, "\(again.log)")
        #expect(waitForIndex(again, ["VID_20261204.mp4", "next.png"]), "\(again.log)")
        #expect(eventually(30) { (try? entry(again, "next.png"))?["Problem"] == nil })
        let problem = "its poster was being made when ptkd stopped last time; not tried again"
        let video = try entry(again, "VID_20261204.mp4")
        #expect(video["Problem"] as? String == problem, "\(video)")
        let id = try #require(video["ID"] as? Int)
        #expect(!FileManager.default.fileExists(atPath: again.dir + "/.ptk/thumbnails/\(id)-360.jpg"))
        // The preview pass does not take it up either: ptkd is still there a moment later.
        usleep(2_000_000)
        #expect(again.process.isRunning, "ptkd died: it decoded the video again\n\(again.log)")
        #expect(again.log.components(separatedBy: problem).count == 2, "\(again.log)")
        #expect(listDirectory(again.dir + "/.ptk").filter { $0.hasPrefix("decoding-") }.isEmpty)
        // ptkd itself, not strace (which would let it go on untraced): stopped as systemd stops it.
        let ptkd = try #require(tracedChild(of: again.process.processIdentifier))
        kill(ptkd, SIGTERM)
        #expect(eventually(20) { !again.process.isRunning }, "ptkd did not stop")
    }
}
