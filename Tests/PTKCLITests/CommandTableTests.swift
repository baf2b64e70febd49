import PTKAdminCommandLine
import PTKCLI
import PTKClient
import PTKConfiguration
import PTKProtocol
import PTKSendCommandLine
import PTKSystem
import PTKTestTags
import Testing

/// The usage error `args` make, or nil when they parse.
private func refusal<Key>(_ table: CommandTable<Key>, _ args: [String]) -> String? {
    do {
        _ = try table.parse(args)
        return nil
    } catch { return error.message }
}

@Suite("ptk's command table", .tags(.unit))
struct AdminCommandLineTests {
    let table = adminCommandLine

    @Test("every command of the enum is in the table, and every command of the table in the enum")
    func commandsMatchTheEnum() {
        #expect(Set(table.commands.map(\.name)) == Set(AdminCommand.allCases.map(\.rawValue)))
        #expect(table.commands.count == AdminCommand.allCases.count)
    }

    @Test(
        "a command parses with its arguments, and options by typed key",
        arguments: [
            (["list", "--sort", "size", "--json"], AdminCommand.list, [String]()),
            (["show", "IMG_1"], .show, ["IMG_1"]),
            (["-o", "/tmp/t.png", "thumbnail", "IMG_1"], .thumbnail, ["IMG_1"]),
            (["rm", "a", "b", "c"], .rm, ["a", "b", "c"]),
            (["note", "a", "the", "beach"], .note, ["a", "the", "beach"]),
            (["id"], .id, []),
            (["id", "localsend"], .idLocalSend, []),
            (["trust", "allow", "MFRG", "Anna's", "phone"], .trustAllow, ["MFRG", "Anna's", "phone"]),
            (["trust", "allow", "MFRG"], .trustAllow, ["MFRG"]),
            (["--dir", "/srv/p", "gallery"], .gallery, []),
            (["app-password", "add", "phone", "--access", "full", "--json"], .appPasswordAdd, ["phone"]),
            (["app-password", "add", "phone"], .appPasswordAdd, ["phone"]),
            (["app-password", "list", "--json"], .appPasswordList, []),
            (["app-password", "remove", "phone"], .appPasswordRemove, ["phone"]),
        ])
    func parses(args: [String], command: AdminCommand, arguments: [String]) throws {
        let invocation = try table.parse(args)
        #expect(AdminCommand(try #require(invocation.command)) == command)
        #expect(invocation.arguments == arguments)
        if args.contains("--sort") { #expect(invocation.value(.sort) == "size" && invocation.has(.json)) }
        if args.contains("--dir") { #expect(invocation.value(.dir) == "/srv/p") }
        if args.contains("--access") { #expect(invocation.value(.access) == "full" && invocation.has(.json)) }
    }

    @Test(
        "mistakes are usage errors that say what was expected",
        arguments: [
            (
                ["frob"],
                "unknown command 'frob' (list, show, watch, thumbnail, rename, rm, note, rate, export, import, gallery, id, trust, web-link, web-password, web-sessions or app-password)"
            ),
            (
                [],
                "missing command (list, show, watch, thumbnail, rename, rm, note, rate, export, import, gallery, id, trust, web-link, web-password, web-sessions or app-password)"
            ),
            (["trust"], "missing trust command (list, pending, allow, remove or deny)"),
            (["trust", "frob"], "unknown trust command 'frob' (list, pending, allow, remove or deny)"),
            (["app-password"], "missing app-password command (add, list or remove)"),
            (
                ["app-password", "add"],
                "missing NAME: ptk app-password add NAME [--json] [--host HOST] [--access upload|full] [--qr]"
            ),
            (
                ["app-password", "add", "x", "--access", "read"],
                "invalid value 'read' for --access: expected upload or full"
            ),
            (
                ["app-password", "list", "--access", "full"],
                "option '--access' does not apply to 'app-password list'; it goes with 'app-password add'"
            ),
            (["app-password", "remove", "x", "y"], "unexpected argument 'y' after ptk app-password remove"),
            (["show"], "missing NAME: ptk show NAME [--json]"),
            (["rename", "a"], "missing NEW: ptk rename NAME NEW"),
            (["show", "a", "b"], "unexpected argument 'b' after ptk show"),
            (["id", "x"], "unexpected argument 'x' after ptk id"),
            (["list", "--sort", "colour"], "invalid value 'colour' for --sort: expected name, time, taken or size"),
            (["list", "--frob"], "unknown option '--frob'"),
        ])
    func mistakes(args: [String], message: String) {
        #expect(refusal(table, args) == message)
    }

    @Test("an option a command does not take is refused, naming the commands that take it")
    func misplacedOptions() throws {
        for option in table.options {
            guard let takers = option.commands else {
                // Options every command takes pass with any of them.
                for command in table.commands {
                    let args =
                        command.words + command.arguments.filter { !$0.optional }.map { _ in "x" } + [
                            "--\(option.name)"
                        ] + (option.valueName == nil ? [] : ["v"])
                    #expect(refusal(table, args) == nil, "\(args)")
                }
                continue
            }
            for command in table.commands where !takers.contains(command.name) {
                let args =
                    command.words + command.arguments.filter { !$0.optional }.map { _ in "x" } + ["--\(option.name)"]
                    + (option.valueName == nil ? [] : [option.allowedValues.first ?? "v"])
                let message = try #require(refusal(table, args), "\(args) parsed")
                #expect(
                    message.hasPrefix("option '--\(option.name)' does not apply to '\(command.name)'; it goes with "),
                    "\(message)")
                for taker in takers { #expect(message.contains("'\(taker)'")) }
            }
        }
    }

    @Test("help lists every command, option and exit status; a command's help gives its arguments and options")
    func help() throws {
        for command in table.commands { #expect(table.help.contains("  \(command.name)"), "\(command.name)") }
        for option in table.options { #expect(table.help.contains("--\(option.name)")) }
        for status in AdminExitStatus.allCases {
            #expect(table.help.contains("  \(status.rawValue)  ".prefix(6)) && table.help.contains(status.meaning))
        }
        let show = try #require(table.commands.first { $0.name == "show" })
        let text = table.help(for: show)
        #expect(text.hasPrefix("Usage: ptk show NAME [--json]\n"))
        #expect(text.contains("--json") && !text.contains("--sort"))
        let invocation = try table.parse(["show", "--help"])
        #expect(invocation.wantsHelp && invocation.command?.name == "show")
    }

    @Test(
        "--access takes the app passwords' kinds of access, upload by default; `app-password remove` completes the names"
    )
    func accessValues() throws {
        let access = try #require(table.options.first { $0.key == .access })
        #expect(access.defaultText == "upload" && access.allowedValues == ["upload", "full"])
        let remove = try #require(table.commands.first { $0.name == "app-password remove" })
        #expect(remove.arguments.map(\.completion) == [.appPassword])
    }

    @Test("the default --sort shown is the one list uses")
    func sortDefault() throws {
        let sort = try #require(table.options.first { $0.key == .sort })
        #expect(sort.defaultText == "time" && sort.allowedValues == ["name", "time", "taken", "size"])
    }
}

@Suite("ptk-send's command table", .tags(.unit))
struct SendCommandLineTests {
    let table = sendCommandLine

    @Test("options set the settings; defaults come from SendOptions, WaitPolicy and the protocol")
    func settings() throws {
        let defaults = try SendSettings(table.parse(["h", "a.png"]))
        #expect(defaults.options.window == SendOptions().window && defaults.options.timeout == SendOptions().timeout)
        #expect(defaults.parallel == defaultParallelSessions && defaults.waitPolicy == WaitPolicy())
        #expect(defaults.defaultPort == ProtocolLimits.defaultPort && !defaults.plaintext && !defaults.quiet)
        // Each default help shows parses back to the default.
        for option in table.options where option.valueName != nil && option.defaultIsValue {
            guard let text = option.defaultText else { continue }
            let s = try SendSettings(table.parse(["--\(option.name)", text, "h", "a.png"]))
            #expect(
                s.options.window == defaults.options.window && s.options.timeout == defaults.options.timeout
                    && s.parallel == defaults.parallel && s.waitPolicy == defaults.waitPolicy
                    && s.defaultPort == defaults.defaultPort,
                "--\(option.name) \(text) is not the default")
        }
        let s = try SendSettings(
            table.parse([
                "--window", "8", "--parallel", "2", "--wait", "90s", "--timeout", "5", "--port", "4000",
                "--name", "laptop", "-q", "h", "a.png", "b.png",
            ]))
        #expect(
            s.options.window == 8 && s.parallel == 2 && s.waitPolicy.limit == .seconds(90)
                && s.options.timeout == .seconds(5))
        #expect(s.defaultPort == 4000 && s.options.name == "laptop" && s.quiet)
    }

    @Test(
        "bad values and combinations are usage errors naming the option",
        arguments: [
            (["--parallel", "9", "h", "a.png"], "invalid value '9' for --parallel: expected 1-8"),
            (["--parallel", "0", "h", "a.png"], "invalid value '0' for --parallel: expected 1-8"),
            (["--window", "65", "h", "a.png"], "invalid value '65' for --window: expected 1-64"),
            (
                ["--wait", "soon", "h", "a.png"],
                "invalid value 'soon' for --wait: expected a duration, such as 10m, or 0"
            ),
            (
                ["--expect-id", "ABC", "h", "a.png"],
                "invalid value 'ABC' for --expect-id: expected a device ID (52 characters A-Z, 2-7; dashes ignored)"
            ),
            (
                ["--plaintext", "--expect-id", String(repeating: "A", count: 52), "h", "a.png"],
                "--expect-id needs TLS: drop --plaintext"
            ),
            (["--name", "", "h", "a.png"], "--name must not be empty"),
        ])
    func badValues(args: [String], message: String) throws {
        let invocation = try table.parse(args)
        #expect(throws: UsageError(message)) { try SendSettings(invocation) }
    }

    @Test(
        "--list, --id and --forget need no peer; --json goes with --list or with sending; sending needs a peer and a file"
    )
    func actions() {
        #expect(refusal(table, ["--list"]) == nil)
        #expect(refusal(table, ["--list", "--json"]) == nil)
        #expect(refusal(table, ["--id"]) == nil)
        #expect(refusal(table, ["--forget", "kitchen"]) == nil)
        #expect(refusal(table, ["--json"]) == "missing <peer>: ptk-send [OPTIONS] <peer> FILE...")
        #expect(refusal(table, ["--json", "h", "a.png"]) == nil)
        #expect(refusal(table, ["--json", "--keep-folders", "--follow", "h", "Pictures"]) == nil)
        #expect(refusal(table, []) == "missing <peer>: ptk-send [OPTIONS] <peer> FILE...")
        #expect(refusal(table, ["h"]) == "missing FILE: ptk-send [OPTIONS] <peer> FILE...")
    }

    @Test("help lists every option with the real defaults, and every exit status")
    func help() {
        #expect(
            table.help.contains(
                "--parallel N       sessions at once, 1-8 (1: one session, files in order) (default \(defaultParallelSessions))"
            ))
        #expect(table.help.contains("(default \(SendOptions().window))"))
        for status in SendExitCode.allCases { #expect(table.help.contains(status.meaning), "\(status)") }
        #expect(Set(table.exitStatuses.map(\.code)).count == table.exitStatuses.count)
    }
}

@Suite("ptk-send --list", .tags(.unit))
struct ReceiverListingTests {
    let id = DeviceID(parsing: String(repeating: "A", count: 52))!

    @Test("JSON comes from an encoder: names with quotes and backslashes stay intact")
    func json() throws {
        let known = try KnownReceivers(path: "/nonexistent/known-receivers")
        let r = ReceiverListing(
            name: "Anna's \"big\" \\ TV", host: "tv.local", addresses: ["192.0.2.5", "fe80::1"], port: 47850,
            txt: ["v": "1", "id": id.compact], known: known)
        #expect(
            ReceiverListing.json([r])
                == "[{\"addresses\":[\"192.0.2.5\",\"fe80::1\"],\"host\":\"tv.local\",\"id\":\"\(id.compact)\",\"name\":\"Anna's \\\"big\\\" \\\\ TV\",\"port\":47850,\"status\":\"new\",\"version\":\"1\"}]"
        )
        #expect(ReceiverListing.json([]) == "[]")
    }

    @Test("status: new, known, CHANGED or no TLS; text lines up the names")
    func status() throws {
        var known = try KnownReceivers(path: "/nonexistent/known-receivers")
        known.remember(
            KnownReceiver(id: id, name: "kitchen", address: "192.0.2.1:47850", firstSeen: WallTime(seconds: 0)))
        let other = DeviceID(parsing: String(repeating: "B", count: 51) + "A")!
        let list = [
            ReceiverListing(
                name: "kitchen", host: "k.local", addresses: ["192.0.2.1"], port: 47850,
                txt: ["v": "1", "id": id.compact], known: known),
            ReceiverListing(
                name: "Kitchen", host: "k.local", addresses: ["192.0.2.1"], port: 47850,
                txt: ["v": "1", "id": other.compact], known: known),
            ReceiverListing(name: "old", host: "o.local", addresses: ["2001:db8::1"], port: 1, txt: [:], known: known),
        ]
        #expect(list.map(\.status) == ["known", "CHANGED", "no TLS"])
        #expect(
            ReceiverListing.text(list) == """
                kitchen  192.0.2.1:47850  protocol v1  \(id.short)  known
                Kitchen  192.0.2.1:47850  protocol v1  \(other.short)  CHANGED
                old      [2001:db8::1]:1  protocol v?  -  no TLS
                """)
    }
}
