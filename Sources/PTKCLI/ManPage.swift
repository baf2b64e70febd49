/// Man pages in mdoc(7), made from a command table and a template that holds the prose no
/// table holds (more description, ENVIRONMENT, FILES, SEE ALSO). A template is mdoc text with
/// placeholder lines, each replaced by what the table says:
///
/// - `@HEADER@`: `.Dd`, `.Dt`, `.Os`;
/// - `@NAME@`, `@SYNOPSIS@`;
/// - `@DESCRIPTION@`: the heading and the table's description (the template's lines after it
///   continue the section), then the positional arguments of a program without commands;
/// - `@COMMANDS@`, `@OPTIONS@`, `@EXIT_STATUS@`, `@EXAMPLES@`: each section whole.
///
/// So an option cannot exist without its entry in the page: the page is made from the table
/// that parses the command line.
public enum Mdoc {
    /// `text` as mdoc text lines: backslashes escaped, a line starting with a dot or a quote
    /// protected, `code` in quotes, and option-like words ("--dir") with real minus signs.
    public static func text(_ text: String) -> String {
        var out = ""
        var inCode = false
        for ch in text {
            switch ch {
            case "\\": out += "\\e"
            case "`":
                out += inCode ? "\\(rq" : "\\(lq"
                inCode.toggle()
            default: out.append(ch)
            }
        }
        // Minus signs where a word starts with dashes: "--dir", "-o".
        var result = ""
        var previous: Character = " "
        for ch in out {
            if ch == "-"
                && (previous == " " || previous == "(" || previous == "[" || previous == "\n"
                    || previous == "-" && result.hasSuffix("\\-"))
            {
                result += "\\-"
            } else {
                result.append(ch)
            }
            previous = ch
        }
        // A new sentence starts a new line (mdoc's rule: the formatter then spaces sentences).
        var sentences = ""
        let chars = Array(result)
        for i in chars.indices {
            let breaks =
                chars[i] == " " && i > 0 && ".?!".contains(chars[i - 1]) && i + 1 < chars.count
                && chars[i + 1].isUppercase
            sentences.append(breaks ? "\n" : chars[i])
        }
        return sentences.split(separator: "\n", omittingEmptySubsequences: false).map { line -> String in
            let trimmed = line.drop { $0 == " " }
            if trimmed.first == "." || trimmed.first == "'" { return "\\&" + trimmed }
            return String(trimmed)
        }.joined(separator: "\n")
    }

    /// Paragraphs (separated by blank lines) as text lines with `.Pp` between them.
    public static func paragraphs(_ text: String) -> String {
        var paragraphs: [String] = []
        var current: [Substring] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.allSatisfy({ $0 == " " }) {
                if !current.isEmpty { paragraphs.append(current.joined(separator: "\n")) }
                current = []
            } else {
                current.append(line)
            }
        }
        if !current.isEmpty { paragraphs.append(current.joined(separator: "\n")) }
        return paragraphs.map { Self.text($0) }.joined(separator: "\n.Pp\n")
    }

    /// A literal block (examples, file contents): shown as typed.
    public static func literal(_ lines: [String]) -> String {
        ".Bd -literal -offset indent\n"
            + lines.map { line in
                let escaped = line.replacingEvery("\\", with: "\\e")
                return escaped.first == "." || escaped.first == "'" ? "\\&" + escaped : escaped
            }.joined(separator: "\n") + "\n.Ed"
    }

    /// A tag list: each item's head (mdoc macros, as `.It` takes them) and its body (text lines).
    public static func tagList(_ items: [(head: String, body: String)]) -> String {
        ".Bl -tag -width Ds\n" + items.map { ".It \($0.head)\n\($0.body)" }.joined(separator: "\n") + "\n.El"
    }

    /// An option as `.It` or `.Op` take it: "Fl o Ar PATH" or "Fl \-output Ar PATH".
    static func flag(_ name: String, short: Character?, value: String?) -> String {
        let flag = short.map { "Fl \($0)" } ?? "Fl \\-\(name)"
        return flag + (value.map { " Ar \(argument($0))" } ?? "")
    }

    /// A word as a macro argument: quoted when it holds spaces or mdoc's delimiters alone.
    public static func argument(_ word: String) -> String {
        word.contains(" ") || word.count == 1 && "|.,;:()[]".contains(word) ? "\"\(word)\"" : word
    }

    /// One usage line ("ptk-send --list [--json]") as SYNOPSIS macros.
    static func synopsis(usage: String) -> String {
        var lines = [".Nm"]
        for word in usage.split(separator: " ").dropFirst() {
            // "a | b": a choice between forms (escaped: to mdoc, "|" is punctuation closing a macro).
            if word == "|" {
                lines.append(".No \\&|")
                continue
            }
            var w = Substring(word)
            var optional = false
            if w.hasPrefix("["), w.hasSuffix("]") {
                optional = true
                w = w.dropFirst().dropLast()
            }
            let macro: String
            if w.hasPrefix("--") {
                let parts = w.dropFirst(2).split(separator: " ", maxSplits: 1)
                macro = "Fl \\-\(parts[0])"
            } else if w.hasPrefix("-") {
                macro = "Fl \(w.dropFirst())"
            } else {
                macro = "Ar \(argument(String(w)))"
            }
            lines.append(optional ? ".Op \(macro)" : ".\(macro)")
        }
        return lines.joined(separator: "\n")
    }
}

extension String {
    /// Every occurrence of `target` replaced (Foundation's replacingOccurrences, without Foundation).
    func replacingEvery(_ target: String, with replacement: String) -> String {
        split(separator: target, omittingEmptySubsequences: false).joined(separator: replacement)
    }
}

extension Argument {
    /// As SYNOPSIS and item heads show it: "Ar NAME", "Op Ar NAME ...", "Ar FILE ...".
    var mdoc: String {
        let word = "Ar \(Mdoc.argument(name.trimmingAngles))" + (repeats ? " No ..." : "")
        return optional ? "Oo \(word) Oc" : word
    }
}

extension String {
    /// "<peer>" as "peer": mdoc's `Ar` sets it apart already.
    var trimmingAngles: String { hasPrefix("<") && hasSuffix(">") ? String(dropFirst().dropLast()) : self }
}

extension CommandTable {
    /// The man page of this program in `section` ("1", "8"), made from `template` (see `Mdoc`);
    /// `date` is the page's date as mdoc writes it ("November 30, 2026").
    public func manPage(section: String, date: String, template: String) -> String {
        var out: [String] = []
        for line in template.split(separator: "\n", omittingEmptySubsequences: false) {
            switch line {
            case "@HEADER@": out.append(".Dd \(date)\n.Dt \(program.uppercased()) \(section)\n.Os")
            case "@NAME@": out.append(".Sh NAME\n.Nm \(program)\n.Nd \(Mdoc.text(summary))")
            case "@SYNOPSIS@": out.append(".Sh SYNOPSIS\n" + synopsisMdoc)
            case "@DESCRIPTION@": out.append(".Sh DESCRIPTION\n" + descriptionMdoc)
            case "@COMMANDS@": if !commands.isEmpty { out.append(".Sh COMMANDS\n" + commandsMdoc) }
            case "@OPTIONS@": out.append(".Sh OPTIONS\n" + optionsMdoc)
            case "@EXIT_STATUS@":
                out.append(
                    ".Sh EXIT STATUS\n" + Mdoc.tagList(exitStatuses.map { (String($0.code), Mdoc.text($0.meaning)) }))
            case "@EXAMPLES@":
                if !examples.isEmpty {
                    out.append(
                        ".Sh EXAMPLES\n"
                            + examples.map {
                                Mdoc.text($0.explanation.prefix(1).uppercased() + $0.explanation.dropFirst() + ":")
                                    + "\n" + Mdoc.literal(["$ " + $0.command])
                            }
                            .joined(separator: "\n.Pp\n"))
                }
            default: out.append(String(line))
            }
        }
        return out.joined(separator: "\n")
    }

    private var synopsisMdoc: String {
        if commands.isEmpty {
            var lines = [".Nm", ".Op Ar options"] + arguments.map { "." + $0.mdoc }
            for other in otherUsages { lines.append(Mdoc.synopsis(usage: other)) }
            return lines.joined(separator: "\n")
        }
        return commands.map { command in
            ([".Nm", ".Op Ar options", ".Cm \(command.words.joined(separator: " "))"]
                + command.arguments.map { "." + $0.mdoc }
                + options(of: command).map { ".Op \(Mdoc.flag($0.name, short: $0.short, value: $0.valueName))" })
                .joined(separator: "\n")
        }.joined(separator: "\n")
    }

    private var descriptionMdoc: String {
        var text = Mdoc.paragraphs(description)
        if !arguments.isEmpty {
            text += "\n.Pp\nIts arguments:\n" + Mdoc.tagList(arguments.map { ($0.mdoc, Mdoc.text($0.help)) })
        }
        return text
    }

    private var commandsMdoc: String {
        var groups: [String] = []
        for c in commands where !groups.contains(c.group) { groups.append(c.group) }
        var sections: [String] = []
        for group in groups {
            let items = commands.filter { $0.group == group }.map { command -> (String, String) in
                let head =
                    (["Cm \(command.words.joined(separator: " "))"] + command.arguments.map(\.mdoc)
                    // Oo/Oc, not Op: on one line each Op would reach to the line's end, nesting the next.
                    + options(of: command).map { "Oo \(Mdoc.flag($0.name, short: $0.short, value: $0.valueName)) Oc" })
                    .joined(separator: " ")
                var body = Mdoc.text(command.summary.prefix(1).uppercased() + command.summary.dropFirst() + ".")
                if !command.details.isEmpty { body += "\n" + Mdoc.text(command.details) }
                if command.arguments.contains(where: { !$0.help.isEmpty }) {
                    body += "\n" + Mdoc.tagList(command.arguments.map { ($0.mdoc, Mdoc.text($0.help)) })
                }
                return (head, body)
            }
            sections.append(".Ss \(Mdoc.text(group))\n" + Mdoc.tagList(items))
        }
        if !notes.isEmpty { sections.append(".Pp\n" + Mdoc.paragraphs(notes)) }
        return sections.joined(separator: "\n")
    }

    private var optionsMdoc: String {
        var items = options.map { option -> (String, String) in
            var head = Mdoc.flag(option.name, short: option.short, value: option.valueName)
            if option.short != nil { head += " , " + Mdoc.flag(option.name, short: nil, value: option.valueName) }
            var body = Mdoc.text(
                option.helpWithDefault.prefix(1).uppercased() + option.helpWithDefault.dropFirst() + ".")
            if let only = option.commands {
                body += "\n" + Mdoc.text("Taken by " + listed(only, "and") + ".")
            }
            return (head, body)
        }
        for standard in Self.standardOptions {
            var head = Mdoc.flag(standard.name, short: standard.short, value: standard.valueName)
            if standard.short != nil { head += " , " + Mdoc.flag(standard.name, short: nil, value: standard.valueName) }
            items.append((head, Mdoc.text(standard.help.prefix(1).uppercased() + standard.help.dropFirst() + ".")))
        }
        return Mdoc.tagList(items)
    }
}
