import PTKFuzz
import PTKFuzzReplay
import PTKTestSupport
import PTKTestTags
import Testing

/// The fuzzers' corpora (fuzz/corpus) replayed as regression tests: every input that once
/// found new behaviour must still run without a crash or a broken invariant.
@Suite("Fuzz corpus replay", .tags(.unit))
struct FuzzReplayTests {
    @Test("the frame decoder and receiver state machine survive the frames corpus")
    func frames() {
        let n = replay([repositoryRoot() + "/fuzz/corpus/frames"], FuzzTargets.frames)
        #expect(n >= 10)
    }

    @Test("the PNG check survives the png corpus and agrees however the bytes are split")
    func png() {
        let n = replay([repositoryRoot() + "/fuzz/corpus/png"], FuzzTargets.png)
        #expect(n >= 10)
    }

    @Test(
        "every other parser of untrusted bytes survives its corpus: JPEG and HEIF checks, thumbnailers, LocalSend HTTP and JSON, package metadata, trust files, ptkd.conf; the HTML, URL and header escapers keep their promises over theirs; the WebDAV door's XML bodies, If headers, paths and escaper keep theirs; the MP4 and MOV checks survive theirs",
        arguments: [
            "jpeg", "heif", "thumbnail", "http", "localsend-json", "package", "trust", "config", "escape", "webdav",
            "video",
        ])
    func corpus(target: String) throws {
        let run = try #require(FuzzTargets.target(named: target))
        let n = replay([repositoryRoot() + "/fuzz/corpus/" + target], run)
        #expect(n >= 2, "fuzz/corpus/\(target) has \(n) input(s)")
    }

    @Test("every target has a corpus, and every corpus a target")
    func everyTarget() {
        let folders = listDirectory(repositoryRoot() + "/fuzz/corpus").sorted()
        #expect(folders == FuzzTargets.names.sorted())
    }

    @Test("every PngSuite image replays through the PNG target with several splits")
    func pngSuite() {
        let suite = pngSuiteDirectory()
        let names = pngSuiteImages()
        #expect(names.count == pngSuiteImageCount, "the PngSuite is missing from \(suite)")
        for name in names {
            guard let bytes = readFile(suite + "/" + name) else {
                Issue.record("cannot read \(suite)/\(name)")
                continue
            }
            for step: UInt8 in [0, 3, 200] {
                ([step] + bytes).withUnsafeBytes { FuzzTargets.png($0) }
            }
        }
    }
}
