import PTKSystem
import PTKTestSupport
import PTKTestTags
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

@Suite("HEIF items checked before libheif sees the file (issue 54)", .tags(.unit))
struct HEIFCheckTests {
    @Test("every HEIC the tests keep passes, the hostile ones libheif itself must judge included")
    func fixturesPass() throws {
        for name in [
            "picture.heic", "rotated.heic", "portrait-exif.heic", "display-p3-icc.heic", "thumb-item.heic",
            "thumb-small.heic",
            "thumb-square.heic", "thumb-turned.heic", "thumb-both-turned.heic", "thumb-irot-exif6.heic",
            "hostile/ipco-walk16.heic", "hostile/spoof.heic", "hostile/thumb-data-garbage.heic",
            "hostile/thumb-ispe-60000x45000.heic",
        ] {
            let problem = heifCheck(try heifFixture(name))
            #expect(problem == nil, "\(name)")
        }
    }

    @Test(
        "a grid or an overlay whose description says another size than its ispe, a coded image larger than its ispe (in hvcC or in its data): refused with both sizes"
    )
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

    @Test(
        "what libheif 1.15 reads once and this check read otherwise is refused: a second ispe, an item placed or listed twice, a grid's images named twice, an auxiliary image larger than its image (issue 54, second image audit)"
    )
    func declaredTwiceOtherwise() throws {
        let cases = [
            // libheif takes the last ispe (64x64) as the handle's size and decodes the grid's 7500x7500.
            ("hostile/ispe2-grid-7500.heic", "item 1 (the primary image) has 2 ispe properties (one is allowed)"),
            // libheif reads the first place (a 2048x2048 picture), a dictionary kept the last (64x64).
            ("hostile/iloc-twice.heic", "iloc places item 1 twice"),
            ("hostile/ipma-twice.heic", "ipma lists item 1 twice"),
            ("hostile/iref-twice.heic", "iref: item 1 refers to others by dimg twice"),
            // Cropped to 64x64 by a clap, libheif takes it as the 64x64 image's alpha and decodes 2048x2048.
            ("hostile/alpha-clap.heic", "auxiliary image 2 of 2048x2048 is larger than its image 1 of 64x64"),
        ]
        for (name, words) in cases { #expect(heifCheck(try heifFixture(name)) == words, "\(name)") }
    }

    @Test(
        "an image's NAL units are read as libheif hands them to libde265: every one (an empty one does not end the walk), with 4-byte lengths whatever hvcC says, by their own type whatever hvcC's arrays say; one picture"
    )
    func unitsAsTheDecoderGetsThem() throws {
        let cases = [
            ("hostile/nal-zero.heic", "HEVC item 1 holds a NAL unit of 0 bytes, too short for its header"),
            ("hostile/nal-length2.heic", "HEVC item 1 is coded 2048x2048, its ispe says 64x64"),
            ("hostile/hvcC-array-type.heic", "HEVC item 1 is coded 2048x2048, its ispe says 64x64"),
            ("hostile/pictures-2.heic", "HEVC item 1 holds 2 pictures (an image is one)"),
        ]
        for (name, words) in cases { #expect(heifCheck(try heifFixture(name)) == words, "\(name)") }
        // A length running past the data: libheif gives up on the image before decoding any of
        // it, and the walk stops there too (the file is libheif's to judge, as a damaged thumbnail item is).
        var cut = try heifFixture("picture.heic")
        let mdat = try #require((0..<cut.count - 4).last { cut[$0..<$0 + 4].elementsEqual("mdat".utf8) })
        cut[mdat + 4] = 0x7F
        #expect(heifCheck(cut) == nil)
    }

    @Test(
        "the report: the most pixels the primary image's decode declares, whatever a clap crops it to; a picture in more slice segments than a thumbnail is decoded from is kept, with the reason"
    )
    func report() throws {
        func report(_ name: String) throws -> HEIFCheck.Report {
            let bytes = try heifFixture(name)
            return try HEIFCheck.check(size: Int64(bytes.count)) { (offset, count) throws(FormatError) -> [UInt8] in
                Array(bytes[Int(offset)..<Int(offset) + count])
            }
        }
        #expect(try report("hostile/clap-grid-7500.heic") == HEIFCheck.Report(pixels: 7500 * 7500, decodeProblem: nil))
        // heif-enc codes the 300x200 picture 304x200.
        #expect(try report("picture.heic") == HEIFCheck.Report(pixels: 304 * 200, decodeProblem: nil))
        #expect(
            try report("hostile/slices-17.heic").decodeProblem
                == "HEVC item 1 is coded in 17 slice segments, over the 16 a thumbnail is decoded from (each may cost a decode of the whole picture)"
        )
    }

    @Test("tiles, items, references, boxes: each count is bounded before libheif opens the file")
    func counts() {
        let cases: [([UInt8], String)] = [
            // 33 x 32 tiles: fewer items and references than their limits, more tiles.
            (heifGrid(rows: 33, columns: 32, width: 64), "grid item 1 of 33 x 32 tiles is over the 1024-tile limit"),
            // The audit's 12,996 tiles (114 x 114): over the references first.
            (heifGrid(rows: 114, columns: 114, width: 64), "over 4096 item references"),
            (heifHugeItemLocations(), "iloc places 65535 items, over the 2048-item limit"),
            (
                heifFileType() + isoFullBox("meta", []) + (0..<300).flatMap { _ in isoBox("free", []) },
                "over 256 boxes at the top level"
            ),
            (
                heifFileType() + isoFullBox("meta", (0..<20_000).flatMap { _ in isoBox("free", []) }),
                "over 16384 boxes in the meta box"
            ),
            (
                heifFileType() + isoFullBox("meta", isoFullBox("iinf", [0x0B, 0xB8])),
                "3000 items is over the 2048-item limit"
            ),
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
        let size =
            Int(picture[at - 4]) << 24 | Int(picture[at - 3]) << 16 | Int(picture[at - 2]) << 8 | Int(picture[at - 1])
        let configuration = try HEVCPictureSize.configuration(picture[(at + 4)..<(at - 4 + size)])
        let sps = configuration.units.filter { HEVCUnit($0).type == HEVCUnit.spsType }
        #expect(configuration.lengthSize == 4 && configuration.units.count == 3 && sps.count == 1)
        let coded = try HEVCPictureSize.of(sps: sps[0])
        // heif-enc codes the 300x200 picture at 304x200 (a multiple of 8), cropped back.
        #expect(coded.width == 304 && coded.height == 200, "\(coded)")
        // Cut short: an error, or the same size once the size fields are in; never a crash.
        var failed = 0
        for cut in 0..<sps[0].count {
            do {
                let size = try HEVCPictureSize.of(sps: sps[0].prefix(cut))
                #expect(size.width == 304 && size.height == 200, "cut at \(cut)")
            } catch { failed += 1 }
        }
        #expect(failed > 10)
    }
}

extension HEIFCheckTests {
    @Test(
        "a NAL unit is unescaped from its first byte, as libde265 does: a header whose second byte is zero counts toward an emulation prevention byte"
    )
    func unescapedFromTheHeader() throws {
        let picture = try heifFixture("picture.heic")
        let at = try #require((0..<picture.count - 4).first { picture[$0..<$0 + 4].elementsEqual("hvcC".utf8) })
        let size =
            Int(picture[at - 4]) << 24 | Int(picture[at - 3]) << 16 | Int(picture[at - 2]) << 8 | Int(picture[at - 1])
        let sps = try #require(
            try HEVCPictureSize.configuration(picture[(at + 4)..<(at - 4 + size)]).units.first {
                HEVCUnit($0).type == HEVCUnit.spsType
            })
        // Header 42 00, then 00 03 and the rest of the payload: libde265 takes the 03 out (zeros
        // counted from the header on) and reads the SPS with its first byte zero (the temporal
        // nesting flag cleared), 304x200. Counting from the payload on keeps the 03.
        let nal: [UInt8] = [0x42, 0x00, 0x00, 0x03] + Array(sps.dropFirst(3))
        let coded = try HEVCPictureSize.of(sps: nal[...])
        #expect(coded.width == 304 && coded.height == 200, "\(coded)")
        #expect(HEVCUnit(nal[...]).bytes == [0x42, 0x00, 0x00] + HEVCUnit(sps).bytes.dropFirst(3))
    }
}

extension PhotoStoreHEIFTests {
    @Test("the store refuses each hostile HEIC at upload, as not a photo, with the reason; nothing is kept")
    func storeRefuses() throws {
        let f = try StoreFixture()
        for (name, words) in [
            ("hostile/grid-20000.heic", "makes a 20000x20000 image"),
            ("hostile/overlay-20000.heic", "makes a 20000x20000 image"),
            ("hostile/coded-2048.heic", "is coded 2048x2048"), ("hostile/coded-in-band.heic", "is coded 2048x2048"),
        ] {
            guard case .failure(let failure) = save(try heifFixture(name), name: "x.heic", in: f.store) else {
                Issue.record("\(name) was saved")
                continue
            }
            #expect(
                failure.kind == .notAPhoto && failure.message.hasPrefix("not a well-formed HEIC: ")
                    && failure.message.contains(words), "\(failure)")
        }
        #expect(f.visible.isEmpty && f.incoming.isEmpty)
    }

    @Test(
        "the second image audit's HEICs: refused at upload where no valid file is so (declared twice, empty units, two pictures); a picture in many slice segments, valid, is kept (issue 54)"
    )
    func storeRefusesDeclaredTwice() throws {
        let f = try StoreFixture()
        for (name, words) in [
            ("hostile/ispe2-grid-7500.heic", "has 2 ispe properties"),
            ("hostile/iloc-twice.heic", "iloc places item 1 twice"),
            ("hostile/alpha-clap.heic", "is larger than its image"), ("hostile/nal-zero.heic", "a NAL unit of 0 bytes"),
            ("hostile/nal-length2.heic", "is coded 2048x2048"), ("hostile/hvcC-array-type.heic", "is coded 2048x2048"),
            ("hostile/pictures-2.heic", "holds 2 pictures"),
        ] {
            guard case .failure(let failure) = save(try heifFixture(name), name: "x.heic", in: f.store) else {
                Issue.record("\(name) was saved")
                continue
            }
            #expect(
                failure.kind == .notAPhoto && failure.message.hasPrefix("not a well-formed HEIC: ")
                    && failure.message.contains(words), "\(failure)")
        }
        #expect(f.visible.isEmpty && f.incoming.isEmpty)
        // The thumbnailer refuses to decode it (PTKLibrary's HEIFFindingsTests); the photo is kept.
        #expect(
            try save(try heifFixture("hostile/slices-17.heic"), name: "slices.heic", in: f.store).get().name
                == "slices.heic")
        #expect(f.visible == ["slices.heic"])
    }

    @Test(
        "an overlay naming one image more than once is refused, at upload too (libheif decodes each naming: one layer named 1,024 times is 1,024 decodes); distinct layers are kept, their pixels together counted as the decode (issue 54, third audit)"
    )
    func overlayLayersEachDecoded() throws {
        #expect(
            heifCheck(try heifFixture("hostile/overlay-repeat.heic"))
                == "overlay item 1 names the same image more than once")
        let bytes = try heifFixture("hostile/overlay-layers.heic")
        let report = try HEIFCheck.check(size: Int64(bytes.count)) { (offset, count) throws(FormatError) -> [UInt8] in
            Array(bytes[Int(offset)..<Int(offset) + count])
        }
        #expect(report == HEIFCheck.Report(pixels: 4 * 64 * 64, decodeProblem: nil))
        let f = try StoreFixture()
        guard
            case .failure(let failure) = save(
                try heifFixture("hostile/overlay-repeat.heic"), name: "x.heic", in: f.store)
        else {
            Issue.record("overlay-repeat.heic was saved")
            return
        }
        #expect(
            failure.kind == .notAPhoto
                && failure.message == "not a well-formed HEIC: overlay item 1 names the same image more than once")
        #expect(f.visible.isEmpty && f.incoming.isEmpty)
        #expect(try save(bytes, name: "layers.heic", in: f.store).get().name == "layers.heic")
    }
}
