import Foundation
import PTKDigest
import PTKSystem
import PTKTestSupport
import PTKTestTags
import PTKVocabulary
import Testing

@testable import PTKLibrary

/// A 2-second H.264 MP4 of ffmpeg's test pattern at `path`.
private func makeClip(_ path: String) throws {
    #expect(findProgram("ffmpeg") != nil, "needs ffmpeg (scripts/deps.sh --test)")
    let made = runTool([
        "ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc=size=320x240:rate=30", "-t", "2", "-c:v",
        "libx264", "-pix_fmt", "yuv420p", path,
    ])
    try #require(made.status == 0, "\(made.output)")
}

/// The "was decoding" marks against crash loops (issue 58): a mark left by a run that stopped
/// while decoding makes the next start keep that photo without a poster, with the reason.
@Suite("Decoding marks: a decode cut short is not tried again", .tags(.unit))
struct DecodingMarkTests {
    @Test("a mark's bytes read back as the mark; other bytes are not one")
    func markFormat() {
        let mark = PhotoLibrary.DecodingMark(
            id: 42, pass: .preview, size: 4_500_000_000, sha256: String(repeating: "ab", count: 32),
            name: "DCIM/clip =1.mp4")
        #expect(PhotoLibrary.DecodingMark(bytes: mark.bytes) == mark)
        #expect(mark.fileName == "decoding-42")
        #expect(PhotoLibrary.DecodingMark(bytes: Array("id=42\n".utf8)) == nil)
        #expect(PhotoLibrary.DecodingMark(bytes: Array(mark.bytes.dropLast())) == nil)
        #expect(PhotoLibrary.marksDecoding(of: .mp4) && PhotoLibrary.marksDecoding(of: .heic))
        #expect(!PhotoLibrary.marksDecoding(of: .png) && !PhotoLibrary.marksDecoding(of: .jpeg))
    }

    @Test(
        "a mark planted for a real video: the indexer keeps it without a poster or preview, with the reason, logs it once, removes the mark and indexes the next file; a mark naming another file is dropped"
    )
    func plantedMark() throws {
        let dir = makeTemporaryDirectory("ptk-decoding-mark")
        defer { removeTree(dir) }
        try makeClip(dir + "/clip.mp4")
        try makeClip(dir + "/other.mp4")
        writeFile(dir + "/next.png", photoBytes(3))
        let library = try PhotoLibrary(directory: dir, create: true)
        _ = try library.reconcile()
        let ids = Dictionary(uniqueKeysWithValues: try library.all().map { ($0.name, $0.id) })
        let clip = try #require(ids["clip.mp4"])
        let other = try #require(ids["other.mp4"])
        let bytes = try #require(readFile(dir + "/clip.mp4"))
        let mark = PhotoLibrary.DecodingMark(
            id: clip, pass: .thumbnail, size: Int64(bytes.count), sha256: SHA256.hex(of: bytes), name: "clip.mp4")
        writeFile(dir + "/.ptk/decoding-\(clip)", mark.bytes)
        // A mark whose id is other.mp4's but whose name and size are clip.mp4's: not that file.
        var wrong = mark
        wrong.id = other
        writeFile(dir + "/.ptk/decoding-\(other)", wrong.bytes)
        let log = LogLines()
        let indexer = LibraryIndexer(directory: dir) { log.add($0) }
        try indexer.start()
        #expect(
            waitUntil {
                indexer.isIdle && (try? library.pendingCount()) == 0
                    && (try? library.pendingPreviews(limit: 10))?.isEmpty == true
            })
        #expect(indexer.stop(waitingUntil: .now + .seconds(10)))
        let problem = "its poster was being made when ptkd stopped last time; not tried again"
        let entries = Dictionary(uniqueKeysWithValues: try library.all().map { ($0.name, $0) })
        let settled = try #require(entries["clip.mp4"])
        #expect(settled.indexed && !settled.hasThumbnail && settled.problem == problem, "\(settled)")
        #expect(settled.preview == .failed(problem))
        #expect(settled.sha256 == mark.sha256)
        #expect(!FileManager.default.fileExists(atPath: dir + "/.ptk/thumbnails/\(clip)-360.jpg"))
        #expect(log.all.filter { $0.contains(problem) } == ["library: \"clip.mp4\": \(problem)"], "\(log.all)")
        // The mark named another file: other.mp4 got its poster; the next file was indexed.
        #expect(entries["other.mp4"]?.hasThumbnail == true, "\(String(describing: entries["other.mp4"]))")
        #expect(entries["next.png"]?.hasThumbnail == true)
        #expect(listDirectory(dir + "/.ptk").filter { $0.hasPrefix("decoding-") }.isEmpty)
        // Not taken up again at the next start either.
        let again = LibraryIndexer(directory: dir) { log.add($0) }
        try again.start()
        #expect(waitUntil { again.isIdle })
        #expect(again.stop(waitingUntil: .now + .seconds(10)))
        #expect(try library.photo(id: clip)?.problem == problem)
        #expect(log.all.filter { $0.contains(problem) }.count == 1, "\(log.all)")
    }

    @Test(
        "indexing a video and a HEIF leaves no mark behind; a mark cut short in the preview keeps the thumbnails; a HEIF's says thumbnail"
    )
    func marksAreRemovedAndPreviewMarksKeepThumbnails() throws {
        let dir = makeTemporaryDirectory("ptk-decoding-mark")
        defer { removeTree(dir) }
        try makeClip(dir + "/clip.mp4")
        writeFile(dir + "/picture.heic", try #require(readFile(fixturePath("heif/picture.heic"))))
        let library = try PhotoLibrary(directory: dir, create: true)
        _ = try library.reconcile()
        let ids = Dictionary(uniqueKeysWithValues: try library.all().map { ($0.name, $0.id) })
        let clip = try #require(ids["clip.mp4"])
        let heic = try #require(ids["picture.heic"])
        // Indexed as usual: their marks were removed once the decoder returned.
        #expect(try library.index(id: clip) == .indexed(name: "clip.mp4", problem: nil))
        #expect(try library.index(id: heic) == .indexed(name: "picture.heic", problem: nil))
        #expect(listDirectory(dir + "/.ptk").filter { $0.hasPrefix("decoding-") }.isEmpty)
        // Stopped while the video's preview was being made: the thumbnails stay, the preview is
        // not tried again. Stopped while the HEIF's thumbnail was being made: none.
        let photo = try #require(try library.photo(id: clip))
        #expect(photo.preview == .pending && photo.hasThumbnail)
        writeFile(
            dir + "/.ptk/decoding-\(clip)",
            PhotoLibrary.DecodingMark(
                id: clip, pass: .preview, size: photo.size, sha256: photo.sha256, name: "clip.mp4"
            ).bytes)
        let picture = try #require(try library.photo(id: heic))
        writeFile(
            dir + "/.ptk/decoding-\(heic)",
            PhotoLibrary.DecodingMark(
                id: heic, pass: .thumbnail, size: picture.size, sha256: picture.sha256, name: "picture.heic"
            ).bytes)
        let settled = try library.settleDecodingMarks()
        let problem = "its preview was being made when ptkd stopped last time; not tried again"
        let heifProblem = "its thumbnail was being made when ptkd stopped last time; not tried again"
        #expect(settled.map(\.problem).sorted() == [heifProblem, problem].sorted())
        let after = try #require(try library.photo(id: clip))
        #expect(after.hasThumbnail && after.problem == nil && after.preview == .failed(problem), "\(after)")
        let heifAfter = try #require(try library.photo(id: heic))
        #expect(!heifAfter.hasThumbnail && heifAfter.problem == heifProblem, "\(heifAfter)")
        #expect(try library.pendingPreviews(limit: 10).isEmpty)
        #expect(listDirectory(dir + "/.ptk").filter { $0.hasPrefix("decoding-") }.isEmpty)
    }
}
