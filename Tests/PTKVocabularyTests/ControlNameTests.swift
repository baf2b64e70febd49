import PTKTestTags
import Testing

@testable import PTKVocabulary

@Suite("Final names keep no control of any kind", .tags(.unit))
struct ControlNameTests {
    @Test(
        "line and paragraph separators, bidi controls and U+FEFF go from names and folders, as C0 and C1 do",
        arguments: [
            "q\u{2028}x.png", "r\u{2029}.png", "gnp\u{202E}.exe.png", "a\u{2066}b\u{2069}.png", "\u{FEFF}bom.png",
            "x\u{200E}\u{200F}\u{061C}.png",
            "c1\u{9B}2J\u{85}.png", "esc\u{1B}[2J.png",
        ])
    func dropped(_ name: String) {
        let saved = FileName.sanitize(name)
        let folder = FileName.folderComponent(name)
        for text in [saved, folder] {
            #expect(
                !text.unicodeScalars.contains { s in
                    s.value < 0x20 || (0x7F...0x9F).contains(s.value)
                        || [0x2028, 0x2029, 0x061C, 0x200E, 0x200F, 0xFEFF].contains(s.value)
                        || (0x202A...0x202E).contains(s.value) || (0x2066...0x2069).contains(s.value)
                }, "\(text.unicodeScalars.map { String($0.value, radix: 16) })")
        }
    }

    @Test("joiners that make emoji and scripts are kept: ZWJ and ZWNJ")
    func joinersKept() {
        #expect(
            FileName.sanitize("family \u{1F468}\u{200D}\u{1F469}\u{200D}\u{1F467}.png")
                == "family \u{1F468}\u{200D}\u{1F469}\u{200D}\u{1F467}.png")
        #expect(FileName.sanitize("\u{645}\u{200C}\u{6CC}.png") == "\u{645}\u{200C}\u{6CC}.png")
    }
}
