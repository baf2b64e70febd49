import Foundation
import PTKTestSupport
import PTKTestTags
import Testing

/// ImageMagick's mean absolute error between two images, as a fraction of the full scale.
func meanDifference(_ a: String, _ b: String) throws -> Double {
    let compare = try #require(findProgram("compare"), "needs imagemagick (scripts/deps.sh --test)")
    let r = try run(compare, ["-metric", "MAE", a, b, "null:"], absolute: true)
    // "797.535 (0.0121696)"
    let text = r.stderr
    guard let open = text.firstIndex(of: "("), let close = text.firstIndex(of: ")"), open < close,
        let value = Double(text[text.index(after: open)..<close])
    else {
        Issue.record("compare said: \(text)")
        return 1
    }
    return value
}

/// The library's entry of `name` (from `ptk list --json`).
func entry(_ d: DaemonProcess, _ name: String) throws -> [String: Any] {
    try #require(try listed(d).first { $0["Name"] as? String == name }, "\(name) is not listed")
}

@Suite("End to end: video posters made with FFmpeg's libraries (issue 58)", .serialized, .tags(.endToEnd))
struct VideoPosterTests {
    @Test(
        "an H.264 MP4 turned 90 degrees and an HEVC MOV get posters and previews within 3% of ffmpeg's first frame, turned as shown; ptk show gives their size as shown"
    )
    func posters() throws {
        let d = try DaemonProcess([])
        let work = makeTemporaryDirectory("ptk-posters")
        defer { removeTree(work) }
        _ = try cameraVideos(in: work)
        let ffmpeg = try #require(findProgram("ffmpeg"))
        #expect(try send(d, [work + "/VID_20261204.mp4", work + "/IMG_0042.MOV"]).status == 0)
        #expect(waitForIndex(d, ["VID_20261204.mp4", "IMG_0042.MOV"]))
        for (name, shown) in [("VID_20261204.mp4", "240x320"), ("IMG_0042.MOV", "320x240")] {
            let id = try #require(try entry(d, name)["ID"] as? Int)
            let thumbnail = d.dir + "/.ptk/thumbnails/\(id)-360.jpg"
            #expect(eventually { FileManager.default.fileExists(atPath: thumbnail) }, "\(name): no poster\n\(d.log)")
            // ffmpeg turns the frame as the track's matrix says, as the poster must be.
            let reference = work + "/\(id)-reference.png"
            let made = try run(
                ffmpeg,
                [
                    "-v", "error", "-y", "-i", work + "/" + name, "-frames:v", "1", "-vf",
                    "scale=\(shown.replacingOccurrences(of: "x", with: ":"))", reference,
                ],
                absolute: true)
            #expect(made.status == 0, "\(made.stderr)")
            let difference = try meanDifference(reference, thumbnail)
            #expect(difference < 0.03, "\(name): the poster differs from ffmpeg's frame by \(difference)")
            let show = try library(d, ["show", name])
            #expect(show.stdout.contains(", \(shown), "), "\(show.stdout)")
            #expect(
                eventually(30) { FileManager.default.fileExists(atPath: d.dir + "/.ptk/previews/\(id).jpg") },
                "\(name): no preview")
        }
        // The wrong way round is far off: the comparison can fail.
        let id = try #require(try entry(d, "VID_20261204.mp4")["ID"] as? Int)
        let wrong = work + "/wrong.png"
        let turned = try run(
            try #require(findProgram("convert")),
            [work + "/\(id)-reference.png", "-rotate", "180", wrong], absolute: true)
        #expect(turned.status == 0)
        #expect(try meanDifference(wrong, d.dir + "/.ptk/thumbnails/\(id)-360.jpg") > 0.2)
    }

    @Test(
        "no poster, with the reason, for a decoder bomb (a track declaring 30000x30000), an MPEG-4 Part 2 video and a movie whose data is noise; each is kept, and ptkd goes on serving"
    )
    func noPoster() throws {
        let d = try DaemonProcess([])
        let work = makeTemporaryDirectory("ptk-posters-hostile")
        defer { removeTree(work) }
        let ffmpeg = try #require(findProgram("ffmpeg"), "needs ffmpeg (scripts/deps.sh --test)")
        let made = try run(
            ffmpeg,
            [
                "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc=size=320x240:rate=30", "-t", "1", "-c:v", "mpeg4",
                work + "/part2.mp4",
            ], absolute: true)
        #expect(made.status == 0, "\(made.stderr)")
        var bomb = MP4Movie()
        bomb.tracks[0].width = 30000
        bomb.tracks[0].height = 30000
        writeFile(work + "/bomb.mp4", bomb.bytes())
        writeFile(work + "/noise.mp4", MP4Movie().bytes())
        #expect(try send(d, [work + "/bomb.mp4", work + "/part2.mp4", work + "/noise.mp4"]).status == 0)
        #expect(waitForIndex(d, ["bomb.mp4", "part2.mp4", "noise.mp4"]))
        let reasons = [
            "bomb.mp4": "megapixel limit", "part2.mp4": "a mpeg4 video: ptk decodes H.264 and HEVC only",
            "noise.mp4": "no picture could be decoded",
        ]
        for (name, words) in reasons {
            let problem = try entry(d, name)["Problem"] as? String ?? ""
            #expect(!problem.isEmpty && problem.contains(words), "\(name): \(problem)")
        }
        // Still serving: a photo after them is saved and gets its thumbnail.
        writeFile(work + "/after.png", makePNG(size: 5000, seed: 3))
        #expect(try send(d, [work + "/after.png"]).status == 0)
        #expect(waitForIndex(d, ["bomb.mp4", "part2.mp4", "noise.mp4", "after.png"]), "\(d.log)")
        #expect(try entry(d, "after.png")["Problem"] == nil, "\(d.log)")
    }

    @Test(
        "the attack's decoder bombs: a track declaring 320x240 whose parameter sets say 4096x2304, its key picture removed, and P-frames with no key picture; both kept without a poster, ptkd's memory stays small"
    )
    func decoderBombs() throws {
        let d = try DaemonProcess([])
        let work = makeTemporaryDirectory("ptk-posters-bombs")
        defer { removeTree(work) }
        let ffmpeg = try #require(findProgram("ffmpeg"), "needs ffmpeg (scripts/deps.sh --test)")
        let fixtures = repositoryRoot() + "/Tests/Fixtures/video"
        func make(_ size: String, frames: Int, references: Int, _ name: String, declare: String?) throws {
            let coded = try run(
                ffmpeg,
                [
                    "-v", "error", "-y", "-f", "lavfi", "-i", "color=black:size=\(size):rate=30", "-frames:v",
                    "\(frames)",
                    "-c:v", "libx264", "-preset", "ultrafast", "-x264-params",
                    "keyint=10000:scenecut=0:bframes=0:ref=\(references)", "-bsf:v", "h264_mp4toannexb", "-f", "h264",
                    work + "/\(name).h264",
                ], timeout: 120, absolute: true)
            #expect(coded.status == 0, "\(coded.stderr)")
            let stripped = try run(
                "/usr/bin/python3", [fixtures + "/strip-idr.py", work + "/\(name).h264", work + "/\(name)-p.h264"],
                absolute: true)
            #expect(stripped.status == 0, "\(stripped.stderr)")
            let muxed = try run(
                ffmpeg,
                [
                    "-v", "error", "-y", "-r", "30", "-f", "h264", "-i", work + "/\(name)-p.h264", "-c", "copy",
                    "-copyinkf",
                    work + (declare == nil ? "/\(name).mp4" : "/\(name)-raw.mp4"),
                ], absolute: true)
            #expect(muxed.status == 0, "\(muxed.stderr)")
            if let declare {
                let sides = declare.split(separator: "x").map(String.init)
                let patched = try run(
                    "/usr/bin/python3",
                    [fixtures + "/mp4patch.py", "declare-size", work + "/\(name)-raw.mp4", work + "/\(name).mp4"]
                        + sides,
                    absolute: true)
                #expect(patched.status == 0, "\(patched.stderr)")
            }
        }
        try make("4096x2304", frames: 20, references: 16, "dpb", declare: "320x240")
        try make("1280x720", frames: 300, references: 1, "noidr", declare: nil)
        #expect(try send(d, [work + "/dpb.mp4", work + "/noidr.mp4"]).status == 0)
        #expect(waitForIndex(d, ["dpb.mp4", "noidr.mp4"]), "\(d.log)")
        for name in ["dpb.mp4", "noidr.mp4"] {
            let problem = try entry(d, name)["Problem"] as? String ?? ""
            #expect(!problem.isEmpty, "\(name) got a poster")
        }
        // 16 reference pictures of 4096x2304 would be some 230 MB; refused, they are never made.
        let status = String(decoding: readFile("/proc/\(d.process.processIdentifier)/status") ?? [], as: UTF8.self)
        let peak = status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") }.flatMap {
            Int($0.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
        }
        #expect((peak ?? Int.max) < 200_000, "ptkd's peak RSS: \(peak.map { "\($0) kB" } ?? "unknown")")
    }
}
