import Foundation
import PTKSystem
import PTKTestSupport
import PTKTestTags
import Testing

/// The Nextcloud Android app's request sequence, replayed against the real ptkd by
/// `Tests/Fixtures/nextcloud/android.py` (written from the app's and its library's sources):
/// the connectivity check, status, capabilities, login flow v2 approved in the person's
/// browser session, the user, the auto-upload folder, a PUT, a chunked upload of a photo over
/// the app's 10,240,000-byte threshold, and the listing that must show both as sent.
@Suite(
    "End to end: the Nextcloud Android app's requests (issue 57)", .serialized,
    .enabled(if: haveProgram("python3") || davClientsRequired, "needs python3"), .tags(.endToEnd))
struct CloudAndroidTests {
    @Test func replayedAppSendsPhotos() throws {
        let d = try DaemonProcess.withDAV()
        defer { d.stop() }
        let work = makeTemporaryDirectory("ptk-android")
        defer { removeTree(work) }
        let small = work + "/PXL_20240501_101010.png"
        writeFile(small, makePNG(size: 40_000, seed: 4242))
        let big = work + "/PXL_20240501_101011.png"
        let bigSize = writeLargePNG(big, width: 2400, height: 1500, seed: 9)
        #expect(bigSize > 10_240_000)
        let link = try library(d, ["web-link", "--host", "127.0.0.1", "--name", "anna"])
        #expect(link.status == 0, "\(link.stderr)")
        let web = String(link.stdout.split(separator: "\n").first ?? "")
        let r = try run(
            findProgram("python3") ?? "/usr/bin/python3",
            [
                fixturePath("nextcloud/android.py"), "https://127.0.0.1:\(d.webPort)", "nobody", "unused", small,
                "--big", big, "--web-link", web, "--password-out", work + "/password",
            ], timeout: 120, absolute: true)
        #expect(r.status == 0, "\(r.stdout)\(r.stderr)")
        for step in ["connectivity", "status", "capabilities", "login v2", "user", "auto-upload folder", "upload"] {
            #expect(r.stdout.contains("ok " + step), "\(step): \(r.stdout)")
        }
        #expect(r.stdout.contains("ok chunked upload PXL_20240501_101011.png in 2 chunks"), "\(r.stdout)")
        #expect(r.stdout.contains("ok listing 2 photos"), "\(r.stdout)")
        // Both kept, byte for byte, with the app's times; the approved password never in the log.
        let kept = d.photoFiles
        #expect(kept.count == 2)
        #expect(kept.values.contains { $0 == readFile(small) })
        #expect(kept.values.contains { $0 == readFile(big) })
        let password = String(decoding: readFile(work + "/password") ?? [], as: UTF8.self)
        #expect(password.count > 20)
        #expect(!d.log.contains(password), "the app password is in ptkd's log")
        let list = try library(d, ["app-password", "list"])
        #expect(list.status == 0 && list.stdout.contains("upload"), "\(list.stdout)")
    }
}
