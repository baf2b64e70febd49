/// What an argument or an option's value is, for shell completion and man pages.
public enum Completion: Sendable, Equatable {
    /// Free text: nothing to complete.
    case text
    /// A file; `extensions` (without dots) narrow it, empty means any file.
    case file(extensions: [String])
    case directory
    /// A photo in the receiver's library (`ptk list`).
    case photoName
    /// A device ID or LocalSend fingerprint: of a device refused and pending (`ptk trust
    /// pending`), or of a trusted one (`ptk trust list`).
    case deviceID(DeviceList)
    /// A receiver found over mDNS (`ptk-send --list`), or a host.
    case receiverName
    /// The name of an app password (`ptk app-password list`).
    case appPassword
    /// One of these words.
    case values([String])
}

/// The devices whose IDs complete an argument.
public enum DeviceList: String, Sendable {
    case pending, trusted
}

/// A positional argument.
public struct Argument: Sendable {
    /// Its name in usage lines: "NAME", "<peer>".
    public var name: String
    /// One line for help and the man page.
    public var help: String
    /// What the shell completes it with.
    public var completion: Completion
    /// True when it may be given more than once ("NAME...").
    public var repeats: Bool
    /// True when it may be left out ("[NAME]").
    public var optional: Bool

    /// Defaults: free text, given exactly once.
    public init(
        _ name: String, _ help: String, completion: Completion = .text, repeats: Bool = false, optional: Bool = false
    ) {
        self.name = name
        self.help = help
        self.completion = completion
        self.repeats = repeats
        self.optional = optional
    }

    /// "NAME", "NAME...", "[NAME]" or "[NAME...]".
    public var usage: String {
        let core = name + (repeats ? "..." : "")
        return optional ? "[\(core)]" : core
    }
}

/// A command of a program with subcommands ("list", "trust allow").
public struct Command: Sendable {
    /// The words that name it: ["trust", "allow"].
    public var words: [String]
    /// One line: what it does.
    public var summary: String
    /// More, for `PROGRAM COMMAND --help` and the man page; may be empty.
    public var details: String
    /// Its positional arguments, in order.
    public var arguments: [Argument]
    /// The heading it is listed under in help.
    public var group: String

    /// `words` is the name as typed, split on spaces ("trust allow").
    public init(_ words: String, group: String, _ summary: String, arguments: [Argument] = [], details: String = "") {
        self.words = words.split(separator: " ").map(String.init)
        self.group = group
        self.summary = summary
        self.arguments = arguments
        self.details = details
    }

    /// "trust allow".
    public var name: String { words.joined(separator: " ") }
}

/// An option. `Key` is the program's own enum, so code asks for `.sort`, never for "sort".
public struct Option<Key: Hashable & Sendable>: Sendable {
    /// What code asks for: the program's own enum case.
    public var key: Key
    /// The long name without dashes ("sort").
    public var name: String
    /// A one-letter alias ("o" for `-o`), if any.
    public var short: Character?
    /// The value's name ("PATH"), or nil for a flag.
    public var valueName: String?
    /// The values it takes, when they are a fixed list (checked when parsing).
    public var allowedValues: [String]
    /// One line of help, without the default (`helpWithDefault` adds it).
    public var help: String
    /// The default as a user would write it, read from the real default; nil when there is none.
    public var defaultText: String?
    /// False when `defaultText` describes the default ("the host name") rather than being a value.
    public var defaultIsValue: Bool
    /// The commands that take it (their names, "trust allow"); nil: every command.
    public var commands: [String]?
    /// What the shell completes its value with; `.values(allowedValues)` when those are fixed.
    public var completion: Completion
    /// True for an option that does something else instead (`--list`): arguments are not needed.
    public var acts: Bool
    /// Options it goes with; one of them must be given too.
    public var requires: [Key]

    /// `value` nil makes a flag; `completion` nil completes from `allowed`, or free text when that is empty.
    public init(
        _ key: Key, _ name: String, short: Character? = nil, value: String? = nil, allowed: [String] = [],
        help: String, default defaultText: String? = nil, defaultIsValue: Bool = true, commands: [String]? = nil,
        acts: Bool = false, requires: [Key] = [], completion: Completion? = nil
    ) {
        self.acts = acts
        self.requires = requires
        self.key = key
        self.name = name
        self.short = short
        self.valueName = value
        self.allowedValues = allowed
        self.help = help
        self.defaultText = defaultText
        self.defaultIsValue = defaultIsValue
        self.commands = commands
        self.completion = completion ?? (allowed.isEmpty ? .text : .values(allowed))
    }

    /// The help text with its default.
    public var helpWithDefault: String {
        guard let defaultText else { return help }
        return defaultIsValue ? "\(help) (default \(defaultText))" : "\(help) (default: \(defaultText))"
    }

    /// "[-o PATH]", "[--json]": as a usage line shows it.
    public var usage: String {
        "[" + (short.map { "-\($0)" } ?? "--\(name)") + (valueName.map { " \($0)" } ?? "") + "]"
    }

    var spec: OptionSpec { OptionSpec(name, value: valueName, short: short, help: helpWithDefault) }
}

/// An exit status and what it means.
public struct ExitStatus: Sendable {
    /// The status the process exits with.
    public var code: Int32
    /// What it means, one line for help and the man page's EXIT STATUS.
    public var meaning: String
    /// Takes both as given; `all(_:)` makes the list from a program's `ExitStatusCode` enum.
    public init(_ code: Int32, _ meaning: String) {
        self.code = code
        self.meaning = meaning
    }

    /// Every case of a program's exit status enum, in order.
    public static func all<E: ExitStatusCode>(_: E.Type) -> [ExitStatus] {
        E.allCases.map { ExitStatus($0.rawValue, $0.meaning) }
    }
}

/// A program's exit statuses: one enum per program, each case with what it means.
public protocol ExitStatusCode: RawRepresentable, CaseIterable, Sendable where RawValue == Int32 {
    var meaning: String { get }
}

/// A command line and what it does.
public struct Example: Sendable {
    /// The command line as a user would type it.
    public var command: String
    /// What it does, shown under it in help and the man page.
    public var explanation: String
    /// Takes both as given; help and the man page show examples in the table's order.
    public init(_ command: String, _ explanation: String) {
        self.command = command
        self.explanation = explanation
    }
}

/// A parsed command line: the command (for programs that have commands), its arguments and
/// the options given, by key, in command-line order.
public struct Invocation<Key: Hashable & Sendable>: Sendable {
    /// The command named, or nil (a program without commands, or `--help`/`--version` alone).
    public var command: Command?
    /// The positional arguments after the command's words.
    public var arguments: [String]
    /// Each option given, with its value (nil for a flag), in command-line order; use `has`, `value`, `values`.
    public var options: [(key: Key, value: String?)]
    /// `--help` was given: the rest of the line went unchecked; `parseOrExit` prints help and exits 0.
    public var wantsHelp = false
    /// `--version` was given: the rest went unchecked; `parseOrExit` prints the version and exits 0
    /// (help wins when both are given).
    public var wantsVersion = false

    /// True when the option was given.
    public func has(_ key: Key) -> Bool { options.contains { $0.key == key } }
    /// The last value given for the option.
    public func value(_ key: Key) -> String? { options.last { $0.key == key }?.value }
    /// Every value given for the option, in order.
    public func values(_ key: Key) -> [String] { options.filter { $0.key == key }.compactMap(\.value) }
}

/// One program's whole command line, declared once: usage, `--help`, parsing and validation
/// come from it, and so can man pages and shell completion.
public struct CommandTable<Key: Hashable & Sendable>: Sendable {
    /// The program's name, as usage lines and the man page show it.
    public var program: String
    /// One line, for the man page's NAME and the top of help.
    public var summary: String
    /// Paragraphs for help and DESCRIPTION, separated by blank lines.
    public var description: String
    /// Commands; empty for a program without them.
    public var commands: [Command]
    /// The positional arguments of a program without commands.
    public var arguments: [Argument]
    /// Every option, in the order help lists them.
    public var options: [Option<Key>]
    /// Extra usage lines after the main one ("ptk-send --list [--json]").
    public var otherUsages: [String]
    /// Text after the commands in help (notes that apply to several).
    public var notes: String
    /// What each exit status means, in order, for help and EXIT STATUS.
    public var exitStatuses: [ExitStatus]
    /// Command lines with what they do, for help and EXAMPLES.
    public var examples: [Example]
    /// Options that say where the state is (ptk's --dir): shell completion passes those typed
    /// on to the command that lists the values (`ptk __complete photos --dir PATH`).
    public var completionContext: [Key]

    /// `commands` empty makes a program without commands, which takes `arguments` instead.
    public init(
        program: String, summary: String, description: String, commands: [Command] = [], arguments: [Argument] = [],
        options: [Option<Key>], otherUsages: [String] = [], notes: String = "", exitStatuses: [ExitStatus],
        examples: [Example] = [],
        completionContext: [Key] = []
    ) {
        self.completionContext = completionContext
        self.program = program
        self.summary = summary
        self.description = description
        self.commands = commands
        self.arguments = arguments
        self.options = options
        self.otherUsages = otherUsages
        self.notes = notes
        self.exitStatuses = exitStatuses
        self.examples = examples
    }

    /// Every program takes these two; they are not keys of its own.
    public static var standardOptions: [OptionSpec] {
        [
            OptionSpec("help", short: "h", help: "show this help and exit"),
            OptionSpec("version", help: "show the version and exit"),
        ]
    }

    /// The usage line: "ptk [OPTIONS] COMMAND [ARGUMENTS]", "ptk-send [OPTIONS] <peer> FILE...".
    public var usageLine: String {
        if !commands.isEmpty { return "\(program) [OPTIONS] COMMAND [ARGUMENTS]" }
        return ([program, "[OPTIONS]"] + arguments.map(\.usage)).joined(separator: " ")
    }

    /// A command's usage: "ptk show NAME [--json]".
    public func usage(of command: Command) -> String {
        "\(program) \(signature(of: command))"
    }

    /// A command with its arguments and options: "show NAME [--json]".
    func signature(of command: Command) -> String {
        ([command.name] + command.arguments.map(\.usage) + options(of: command).map(\.usage)).joined(separator: " ")
    }

    /// The options `command` takes besides those every command takes.
    public func options(of command: Command) -> [Option<Key>] {
        options.filter { $0.commands?.contains(command.name) == true }
    }

    /// The options every command takes.
    public var commonOptions: [Option<Key>] { options.filter { $0.commands == nil } }

    /// The OPTIONS lines of help: every option, then --help and --version.
    public var optionLines: String {
        helpLines(for: options.map(\.spec) + Self.standardOptions)
    }

    /// The commands by group, as help lists them: a heading, then one aligned line per command.
    public var commandLines: String {
        var groups: [String] = []
        for c in commands where !groups.contains(c.group) { groups.append(c.group) }
        let left = commands.map(signature(of:))
        let width = min(30, (left.map(\.count).max() ?? 0) + 2)
        var sections: [String] = []
        for group in groups {
            var text = "\(group):"
            for (l, c) in zip(left, commands) where c.group == group {
                if l.count + 2 > width {
                    text += "\n  \(l)\n" + String(repeating: " ", count: width + 2) + c.summary
                } else {
                    text += "\n  " + l + String(repeating: " ", count: width - l.count) + c.summary
                }
            }
            sections.append(text)
        }
        return sections.joined(separator: "\n\n")
    }

    /// `PROGRAM --help`.
    public var help: String {
        var text = "Usage: \(usageLine)\n"
        for other in otherUsages { text += "       \(other)\n" }
        text += "\n\(description)\n"
        if !commands.isEmpty {
            text += "\n\(commandLines)\n"
        } else if !arguments.isEmpty {
            text += "\nArguments:\n" + alignedLines(arguments.map { ($0.usage, $0.help) }) + "\n"
        }
        if !notes.isEmpty { text += "\n\(notes)\n" }
        text += "\nOptions:\n\(optionLines)\n"
        text += "\nExit status:\n" + alignedLines(exitStatuses.map { (String($0.code), $0.meaning) }) + "\n"
        if !examples.isEmpty {
            text +=
                "\nExamples:\n" + examples.map { "  \($0.command)\n      \($0.explanation)" }.joined(separator: "\n")
                + "\n"
        }
        return String(text.dropLast())
    }

    /// `PROGRAM COMMAND --help`.
    public func help(for command: Command) -> String {
        var text = "Usage: \(usage(of: command))\n\n\(command.summary)\n"
        if !command.details.isEmpty { text += "\n\(command.details)\n" }
        if !command.arguments.isEmpty {
            text += "\nArguments:\n" + alignedLines(command.arguments.map { ($0.usage, $0.help) }) + "\n"
        }
        let own = options(of: command).map(\.spec)
        if !own.isEmpty { text += "\nOptions:\n" + helpLines(for: own) + "\n" }
        text += "\nCommon options:\n" + helpLines(for: commonOptions.map(\.spec) + Self.standardOptions) + "\n"
        text += "\nSee '\(program) --help' for the other commands and the exit statuses."
        return text
    }

    /// The command that `words` begins with: the one with the most words that match.
    func command(in words: [String]) -> Command? {
        commands.filter { words.starts(with: $0.words) }.max { $0.words.count < $1.words.count }
    }

    /// "list, show or trust": the next words that would name a command after `prefix`.
    func nextWords(after prefix: [String]) -> String {
        var seen: [String] = []
        for c in commands
        where c.words.count > prefix.count && c.words.starts(with: prefix) && !seen.contains(c.words[prefix.count]) {
            seen.append(c.words[prefix.count])
        }
        return listed(seen, "or")
    }

    /// Parses `args` (without the program name). `--help` and `--version` stop the checks there:
    /// the caller prints help (for the command, when one is named) or the version.
    public func parse(_ args: [String]) throws(UsageError) -> Invocation<Key> {
        let raw = try parseArguments(args, options: options.map(\.spec) + Self.standardOptions)
        var invocation = Invocation<Key>(command: nil, arguments: raw.positionals, options: [])
        for (name, value) in raw.options {
            switch name {
            case "help": invocation.wantsHelp = true
            case "version": invocation.wantsVersion = true
            default:
                let option = options.first { $0.name == name }!
                invocation.options.append((option.key, value))
            }
        }
        if !commands.isEmpty {
            invocation.command = command(in: raw.positionals)
            if let c = invocation.command { invocation.arguments = Array(raw.positionals.dropFirst(c.words.count)) }
        }
        if invocation.wantsHelp || invocation.wantsVersion { return invocation }

        var arguments = self.arguments
        var what = program
        if !commands.isEmpty {
            guard let command = invocation.command else {
                // The longest run of words that begins some command: "trust" of "trust frob".
                var prefix: [String] = []
                for word in raw.positionals {
                    guard commands.contains(where: { $0.words.starts(with: prefix + [word]) }) else { break }
                    prefix.append(word)
                }
                let kind = prefix.isEmpty ? "" : prefix.joined(separator: " ") + " "
                if raw.positionals.count > prefix.count {
                    throw UsageError(
                        "unknown \(kind)command '\(raw.positionals[prefix.count])' (\(nextWords(after: prefix)))")
                }
                throw UsageError("missing \(kind)command (\(nextWords(after: prefix)))")
            }
            arguments = command.arguments
            what = "\(program) \(command.name)"
            for given in invocation.options {
                let option = options.first { $0.key == given.key }!
                guard let takers = option.commands, !takers.contains(command.name) else { continue }
                throw UsageError(
                    "option '--\(option.name)' does not apply to '\(command.name)'; it goes with \(listed(takers.map { "'\($0)'" }, "and"))"
                )
            }
        }
        for given in invocation.options {
            let option = options.first { $0.key == given.key }!
            if !option.allowedValues.isEmpty, let value = given.value, !option.allowedValues.contains(value) {
                throw UsageError(
                    "invalid value '\(value)' for --\(option.name): expected \(listed(option.allowedValues, "or"))")
            }
        }
        for given in invocation.options {
            let option = options.first { $0.key == given.key }!
            if !option.requires.isEmpty, !option.requires.contains(where: invocation.has) {
                let names = options.filter { option.requires.contains($0.key) }.map { "--\($0.name)" }
                throw UsageError("--\(option.name) goes with \(listed(names, "or"))")
            }
        }
        if invocation.options.contains(where: { given in options.contains { $0.key == given.key && $0.acts } }) {
            return invocation
        }
        let required = arguments.filter { !$0.optional }.count
        if invocation.arguments.count < required {
            let missing = arguments.filter { !$0.optional }[invocation.arguments.count]
            let usage = invocation.command.map { self.usage(of: $0) } ?? usageLine
            throw UsageError("missing \(missing.name): \(usage)")
        }
        if !arguments.contains(where: \.repeats), invocation.arguments.count > arguments.count {
            throw UsageError("unexpected argument '\(invocation.arguments[arguments.count])' after \(what)")
        }
        return invocation
    }
}

/// "a, b or c".
func listed(_ items: [String], _ conjunction: String) -> String {
    guard items.count > 1 else { return items.first ?? "" }
    return items.dropLast().joined(separator: ", ") + " \(conjunction) " + items.last!
}

/// Two aligned columns, indented by two spaces.
func alignedLines(_ rows: [(String, String)]) -> String {
    let width = (rows.map(\.0.count).max() ?? 0) + 2
    return rows.map { "  " + $0.0 + String(repeating: " ", count: width - $0.0.count) + $0.1 }.joined(separator: "\n")
}
