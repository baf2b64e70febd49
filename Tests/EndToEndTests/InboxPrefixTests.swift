import Foundation
import Glibc
import PTKSystem
import PTKTestSupport
import PTKTestTags
import Testing

/// The photos in `dir`, ptk's own folders left out, as names (no folders in these tests).
private func photos(_ dir: String) -> [String] {
    listDirectory(dir).filter { $0 != ".ptk" && $0 != ".incoming" }.sorted()
}

/// A HEIC that ends with an empty top-level `free` box after its own boxes: whole as it is, and
/// whole without that box too, so its start passes every format check.
private func heicWithTrailingBox() throws -> [UInt8] {
    let heic = try #require(readFile(fixturePath("heif/picture.heic")))
    return heic + [0, 0, 0, 16] + Array("free".utf8) + [UInt8](repeating: 0, count: 8)
}

@Suite("End to end: a drop folder's interrupted copy of a photo taken from the same path (issue 56)", .tags(.endToEnd))
struct InboxPrefixTests {
    @Test(
        "the start of a photo taken from that path before is not stored, even where it passes the format check; said once; completed, it is the photo already taken and goes"
    )
    func startOfATakenPhoto() throws {
        let root = makeTemporaryDirectory("ptk-inbox-prefix")
        defer { removeTree(root) }
        let drop = root + "/drop"
        #expect(mkdir(drop, 0o755) == 0)
        let d = try DaemonProcess(["--drop-folder", drop, "--inbox-settle", "1s"])
        defer { _ = d.stop() }
        let whole = try heicWithTrailingBox()
        writeFile(drop + "/IMG_1.heic", whole)
        #expect(eventually(20) { photos(d.dir) == ["IMG_1.heic"] }, "\(d.log)")
        #expect(eventually(5) { !FileManager.default.fileExists(atPath: drop + "/IMG_1.heic") }, "\(d.log)")

        // The copy made again and cut short just before the trailing box: a well-formed HEIC.
        let start = Array(whole[..<(whole.count - 16)])
        writeFile(drop + "/IMG_1.heic", start)
        #expect(
            eventually(20) {
                d.log.contains("IMG_1.heic is not taken: it is the first ")
                    && d.log.contains(
                        #" of the photo "IMG_1.heic", taken from this path before (an interrupted copy?); nothing of it is stored; left where it is"#
                    )
            }, "\(d.log)")
        sleep(2)
        #expect(photos(d.dir) == ["IMG_1.heic"], "the start was stored: \(d.log)")
        #expect(readFile(drop + "/IMG_1.heic").map { $0 == start } == true, "the start was not left where it is")

        // Completed: the bytes of the photo taken from this path; nothing stored, the source goes.
        let fd = try FileDescriptor.open(drop + "/IMG_1.heic", flags: [.writeOnly, .append])
        try fd.writeAll(Array(whole[(whole.count - 16)...]))
        fd.close()
        #expect(eventually(20) { !FileManager.default.fileExists(atPath: drop + "/IMG_1.heic") }, "\(d.log)")
        #expect(photos(d.dir) == ["IMG_1.heic"], "\(d.log)")
        #expect(readFile(d.dir + "/IMG_1.heic").map { $0 == whole } == true, "the photo is not the whole file")
        #expect(d.log.components(separatedBy: "is the first").count == 2, "said more than once: \(d.log)")
        #expect(d.stop() == 0)
    }

    @Test("a shorter file with other bytes at a path a photo came from is judged as any file: a new photo")
    func shorterOtherPhoto() throws {
        let root = makeTemporaryDirectory("ptk-inbox-prefix")
        defer { removeTree(root) }
        let drop = root + "/drop"
        #expect(mkdir(drop, 0o755) == 0)
        let d = try DaemonProcess(["--drop-folder", drop, "--inbox-settle", "1s"])
        defer { _ = d.stop() }
        let first = makePNG(size: 30_000, seed: 71)
        writeFile(drop + "/IMG_2.png", first)
        #expect(eventually(20) { !FileManager.default.fileExists(atPath: drop + "/IMG_2.png") }, "\(d.log)")
        let second = makePNG(size: 10_000, seed: 72)
        writeFile(drop + "/IMG_2.png", second)
        #expect(eventually(20) { photos(d.dir).count == 2 }, "\(d.log)")
        #expect(Set(photos(d.dir).map { readFile(d.dir + "/" + $0) ?? [] }) == Set([first, second]))
        #expect(!d.log.contains("is the first"), "\(d.log)")
        #expect(d.stop() == 0)
    }
}
