import Foundation
import PTKAdminCommandLine
import PTKCLI
import PTKConfiguration
import PTKSendCommandLine
import PTKTestSupport
import PTKTestTags
import Testing

/// Runs `program` with `arguments`; its status, standard output and standard error.
func runTool(_ program: String, _ arguments: [String], input: String? = nil) throws -> (
    status: Int32, out: String, err: String
) {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: program)
    p.arguments = arguments
    let out = Pipe()
    let err = Pipe()
    let inp = Pipe()
    p.standardOutput = out
    p.standardError = err
    p.standardInput = inp
    try p.run()
    if let input { inp.fileHandleForWriting.write(Data(input.utf8)) }
    try inp.fileHandleForWriting.close()
    let o = out.fileHandleForReading.readDataToEndOfFile()
    let e = err.fileHandleForReading.readDataToEndOfFile()
    p.waitUntilExit()
    return (p.terminationStatus, String(decoding: o, as: UTF8.self), String(decoding: e, as: UTF8.self))
}

private func template(_ name: String) throws -> String {
    String(decoding: try #require(readFile(repositoryRoot() + "/man/\(name).in")), as: UTF8.self)
}

/// The four pages as `ptk-docs` makes them.
private func pages() throws -> [(name: String, text: String)] {
    let date = "November 30, 2026"
    return [
        ("ptkd.8", DaemonOptions.table.manPage(section: "8", date: date, template: try template("ptkd.8"))),
        ("ptk.8", adminCommandLine.manPage(section: "8", date: date, template: try template("ptk.8"))),
        ("ptk-send.1", sendCommandLine.manPage(section: "1", date: date, template: try template("ptk-send.1"))),
        ("ptkd.conf.5", DaemonOptions.configurationManPage(date: date, template: try template("ptkd.conf.5"))),
    ]
}

private let haveMandoc = FileManager.default.isExecutableFile(atPath: "/usr/bin/mandoc")
private let haveGroff = FileManager.default.isExecutableFile(atPath: "/usr/bin/groff")

@Suite("Man pages made from the command tables", .tags(.unit))
struct ManPageTests {
    @Test(
        "every page renders without a warning: mandoc -T lint and groff -ww",
        .enabled(if: haveMandoc && haveGroff, "needs mandoc and groff (scripts/deps.sh --test)"))
    func lint() throws {
        let dir = makeTemporaryDirectory()
        defer { removeTree(dir) }
        for (name, text) in try pages() {
            let path = dir + "/" + name
            try text.write(toFile: path, atomically: true, encoding: .utf8)
            let mandoc = try runTool("/usr/bin/mandoc", ["-T", "lint", "-W", "warning", path])
            #expect(
                mandoc.status == 0 && mandoc.out.isEmpty && mandoc.err.isEmpty, "\(name): \(mandoc.out)\(mandoc.err)")
            let groff = try runTool("/usr/bin/groff", ["-ww", "-z", "-mandoc", path])
            #expect(groff.status == 0 && groff.err.isEmpty, "\(name): \(groff.err)")
        }
    }

    @Test("every option, command and exit status of a program is in its page; every configuration key in ptkd.conf(5)")
    func complete() throws {
        let all = try pages()
        func page(_ name: String) throws -> String { try #require(all.first { $0.name == name }?.text) }
        func flags<K>(_ table: CommandTable<K>) -> [String] {
            table.options.map { $0.name } + ["help", "version"]
        }
        for (name, table) in [
            ("ptkd.8", flags(DaemonOptions.table)), ("ptk.8", flags(adminCommandLine)),
            ("ptk-send.1", flags(sendCommandLine)),
        ] {
            let text = try page(name)
            for flag in table { #expect(text.contains("Fl \\-\(flag)"), "\(name) lacks --\(flag)") }
        }
        let ptk = try page("ptk.8")
        for command in adminCommandLine.commands {
            #expect(ptk.contains(".It Cm \(command.name)"), "ptk(8) lacks \(command.name)")
        }
        for (name, statuses) in [
            ("ptkd.8", DaemonOptions.table.exitStatuses), ("ptk.8", adminCommandLine.exitStatuses),
            ("ptk-send.1", sendCommandLine.exitStatuses),
        ] {
            let text = try page(name)
            for s in statuses { #expect(text.contains(".It \(s.code)\n"), "\(name) lacks exit status \(s.code)") }
        }
        let conf = try page("ptkd.conf.5")
        for setting in DaemonOptions.settings where setting.inConfigFile {
            #expect(conf.contains(".It Cm \(setting.name) No ="), "ptkd.conf(5) lacks \(setting.name)")
        }
        #expect(!conf.contains(".It Cm no-mdns"), "a flag that the file does not take is not a key")
        // Every section the issue names, in each program's page.
        for name in ["ptkd.8", "ptk.8", "ptk-send.1"] {
            let text = try page(name)
            for section in [
                "NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "ENVIRONMENT", "FILES", "EXIT STATUS", "EXAMPLES",
                "SEE ALSO",
            ] {
                #expect(text.contains(".Sh \(section)\n"), "\(name) lacks \(section)")
            }
            #expect(!text.contains("@"), "\(name) has a placeholder left")
        }
    }

    @Test("text for mdoc: backslashes, a leading dot, `code`, option dashes, one sentence a line")
    func text() {
        #expect(Mdoc.text("a\\b") == "a\\eb")
        #expect(Mdoc.text(".hidden file") == "\\&.hidden file")
        #expect(Mdoc.text("see `ptk trust`") == "see \\(lqptk trust\\(rq")
        #expect(Mdoc.text("use --dir or -o here") == "use \\-\\-dir or \\-o here")
        #expect(Mdoc.text("long-lived") == "long-lived")
        #expect(Mdoc.text("One. Two? Three.") == "One.\nTwo?\nThree.")
        #expect(Mdoc.text("e.g. lower case goes on") == "e.g. lower case goes on")
        #expect(Mdoc.paragraphs("a\nb\n\nc") == "a\nb\n.Pp\nc")
    }
}
