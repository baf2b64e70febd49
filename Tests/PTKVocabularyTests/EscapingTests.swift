import PTKTestTags
import PTKVocabulary
import Testing

@Suite("Escapers", .tags(.unit))
struct EscapingTests {
    @Test(
        "JSON string literals escape quotes, backslashes and control characters",
        arguments: [
            ("Living Room", #""Living Room""#), ("a\"b", #""a\"b""#), ("back\\slash", #""back\\slash""#),
            ("line\nnext\t", #""line\nnext\t""#), ("\u{1}", #""\u0001""#), ("写真", #""写真""#),
        ])
    func json(text: String, literal: String) {
        #expect(jsonString(text) == literal)
    }

    @Test("URL segments and HTML text")
    func urlAndHTML() {
        #expect(percentEncode("ä b/#?.png") == "%C3%A4%20b%2F%23%3F.png")
        #expect(escapeHTML("<'&\">") == "&lt;&#39;&amp;&quot;&gt;")
    }
}
