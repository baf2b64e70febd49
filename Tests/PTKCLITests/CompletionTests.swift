import Foundation
import Glibc
import PTKAdminCommandLine
import PTKCLI
import PTKConfiguration
import PTKSendCommandLine
import PTKTestSupport
import PTKTestTags
import Testing

private let haveShells = ["/usr/bin/bash", "/usr/bin/zsh", "/usr/bin/fish"].allSatisfy {
    FileManager.default.isExecutableFile(atPath: $0)
}

/// The completion scripts of the three programs, written into a directory of their own, with
/// a few files to complete in `files/`.
private final class Scripts {
    let dir = makeTemporaryDirectory("ptk-completion")
    init() throws {
        for (program, bash, zsh, fish) in [
            ("ptk", adminCommandLine.bashCompletion, adminCommandLine.zshCompletion, adminCommandLine.fishCompletion),
            ("ptk-send", sendCommandLine.bashCompletion, sendCommandLine.zshCompletion, sendCommandLine.fishCompletion),
            (
                "ptkd", DaemonOptions.table.bashCompletion, DaemonOptions.table.zshCompletion,
                DaemonOptions.table.fishCompletion
            ),
        ] {
            try bash.write(toFile: "\(dir)/\(program).bash", atomically: true, encoding: .utf8)
            try zsh.write(toFile: "\(dir)/_\(program)", atomically: true, encoding: .utf8)
            try fish.write(toFile: "\(dir)/\(program).fish", atomically: true, encoding: .utf8)
        }
        try FileManager.default.createDirectory(atPath: dir + "/files/sub.ptk", withIntermediateDirectories: true)
        for f in ["a.png", "B.PNG", "c.txt", "d.ptk", "ptkd.conf"] {
            FileManager.default.createFile(atPath: "\(dir)/files/\(f)", contents: Data())
        }
        // Stand-ins for ptk and ptk-send that answer __complete with their arguments, joined
        // by underscores: what the scripts ask them shows in what they offer.
        try FileManager.default.createDirectory(atPath: dir + "/bin", withIntermediateDirectories: true)
        for program in ["ptk", "ptk-send"] {
            // Written through a close-on-exec descriptor: a descriptor open for writing that a
            // program another test starts meanwhile inherits would make running the stand-in fail
            // with "text file busy" for as long as that program lives (seen once in a full run).
            writeFile("\(dir)/bin/\(program)", Array("#!/bin/sh\necho \"$*\" | tr ' ' _\n".utf8))
            chmod("\(dir)/bin/\(program)", 0o755)
        }
    }
    deinit { removeTree(dir) }

    /// What bash's completion function offers for `words` (the last is the word being typed).
    func bash(_ words: [String]) throws -> [String] {
        let program = words[0]
        let quoted = words.map { "'" + $0 + "'" }.joined(separator: " ")
        let script = """
            cd \(dir)/files
            source \(dir)/\(program).bash
            COMP_WORDS=(\(quoted)); COMP_CWORD=\(words.count - 1); COMPREPLY=()
            _\(program.replacingOccurrences(of: "-", with: "_"))
            printf '%s\\n' "${COMPREPLY[@]}"
            """
        let r = try runTool("/usr/bin/env", ["PATH=\(dir)/bin:/usr/bin:/bin", "/usr/bin/bash", "--norc", "-c", script])
        #expect(r.status == 0 && r.err.isEmpty, "\(r.err)")
        return r.out.split(separator: "\n").map(String.init).sorted()
    }

    /// What fish offers for the command line `line` (`complete -C`).
    func fish(_ line: String) throws -> [String] {
        let program = String(line.split(separator: " ")[0])
        let r = try runTool(
            "/usr/bin/env",
            [
                "PATH=\(dir)/bin:/usr/bin:/bin", "/usr/bin/fish", "--no-config", "-c",
                "cd \(dir)/files; source \(dir)/\(program).fish; complete -C '\(line)'",
            ])
        #expect(r.status == 0 && r.err.isEmpty, "\(r.err)")
        return r.out.split(separator: "\n").map { String($0.split(separator: "\t")[0]) }.sorted()
    }

    /// What zsh's completion function offers for `words`, with compadd and _files standing in
    /// for the completion system's own (they print what they are given).
    func zsh(_ words: [String]) throws -> [String] {
        let program = words[0]
        let quoted = words.map { "'" + $0 + "'" }.joined(separator: " ")
        let script = """
            compadd() { [[ $1 == -- ]] && shift; print -l -- "$@" }
            _files() { print -- "_files $*" }
            cd \(dir)/files
            words=(\(quoted)); CURRENT=\(words.count)
            source \(dir)/_\(program)
            """
        let r = try runTool("/usr/bin/env", ["PATH=\(dir)/bin:/usr/bin:/bin", "/usr/bin/zsh", "-f", "-c", script])
        #expect(r.status == 0 && r.err.isEmpty, "\(r.err)")
        return r.out.split(separator: "\n").map(String.init).sorted()
    }
}

@Suite(
    "Shell completion made from the command tables",
    .enabled(if: haveShells, "needs bash, zsh and fish (scripts/deps.sh --test)"), .tags(.unit))
struct CompletionTests {
    @Test("the scripts parse: bash -n, zsh -n, fish -n")
    func parse() throws {
        let s = try Scripts()
        for program in ["ptk", "ptk-send", "ptkd"] {
            #expect(try runTool("/usr/bin/bash", ["-n", "\(s.dir)/\(program).bash"]).status == 0)
            #expect(try runTool("/usr/bin/zsh", ["-n", "\(s.dir)/_\(program)"]).status == 0)
            #expect(try runTool("/usr/bin/fish", ["-n", "\(s.dir)/\(program).fish"]).status == 0)
        }
    }

    @Test("bash: commands and their words, options per command, fixed values, files by type")
    func bash() throws {
        let s = try Scripts()
        #expect(try s.bash(["ptk", "sh"]) == ["show"])
        #expect(try s.bash(["ptk", "t"]) == ["thumbnail", "trust"])
        #expect(try s.bash(["ptk", "trust", ""]) == ["allow", "deny", "list", "pending", "remove"])
        #expect(try s.bash(["ptk", "--dir", "/x", "trust", "a"]) == ["allow"])
        #expect(try s.bash(["ptk", "id", ""]) == ["localsend"])
        #expect(try s.bash(["ptk", "list", "--sort", ""]) == ["name", "size", "taken", "time"])
        #expect(
            try s.bash(["ptk", "list", "--"]) == [
                "--config", "--dir", "--from", "--help", "--json", "--sort", "--state-dir", "--version",
            ])
        #expect(try s.bash(["ptk", "show", "--"]).contains("--json"))
        #expect(!(try s.bash(["ptk", "show", "--"]).contains("--sort")), "--sort is list's alone")
        #expect(try s.bash(["ptk", "rate", "x", ""]) == ["0", "1", "2", "3", "4", "5", "none"])
        #expect(try s.bash(["ptk", "app-password", ""]) == ["add", "list", "remove"])
        #expect(try s.bash(["ptk", "app-password", "add", "x", "--access", ""]) == ["full", "upload"])
        #expect(try s.bash(["ptk", "import", ""]) == ["d.ptk", "sub.ptk"])
        #expect(try s.bash(["ptk", "--config", ""]) == ["ptkd.conf", "sub.ptk"])
        #expect(try s.bash(["ptk-send", "--parallel", "2", "host", ""]) == ["B.PNG", "a.png", "sub.ptk"])
        #expect(try s.bash(["ptkd", "--senders", ""]) == ["anyone", "trusted"])
        #expect(try s.bash(["ptkd", "--plaintext", "a"]) == ["allow"])
        #expect(try s.bash(["ptkd", "--no-m"]) == ["--no-mdns"])
    }

    @Test("dynamic values come from the program itself, told the --dir, --state-dir and --config typed")
    func dynamic() throws {
        let s = try Scripts()
        #expect(try s.bash(["ptk", "show", ""]) == ["__complete_photos"])
        #expect(try s.bash(["ptk", "--dir", "/x", "rm", "a", ""]) == ["__complete_photos_--dir_/x"])
        #expect(
            try s.bash(["ptk", "--state-dir", "/s", "trust", "allow", ""]) == [
                "__complete_devices_pending_--state-dir_/s"
            ])
        #expect(try s.bash(["ptk", "trust", "remove", ""]) == ["__complete_devices_trusted"])
        #expect(try s.bash(["ptk", "trust", "remove", "X", ""]).isEmpty, "remove takes one ID")
        #expect(try s.bash(["ptk-send", "--window", "8", ""]) == ["__complete_receivers"])
        #expect(try s.fish("ptk --config /c show ") == ["__complete_photos_--config_/c"])
        #expect(try s.fish("ptk-send ") == ["__complete_receivers"])
        #expect(try s.zsh(["ptk", "--dir", "/x", "note", ""]) == ["__complete_photos_--dir_/x"])
        #expect(
            try s.bash(["ptk", "--state-dir", "/s", "app-password", "remove", ""]) == [
                "__complete_app-passwords_--state-dir_/s"
            ])
        #expect(try s.fish("ptk app-password remove ") == ["__complete_app-passwords"])
        #expect(try s.zsh(["ptk", "app-password", "remove", ""]) == ["__complete_app-passwords"])
        #expect(try s.bash(["ptk", "app-password", "add", ""]).isEmpty, "a new name is not offered")
    }

    @Test("fish: the same, through complete -C")
    func fish() throws {
        let s = try Scripts()
        #expect(try s.fish("ptk sh") == ["show"])
        #expect(try s.fish("ptk trust ") == ["allow", "deny", "list", "pending", "remove"])
        #expect(try s.fish("ptk id ") == ["localsend"])
        #expect(try s.fish("ptk list --sort ") == ["name", "size", "taken", "time"])
        #expect(try s.fish("ptk show --j") == ["--json"])
        #expect(try s.fish("ptk rename --j").isEmpty, "--json is list's and show's")
        #expect(try s.fish("ptk import ") == ["d.ptk", "sub.ptk/"])
        #expect(try s.fish("ptk-send host ") == ["B.PNG", "a.png", "sub.ptk/"])
        #expect(try s.fish("ptkd --senders ") == ["anyone", "trusted"])
    }

    @Test("zsh: the same, through the function with the completion system's builtins standing in")
    func zsh() throws {
        let s = try Scripts()
        #expect(try s.zsh(["ptk", "sh"]).contains("show"))
        #expect(try s.zsh(["ptk", "trust", ""]) == ["allow", "deny", "list", "pending", "remove"])
        #expect(try s.zsh(["ptk", "list", "--sort", ""]) == ["name", "size", "taken", "time"])
        #expect(try s.zsh(["ptk", "import", ""]) == ["_files -g *.(ptk|PTK)"])
        #expect(try s.zsh(["ptk", "--dir", ""]) == ["_files -/"])
        #expect(try s.zsh(["ptkd", "--senders", ""]) == ["anyone", "trusted"])
    }
}
