// ptk-docs: the man pages and shell completion scripts of ptkd, ptk and ptk-send, made from
// the command tables that parse their command lines (so a flag cannot exist without its entry).
// A build tool: `make docs` and the Debian build run it; it is not installed.
import PTKAdminCommandLine
import PTKCLI
import PTKConfiguration
import PTKSendCommandLine
import PTKSystem

enum DocsOption: Hashable, Sendable { case template, date }

let table = CommandTable<DocsOption>(
    program: "ptk-docs",
    summary: "make the man pages and shell completion of ptkd, ptk and ptk-send",
    description: "Writes one man page (mdoc) or completion script to standard output.",
    commands: [
        Command(
            "man", group: "Commands", "a man page: PAGE is ptkd, ptkd.conf, ptk or ptk-send",
            arguments: [Argument("PAGE", "the page", completion: .values(["ptkd", "ptkd.conf", "ptk", "ptk-send"]))]),
        Command(
            "bash", group: "Commands", "the bash completion of PROGRAM",
            arguments: [Argument("PROGRAM", "ptkd, ptk or ptk-send")]),
        Command(
            "zsh", group: "Commands", "the zsh completion of PROGRAM",
            arguments: [Argument("PROGRAM", "ptkd, ptk or ptk-send")]),
        Command(
            "fish", group: "Commands", "the fish completion of PROGRAM",
            arguments: [Argument("PROGRAM", "ptkd, ptk or ptk-send")]),
    ],
    options: [
        Option(
            .template, "template", value: "FILE",
            help: "the page's template: mdoc with placeholders (see PTKCLI's Mdoc)",
            commands: ["man"], completion: .file(extensions: ["in"])),
        Option(
            .date, "date", value: "DATE", help: "the page's date, as mdoc writes it (\"November 30, 2026\")",
            commands: ["man"]),
    ],
    exitStatuses: [
        ExitStatus(0, "written"), ExitStatus(64, "usage error"), ExitStatus(66, "the template cannot be read"),
    ])

let invocation = table.parseOrExit()
let name = invocation.arguments[0]

/// What a man page or completion script is made from: the table of `program`, type-erased.
func output<Key>(_ t: CommandTable<Key>, section: String) -> String {
    switch invocation.command!.name {
    case "bash": return t.bashCompletion
    case "zsh": return t.zshCompletion
    case "fish": return t.fishCompletion
    default:
        let (template, date) = manPageInputs()
        return t.manPage(section: section, date: date, template: template)
    }
}

/// `man`'s template (read) and date, from --template and --date.
func manPageInputs() -> (template: String, date: String) {
    guard let path = invocation.value(.template), let date = invocation.value(.date) else {
        exitWithUsageError("man needs --template and --date", program: "ptk-docs")
    }
    do { return (try readTextFile(path), date) } catch { exitWithError("cannot read \(path): \(error)", code: 66) }
}

/// ptkd.conf(5), from ptkd's settings table.
func configurationPage() -> String {
    let (template, date) = manPageInputs()
    return DaemonOptions.configurationManPage(date: date, template: template)
}

let text: String
switch name {
case "ptkd": text = output(DaemonOptions.table, section: "8")
case "ptk": text = output(adminCommandLine, section: "8")
case "ptk-send": text = output(sendCommandLine, section: "1")
case "ptkd.conf" where invocation.command!.name == "man": text = configurationPage()
default:
    exitWithUsageError("no such program: '\(name)' (ptkd, ptk or ptk-send; ptkd.conf for man)", program: "ptk-docs")
}
print(text, terminator: text.hasSuffix("\n") ? "" : "\n")
