import PTKSystem

/// Prints `Error: message` on standard error and exits with `code`.
public func exitWithError(_ message: String, code: Int32) -> Never {
    writeToStandardError("Error: \(message)")
    exitProcess(code)
}

/// Prints a usage error with a hint (and the usage line, if given) and exits 64.
public func exitWithUsageError(_ message: String, program: String, usageLine: String? = nil) -> Never {
    var text = message
    if let usageLine { text += "\nUsage: \(usageLine)" }
    text += "\nTry '\(program) --help' for more information."
    exitWithError(text, code: 64)
}

/// Parses the process's arguments against `options`. A usage error exits 64 with a hint;
/// `--help` prints `usage` and `--version` prints the version, both exiting 0.
public func parseCommandLineOrExit(options: [OptionSpec], program: String, version: String, usage: String,
                                   usageLine: String? = nil) -> ParsedArguments {
    let parsed: ParsedArguments
    do {
        parsed = try parseArguments(Array(CommandLine.arguments.dropFirst()), options: options)
    } catch {
        exitWithUsageError(error.message, program: program, usageLine: usageLine)
    }
    if parsed.has("help") {
        print(usage)
        exitProcess(0)
    }
    if parsed.has("version") {
        print("\(program) \(version) (protocol v1)")
        exitProcess(0)
    }
    return parsed
}
