import PTKVocabulary

/// One command-line option.
public struct OptionSpec: Sendable {
    /// The long name without dashes ("port").
    public var name: String
    /// The name of its value in help ("N"), or nil for a flag that takes none.
    public var valueName: String?
    /// One line of help.
    public var help: String
    /// A one-letter alias ("h"), if any.
    public var short: Character?

    /// `value` names the option's value in help; nil makes it a flag.
    public init(_ name: String, value: String? = nil, short: Character? = nil, help: String) {
        self.name = name
        self.valueName = value
        self.help = help
        self.short = short
    }
}

/// A command line that does not parse; the program prints it and exits 64.
public struct UsageError: Error, Equatable, Sendable, CustomStringConvertible {
    /// What is wrong, in words for the user; printed after the program's name.
    public var message: String
    /// The message should name the option or argument at fault.
    public init(_ message: String) { self.message = message }
    /// The message alone, as the program prints it.
    public var description: String { message }
}

/// The result of parsing: options in the order given, and the other arguments.
public struct ParsedArguments: Equatable, Sendable {
    /// Each option given, with its value (nil for flags), in command-line order.
    public var options: [(name: String, value: String?)]
    /// Arguments that are not options.
    public var positionals: [String]

    /// Written out because tuples are not `Equatable`: same positionals, same options in the same order.
    public static func == (a: ParsedArguments, b: ParsedArguments) -> Bool {
        a.positionals == b.positionals
            && a.options.map { "\($0.name)=\($0.value ?? "<nil>")" }
                == b.options.map { "\($0.name)=\($0.value ?? "<nil>")" }
    }

    /// True when the flag `name` was given.
    public func has(_ name: String) -> Bool { options.contains { $0.name == name } }

    /// The last value given for `name`.
    public func last(_ name: String) -> String? { options.last { $0.name == name }?.value }
}

/// Parses `--name value`, `--name=value`, `-x value`, flags, and `--` (everything after it is
/// positional). Options and positionals may be mixed.
public func parseArguments(_ args: [String], options specs: [OptionSpec]) throws(UsageError) -> ParsedArguments {
    var result = ParsedArguments(options: [], positionals: [])
    var i = 0
    while i < args.count {
        let arg = args[i]
        i += 1
        if arg == "--" {
            result.positionals.append(contentsOf: args[i...])
            break
        }
        let spec: OptionSpec
        var inlineValue: String? = nil
        if arg.hasPrefix("--") {
            var name = String(arg.dropFirst(2))
            if let eq = name.firstIndex(of: "=") {
                inlineValue = String(name[name.index(after: eq)...])
                name = String(name[..<eq])
            }
            guard let found = specs.first(where: { $0.name == name }) else {
                throw UsageError("unknown option '--\(name)'")
            }
            spec = found
        } else if arg.hasPrefix("-") && arg.count == 2 && arg != "--" {
            guard let found = specs.first(where: { $0.short != nil && "-\($0.short!)" == arg }) else {
                throw UsageError("unknown option '\(arg)'")
            }
            spec = found
        } else if arg.hasPrefix("-") && arg.count > 1 {
            throw UsageError("unknown option '\(arg)'")
        } else {
            result.positionals.append(arg)
            continue
        }
        if spec.valueName == nil {
            if inlineValue != nil { throw UsageError("option '--\(spec.name)' takes no value") }
            result.options.append((spec.name, nil))
        } else if let inlineValue {
            result.options.append((spec.name, inlineValue))
        } else {
            guard i < args.count else { throw UsageError("option '--\(spec.name)' needs a value (\(spec.valueName!))") }
            result.options.append((spec.name, args[i]))
            i += 1
        }
    }
    return result
}

/// The OPTIONS part of a help text: one aligned line per option.
public func helpLines(for specs: [OptionSpec]) -> String {
    let left = specs.map { spec -> String in
        var s = spec.short.map { "-\($0), " } ?? "    "
        s += "--\(spec.name)"
        if let v = spec.valueName { s += " \(v)" }
        return s
    }
    return alignedLines(Array(zip(left, specs.map(\.help))))
}

/// Parses a byte size: a whole number with an optional K, M, G or T suffix (powers of 1024,
/// an optional trailing "B" or "iB" allowed, any case): "512M", "100m", "2GiB", "4096".
public func parseSize(_ text: String) -> Int64? {
    var s = text.trimmingSpaces.uppercased()
    if s.hasSuffix("IB") { s.removeLast(2) } else if s.hasSuffix("B") { s.removeLast() }
    var shift: Int64 = 0
    switch s.last {
    case "K": shift = 10
    case "M": shift = 20
    case "G": shift = 30
    case "T": shift = 40
    default: break
    }
    if shift > 0 { s.removeLast() }
    guard !s.isEmpty, s.allSatisfy({ $0.isASCII && $0.isNumber }), let n = Int64(s) else { return nil }
    let (value, overflow) = n.multipliedReportingOverflow(by: Int64(1) << shift)
    return overflow ? nil : value
}

/// Parses a duration: a number of seconds with an optional s, m, h or d suffix ("30", "90s",
/// "1.5", "24h"), to the millisecond.
public func parseDuration(_ text: String) -> Duration? {
    var s = text.trimmingSpaces.lowercased()
    var factor = 1.0
    switch s.last {
    case "s": factor = 1
    case "m": factor = 60
    case "h": factor = 3600
    case "d": factor = 86_400
    default: break
    }
    if let last = s.last, last.isLetter { s.removeLast() }
    guard let v = Double(s), v.isFinite, v >= 0, v * factor < 1e15 else { return nil }
    return .milliseconds(Int64((v * factor * 1000).rounded()))
}

/// Parses a whole number within `range`.
public func parseInteger(_ text: String, in range: ClosedRange<Int>) -> Int? {
    guard let v = Int(text.trimmingSpaces), range.contains(v) else { return nil }
    return v
}
