import PTKAdminCommandLine
import PTKCLI
import PTKConfiguration
import PTKSystem
import PTKTLS
import PTKTrust
import PTKVocabulary

/// `ptk app-password add NAME [--access upload|full] [--json] [--qr] | list [--json] | remove NAME`:
/// the passwords of ptkd's WebDAV door (PTKTrust's AppPasswords: STATE/web/app-passwords,
/// which ptkd reads again at the next request after a change).
struct AppPasswordCommands {
    let configuration: DaemonConfiguration
    let invocation: Invocation<AdminOption>
    var passwords: AppPasswords { AppPasswords(directory: configuration.webDirectory, lockPatience: lockFilePatience) }
    var web: WebCommands { WebCommands(configuration: configuration, invocation: invocation) }

    func run(_ command: AdminCommand, _ words: [String]) {
        switch command {
        case .appPasswordAdd: add(words[0])
        case .appPasswordList: list()
        case .appPasswordRemove: remove(words[0])
        default: preconditionFailure("not an app-password command: \(command.rawValue)")
        }
    }

    func add(_ name: String) {
        guard AppPasswords.validName(name) else {
            usageError(
                "\(quotedForTerminal(name)) is not a valid app password name: 1 to 64 of A-Z a-z 0-9 . _ -, not starting with . or -"
            )
        }
        // The table allows only upload and full.
        let access = invocation.value(.access).flatMap(AppAccess.init(rawValue:)) ?? .upload
        var made: (AppPassword, password: String)?
        web.attempt { made = try passwords.add(name: name, access: access, now: WallTime.now.seconds) }
        guard let (entry, password) = made else { return }
        web.warnIfWebOff("the password")
        let server = web.baseURL("the URL")
        let url = server + "/dav/"
        let link =
            invocation.has(.qr) ? AppPasswords.loginLink(user: entry.name, password: password, server: server) : nil
        // No certificate yet: ptkd makes it when it first starts with web = on; the URL works from then.
        let fingerprint = (try? Identity.load(from: configuration.webDirectory + "/tls", keyType: .ecP256))
            .map { colonHex($0.certificateFingerprint) }
        if invocation.has(.json) {
            writeStandardOutput(
                "{\"url\": \(jsonString(url)), \"user\": \(jsonString(entry.name)), \"password\": \(jsonString(password)), "
                    + "\"access\": \(jsonString(entry.access.rawValue)), \"certificate\": \(fingerprint.map(jsonString) ?? "null")"
                    + (link.map { ", \"link\": \(jsonString($0))" } ?? "") + "}\n"
            )
        } else {
            var out = "url: \(url)\nuser: \(entry.name)\npassword: \(password)\n"
            if let fingerprint { out += "certificate SHA-256: \(fingerprint)\n" }
            if let link {
                // Scanned by the phone app's "log in with a QR code" (its login screen's QR button).
                out += "link: \(link)\n\n"
                if let code = WebCommands.qrCode(link) {
                    out += WebCommands.render(code, colours: FileDescriptor.standardOutput.isTerminal)
                }
            }
            writeStandardOutput(out)
        }
        writeToStandardError(
            "The password is shown only now: ptkd keeps just its SHA-256. Access \(entry.access.rawValue): "
                + (entry.access == .upload
                    ? "adding photos (phones, backup apps)." : "all a file manager does, deleting included."))
    }

    func list() {
        var list: [AppPassword] = []
        web.attempt { list = try passwords.list() }
        if invocation.has(.json) {
            let items = list.map { p in
                "{\"name\": \(jsonString(p.name)), \"access\": \(jsonString(p.access.rawValue)), \"id\": \(jsonString(p.id)), "
                    + "\"created\": \(jsonString(WallTime(seconds: p.created).iso8601)), "
                    + "\"lastUsed\": \(p.lastUsed.map { jsonString(WallTime(seconds: $0).iso8601) } ?? "null"), "
                    + "\"address\": \(p.lastAddress.map(jsonString) ?? "null")}"
            }
            writeStandardOutput(
                terminalSafeJSON(items.isEmpty ? "[]\n" : "[\n  " + items.joined(separator: ",\n  ") + "\n]\n"))
            return
        }
        if list.isEmpty {
            writeToStandardError("No app passwords (\(passwords.path)); `ptk app-password add NAME` makes one.")
            return
        }
        let rows =
            [["NAME", "ACCESS", "CREATED (UTC)", "LAST USED (UTC)", "ADDRESS"]]
            + list.map { p in
                [
                    p.name, p.access.rawValue, WallTime(seconds: p.created).minutes,
                    p.lastUsed.map { WallTime(seconds: $0).minutes } ?? "never",
                    escapedForTerminal(p.lastAddress ?? "-"),
                ]
            }
        var widths = [Int](repeating: 0, count: 5)
        for row in rows { for (i, cell) in row.enumerated() { widths[i] = max(widths[i], cell.unicodeScalars.count) } }
        writeStandardOutput(
            rows.map { row in
                row.enumerated().map { i, cell in
                    i == row.count - 1
                        ? cell : cell + String(repeating: " ", count: widths[i] - cell.unicodeScalars.count + 2)
                }
                .joined() + "\n"
            }.joined())
    }

    func remove(_ name: String) {
        web.attempt {
            guard try passwords.remove(name: name) else {
                throw TrustError("no app password is named '\(name)' (`ptk app-password list` lists them)")
            }
            print("removed the app password \(quotedForTerminal(name)): it no longer logs in")
        }
    }
}
