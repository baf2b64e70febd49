import PTKSystem

/// The program's name as it was run (ptk, ptkd, ptk-send): the start of every error it prints.
public let programName: String = {
    let first = CommandLine.arguments.first ?? ""
    return first.split(separator: "/").last.map(String.init) ?? "ptk"
}()

/// Prints `PROGRAM: message` on standard error (one line end at the end) and exits with `code`.
public func exitWithError(_ message: String, code: Int32) -> Never {
    writeToStandardError("\(programName): \(message)")
    exitProcess(code)
}

/// Prints a usage error with a hint (and the usage line, if given) and exits 64.
public func exitWithUsageError(_ message: String, program: String, usageLine: String? = nil) -> Never {
    var text = message
    if let usageLine { text += "\nUsage: \(usageLine)" }
    text += "\nTry '\(program) --help' for more information."
    exitWithError(text, code: 64)
}

extension CommandTable {
    /// Parses the process's arguments. A usage error exits 64 with a hint; `--help` prints the
    /// help (of the command, when one is named) and `--version` the version, both exiting 0.
    public func parseOrExit(_ args: [String] = Array(CommandLine.arguments.dropFirst())) -> Invocation<Key> {
        let invocation: Invocation<Key>
        do { invocation = try parse(args) } catch {
            exitWithUsageError(
                error.message, program: program, usageLine: error.message.contains(program + " ") ? nil : usageLine)
        }
        if invocation.wantsHelp {
            print(invocation.command.map { help(for: $0) } ?? help)
            exitProcess(0)
        }
        if invocation.wantsVersion {
            print("\(program) \(ptkVersion) (protocol v1)")
            exitProcess(0)
        }
        return invocation
    }
}
