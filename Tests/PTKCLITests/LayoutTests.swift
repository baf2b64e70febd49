import PTKConfiguration
import PTKSystem
import PTKTestTags
import Testing

@Suite("layout and on-saved settings", .tags(.unit))
struct LayoutTests {
    let day = CalendarDay(year: 2024, month: 7, day: 3)

    @Test("the named layouts and patterns give the folders they say")
    func named() throws {
        #expect(try FolderLayout(parsing: "flat").folder(sender: "alice", day: day) == "")
        #expect(try FolderLayout(parsing: "sender").folder(sender: "alice", day: day) == "alice")
        #expect(try FolderLayout(parsing: "date").folder(sender: "alice", day: day) == "2024-07-03")
        #expect(try FolderLayout(parsing: "sender/date").folder(sender: "alice", day: day) == "alice/2024-07-03")
        #expect(
            try FolderLayout(parsing: "{sender}/{year}-{month}").folder(sender: "alice", day: day) == "alice/2024-07")
        #expect(
            try FolderLayout(parsing: "photos {year}/{sender} ({month})").folder(sender: "bob", day: day)
                == "photos 2024/bob (07)")
        #expect(try FolderLayout(parsing: "{sender}").folder(sender: nil, day: day) == "unknown")
        #expect(try FolderLayout(parsing: "sender/date").description == "sender/date")
        #expect(try FolderLayout(parsing: "{year}").usesSender == false)
    }

    @Test(
        "hostile sender names stay one level, inside, visible and short",
        arguments: [
            ("../..", "_.."), ("/etc", "_etc"), (".", "unknown"), ("..", "unknown"), ("", "unknown"),
            ("a\u{1}b\u{7F}c\u{9B}", "abc"),
            (" .hidden", "hidden"), ("a/b\\c", "a_b_c"),
        ])
    func hostile(name: String, folder: String) throws {
        #expect(try FolderLayout(parsing: "sender").folder(sender: name, day: day) == folder)
    }

    @Test("a 300-byte sender name is cut to 200 bytes at a character boundary")
    func long() throws {
        let name = String(repeating: "é", count: 150)  // 300 bytes
        let folder = try FolderLayout(parsing: "sender").folder(sender: name, day: day)
        #expect(folder.utf8.count == 200)
        #expect(folder == String(repeating: "é", count: 100))
    }

    @Test(
        "bad layouts are refused with the reason",
        arguments: [
            ("", "empty"), ("a//b", "empty level"), ("/a", "empty level"), ("{sender", "without"),
            ("{who}", "unknown field"),
            ("a}", "without '{'"), ("a/b/c/d/e", "at most 4"), (".hidden", "starts with a dot"), ("x\u{1}", "control"),
            ("a\\b", "control"),
        ])
    func refused(text: String, reason: String) {
        do {
            _ = try FolderLayout(parsing: text)
            Issue.record("accepted '\(text)'")
        } catch {
            #expect(error.description.contains(reason), "\(text): \(error)")
        }
    }

    @Test("layout, duplicates and on-saved from the configuration file; on-saved's words keep their quotes")
    func configuration() throws {
        var c = DaemonConfiguration()
        #expect(
            c.layout.levels.isEmpty && c.duplicates == .skip && c.onSaved == nil && c.onSavedTimeout == .seconds(60))
        try DaemonOptions.apply(
            configFile: """
                layout = {sender}/{year}
                duplicates = keep
                on-saved = /usr/local/bin/copy-photo --to "/mnt/nas/Photos from phones" 'it''s' a\\ b
                on-saved-timeout = 2m
                """, path: "ptkd.conf", to: &c)
        #expect(c.layout.description == "{sender}/{year}")
        #expect(c.duplicates == .keep)
        #expect(c.onSaved == ["/usr/local/bin/copy-photo", "--to", "/mnt/nas/Photos from phones", "its", "a b"])
        #expect(c.onSavedTimeout == .seconds(120))
        for (line, words) in [
            ("on-saved = relative/prog", "absolute"), ("on-saved = /bin/x \"open", "closing"),
            ("layout = {x}", "unknown field"),
        ] {
            var d = DaemonConfiguration()
            do {
                try DaemonOptions.apply(configFile: line, path: "f", to: &d)
                Issue.record("accepted \(line)")
            } catch {
                #expect(error.message.hasPrefix("f:1: ") && error.message.contains(words), "\(error)")
            }
        }
        #expect(try splitWords(#"a "b \" \\ \x" 'c"d' \'"#) == ["a", #"b " \ \x"#, #"c"d"#, "'"])
        #expect(try splitWords("  ") == [])
    }
}
