/// Shell completion for bash, zsh and fish, made from a command table: commands and their
/// words, options (with the commands that take them) and their fixed values, file arguments
/// filtered to the types a command takes, and values read from the real state by asking the
/// program itself (`ptk __complete photos`): never mDNS, which would stall the shell.
///
/// All three scripts work the same way: the words typed so far, without options and option
/// values, are matched against the commands' words, the longest match first; what follows
/// it says which argument is being typed.
struct CompletionModel {
    /// A place in the command line: after `prefix` (command words), the argument at `index`
    /// (or any from `index` on, when `repeats`).
    struct Position {
        var prefix: [String]
        var index: Int
        var repeats: Bool
        var completion: Completion
    }

    var program: String
    /// Options that take a value, with what completes it: ["-o", "--output"].
    var valueOptions: [(flags: [String], completion: Completion)]
    /// Options passed on, with their values, to the command that lists dynamic values.
    var contextFlags: [String]
    /// The options each command prefix takes (nil: every one), with their help.
    var options: [(commands: [String]?, flags: [String], help: String)]
    /// Every command word prefix, longest first ("trust allow", "trust", ..., "").
    var prefixes: [[String]]
    var positions: [Position]
}

extension Completion {
    /// The command that prints the values of a dynamic completion, one a line.
    var valuesCommand: String? {
        switch self {
        case .photoName: return "ptk __complete photos"
        case .deviceID(let list): return "ptk __complete devices \(list.rawValue)"
        case .receiverName: return "ptk-send __complete receivers"
        case .appPassword: return "ptk __complete app-passwords"
        default: return nil
        }
    }
}

extension CommandTable {
    var completionModel: CompletionModel {
        let all =
            options.map { (spec: $0.spec, commands: $0.commands, completion: $0.completion) }
            + Self.standardOptions.map { (spec: $0, commands: nil as [String]?, completion: Completion.text) }
        func flags(_ spec: OptionSpec) -> [String] { (spec.short.map { ["-\($0)"] } ?? []) + ["--\(spec.name)"] }
        let valueOptions = all.filter { $0.spec.valueName != nil }.map { (flags($0.spec), $0.completion) }
        let opts = all.map { ($0.commands, flags($0.spec), $0.spec.help) }
        var prefixes: [[String]] = [[]]
        for c in commands {
            for n in 1...c.words.count where !prefixes.contains(Array(c.words.prefix(n))) {
                prefixes.append(Array(c.words.prefix(n)))
            }
        }
        prefixes.sort { $0.count > $1.count }
        var positions: [CompletionModel.Position] = []
        for prefix in prefixes {
            var next: [String] = []
            for c in commands
            where c.words.count > prefix.count && c.words.starts(with: prefix) && !next.contains(c.words[prefix.count])
            {
                next.append(c.words[prefix.count])
            }
            if !next.isEmpty {
                positions.append(.init(prefix: prefix, index: 0, repeats: false, completion: .values(next)))
            }
            let arguments =
                prefix.isEmpty && commands.isEmpty
                ? self.arguments : commands.first { $0.words == prefix }?.arguments ?? []
            for (i, a) in arguments.enumerated() where a.completion != .text {
                positions.append(.init(prefix: prefix, index: i, repeats: a.repeats, completion: a.completion))
            }
        }
        let context = options.filter { completionContext.contains($0.key) }.flatMap { flags($0.spec) }
        return CompletionModel(
            program: program, valueOptions: valueOptions, contextFlags: context, options: opts, prefixes: prefixes,
            positions: positions)
    }

    /// The bash script (`complete -F`), for /usr/share/bash-completion/completions/PROGRAM.
    public var bashCompletion: String { completionModel.bash }
    /// The zsh script (`#compdef`), for /usr/share/zsh/vendor-completions/_PROGRAM.
    public var zshCompletion: String { completionModel.zsh }
    /// The fish script, for /usr/share/fish/vendor_completions.d/PROGRAM.fish.
    public var fishCompletion: String { completionModel.fish }
}

/// `text` in single quotes for any of the three shells.
private func quoted(_ text: String) -> String { "'" + text.replacingEvery("'", with: "'\\''") + "'" }

extension CompletionModel {
    private var function: String { "_" + program.replacingEvery("-", with: "_") }

    /// The shell-neutral part of each script: which options skip their value when the words
    /// are scanned (those passed on are matched first).
    private var valueFlags: [String] { valueOptions.flatMap(\.flags).filter { !contextFlags.contains($0) } }

    /// The case branch of the word scan that keeps a context option and its value.
    private func contextBranch(_ word: String, _ next: String) -> String {
        contextFlags.isEmpty
            ? "" : "\(contextFlags.joined(separator: "|"))) context+=(\"\(word)\" \"\(next)\"); ((i++)) ;;\n        "
    }

    private func optionFlags(for prefix: [String]) -> [String] {
        let name = prefix.joined(separator: " ")
        return options.filter { $0.commands == nil || $0.commands!.contains(name) }.flatMap(\.flags)
    }

    /// What bash's and zsh's functions share, after their first lines (up to `case $prev in`):
    /// an option's value; the scan of the words typed (`words` from index `first` to the
    /// one at `current`); the longest command prefix they begin with and `n`, the argument
    /// being typed; the options the command takes (`options` makes the line that offers
    /// them); and what completes argument `n` (`action`).
    private func body(
        words: String, first: Int, current: String, count: String,
        options: ([String]) -> String, action: (Completion) -> String
    ) -> String {
        var s = ""
        for (flags, completion) in valueOptions {
            s += "        \(flags.joined(separator: "|"))) \(action(completion)); return ;;\n"
        }
        s += """
                    esac
                fi
                local -a plain context
                local i
                for ((i = \(first); i < \(current); i++)); do
                    case ${\(words)[i]} in
                    \(contextBranch("${\(words)[i]}", "${\(words)[i+1]}"))\(valueFlags.isEmpty ? "--) ;;" : valueFlags.joined(separator: "|") + ") ((i++)) ;;")
                    -*) ;;
                    *) plain+=("${\(words)[i]}") ;;
                    esac
                done
                local typed=" ${plain[*]} " command n

            """
        for (i, prefix) in prefixes.enumerated() {
            let keyword = i == 0 ? "if" : "elif"
            if prefix.isEmpty {
                s +=
                    prefixes.count == 1
                    ? "    command=\"\"; n=\(count)\n" : "    else command=\"\"; n=\(count)\n    fi\n"
            } else {
                s +=
                    "    \(keyword) [[ $typed == \(quoted(" " + prefix.joined(separator: " ") + " "))* ]]; then command=\(quoted(prefix.joined(separator: " "))); n=$(( \(count) - \(prefix.count) ))\n"
            }
        }
        s += """
                if [[ $cur == -* ]]; then
                    case $command in

            """
        for prefix in prefixes {
            s += "        \(quoted(prefix.joined(separator: " ")))) \(options(optionFlags(for: prefix))) ;;\n"
        }
        s += """
                    esac
                    return
                fi
                case $command in

            """
        for prefix in prefixes {
            let here = positions.filter { $0.prefix == prefix }
            if here.isEmpty { continue }
            s += "    \(quoted(prefix.joined(separator: " "))))\n"
            for p in here {
                let test = p.repeats ? "(( n >= \(p.index) ))" : "(( n == \(p.index) ))"
                s += "        \(test) && \(action(p.completion))\n"
            }
            s += "        ;;\n"
        }
        return s
    }

    // MARK: bash

    var bash: String {
        var s = """
            # bash completion for \(program), made from its command table by ptk-docs: do not edit.
            # Adds to COMPREPLY what \(function)_values $1 names, for the word $2.
            \(function)_values() {
                local cur=$2 c e
                case $1 in
                files:*)
                    compopt -o filenames 2>/dev/null
                    while IFS= read -r c; do
                        if [[ -d $c ]]; then COMPREPLY+=("$c"); continue; fi
                        [[ $1 == files: ]] && { COMPREPLY+=("$c"); continue; }
                        for e in ${1#files:}; do [[ ${c,,} == *.$e ]] && COMPREPLY+=("$c"); done
                    done < <(compgen -f -- "$cur")
                    ;;
                dirs)
                    compopt -o filenames 2>/dev/null
                    while IFS= read -r c; do COMPREPLY+=("$c"); done < <(compgen -d -- "$cur")
                    ;;
                words:*)
                    for c in ${1#words:}; do [[ $c == "$cur"* ]] && COMPREPLY+=("$c"); done
                    ;;
                run:*)
                    while IFS= read -r c; do
                        [[ -n $c && $c == "$cur"* ]] && COMPREPLY+=("$(printf '%q' "$c")")
                    done < <(${1#run:} "${context[@]}" 2>/dev/null)
                    ;;
                esac
            }

            \(function)() {
                local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
                COMPREPLY=()
                if (( COMP_CWORD > 1 )); then
                    case $prev in

            """
        s += body(
            words: "COMP_WORDS", first: 1, current: "COMP_CWORD", count: "${#plain[@]}",
            options: { "\(function)_values \(quoted("words:" + $0.joined(separator: " "))) \"$cur\"" },
            action: bashAction)
        s += """
                esac
                return 0
            }
            complete -F \(function) \(program)

            """
        return s
    }

    private func bashAction(_ completion: Completion) -> String {
        let spec: String
        switch completion {
        case .text: return ":"
        case .file(let extensions): spec = "files:" + extensions.joined(separator: " ")
        case .directory: spec = "dirs"
        case .values(let values): spec = "words:" + values.joined(separator: " ")
        default: spec = "run:" + completion.valuesCommand!
        }
        return "\(function)_values \(quoted(spec)) \"$cur\""
    }

    // MARK: zsh

    var zsh: String {
        var s = """
            #compdef \(program)
            # zsh completion for \(program), made from its command table by ptk-docs: do not edit.

            \(function)() {
                local cur=${words[CURRENT]} prev=${words[CURRENT-1]}
                if (( CURRENT > 2 )); then
                    case $prev in

            """
        s += body(
            words: "words", first: 2, current: "CURRENT", count: "${#plain}",
            options: { "compadd -- " + $0.joined(separator: " ") }, action: zshAction)
        s += """
                esac
                return 0
            }

            \(function) "$@"

            """
        return s
    }

    private func zshAction(_ completion: Completion) -> String {
        switch completion {
        case .text: return ":"
        case .file(let extensions):
            if extensions.isEmpty { return "_files" }
            let pattern = extensions.flatMap { [$0, $0.uppercased()] }.joined(separator: "|")
            return "_files -g '*.(\(pattern))'"
        case .directory: return "_files -/"
        case .values(let values): return "compadd -- " + values.map(quoted).joined(separator: " ")
        default: return "compadd -- ${(f)\"$(\(completion.valuesCommand!) \"${context[@]}\" 2>/dev/null)\"}"
        }
    }

    // MARK: fish

    var fish: String {
        let f = "__" + program.replacingEvery("-", with: "_")
        var s = """
            # fish completion for \(program), made from its command table by ptk-docs: do not edit.

            # The words typed before the cursor, without the program, options and option values.
            function \(f)_plain
                set -l skip 0
                for w in (commandline -opc)[2..-1]
                    if test $skip = 1
                        set skip 0
                        continue
                    end
                    switch $w
                        case \(valueOptions.isEmpty ? "--" : valueOptions.flatMap(\.flags).joined(separator: " "))
                            set skip 1
                        case '-*'
                        case '*'
                            echo $w
                    end
                end
            end

            # The options typed that say where the state is, with their values, for the values command.
            function \(f)_context
                set -l words (commandline -opc)[2..-1]
                for i in (seq (count $words))
                    if contains -- $words[$i] \(contextFlags.isEmpty ? "--" : contextFlags.joined(separator: " ")); and test $i -lt (count $words)
                        echo $words[$i]
                        echo $words[(math $i + 1)]
                    end
                end
            end

            # True when the command typed is PREFIX (its words) and the cursor is at argument N
            # (N+: at N or later). The longest command prefix typed is the one that counts.
            function \(f)_at
                set -l plain (\(f)_plain)
                set -l typed " "(string join ' ' -- $plain)" "
                set -l best ''
                for p in \(prefixes.filter { !$0.isEmpty }.map { quoted($0.joined(separator: " ")) }.joined(separator: " "))
                    if string match -q -- " $p *" "$typed"
                        set best $p
                        break
                    end
                end
                test "$best" = "$argv[1]"; or return 1
                set -l n (math (count $plain) - (count (string split -n ' ' -- $argv[1])))
                if string match -q -- '*+' $argv[2]
                    test $n -ge (string trim -r -c + -- $argv[2])
                else
                    test $n -eq $argv[2]
                end
            end

            # True when the command typed begins with PREFIX.
            function \(f)_in
                string match -q -- " $argv[1] *" " "(string join ' ' -- (\(f)_plain))" "
            end

            # The files beside the word typed whose names end in one of the extensions given (any
            # file when none is), and the directories, to go on into.
            function \(f)_files
                set -l token (commandline -ct)
                for file in $token*
                    if test -d $file
                        echo $file/
                    else if test (count $argv) -eq 0
                        echo $file
                    else
                        for e in $argv
                            string match -qi -- "*.$e" $file; and echo $file
                        end
                    end
                end
            end

            complete -c \(program) -f

            """
        for p in positions {
            let at = "\(f)_at \(quoted(p.prefix.joined(separator: " "))) \(p.index)\(p.repeats ? "+" : "")"
            for line in fishArguments(p.completion) {
                s += "complete -c \(program) -n \(quoted(at)) \(line)\n"
            }
        }
        for option in options {
            var line = "complete -c \(program)"
            if let commands = option.commands {
                line += " -n " + quoted(commands.map { "\(f)_in \(quoted($0))" }.joined(separator: "; or "))
            }
            for flag in option.flags {
                line += flag.hasPrefix("--") ? " -l \(flag.dropFirst(2))" : " -s \(flag.dropFirst())"
            }
            if let value = valueOptions.first(where: { $0.flags == option.flags }) {
                // A value is required: what completes it, and no other file.
                line += " -x " + (fishArguments(value.completion).first ?? "")
            }
            line += " -d " + quoted(option.help)
            s += line + "\n"
        }
        return s
    }

    private func fishArguments(_ completion: Completion) -> [String] {
        switch completion {
        case .text: return [""]
        case .file(let extensions):
            return [
                "-a "
                    + quoted("(__\(program.replacingEvery("-", with: "_"))_files \(extensions.joined(separator: " ")))")
            ]
        case .directory: return ["-a " + quoted("(__fish_complete_directories)")]
        case .values(let values): return ["-a " + quoted(values.joined(separator: " "))]
        default:
            return [
                "-a "
                    + quoted(
                        "(\(completion.valuesCommand!) (__\(program.replacingEvery("-", with: "_"))_context) 2>/dev/null)"
                    )
            ]
        }
    }
}
