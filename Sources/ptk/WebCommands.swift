import CQREncode
import PTKAdminCommandLine
import PTKCLI
import PTKConfiguration
import PTKSystem
import PTKTLS
import PTKTrust
import PTKVocabulary

/// `ptk web-link|web-password|web-sessions [revoke ID|all]`: who may use ptkd's web interface
/// (PTKTrust's WebAccess: files in STATE/web that ptkd reads at every request).
struct WebCommands {
    let configuration: DaemonConfiguration
    let invocation: Invocation<AdminOption>
    var access: WebAccess { WebAccess(directory: configuration.webDirectory, lockPatience: lockFilePatience) }

    func run(_ command: AdminCommand, _ words: [String]) {
        switch command {
        case .webLink: link()
        case .webPassword: password()
        case .webSessions: sessions()
        case .webSessionsRevoke: revoke(words[0])
        default: preconditionFailure("not a web command: \(command.rawValue)")
        }
    }

    /// Runs `body`; a file that cannot be read or written exits 74, a refusal 1.
    func attempt(_ body: () throws -> Void) {
        do { try body() } catch let error as TrustError {
            die(error.description, error.kind == .refused ? .notFound : .ioError)
        } catch {
            die("\(error)", .ioError)
        }
    }

    func link() {
        warnIfWebOff("the link")
        let fingerprint: String
        do {
            fingerprint = try Identity.load(from: configuration.webDirectory + "/tls", keyType: .ecP256)
                .certificateFingerprint
        } catch {
            die(
                "ptkd has not made its web certificate yet (\(configuration.webDirectory)/tls): start ptkd with web = on first",
                .nothingYet)
        }
        let name = invocation.value(.name) ?? "browser"
        var secret = ""
        attempt { secret = try access.createLink(name: name) }
        let url = baseURL("the link") + "/login/\(secret)"
        var out = url + "\n\n"
        if let code = Self.qrCode(url) {
            out += Self.render(code, colours: FileDescriptor.standardOutput.isTerminal) + "\n"
        }
        out += """
            Open the link (or scan the code) within 10 minutes; it works once. The browser is then
            logged in as "\(name)" for 30 days (`ptk web-sessions` lists it).
            The certificate is self-signed: the browser warns the first time. Its SHA-256 must read
            \(colonHex(fingerprint))

            """
        writeStandardOutput(out)
    }

    func password() {
        if invocation.has(.remove) {
            attempt {
                let had = try access.removePassword()
                print(
                    had
                        ? "removed the web password: only one-time links (ptk web-link) log in now"
                        : "no web password was set")
            }
            return
        }
        let text: String
        if FileDescriptor.standardInput.isTerminal {
            let first = readSecretLine(prompt: "New web password: ") ?? ""
            let again = readSecretLine(prompt: "Again: ") ?? ""
            guard first == again else { die("the two passwords differ; nothing changed", .usage) }
            text = first
        } else {
            text = readLine(strippingNewline: true) ?? ""
        }
        guard text.count >= 8 else { die("a web password has at least 8 characters; nothing changed", .usage) }
        guard text.utf8.count <= 1024 else { die("a web password has at most 1024 bytes; nothing changed", .usage) }
        attempt { try access.setPassword(text) }
        print(
            "set the web password (\(access.passwordFile)); the login page at https://\(Self.defaultHost()):\(webPort())/ asks for it"
        )
    }

    func sessions() {
        attempt {
            let list = try access.sessions()
            let links = try access.openLinks()
            if list.isEmpty { writeToStandardError("No browser is logged in (\(access.sessionsFile)).") }
            for s in list {
                print(
                    "\(escapedForTerminal(s.id))  \(quotedForTerminal(s.name)) from \(escapedForTerminal(s.address)), logged in \(s.created.minutes), last used \(s.lastUsed.minutes), until \(s.expires.minutes)"
                )
            }
            if !links.isEmpty {
                writeToStandardError(
                    "\(links.count) one-time link(s) not used yet, the last good until \(links.map(\.expires).max()!.minutes)."
                )
            }
        }
    }

    func revoke(_ id: String) {
        attempt {
            let ended = try access.revoke(id)
            if ended.isEmpty { print("no browser was logged in") }
            for s in ended { print("logged out \(escapedForTerminal(s.id)) \(quotedForTerminal(s.name))") }
        }
    }

    // MARK: Helpers

    /// Warns when ptkd's configuration has the web interface off and no running ptkd serves it
    /// (web = on given as a flag needs no warning).
    func warnIfWebOff(_ what: String) {
        let running = ListeningFile.read(stateDirectory: configuration.effectiveStateDirectory)
        if !configuration.web && (running.flatMap { ListeningFile.port("web", in: $0) }) == nil {
            writeToStandardError(
                "ptk: warning: web = off in ptkd's configuration: \(what) works once ptkd serves the web interface (web = on)"
            )
        }
    }

    /// "https://HOST:PORT": HOST from --host, else `defaultHost()`; PORT from `webPort`.
    func baseURL(_ what: String) -> String {
        let host = invocation.value(.host) ?? Self.defaultHost()
        return "https://\(host.contains(":") ? "[\(host)]" : host):\(webPort(what))"
    }

    /// The web interface's port: the one the running ptkd listens on (STATE/listening), else
    /// the configuration's, said on standard error (`what` uses it: "the link").
    func webPort(_ what: String = "the link") -> UInt16 {
        let doors = ListeningFile.read(stateDirectory: configuration.effectiveStateDirectory)
        if let doors, let port = ListeningFile.port("web", in: doors) { return port }
        if doors == nil {
            writeToStandardError(
                "ptk: ptkd is not running here; \(what) uses web-port from the configuration (\(configuration.webPort))"
            )
        } else {
            writeToStandardError(
                "ptk: the running ptkd does not serve the web interface (web = off); \(what) uses web-port from the configuration (\(configuration.webPort))"
            )
        }
        return configuration.webPort
    }

    /// The first IPv4 address of an interface that is up and not loopback, else `HOST.local`.
    static func defaultHost() -> String {
        // No interface list: the mDNS name still reaches the host from most phones.
        let interfaces = (try? ipv4MulticastInterfaces()) ?? []
        return interfaces.first { !$0.isLoopback }?.address ?? hostName() + ".local"
    }

    /// The QR code of `text` (error correction M, the smallest version that holds it): its
    /// modules, true for dark, row by row. The corresponding C function is `QRcode_encodeString`.
    static func qrCode(_ text: String) -> [[Bool]]? {
        guard let code = QRcode_encodeString(text, 0, QR_ECLEVEL_M, QR_MODE_8, 1) else { return nil }
        defer { QRcode_free(code) }
        let width = Int(code.pointee.width)
        return (0..<width).map { y in (0..<width).map { x in code.pointee.data[y * width + x] & 1 == 1 } }
    }

    /// A QR code as text, two rows of modules a line (Unicode half blocks: █ both dark, ▀ the
    /// upper, ▄ the lower), with a quiet zone of 2 modules. With `colours`, black on white
    /// whatever the terminal's own colours are (a dark terminal would invert the code).
    static func render(_ modules: [[Bool]], colours: Bool) -> String {
        let quiet = 2
        let size = modules.count + 2 * quiet
        func dark(_ x: Int, _ y: Int) -> Bool {
            let (mx, my) = (x - quiet, y - quiet)
            return my >= 0 && my < modules.count && mx >= 0 && mx < modules.count && modules[my][mx]
        }
        var out = ""
        for y in stride(from: 0, to: size, by: 2) {
            if colours { out += "\u{1B}[30;47m" }
            for x in 0..<size {
                switch (dark(x, y), dark(x, y + 1)) {
                case (true, true): out += "█"
                case (true, false): out += "▀"
                case (false, true): out += "▄"
                case (false, false): out += " "
                }
            }
            if colours { out += "\u{1B}[0m" }
            out += "\n"
        }
        return out
    }
}
