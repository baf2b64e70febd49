import PTKTestSupport
import PTKTestTags
import PTKVocabulary
import Testing

@testable import PTKStore

func validateVideo(_ bytes: [UInt8], step: Int? = nil, totalSize: Int64? = -1) -> FormatError? {
    check(MP4Validator(totalSize: totalSize == -1 ? Int64(bytes.count) : totalSize), bytes, step: step)
}

/// `MP4Check` of bytes in memory: its report, or why it refused them.
func examineVideo(_ bytes: [UInt8]) -> Result<MP4Check.Report, FormatError> {
    do throws(FormatError) {
        return .success(
            try MP4Check.check(size: Int64(bytes.count)) { (offset, count) throws(FormatError) -> [UInt8] in
                guard offset >= 0, Int(offset) + count <= bytes.count else { throw FormatError("read past the end") }
                return Array(bytes[Int(offset)..<Int(offset) + count])
            })
    } catch {
        return .failure(error)
    }
}

/// Why `MP4Check` refused `bytes` ("" when it did not).
func videoRefusal(_ bytes: [UInt8]) -> String {
    if case .failure(let e) = examineVideo(bytes) { return e.message }
    return ""
}

@Suite("MP4 and MOV structural checks", .tags(.unit))
struct MP4CheckTests {
    static var movies: [(String, [UInt8])] {
        var fastStart = MP4Movie()
        fastStart.moovFirst = true
        var mov = MP4Movie()
        mov.brand = "qt  "
        var wide = MP4Movie()
        wide.tracks[0].wideOffsets = true
        var twoTracks = MP4Movie()
        var sound = MP4Track()
        sound.handler = "soun"
        sound.codec = "mp4a"
        twoTracks.tracks.insert(sound, at: 0)
        return [
            ("MP4, moov last", MP4Movie().bytes()), ("MP4, moov first", fastStart.bytes()), ("MOV", mov.bytes()),
            ("co64 offsets", wide.bytes()), ("sound then video", twoTracks.bytes()),
        ]
    }

    @Test("well-formed movies pass the streaming check whole, in pieces, one byte at a time and of unknown size")
    func wellFormedPass() {
        for (what, bytes) in Self.movies {
            for step in [nil, 1, 7, 4096] as [Int?] {
                #expect(validateVideo(bytes, step: step) == nil, "\(what), step \(String(describing: step))")
            }
            #expect(validateVideo(bytes, totalSize: nil) == nil, "\(what)")
            #expect(videoRefusal(bytes) == "", "\(what)")
        }
    }

    @Test("the report gives the movie's facts: tracks, duration, size as shown, codec, frame rate, time made")
    func facts() throws {
        var movie = MP4Movie()
        var sound = MP4Track()
        sound.handler = "soun"
        sound.codec = "mp4a"
        movie.tracks.insert(sound, at: 0)
        movie.tracks[1].codec = "hvc1"
        movie.tracks[1].width = 3840
        movie.tracks[1].height = 2160
        let r = try examineVideo(movie.bytes()).get()
        #expect(r.tracks == 2)
        #expect(r.duration == 2.0)
        #expect(r.width == 3840 && r.height == 2160 && r.rotation == 0)
        #expect(r.codec == "hvc1")
        #expect(abs((r.frameRate ?? 0) - 29.97) < 0.01, "\(String(describing: r.frameRate))")
        // 3,786,912,000 s after 1904 is 2024-01-01T00:00:00Z.
        #expect(r.created == 1_704_067_200)
    }

    @Test(
        "a track's matrix turns its size as shown",
        arguments: [(0, 320, 240), (90, 240, 320), (180, 320, 240), (270, 240, 320)])
    func rotation(degrees: Int, width: Int, height: Int) throws {
        var movie = MP4Movie()
        movie.tracks[0].rotation = degrees
        let r = try examineVideo(movie.bytes()).get()
        #expect(r.rotation == degrees && r.width == width && r.height == height, "\(r)")
    }

    @Test("what is not a video, or is cut short, is refused by the streaming check with the reason")
    func notVideos() {
        let good = MP4Movie().bytes()
        var heicBrand = MP4Movie()
        heicBrand.brand = "heic"
        let ftyp = Array(good.prefix(24))
        let cases: [([UInt8], String)] = [
            ([], "empty"),
            (makePNG(size: 1000), "no box type"),
            (isoBox("abcd", [1, 2, 3]) + good, "starts with a abcd box"),
            (
                isoBox("ftyp", Array("heic".utf8) + [0, 0, 0, 0] + Array("mif1".utf8)) + Array(good.dropFirst(24)),
                "are not MP4"
            ),
            (ftyp + isoBox("mdat", [1, 2, 3]), "no moov box"),
            (ftyp + isoBox("moov", []), "no mdat box"),
            (good + isoBox("moov", []), "a second moov box"),
            (ftyp + ftyp, "a second ftyp box"),
            (Array(good.dropLast(3)), "runs past the end"),
            (isoBox("ftyp", [0x69, 0x73]), "too short for its brands"),
            (isoBox("ftyp", Array("isom".utf8) + [UInt8](repeating: 0x61, count: 5000)), "over the 4096-byte limit"),
            (ftyp + [0, 0, 0, 4] + Array("mdat".utf8), "shorter than its header"),
        ]
        for (bytes, words) in cases {
            let error = validateVideo(bytes)
            #expect(error?.message.contains(words) == true, "\(words): \(String(describing: error))")
            #expect(validateVideo(bytes, step: 1)?.message == error?.message, "\(words) one byte at a time")
        }
        // Cut short with the size unknown: the stream ends inside a box.
        #expect(validateVideo(Array(good.dropLast(3)), totalSize: nil)?.message == "truncated inside a box")
    }

    @Test("a 1 GB mdat declaring 1 TB, a moov over 64 MiB and a million tiny boxes are refused at their headers")
    func hugeDeclarations() {
        let ftyp = Array(MP4Movie().bytes().prefix(24))
        // A 64-bit size of 1 TB in a file announced at 1 GB: refused at the 16th byte of the header.
        let terabyte: [UInt8] = [0, 0, 0, 1] + Array("mdat".utf8) + [0, 0, 0x01, 0, 0, 0, 0, 0]
        var v = MP4Validator(totalSize: 1 << 30)
        #expect(throws: FormatError.self) { try v.feed(ftyp + terabyte) }
        let moov: [UInt8] = [0, 0, 0, 1] + Array("moov".utf8) + [0, 0, 0, 0, 0x04, 0, 0, 16]
        #expect(validateVideo(ftyp + moov, totalSize: 1 << 30)?.message.contains("over the 64 MiB limit") == true)
        // A million empty boxes: refused at box 65,537, having cost a pass over 512 KiB.
        let tiny = [UInt8]([0, 0, 0, 8] + Array("free".utf8))
        let many = ftyp + [UInt8]((0..<1_000_000).flatMap { _ in tiny })
        #expect(validateVideo(many, step: 65536)?.message == "over 65536 boxes at the top level")
        #expect(videoRefusal(many) == "over 65536 boxes at the top level")
    }

    @Test("the moov walk refuses chunks outside the file, lying entry counts, 1,000 tracks, deep nesting, no header")
    func hostileMovies() {
        func movie(_ change: (inout MP4Movie) -> Void) -> [UInt8] {
            var m = MP4Movie()
            change(&m)
            return m.bytes()
        }
        let outside = movie { $0.tracks[0].chunkOffsetDelta = 1 << 20 }
        #expect(videoRefusal(outside).contains("past the end of the"), "\(videoRefusal(outside))")
        let outside64 = movie {
            $0.tracks[0].wideOffsets = true
            $0.tracks[0].chunkOffsetDelta = 1 << 40
        }
        #expect(videoRefusal(outside64).contains("past the end of the"))
        let lying = movie { $0.tracks[0].declaredChunks = 1_000_000_000 }
        #expect(videoRefusal(lying).contains("declares 1000000000 entries"), "\(videoRefusal(lying))")
        let thousand = movie { $0.tracks = Array(repeating: MP4Track(), count: 1000) }
        #expect(validateVideo(thousand) == nil)
        #expect(videoRefusal(thousand) == "over 64 tracks")
        var nested = isoBox("edts", [])
        for _ in 0..<20 { nested = isoBox("edts", nested) }
        #expect(videoRefusal(movie { $0.extraMovieBoxes = nested }).contains("nested over 16 deep"))
        let noTimescale = movie { $0.timescale = 0 }
        #expect(videoRefusal(noTimescale) == "the mvhd box's time scale is 0")
        let noTracks = movie { $0.tracks = [] }
        #expect(videoRefusal(noTracks) == "no track")
        var noHeader = MP4Movie().bytes()
        if let at = noHeader.indices.first(where: {
            noHeader[$0..<min($0 + 4, noHeader.count)].elementsEqual("mvhd".utf8)
        }) {
            noHeader.replaceSubrange(at..<at + 4, with: Array("xxxx".utf8))
        }
        #expect(videoRefusal(noHeader) == "no mvhd box (the movie's header)")
        let strayBox = movie { $0.extraMovieBoxes = [0, 0, 0, 200] + Array("free".utf8) }
        #expect(videoRefusal(strayBox).contains("does not fit in moov"))
        // A box that claims to be inside a track, elsewhere, is passed over, not trusted.
        let looseMedia = movie { $0.extraMovieBoxes = isoBox("mdia", isoFullBox("hdlr", [1])) }
        #expect(videoRefusal(looseMedia) == "")
    }

    @Test(
        "chunk offsets are bounded in all the tracks together (the attack's 16.5 million in a 63 MiB stco cost seconds a pass); the length is the video track's when mvhd says otherwise by over a second; box types in messages are printable"
    )
    func chunksLengthAndNames() {
        var many = MP4Movie()
        many.tracks[0].chunks = 2_000_000
        many.tracks.append(many.tracks[0])
        #expect(videoRefusal(many.bytes()) == "", "4,000,000 chunks in all pass")
        many.tracks[1].chunks = 2_000_001
        #expect(
            videoRefusal(many.bytes()) == "over 4000000 chunks in the movie's tracks (track 2's stco has 2000001)",
            "\(videoRefusal(many.bytes()))")
        // mvhd says ten years at one tick a second; the track's 60 samples of 1001/30000 s play 2.002 s.
        var long = MP4Movie()
        (long.timescale, long.duration) = (1, 315_360_000)
        #expect(abs(((try? examineVideo(long.bytes()).get())?.duration ?? 0) - 2.002) < 0.0001)
        // Within a second of the track's: mvhd's own (a sound track may run a little longer).
        var close = MP4Movie()
        close.duration = 2500
        #expect((try? examineVideo(close.bytes()).get())?.duration == 2.5)
        var named = MP4Movie()
        named.extraMovieBoxes = [0, 0, 0, 200, 0x1B, 0x5B, 0x33, 0x31]
        #expect(
            videoRefusal(named.bytes()) == "?[31 box of 200 bytes does not fit in moov",
            "\(videoRefusal(named.bytes()))")
    }

    @Test(
        "sample counts are bounded (the attack's 89 million fixed-size samples in 600 bytes: FFmpeg built a 2.1 GB index) and must agree between stsz and stts; PCM sound may declare as many as the file has bytes"
    )
    func sampleCounts() {
        var bomb = MP4Movie()
        bomb.tracks[0].samples = 89_000_000
        bomb.tracks[0].sampleDelta = 1
        let bytes = bomb.bytes()
        #expect(bytes.count < 2048)
        #expect(validateVideo(bytes) == nil)
        #expect(videoRefusal(bytes) == "track 1 declares 89000000 samples, over 4000000", "\(videoRefusal(bytes))")
        // Within the count bound, but more one-byte samples than the file has bytes.
        var small = MP4Movie()
        small.tracks[0].samples = 100_000
        #expect(videoRefusal(small.bytes()).contains("more than the"), "\(videoRefusal(small.bytes()))")
        // Sound of a fixed sample size: as many as the file holds, over the video bound too.
        var pcm = MP4Movie()
        var sound = MP4Track()
        sound.handler = "soun"
        sound.codec = "sowt"
        sound.samples = 5_000_000
        pcm.tracks.append(sound)
        pcm.data = [UInt8](repeating: 0, count: 5_000_000)
        #expect(videoRefusal(pcm.bytes()) == "")
        // stsz and stts disagree: FFmpeg sizes its index by the first.
        var movie = MP4Movie().bytes()
        let at = movie.indices.first { movie[$0..<min($0 + 4, movie.count)].elementsEqual("stsz".utf8) } ?? 0
        movie.replaceSubrange(at + 12..<at + 16, with: [0, 0, 0, 61])
        #expect(videoRefusal(movie) == "track 1's stsz declares 61 samples, its stts 60", "\(videoRefusal(movie))")
    }

    @Test("the first bytes say the type: MP4 brands, QuickTime's, and an old QuickTime file's first box")
    func sniffing() {
        var mov = MP4Movie()
        mov.brand = "qt  "
        var m4v = MP4Movie()
        m4v.brand = "M4V "
        #expect(PhotoType.sniff(MP4Movie().bytes()) == .mp4)
        #expect(PhotoType.sniff(m4v.bytes()) == .mp4)
        #expect(PhotoType.sniff(mov.bytes()) == .mov)
        #expect(PhotoType.sniff(isoBox("wide", []) + isoBox("mdat", [1])) == .mov)
        #expect(PhotoType.sniff(heifFileType()) == .heic)
        #expect(PhotoType.sniff(Array("hello, free world".utf8)) == nil)
        #expect(PhotoType(fileName: "clip.MOV") == .mov && PhotoType(fileName: "clip.m4v") == .mp4)
        #expect(PhotoType.mov.fittedName("IMG_1.png") == "IMG_1.mov")
        #expect(PhotoType.mp4.fittedName("clip") == "clip.mp4")
    }
}
