import Foundation
import PTKTestSupport
import PTKTestTags
import Testing

/// What ffprobe says of `path`'s first video stream and its container: codec tag, frame rate
/// as a number, duration in seconds.
func probe(_ path: String) throws -> (codec: String, frameRate: Double, duration: Double) {
    let ffprobe = try #require(findProgram("ffprobe"), "needs ffmpeg's ffprobe (scripts/deps.sh --test)")
    let r = try run(
        ffprobe,
        [
            "-v", "error", "-select_streams", "v:0", "-show_entries", "stream=codec_tag_string,avg_frame_rate",
            "-show_entries", "format=duration", "-of", "json", path,
        ], absolute: true)
    #expect(r.status == 0, "\(r.stderr)")
    let json = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
    let stream = try #require((json["streams"] as? [[String: Any]])?.first)
    let rate = try #require(stream["avg_frame_rate"] as? String).split(separator: "/").compactMap { Double($0) }
    let format = try #require((json["format"] as? [String: Any])?["duration"] as? String)
    let duration = try #require(Double(format))
    return (try #require(stream["codec_tag_string"] as? String), rate[0] / rate[1], duration)
}

@Suite("End to end: a video's facts in the library (issue 58)", .serialized, .tags(.endToEnd))
struct VideoFactsTests {
    @Test(
        "ptk show --json and ptk list give each video's codec, frame rate, length and size as shown as ffprobe reads them (a fragmented MP4's too); the time it was made from Apple's creation date with its offset, else mvhd's"
    )
    func factsAsFFprobeSays() throws {
        let d = try DaemonProcess([])
        let work = makeTemporaryDirectory("ptk-video-facts")
        defer { removeTree(work) }
        _ = try cameraVideos(in: work)
        let ffmpeg = try #require(findProgram("ffmpeg"))
        // A phone's MOV with Apple's creation date (local time and offset), and an MP4 with
        // only the container's creation time (UTC), at 25 frames a second.
        let apple = try run(
            ffmpeg,
            [
                "-v", "error", "-y", "-i", work + "/IMG_0042.MOV", "-c", "copy", "-movflags", "use_metadata_tags",
                "-metadata", "com.apple.quicktime.creationdate=2026-11-30T09:15:07+0100",
                "-metadata", "com.apple.quicktime.make=Apple", "-metadata", "com.apple.quicktime.model=iPhone 15",
                "-metadata", "com.apple.quicktime.location.ISO6709=+48.8584+002.2945+035.000/",
                "-metadata", "creation_time=2020-01-01T00:00:00Z", work + "/IMG_0043.MOV",
            ], absolute: true)
        #expect(apple.status == 0, "\(apple.stderr)")
        let utc = try run(
            ffmpeg,
            [
                "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc=size=160x120:rate=25", "-t", "3", "-c:v", "libx264",
                "-pix_fmt", "yuv420p", "-metadata", "creation_time=2025-06-01T12:00:00Z", work + "/clip.mp4",
            ], absolute: true)
        #expect(utc.status == 0, "\(utc.stderr)")
        // Two video tracks: the facts and the poster are both the first's (the attack found a
        // poster of FFmpeg's "best" track under the first one's facts).
        let two = try run(
            ffmpeg,
            [
                "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc=size=320x240:rate=25", "-f", "lavfi", "-i",
                "testsrc2=size=1280x720:rate=60", "-t", "2", "-map", "0:v", "-map", "1:v", "-c:v", "libx264",
                "-pix_fmt", "yuv420p", work + "/two.mp4",
            ], absolute: true)
        #expect(two.status == 0, "\(two.stderr)")
        // A fragmented MP4 (a screen recorder's, a live stream's): its moov says neither its
        // length nor its frame rate; libavformat's reading of its fragments does.
        let fragmented = try run(
            ffmpeg,
            [
                "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc=size=160x120:rate=25", "-t", "3", "-c:v", "libx264",
                "-pix_fmt", "yuv420p", "-movflags", "frag_keyframe+empty_moov", work + "/fragmented.mp4",
            ], absolute: true)
        #expect(fragmented.status == 0, "\(fragmented.stderr)")
        let names = ["VID_20261204.mp4", "IMG_0042.MOV", "IMG_0043.MOV", "clip.mp4", "two.mp4", "fragmented.mp4"]
        #expect(try send(d, names.map { work + "/" + $0 }).status == 0)
        #expect(waitForIndex(d, Set(names)))
        let shown = [
            "VID_20261204.mp4": (240, 320), "IMG_0042.MOV": (320, 240), "IMG_0043.MOV": (320, 240),
            "clip.mp4": (160, 120), "two.mp4": (320, 240), "fragmented.mp4": (160, 120),
        ]
        for name in names {
            let e = try entry(d, name)
            let want = try probe(work + "/" + name)
            #expect(e["Codec"] as? String == want.codec, "\(name): \(e)")
            let rate = try #require(e["FrameRate"] as? Double, "\(name): \(e)")
            #expect(abs(rate - want.frameRate) < 0.01, "\(name): \(rate) frames/s, ffprobe \(want.frameRate)")
            let duration = try #require(e["Duration"] as? Double, "\(name): \(e)")
            #expect(abs(duration - want.duration) < 0.05, "\(name): \(duration) s, ffprobe \(want.duration)")
            #expect(
                e["DisplayWidth"] as? Int == shown[name]!.0 && e["DisplayHeight"] as? Int == shown[name]!.1,
                "\(name): \(e)")
            #expect(e["MediaType"] as? String == (name.hasSuffix(".MOV") ? "video/quicktime" : "video/mp4"))
        }
        let twoID = try #require(try entry(d, "two.mp4")["ID"] as? Int)
        let poster = try run(
            try #require(findProgram("identify")), ["-format", "%wx%h", d.dir + "/.ptk/thumbnails/\(twoID)-360.jpg"],
            absolute: true)
        #expect(poster.stdout == "320x240", "the first track's poster: \(poster.stdout)\(poster.stderr)")
        let phone = try entry(d, "IMG_0043.MOV")
        #expect(phone["Taken"] as? String == "2026-11-30T09:15:07+01:00")
        // With Apple's date, its make, model and location (whether there is one) are read too.
        #expect(phone["CameraMake"] as? String == "Apple" && phone["CameraModel"] as? String == "iPhone 15", "\(phone)")
        #expect(phone["HasLocation"] as? Bool == true, "\(phone)")
        #expect(try entry(d, "clip.mp4")["HasLocation"] as? Bool == false)
        let located = try library(d, ["show", "IMG_0043.MOV"])
        #expect(located.stdout.contains("recorded in the video (not shown)"), "\(located.stdout)")
        #expect(!located.stdout.contains("48.85"), "the place itself is never shown")
        #expect((try entry(d, "clip.mp4")["Taken"] as? String)?.hasPrefix("2025-06-01T12:00:00") == true)
        let show = try library(d, ["show", "IMG_0042.MOV"])
        #expect(show.stdout.contains("video"), "\(show.stdout)")
        #expect(show.stdout.contains("MOV, 320x240, 2 s, HEVC (hvc1), 30 frames/s, "), "\(show.stdout)")
        let list = try library(d, ["list"])
        #expect(list.stdout.contains("160x120 0:03"), "\(list.stdout)")
        #expect(list.stdout.contains("240x320 0:02"), "\(list.stdout)")
    }

    @Test(
        "a video goes into a .ptk package and back (PhotoKeeper's format: its bytes, its facts and its poster as the thumbnail), identical; a package whose video is cut short is refused by import and by ptk-send, and leaves nothing"
    )
    func packages() throws {
        let d = try DaemonProcess([])
        let work = makeTemporaryDirectory("ptk-video-package")
        defer { removeTree(work) }
        let videos = try cameraVideos(in: work)
        #expect(try send(d, [work + "/IMG_0042.MOV"]).status == 0)
        #expect(waitForIndex(d, ["IMG_0042.MOV"]))
        let e = try library(d, ["export", "IMG_0042.MOV", "-o", work])
        #expect(e.status == 0, "\(e.stderr)")
        #expect(readFile(work + "/IMG_0042.ptk/photo.data") == videos.mov, "exported identical")
        let meta = try #require(
            try JSONSerialization.jsonObject(with: Data(readFile(work + "/IMG_0042.ptk/photo.metadata")!))
                as? [String: Any])
        #expect(meta["MediaType"] as? String == "video/quicktime" && meta["Codec"] as? String == "hvc1", "\(meta)")
        #expect(meta["Duration"] as? Double == 2 && meta["FrameRate"] as? Double == 30, "\(meta)")
        let poster = (meta["Thumbnail"] as? String).flatMap { Data(base64Encoded: $0) }.map { pngSize(Array($0)) }
        #expect(poster == [256, 192], "the poster as the package's PNG thumbnail: \(String(describing: poster))")
        #expect(try library(d, ["rm", "IMG_0042.MOV"]).status == 0)
        let i = try library(d, ["import", work + "/IMG_0042.ptk"])
        // Named after the package, with its type's usual ending (as a photo's import is).
        #expect(i.status == 0 && i.stdout.contains("as 'IMG_0042.mov'"), "\(i.stdout)\(i.stderr)")
        #expect(readFile(d.dir + "/IMG_0042.mov") == videos.mov, "imported identical")
        #expect(waitForIndex(d, ["IMG_0042.mov"]))
        #expect(try entry(d, "IMG_0042.mov")["Codec"] as? String == "hvc1")

        // The same package with its video cut short.
        try FileManager.default.createDirectory(atPath: work + "/cut.ptk", withIntermediateDirectories: false)
        writeFile(work + "/cut.ptk/photo.data", Array(videos.mov.prefix(videos.mov.count / 2)))
        writeFile(
            work + "/cut.ptk/photo.metadata",
            Array(
                String(decoding: readFile(work + "/IMG_0042.ptk/photo.metadata")!, as: UTF8.self)
                    .replacingOccurrences(of: "IMG_0042.MOV", with: "cut.MOV").utf8))
        let cut = try library(d, ["import", work + "/cut.ptk"])
        #expect(cut.status != 0, "\(cut.stdout)")
        let sent = try send(d, [work + "/cut.ptk"])
        #expect(sent.status != 0, "\(sent.stdout)")
        #expect(!d.visible.contains { $0.hasPrefix("cut") }, "\(d.visible)")
        #expect(d.visible.filter { !$0.hasPrefix(".") } == ["IMG_0042.mov"], "\(d.visible)")
    }
}
