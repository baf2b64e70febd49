import PTKProtocol
import PTKTestSupport
import PTKTestTags
import PTKVocabulary
import Testing

@testable import PTKStore

func validateHEIF(_ bytes: [UInt8], step: Int? = nil, totalSize: Int64? = -1) -> FormatError? {
    check(HEIFValidator(totalSize: totalSize == -1 ? Int64(bytes.count) : totalSize), bytes, step: step)
}

/// heif-enc's HEIC of a 300x200 picture (Tests/Fixtures/heif/make.sh).
let heic = readFile(fixturePath("heif/picture.heic")) ?? []

/// `bytes` with the 32-bit size of the box of `type` at the top level replaced by `size`.
func settingBoxSize(_ bytes: [UInt8], _ type: String, _ size: UInt32) -> [UInt8] {
    var out = bytes
    var at = 0
    while at + 8 <= out.count {
        let s = Int(out[at]) << 24 | Int(out[at + 1]) << 16 | Int(out[at + 2]) << 8 | Int(out[at + 3])
        if String(decoding: out[at + 4..<at + 8], as: UTF8.self) == type {
            out[at..<at + 4] =
                [UInt8(size >> 24), UInt8(size >> 16 & 0xFF), UInt8(size >> 8 & 0xFF), UInt8(size & 0xFF)][...]
            return out
        }
        at += max(s, 8)
    }
    Issue.record("no \(type) box")
    return out
}

@Suite("HEIF structural check", .tags(.unit))
struct HEIFValidatorTests {
    @Test("heif-enc's HEIC and the hostile files libheif must judge pass, whole, in pieces and one byte at a time")
    func wellFormedFilesPass() {
        #expect(heic.count > 1000)
        for file in [heic, heifGrid(rows: 256, columns: 256, width: 64), heifHugeItemLocations()] {
            for step in [nil, 1, 7, 4096] as [Int?] {
                #expect(validateHEIF(file, step: step) == nil, "step \(String(describing: step))")
            }
            // Without the announced size too.
            #expect(validateHEIF(file, totalSize: nil) == nil)
        }
    }

    @Test("what is not a HEIF is refused at once, with the reason")
    func notHEIF() {
        let cases: [([UInt8], String)] = [
            ([], "empty"),
            (makePNG(size: 1000), "no box type"),
            (isoBox("mdat", [1, 2, 3]) + heic, "does not start with a ftyp box"),
            (
                heifFileType(major: "isom", compatible: ["mp41", "avif"]) + Array(heic.dropFirst(28)),
                "are not HEIF ones"
            ),
            (isoBox("ftyp", [0x68, 0x65]), "too short for its brands"),
            (isoBox("ftyp", Array("heic".utf8) + [UInt8](repeating: 0x61, count: 5000)), "over the 4096-byte limit"),
            (heifFileType() + isoBox("mdat", [1, 2, 3]), "no meta box"),
            (heifFileType() + heifFileType() + Array(heic.dropFirst(28)), "a second ftyp box"),
        ]
        for (bytes, words) in cases {
            for step in [nil, 1] as [Int?] {
                let error = validateHEIF(bytes, step: step)
                #expect(error?.message.contains(words) == true, "\(words): \(String(describing: error))")
            }
        }
    }

    @Test("box sizes: past the end, shorter than the header, 64-bit, to the end of the file, a meta box over 16 MiB")
    func boxSizes() {
        // A meta box reaching past the end of the announced file.
        let past = settingBoxSize(heic, "meta", UInt32(heic.count))
        #expect(validateHEIF(past)?.message.contains("runs past the end") == true)
        #expect(validateHEIF(past, step: 1)?.message.contains("runs past the end") == true)
        // A size below the 8 bytes of the header itself.
        #expect(validateHEIF(settingBoxSize(heic, "meta", 4))?.message.contains("shorter than its header") == true)
        // 64-bit sizes are read: an mdat with size 1 and a 64-bit size after the type.
        let mdat64 =
            heifFileType() + isoFullBox("meta", []) + [0, 0, 0, 1] + Array("mdat".utf8) + [0, 0, 0, 0, 0, 0, 0, 20] + [
                1, 2, 3, 4,
            ]
        #expect(validateHEIF(mdat64, step: 1) == nil)
        #expect(validateHEIF(Array(mdat64.dropLast()))?.message.contains("runs past the end") == true)
        #expect(validateHEIF(Array(mdat64.dropLast()), totalSize: nil)?.message.contains("truncated") == true)
        // Size 0: the last box runs to the end of the file, which must then be known.
        let toEnd = heifFileType() + isoFullBox("meta", []) + [0, 0, 0, 0] + Array("mdat".utf8) + [9, 9, 9]
        #expect(validateHEIF(toEnd, step: 1) == nil)
        #expect(validateHEIF(toEnd, totalSize: nil)?.message.contains("unknown size") == true)
        // A meta box announcing 17 MiB is refused from its header, before any of it arrives.
        let bigMeta = heifFileType() + [0x01, 0x10, 0, 0] + Array("meta".utf8)
        #expect(validateHEIF(bigMeta, totalSize: 64 << 20)?.message.contains("over the 16 MiB limit") == true)
    }

    @Test("a 64-bit box size near Int64.max after the first box is refused as past the end, not an overflow")
    func hugeBoxSize() {
        // start + size overflowed Int64 (a trap: ptkd down) when the announced size was known.
        let huge =
            heifFileType() + [0, 0, 0, 1] + Array("mdat".utf8) + [0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]
        #expect(validateHEIF(huge, totalSize: 1 << 20)?.message.contains("runs past the end") == true)
        #expect(validateHEIF(huge, step: 1, totalSize: 1 << 20)?.message.contains("runs past the end") == true)
        #expect(validateHEIF(huge, totalSize: nil)?.message.contains("truncated") == true)
    }

    @Test("every truncation of a HEIC fails at the end, never passes")
    func truncations() {
        for cut in stride(from: 0, to: heic.count, by: 97) {
            #expect(validateHEIF(Array(heic[..<cut]), totalSize: nil) != nil, "cut at \(cut)")
        }
        // With the announced size, a truncated box fails as soon as its header arrives.
        #expect(validateHEIF(Array(heic[..<500]), totalSize: Int64(500))?.message.contains("runs past the end") == true)
    }

    @Test("the type of a HEIF: sniffed from its ftyp brand, named by .heic and .heif")
    func types() {
        #expect(PhotoType.sniff(heic) == .heic)
        #expect(PhotoType.sniff(heifFileType(major: "mif1", compatible: ["heic"])) == .heif)
        #expect(PhotoType.sniff(heifFileType(major: "avif", compatible: ["mif1"])) == nil)
        #expect(PhotoType(fileName: "IMG_0001.HEIC") == .heic)
        #expect(PhotoType(fileName: "IMG_0001.heif") == .heif)
        #expect(PhotoType(fileName: ".heic") == nil)
        #expect(PhotoType(mediaType: "IMAGE/HEIC") == .heic)
        // A HEIC keeps either ending as written; a name without one gets ".heic".
        #expect(FileName.sanitize("IMG_0001.HEIF", type: .heic) == "IMG_0001.HEIF")
        #expect(FileName.sanitize("IMG_0001", type: .heic) == "IMG_0001.heic")
        #expect(FileName.withSuffix("IMG_0001.HEIC", counter: 2, type: .heic) == "IMG_0001 (2).HEIC")
    }
}

@Suite("Folders an offer names (ptk's \"folders\" feature)", .tags(.unit))
struct OfferedFolderTests {
    @Test(
        "the receiver side: an offered name's folders below the layout's, made safe; '.', '..' and empty parts dropped; at most 4 levels in all"
    )
    func receiverFolders() {
        let cases: [(String, String, String)] = [
            ("", "2024/summer/IMG_1.jpg", "2024/summer"),
            ("alice", "2024/summer/IMG_1.jpg", "alice/2024/summer"),
            ("", "../../etc/passwd.png", "etc"),
            ("", "./a//b/../c.png", "a/b"),
            ("", ".hidden/ space/x.png", "hidden/space"),
            ("", "back\\slash/x.png", "back_slash"),
            ("", "ctl\u{1}x/x.png", "ctlx"),
            ("alice/2024-07-03", "a/b/c/d/e.png", "alice/2024-07-03/a/b"),
            ("", "IMG_1.jpg", ""),
            ("", String(repeating: "é", count: 150) + "/x.png", String(repeating: "é", count: 100)),
        ]
        for (layout, offered, folder) in cases {
            let made = StoreRequest.folder(layout, adding: offered)
            #expect(made == folder, "\(offered)")
            #expect(StoreRequest.isValidFolder(made), "\(made)")
        }
    }
}
