import PTKAdminCommandLine
import PTKCLI
import PTKConfiguration
import PTKSendCommandLine
import PTKTestSupport
import PTKTestTags
import Testing

private func repositoryText(_ path: String) throws -> String {
    String(decoding: try #require(readFile(repositoryRoot() + "/" + path)), as: UTF8.self)
}

@Suite("ptkd's options are declared once", .tags(.unit))
struct OptionDocsTests {
    @Test("every default shown is the real one: it parses back to the default configuration")
    func defaultsRoundTrip() throws {
        for option in DaemonOptions.settings where option.defaultIsValue {
            var c = DaemonConfiguration()
            try DaemonOptions.apply(option.name, option.defaultText(DaemonConfiguration()), to: &c)
            #expect(c == DaemonConfiguration(), "--\(option.name)'s shown default is not its default")
        }
    }

    @Test("README shows ptkd's options exactly as ptkd --help does, each with its default")
    func readme() throws {
        let readme = try repositoryText("README.md")
        let lines = DaemonOptions.table.optionLines
        #expect(
            readme.contains("```\nptkd [OPTIONS]\n" + lines + "\n```"),
            "README's ptkd block differs from the help; paste `ptkd --help`'s options there")
        for option in DaemonOptions.table.options {
            #expect(lines.contains("--\(option.name)") && lines.contains(option.helpWithDefault))
            #expect(option.helpWithDefault.contains("(default"))
        }
    }

    @Test("README shows ptk's commands and options, and ptk-send's options, exactly as their help does")
    func readmeCommands() throws {
        let readme = try repositoryText("README.md")
        let ptk =
            "```\nptk [OPTIONS] COMMAND [ARGUMENTS]\n\n" + adminCommandLine.commandLines + "\n\nOptions:\n"
            + adminCommandLine.optionLines + "\n```"
        #expect(
            readme.contains(ptk), "README's ptk block differs from `ptk --help`; paste its commands and options there")
        let send =
            "```\n" + sendCommandLine.usageLine + "\n" + sendCommandLine.otherUsages.joined(separator: "\n") + "\n"
            + sendCommandLine.optionLines + "\n```"
        #expect(
            readme.contains(send), "README's ptk-send block differs from `ptk-send --help`; paste its options there")
    }

    @Test(
        "README gives every exit status of the three programs with its meaning", arguments: ["ptkd", "ptk", "ptk-send"])
    func readmeExitStatuses(program: String) throws {
        let readme = try repositoryText("README.md")
        let statuses =
            program == "ptkd"
            ? DaemonOptions.table.exitStatuses
            : program == "ptk" ? adminCommandLine.exitStatuses : sendCommandLine.exitStatuses
        let start = try #require(readme.firstRange(of: "\n## \(program)\n"), "README has no section ## \(program)")
            .upperBound
        let rest = readme[start...]
        let section = rest[..<(rest.firstRange(of: "\n## ")?.lowerBound ?? rest.endIndex)]
        for status in statuses {
            #expect(
                section.contains("\n| \(status.code) | \(status.meaning) |\n"),
                "\(program) \(status.code) is not in README's table")
        }
    }

    @Test("etc/ptkd.conf names every key of the file with its default")
    func configFile() throws {
        let text = try repositoryText("etc/ptkd.conf")
        for option in DaemonOptions.settings where option.inConfigFile {
            let shown = option.defaultText(DaemonConfiguration())
            #expect(text.contains("\n#\(option.name) = "), "\(option.name) is missing")
            if option.defaultIsValue {
                #expect(
                    text.contains("\n#\(option.name) = \(shown)\n"), "\(option.name) does not show its default \(shown)"
                )
            } else {
                #expect(
                    text.contains("# Default: \(shown)\n"),
                    "\(option.name)'s comment does not say its default: \(shown)")
            }
        }
        // And nothing the file documents is unknown to ptkd.
        for line in text.split(separator: "\n")
        where line.hasPrefix("#") && line.contains(" = ") && line.dropFirst().first?.isLetter == true {
            let key = String(line.dropFirst().split(separator: " ")[0])
            #expect(
                DaemonOptions.settings.contains { $0.name == key && $0.inConfigFile },
                "etc/ptkd.conf documents unknown key \(key)")
        }
    }

    @Test("a flag that is not a setting, or a key only the command line knows, is refused where it does not belong")
    func placement() {
        var c = DaemonConfiguration()
        #expect(throws: UsageError("ptkd.conf:1: unknown key 'no-mdns'")) {
            try DaemonOptions.apply(configFile: "no-mdns = 1", path: "ptkd.conf", to: &c)
        }
        #expect(throws: UsageError("unknown option '--mdns'")) { try DaemonOptions.table.parse(["--mdns", "no"]) }
    }
}
