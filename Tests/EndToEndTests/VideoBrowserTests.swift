import Foundation
import PTKSystem
import PTKTestSupport
import PTKTestTags
import Testing

/// Videos in headless Chromium (Tests/Browser/video_test.py through WebDriver), against the
/// real ptkd holding an H.264 MP4 and an HEVC MOV made by Debian's ffmpeg (issue 58).
@Suite(
    "End to end: videos played in a real browser (issue 58)", .serialized,
    .enabled(if: browserAvailable, browserMissing),
    .tags(.endToEnd))
struct VideoBrowserTests {
    @Test(
        "the gallery marks both videos with their length; the viewer plays the H.264 MP4; the HEVC MOV plays, or shows its poster, why not and the download where the browser cannot play HEVC"
    )
    func playInBrowser() throws {
        let d = try DaemonProcess.withWeb()
        let work = makeTemporaryDirectory("ptk-video-browser")
        defer { removeTree(work) }
        _ = try cameraVideos(in: work)
        #expect(try send(d, [work + "/VID_20261204.mp4", work + "/IMG_0042.MOV"]).status == 0)
        #expect(waitForIndex(d, ["VID_20261204.mp4", "IMG_0042.MOV"]))
        let mp4 = try #require(try entry(d, "VID_20261204.mp4")["ID"] as? Int)
        let mov = try #require(try entry(d, "IMG_0042.MOV")["ID"] as? Int)
        #expect(eventually(30) { fileExists(d.dir + "/.ptk/previews/\(mov).jpg") }, "the MOV's poster preview")
        try d.setWebPassword("right horse battery")
        try runBrowserScript(
            "video_test.py",
            [
                "--base", "https://127.0.0.1:\(d.webPort)", "--password", "right horse battery", "--mp4", String(mp4),
                "--mov", String(mov),
            ], daemon: d)
    }
}
