import FoundationEssentials
import Glibc
import PTKSystem
import PTKTestSupport
import PTKTestTags
import PTKVocabulary
import Testing

/// Text from elsewhere made one line with nothing a terminal acts on (issue 41, finding 4).
@Suite("Terminal text", .tags(.unit))
struct TerminalTextTests {
    /// Every class the escaper must catch: C0, DEL, C1, the separators, the bidi controls.
    static let controls: [UInt32] =
        Array(0x00...0x1F) + [0x7F] + Array(0x80...0x9F) + [0x2028, 0x2029]
        + [0x061C, 0x200E, 0x200F] + Array(0x202A...0x202E) + Array(0x2066...0x2069)

    /// Scalars next to those classes that stay as they are.
    static let kept: [UInt32] = [
        0x20, 0x7E, 0xA0, 0xE9, 0x0301, 0x061B, 0x061D, 0x200D, 0x2010, 0x2027, 0x202F, 0x2065, 0x206A, 0xFFFD, 0x1F600,
    ]

    @Test("every control scalar is written as a visible escape", arguments: controls)
    func escaped(value: UInt32) {
        let scalar = Unicode.Scalar(value)!
        #expect(isTerminalControl(scalar))
        let out = escapedForTerminal("a" + String(scalar) + "b")
        #expect(!out.unicodeScalars.contains(where: isTerminalControl), "\(out.debugDescription)")
        #expect(
            out.unicodeScalars.allSatisfy { $0.value >= 0x20 && $0.value < 0x7F }, "ASCII only: \(out.debugDescription)"
        )
        let expected: String
        switch value {
        case 0x0A: expected = "a\\nb"
        case 0x0D: expected = "a\\rb"
        case 0x09: expected = "a\\tb"
        default: expected = "a\\u{" + String(value, radix: 16, uppercase: true) + "}b"
        }
        #expect(out == expected)
        #expect(quotedForTerminal(String(scalar)) == "\"" + String(expected.dropFirst().dropLast()) + "\"")
    }

    @Test("other scalars, a backslash among them, are kept", arguments: kept)
    func keptAsIs(value: UInt32) {
        let s = "x" + String(Unicode.Scalar(value)!) + "\\y"
        #expect(!isTerminalControl(Unicode.Scalar(value)!))
        #expect(escapedForTerminal(s).unicodeScalars.elementsEqual(s.unicodeScalars))
    }

    @Test("a control followed by a combining mark (one Character) is still escaped")
    func combiningMarks() {
        for value in Self.controls {
            let s = String(Unicode.Scalar(value)!) + "\u{301}\u{20DD}"
            let out = escapedForTerminal(s)
            #expect(
                !out.unicodeScalars.contains(where: isTerminalControl),
                "U+\(String(value, radix: 16)): \(out.debugDescription)")
            #expect(out.unicodeScalars.suffix(2).elementsEqual(["\u{301}", "\u{20DD}"]))
        }
        // The audit's forged line and the scalars it named.
        let forged = escapedForTerminal(
            "a.png\nwarning: FORGED LINE\u{85}x\u{9B}2J\u{2028}y\u{202E}gnp.exe\u{1B}[2J\u{0}\u{7}")
        #expect(
            forged == "a.png\\nwarning: FORGED LINE\\u{85}x\\u{9B}2J\\u{2028}y\\u{202E}gnp.exe\\u{1B}[2J\\u{0}\\u{7}")
        #expect(forged.split(separator: "\n").count == 1)
    }

    @Test("quoted text escapes its quotes and backslashes, and the line sink leaves it as it is")
    func quoted() {
        #expect(quotedForTerminal(#"a"b\c"#) == #""a\"b\\c""#)
        #expect(quotedForTerminal("\u{301}x") == "\"\u{301}x\"")
        #expect(escapedForQuotes("\u{301}\"\n") == "\u{301}\\\"\\n")
        let q = quotedForTerminal("x\n\u{1B}\u{202E}\"")
        #expect(escapedForTerminal(q) == q)
        #expect(escapedForTerminal("plain text é ✓") == "plain text é ✓")
    }

    @Test("JSON keeps its meaning with the controls it may hold raw escaped")
    func json() throws {
        struct Line: Codable, Equatable { var s: String }
        var text = "a\u{2028}b\u{2029}c\u{7F}d\u{85}e\u{9B}f\u{202E}g\u{2066}h\u{1B}i\u{0}j\n\u{301}"
        text.unicodeScalars.append(contentsOf: Self.controls.map { Unicode.Scalar($0)! })
        let encoded = String(decoding: try JSONEncoder().encode(Line(s: text)), as: UTF8.self)
        let escaped = escapingTerminalControlsInJSON(encoded)
        #expect(!escaped.unicodeScalars.contains(where: isTerminalControl), "\(escaped.debugDescription)")
        #expect(escaped.contains("\\u2028") && escaped.contains("\\u202E") && escaped.contains("\\u007F"))
        let back = try JSONDecoder().decode(Line.self, from: Data(escaped.utf8))
        #expect(back.s.unicodeScalars.elementsEqual(text.unicodeScalars))
    }

    @Test("a path's bytes: shown with \\xE9 for what is not UTF-8, U+FFFD as text, opened as they are")
    func bytePath() throws {
        let bad = BytePath(bytes: Array("caf".utf8) + [0xE9] + Array(".png".utf8))
        #expect(!bad.isUTF8)
        #expect(bad.description == "caf\\xE9.png")
        #expect(bad.text == "caf\u{FFFD}.png")
        #expect(BytePath(bytes: [0xFF, 0x41, 0xC3]).description == "\\xFFA\\xC3")
        #expect(BytePath("é/x").isUTF8 && BytePath("é/x").description == "é/x")
        #expect(BytePath(bytes: Array("a/".utf8) + [0xE9]).lastComponent == BytePath(bytes: [0xE9]))
        #expect(
            BytePath("a//").droppingTrailingSlashes == BytePath("a")
                && BytePath("/").droppingTrailingSlashes == BytePath("/"))

        let dir = makeTemporaryDirectory("ptk-bytepath")
        defer { removeTree(dir) }
        let path = BytePath(dir).appending(bad)
        let cPath = (path.bytes + [0]).map { CChar(bitPattern: $0) }
        let made = Glibc.open(cPath, O_CREAT | O_WRONLY | O_EXCL, 0o644)
        defer { Glibc.unlink(cPath) }  // removeTree lists names as text, which cannot name this one
        #expect(made >= 0)
        _ = Glibc.write(made, "hello", 5)
        Glibc.close(made)
        #expect(throws: SystemError.self) { try FileDescriptor.open(path.text, flags: .readOnly) }
        let fd = try FileDescriptor.open(path, flags: .readOnly)
        defer { fd.close() }
        #expect(try fd.status().size == 5)
        #expect(try fileStatus(path).size == 5)
        let folder = try FileDescriptor.open(BytePath(dir), flags: [.readOnly, .directory])
        defer { folder.close() }
        #expect(try folder.byteEntries() == [bad])
        #expect(try folder.status(of: bad).isRegularFile)
        #expect(throws: SystemError.self) {
            try FileDescriptor.open(BytePath(bytes: Array("a".utf8) + [0, 0x62]), flags: .readOnly)
        }
    }

    @Test("the command line's arguments are matched to the bytes passed, in order")
    func commandLine() {
        let e9 = BytePath(bytes: [0x61, 0xE9])
        let e8 = BytePath(bytes: [0x61, 0xE8])
        // Both read "a\u{FFFD}" in CommandLine.arguments; "b\u{FFFD}" was passed as UTF-8.
        let passed = [BytePath("--quiet"), BytePath("peer"), e9, BytePath("b\u{FFFD}"), e8]
        #expect(
            BytePath.commandLine(["a\u{FFFD}", "b\u{FFFD}", "a\u{FFFD}"], passed: passed) == [
                e9, BytePath("b\u{FFFD}"), e8,
            ])
        #expect(BytePath.commandLine(["x", "a\u{FFFD}"], passed: [BytePath("x"), e9]) == [BytePath("x"), e9])
        #expect(BytePath.commandLine(["a\u{FFFD}"], passed: [BytePath("a\u{FFFD}")]) == [BytePath("a\u{FFFD}")])
    }
}
