import PTKSystem
import PTKTestSupport
import PTKVocabulary
import Testing
@testable import PTKStore

/// `HEIFCheck` over bytes in memory.
func heifCheck(_ bytes: [UInt8]) -> String? {
    do {
        try HEIFCheck.check(size: Int64(bytes.count)) { (offset, count) throws(FormatError) -> [UInt8] in
            guard offset >= 0, Int(offset) + count <= bytes.count else { throw FormatError("read past the end") }
            return Array(bytes[Int(offset)..<Int(offset) + count])
        }
        return nil
    } catch {
        return error.message
    }
}

func heifFixture(_ name: String) throws -> [UInt8] { try #require(readFile(fixturePath("heif/" + name)), "\(name)") }

@Suite("HEIF items checked before libheif sees the file (issue 54)")
struct HEIFCheckTests {
    @Test("every HEIC the tests keep passes, the hostile ones libheif itself must judge included")
    func fixturesPass() throws {
        for name in ["picture.heic", "rotated.heic", "portrait-exif.heic", "display-p3-icc.heic", "thumb-item.heic", "thumb-small.heic",
                     "thumb-square.heic", "thumb-turned.heic", "thumb-both-turned.heic", "thumb-irot-exif6.heic",
                     "hostile/ipco-walk16.heic", "hostile/spoof.heic", "hostile/thumb-data-garbage.heic", "hostile/thumb-ispe-60000x45000.heic"] {
            let problem = heifCheck(try heifFixture(name))
            #expect(problem == nil, "\(name)")
        }
    }

    @Test("a grid or an overlay whose description says another size than its ispe, a coded image larger than its ispe (in hvcC or in its data): refused with both sizes")
    func declaredTwice() throws {
        let cases = [
            ("hostile/grid-20000.heic", "grid item 1 makes a 20000x20000 image, its ispe says 128x128"),
            ("hostile/overlay-20000.heic", "overlay item 1 makes a 20000x20000 image, its ispe says 128x128"),
            ("hostile/coded-2048.heic", "HEVC item 1 is coded 2048x2048, its ispe says 64x64"),
            ("hostile/coded-in-band.heic", "HEVC item 1 is coded 2048x2048, its ispe says 64x64"),
            // An auxiliary image (alpha) is decoded with its image: checked as well.
            ("hostile/alpha-2048.heic", "HEVC item 2 is coded 2048x2048, its ispe says 64x64"),
        ]
        for (name, words) in cases { #expect(heifCheck(try heifFixture(name)) == words, "\(name)") }
    }

    @Test("tiles, items, references, boxes: each count is bounded before libheif opens the file")
    func counts() {
        let cases: [([UInt8], String)] = [
            // 33 x 32 tiles: fewer items and references than their limits, more tiles.
            (heifGrid(rows: 33, columns: 32, width: 64), "grid item 1 of 33 x 32 tiles is over the 1024-tile limit"),
            // The audit's 12,996 tiles (114 x 114): over the references first.
            (heifGrid(rows: 114, columns: 114, width: 64), "over 4096 item references"),
            (heifHugeItemLocations(), "iloc places 65535 items, over the 2048-item limit"),
            (heifFileType() + isoFullBox("meta", []) + (0..<300).flatMap { _ in isoBox("free", []) }, "over 256 boxes at the top level"),
            (heifFileType() + isoFullBox("meta", (0..<20_000).flatMap { _ in isoBox("free", []) }), "over 16384 boxes in the meta box"),
            (heifFileType() + isoFullBox("meta", isoFullBox("iinf", [0x0B, 0xB8])), "3000 items is over the 2048-item limit"),
        ]
        for (bytes, words) in cases {
            let started = Instant.now
            #expect(heifCheck(bytes) == words)
            #expect(Instant.now - started < .seconds(2), "\(words)")
        }
        // A grid of 32 x 32 tiles of 64x64 is within every limit: what is judged next is its tiles, which it never describes.
        #expect(heifCheck(heifGrid(rows: 32, columns: 32, width: 2048)) == "a tile of grid item 1 is not an HEVC image")
    }

    @Test("the streaming check refuses a file of empty top-level boxes as it arrives")
    func topLevelBoxesStreaming() {
        let file = heifFileType() + isoFullBox("meta", []) + (0..<300).flatMap { _ in isoBox("free", []) }
        for step in [nil, 1] as [Int?] {
            #expect(validateHEIF(file, step: step)?.message == "over 256 boxes at the top level")
        }
        let fine = heifFileType() + isoFullBox("meta", []) + (0..<200).flatMap { _ in isoBox("free", []) }
        #expect(validateHEIF(fine) == nil)
    }

    @Test("a picture's parameter sets declare its coded size; emulation prevention bytes are taken out")
    func sequenceParameterSet() throws {
        let picture = try heifFixture("picture.heic")
        let at = try #require((0..<picture.count - 4).first { picture[$0..<$0 + 4].elementsEqual("hvcC".utf8) })
        let size = Int(picture[at - 4]) << 24 | Int(picture[at - 3]) << 16 | Int(picture[at - 2]) << 8 | Int(picture[at - 1])
        let configuration = try HEVCPictureSize.configuration(picture[(at + 4)..<(at - 4 + size)])
        #expect(configuration.lengthSize == 4 && configuration.sps.count == 1)
        let coded = try HEVCPictureSize.of(sps: configuration.sps[0])
        // heif-enc codes the 300x200 picture at 304x200 (a multiple of 8), cropped back.
        #expect(coded.width == 304 && coded.height == 200, "\(coded)")
        // Cut short: an error, or the same size once the size fields are in; never a crash.
        var failed = 0
        for cut in 0..<configuration.sps[0].count {
            do {
                let size = try HEVCPictureSize.of(sps: configuration.sps[0].prefix(cut))
                #expect(size.width == 304 && size.height == 200, "cut at \(cut)")
            } catch { failed += 1 }
        }
        #expect(failed > 10)
    }
}

extension PhotoStoreHEIFTests {
    @Test("the store refuses each hostile HEIC at upload, as not a photo, with the reason; nothing is kept")
    func storeRefuses() throws {
        let f = try StoreFixture()
        for (name, words) in [("hostile/grid-20000.heic", "makes a 20000x20000 image"), ("hostile/overlay-20000.heic", "makes a 20000x20000 image"),
                              ("hostile/coded-2048.heic", "is coded 2048x2048"), ("hostile/coded-in-band.heic", "is coded 2048x2048")] {
            guard case .failure(let failure) = save(try heifFixture(name), name: "x.heic", in: f.store) else {
                Issue.record("\(name) was saved")
                continue
            }
            #expect(failure.kind == .notAPhoto && failure.message.hasPrefix("not a well-formed HEIC: ") && failure.message.contains(words), "\(failure)")
        }
        #expect(f.visible.isEmpty && f.incoming.isEmpty)
    }
}
