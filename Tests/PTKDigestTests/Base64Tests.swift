import PTKDigest
import PTKTestTags
import Testing

@Suite("Base64 decoding (RFC 4648 §4, padded)", .tags(.unit))
struct Base64Tests {
    @Test(
        "the RFC 4648 test vectors decode to their text",
        arguments: [
            ("", ""), ("Zg==", "f"), ("Zm8=", "fo"), ("Zm9v", "foo"), ("Zm9vYg==", "foob"), ("Zm9vYmE=", "fooba"),
            ("Zm9vYmFy", "foobar"),
        ])
    func vectors(encoded: String, text: String) {
        #expect(base64Decoded(encoded) == Array(text.utf8))
    }

    @Test("every byte value and both alphabet extras (+ and /) come through")
    func allBytes() {
        #expect(base64Decoded("AAECAwQFBgcICQoLDA0ODw==") == (0...15).map { UInt8($0) })
        #expect(base64Decoded("+/+/") == [0xFB, 0xFF, 0xBF])
        #expect(base64Decoded("////") == [0xFF, 0xFF, 0xFF])
        #expect(base64Decoded("AAAA") == [0, 0, 0])
        #expect(base64Decoded("/zph") == [0xFF, 0x3A, 0x61])
    }

    @Test(
        "text that is not whole groups of four is nil: missing or partial padding",
        arguments: [
            "Z", "Zg", "Zg=", "Zm8", "Zm9vY", "Zm9vYg", "Zm9vYg=", "Zm9vYmFyZ",
        ])
    func wrongLength(text: String) {
        #expect(base64Decoded(text) == nil)
    }

    @Test(
        "more than two padding characters, or padding anywhere but the end, is nil",
        arguments: [
            "====", "Z===", "=Zg=", "Zg=a", "Z=g=", "Zg==Zg==", "Zm9v====", "Zm8=Zm9v", "=AAA",
        ])
    func badPadding(text: String) {
        #expect(base64Decoded(text) == nil)
    }

    @Test(
        "characters outside the alphabet are nil: URL-safe, spaces, line breaks, NUL, non-ASCII",
        arguments: [
            "Zm-_", "Zm9v Zm9v", "Zm9v\r\nZm9v", " Zm9v", "Zm9v\n", "Zm\u{0}v", "Zm9\u{E9}", "Zm.v", "Zm9v\t", "Zg%3D",
        ])
    func badCharacters(text: String) {
        #expect(base64Decoded(text) == nil)
    }

    @Test("a long input decodes, up to the 1 MiB limit; beyond it is nil")
    func lengths() {
        let atLimit = String(repeating: "QUFB", count: (1 << 20) / 4)
        #expect(base64Decoded(atLimit)?.count == (1 << 20) / 4 * 3)
        #expect(base64Decoded(atLimit)?.allSatisfy { $0 == UInt8(ascii: "A") } == true)
        #expect(base64Decoded(atLimit + "QUFB") == nil)
    }
}
