import PTKDAV
import PTKTestTags
import Testing

@Suite("Depth, Timeout and Overwrite headers", .tags(.unit))
struct SmallHeaderTests {
    @Test(
        "Depth values",
        arguments: [
            ("0", DAVDepth.zero), ("1", .one), ("infinity", .infinity), ("Infinity", .infinity), (" 1 ", .one),
        ] as [(String, DAVDepth)])
    func depth(header: String, depth: DAVDepth) {
        #expect(DAVDepth.parse(header, default: .zero) == depth)
    }

    @Test("no Depth is the method's default; anything else is invalid")
    func depthDefaultAndInvalid() {
        #expect(DAVDepth.parse(nil, default: .infinity) == .infinity)
        #expect(DAVDepth.parse(nil, default: .zero) == .zero)
        for bad in ["2", "", "inf", "-1", "0,1", "infinity1", "\u{212A}"] {
            #expect(DAVDepth.parse(bad, default: .zero) == nil, "\(bad)")
        }
        #expect(DAVDepth.infinity.headerValue == "infinity")
    }

    @Test(
        "Timeout: first acceptable entry, clamped to the maximum",
        arguments: [
            (nil, 600), ("Second-100", 100), ("second-4100000000", 3600), ("Infinite, Second-4100000000", 3600),
            ("Second-99999999999999999999999", 3600), ("Second-0", 1), ("Extra, Second-30", 30), ("garbage", 600),
            ("Second-", 600), ("Second-12a, Second-40", 40), ("  Second-5  ", 5), ("Second--5", 600),
        ] as [(String?, Int)])
    func timeout(header: String?, seconds: Int) {
        #expect(DAVTimeout.seconds(header) == seconds)
    }

    @Test("Timeout's default and maximum are the caller's")
    func timeoutBounds() {
        #expect(DAVTimeout.seconds(nil, default: 30, maximum: 60) == 30)
        #expect(DAVTimeout.seconds("Infinite", default: 30, maximum: 60) == 60)
        #expect(DAVTimeout.seconds(nil, default: 900, maximum: 60) == 60)
        #expect(DAVTimeout.headerValue(600) == "Second-600")
    }

    @Test("Overwrite: absent is T, T and F, nothing else")
    func overwrite() {
        #expect(DAVOverwrite.parse(nil) == true)
        #expect(DAVOverwrite.parse("T") == true)
        #expect(DAVOverwrite.parse("F") == false)
        #expect(DAVOverwrite.parse(" f ") == false)
        for bad in ["", "true", "FF", "0", "Y"] { #expect(DAVOverwrite.parse(bad) == nil, "\(bad)") }
    }
}

private let t1 = "urn:uuid:181d4fae-7d8c-11d0-a765-00a0c91e6bf2"
private let t2 = "urn:uuid:58f202ac-22cf-11d1-b12d-002035b29092"

private func tok(_ t: String, not: Bool = false) -> IfHeader.Condition { .init(not: not, kind: .token(t)) }
private func tag(_ e: String, not: Bool = false) -> IfHeader.Condition { .init(not: not, kind: .etag(e)) }

@Suite("If header (RFC 4918 10.4)", .tags(.unit))
struct IfHeaderTests {
    @Test("10.4.6: two untagged lists with tokens and entity tags")
    func example6() {
        let h = IfHeader.parse(#"(<\#(t1)> ["I am an ETag"]) (["I am another ETag"])"#)
        #expect(
            h
                == IfHeader(lists: [
                    .init(resource: nil, conditions: [tok(t1), tag(#""I am an ETag""#)]),
                    .init(resource: nil, conditions: [tag(#""I am another ETag""#)]),
                ]))
        #expect(h?.allTokens == [t1])
    }

    @Test("10.4.7: Not, and a negated token is not submitted")
    func example7() {
        let h = IfHeader.parse("(Not <\(t1)> <\(t2)>)")
        #expect(h == IfHeader(lists: [.init(resource: nil, conditions: [tok(t1, not: true), tok(t2)])]))
        #expect(h?.allTokens == [t2])
    }

    @Test("10.4.8: (Not <DAV:no-lock>) makes a list that is always true")
    func example8() throws {
        let h = try #require(IfHeader.parse("(<\(t1)>) (Not <DAV:no-lock>)"))
        #expect(h.evaluate(requestResource: "/a", resolve: { $0 }, state: { _ in ([], nil) }))
        #expect(h.allTokens == [t1])
        let only = try #require(IfHeader.parse("(<DAV:no-lock>)"))
        #expect(!only.evaluate(requestResource: "/a", resolve: { $0 }, state: { _ in ([t1], "\"x\"") }))
    }

    @Test("10.4.9 and 10.4.10: tagged lists keep their resource for each list that follows")
    func tagged() {
        let h = IfHeader.parse(
            #"</resource1> (<\#(t1)> [W/"A weak ETag"]) (["strong ETag"]) <http://www.example.com/specs/> (<\#(t2)>)"#)
        #expect(
            h
                == IfHeader(lists: [
                    .init(resource: "/resource1", conditions: [tok(t1), tag(#"W/"A weak ETag""#)]),
                    .init(resource: "/resource1", conditions: [tag(#""strong ETag""#)]),
                    .init(resource: "http://www.example.com/specs/", conditions: [tok(t2)]),
                ]))
    }

    @Test("10.4.11 and 10.4.12: entity tags alone")
    func etags() {
        #expect(
            IfHeader.parse(#"(["4217"])"#) == IfHeader(lists: [.init(resource: nil, conditions: [tag(#""4217""#)])]))
        #expect(
            IfHeader.parse(#"(Not ["4217"])"#)
                == IfHeader(lists: [.init(resource: nil, conditions: [tag(#""4217""#, not: true)])]))
    }

    @Test("whitespace: none between lists, tabs, lower-case not")
    func whitespace() {
        #expect(IfHeader.parse("(<a:b>)(<c:d>)")?.lists.count == 2)
        #expect(IfHeader.parse("\t( not\t<a:b> )")?.lists.first?.conditions == [tok("a:b", not: true)])
    }

    @Test(
        "malformed headers are nil",
        arguments: [
            "", "   ", "()", "(<a:b>", "<a:b>", "</x> </y> (<a:b>)", "(<a:b>) </x> (<c:d>)", "</x> (<a:b>) (<c:d>) x",
            "(<>)", "(<a b>)", "([abc])", "([\"abc\")", "([\"a\"b])", "(Nothing <a:b>)", "(Not)", "<a:b> x",
            "(<a:b>) ,",
            "[\"x\"]", "(<a<b>)",
        ])
    func malformed(header: String) {
        #expect(IfHeader.parse(header) == nil)
    }

    @Test(
        "at most 100 conditions in all: more, in one list or in many, is nil; tokens named many times are submitted once, in the order first named"
    )
    func bounded() throws {
        let hundred = "(" + (0..<100).map { "<t:\($0)>" }.joined() + ")"
        #expect(IfHeader.parse(hundred)?.allTokens.count == 100)
        #expect(IfHeader.parse("(" + (0...100).map { "<t:\($0)>" }.joined() + ")") == nil)
        #expect(IfHeader.parse((0...100).map { "(<t:\($0)>)" }.joined()) == nil)
        #expect(IfHeader.parse("(" + (0..<3_000).map { "<\(String($0, radix: 16))>" }.joined() + ")") == nil)
        let h = try #require(IfHeader.parse("(<t:b> <t:a>) (<t:b>) (Not <t:c> <t:a>) (<t:c>)"))
        #expect(h.allTokens == ["t:b", "t:a", "t:c"])
    }

    @Test("evaluation: a list is true when all its conditions are, the header when any list is")
    func evaluation() throws {
        let state: (String) -> (tokens: [String], etag: String?) = { key in
            switch key {
            case "/a": ([t1], "\"e1\"")
            case "/b": ([], "e2")
            default: ([], nil)
            }
        }
        func ev(_ h: String, _ resource: String = "/a") throws -> Bool {
            try #require(IfHeader.parse(h)).evaluate(
                requestResource: resource, resolve: { $0.hasPrefix("http://h/dav") ? String($0.dropFirst(12)) : nil },
                state: state)
        }
        #expect(try ev("(<\(t1)>)"))
        #expect(try !ev("(<\(t2)>)"))
        #expect(try ev("(<\(t1)> [\"e1\"])"))
        #expect(try !ev("(<\(t1)> [\"e2\"])"))
        #expect(try ev("(<\(t2)>) ([\"e1\"])"))
        #expect(try ev("(Not <\(t2)>)"))
        #expect(try !ev("(Not <\(t1)>)"))
        #expect(try !ev("([W/\"e1\"])"), "a weak tag never equals a strong ETag")
        #expect(try ev("([\"e2\"])", "/b"), "a bare ETag from state is taken as quoted")
        #expect(try !ev("([\"e1\"])", "/missing"), "a missing resource has no ETag")
        #expect(try ev("(Not [\"e1\"])", "/missing"))
        #expect(try ev("<http://h/dav/a> (<\(t1)>)", "/b"), "a tagged list is checked against its own resource")
        #expect(try !ev("<http://h/dav/b> (<\(t1)>)", "/a"))
        #expect(try !ev("<http://other/a> (Not <\(t2)>)", "/a"), "an unresolvable tag makes its list false")
    }
}
