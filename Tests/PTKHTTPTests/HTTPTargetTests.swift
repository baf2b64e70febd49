import PTKHTTP
import PTKTestTags
import Testing

/// A request target's path and query split at every "?", "&" and "=" scalar, even one that a
/// combining mark after it joins into a single Character.
@Suite("Request targets split by scalars", .tags(.unit))
struct HTTPTargetTests {
    @Test("the path, the query's fields and a form's fields are cut at each separator scalar")
    func marks() {
        var head = HTTPHead()
        head.target = "/api/localsend/v2/upload?\u{301}sessionId=s&\u{301}fileId=f&token=\u{301}t"
        #expect(head.path == "/api/localsend/v2/upload")
        #expect(head.query == ["\u{301}sessionId": "s", "\u{301}fileId": "f", "token": "\u{301}t"])
        #expect(
            urlEncodedFields("a=1&\u{301}b=2&c=\u{600}&\u{600}=d&e=\u{301}") == [
                "a": "1", "\u{301}b": "2", "c": "\u{600}", "\u{600}": "d", "e": "\u{301}",
            ])
    }
}
