import PTKHTTP
import PTKSystem
import PTKTrust
import PTKVocabulary
import PTKWeb

/// A phone app logging in by itself: Nextcloud's "login flow v2", as the Nextcloud, ownCloud and
/// OpenCloud apps and the desktop clients speak it (docs/OPERATIONS.md, "Logging a phone app
/// in"). The app starts a flow (`POST /index.php/login/v2`, open), opens the flow's page in a
/// browser, where a person logged in to these pages approves it (a new `upload` app password is
/// made) or denies it, and polls (`POST /index.php/login/v2/poll`, open) until the password is
/// there; it gets it once. The table of flows is PTKTrust's `LoginFlows` (in memory, bounded,
/// 20 minutes); the password is never logged and never on a page.
extension WebDoor {
    /// Where the flow's routes live (the path Nextcloud's clients ask for).
    static let loginFlowPath = "/index.php/login/v2"
    /// A poll's form (one token) is read up to this size.
    static let pollFormLimit = 4 << 10

    /// The open routes: starting a flow and polling it.
    static func addLoginFlowRoutes(_ routes: inout RouteTable<WebContext>) {
        routes.add([.post], loginFlowPath, traits: .open) { r, c throws(HTTPError) in c.door.startLoginFlow(r) }
        routes.add([.post], loginFlowPath + "/poll", traits: [.open, .body]) { r, c throws(HTTPError) in
            try c.door.pollLoginFlow(r)
        }
    }

    /// The routes behind a session: a flow's page, and its approval or denial (a form with the
    /// session's CSRF token, `decision` approve or deny, and the password's `name`).
    static func addLoginFlowPages(_ routes: inout RouteGroup<WebContext, SignedIn>) {
        let secret: [String: PathCapture] = ["secret": .lowerHex(2 * LoginFlows.loginSecretBytes)]
        routes.add([.get, .head], loginFlowPath + "/flow/{secret}", captures: secret) { r, c throws(HTTPError) in
            try c.door.loginFlowPage(r, c)
        }
        routes.add([.post], loginFlowPath + "/flow/{secret}", captures: secret, traits: [.change, .form]) {
            r, c throws(HTTPError) in
            try c.door.decideLoginFlow(r, c)
        }
    }

    /// The request's path as a log line names it: a login flow's page without its secret.
    static func pathForLog(_ r: Request) -> String {
        let path = r.head.path
        let page = loginFlowPath + "/flow/"
        return path.hasPrefix(page) ? page + "SECRET" : path
    }

    /// The app passwords (STATE/web/app-passwords), which the WebDAV door checks.
    var appPasswords: AppPasswords { AppPasswords(directory: configuration.webDirectory) }

    // MARK: The device's side

    /// What `POST /index.php/login/v2` answers: where to poll, with what, and the page to open.
    struct FlowStart: Encodable {
        struct Poll: Encodable {
            let token: String
            let endpoint: String
        }
        let poll: Poll
        let login: String
    }

    /// What an approved flow's poll answers, once.
    struct FlowCredentials: Encodable {
        let server: String
        let loginName: String
        let appPassword: String
    }

    /// A refusal the device's app may show.
    struct FlowRefusal: Encodable { let message: String }

    func flowJSON<T: Encodable>(_ status: HTTPStatus, _ value: T) -> Response {
        .bytes(status, jsonBody(value), type: "application/json; charset=utf-8", headers: ["Cache-Control": "no-store"])
    }

    /// POST /index.php/login/v2 (its body, if any, is ignored): a new flow for the device the
    /// User-Agent names, its addresses made from the Host header (`serverAddress`: 400 without
    /// a valid one); 429 beyond the table's bounds; 403 from another site's page in a browser.
    func startLoginFlow(_ r: Request) -> Response {
        removeOrphanedPasswords(r)
        if let other = otherSite(r.head) {
            r.log("refused to start a login flow: \(other); answered 403")
            return flowJSON(.forbidden, FlowRefusal(message: "a login cannot be started from another site's page"))
        }
        guard let server = Self.serverAddress(host: r.head.header("host")) else {
            r.log(
                "refused to start a login flow: the Host header \(quotedForLog(r.head.header("host") ?? "")) is not a host name or address; answered 400"
            )
            return flowJSON(.badRequest, FlowRefusal(message: "the Host header is missing or is not a host name"))
        }
        let device = LoginFlows.deviceName(userAgent: r.head.header("user-agent"))
        switch loginFlows.start(LoginFlowRequest(device: device, address: r.address, server: server)) {
        case .failure(let refusal):
            let why =
                refusal == .full
                ? "\(loginFlows.limits.total) logins are waiting already"
                : "\(loginFlows.limits.perAddress) logins from \(r.address) are waiting already"
            r.log("refused to start a login flow for \(quotedForLog(device)): \(why); answered 429")
            return flowJSON(.tooManyRequests, FlowRefusal(message: why + ": approve or deny them, or wait 20 minutes"))
        case .success(let started):
            r.log("started a login flow for \(quotedForLog(device)) (\(loginFlows.count) waiting)")
            return flowJSON(
                .ok,
                FlowStart(
                    poll: FlowStart.Poll(token: started.pollToken, endpoint: server + Self.loginFlowPath + "/poll"),
                    login: server + Self.loginFlowPath + "/flow/" + started.loginSecret))
        }
    }

    /// POST /index.php/login/v2/poll with the form `token=...`: 404 (`[]`) until the flow is
    /// approved (and for no flow: never made, denied, expired or collected), then its
    /// credentials, once.
    func pollLoginFlow(_ r: Request) throws(HTTPError) -> Response {
        let form = try Self.readForm(r, limit: Self.pollFormLimit)
        removeOrphanedPasswords(r)
        switch loginFlows.poll(token: form["token"] ?? "") {
        case .none:
            r.log("a login flow poll for no flow under way (denied, expired, collected or never started); answered 404")
            return .bytes(.notFound, Array("[]".utf8), type: "application/json; charset=utf-8")
        case .pending:
            r.needsNoLogLine()  // the device polls every few seconds until someone approves
            return .bytes(.notFound, Array("[]".utf8), type: "application/json; charset=utf-8")
        case .approved(let credentials):
            r.log(
                "handed the app password \(quotedForTerminal(credentials.loginName)) to the device of its login flow",
                always: true)
            return flowJSON(
                .ok,
                FlowCredentials(
                    server: credentials.server, loginName: credentials.loginName,
                    appPassword: credentials.appPassword))
        }
    }

    // MARK: The person's side

    /// GET /index.php/login/v2/flow/SECRET: the device's request and the forms that approve or
    /// deny it; 404 when the flow is not pending (the secret is never logged).
    func loginFlowPage(_ r: Request, _ c: SignedIn) throws(HTTPError) -> Response {
        removeOrphanedPasswords(r)
        let secret = try r.parameters.require("secret", as: String.self)
        guard let request = loginFlows.pending(login: secret) else { return flowGone(r, c) }
        return html(.ok, pages.loginFlow(flowView(r, secret, request), viewer: c.viewer))
    }

    /// POST /index.php/login/v2/flow/SECRET (`decision` approve or deny; `name` the password's):
    /// approving makes an `upload` app password and leaves it for the device's next poll.
    func decideLoginFlow(_ r: Request, _ c: SignedIn) throws(HTTPError) -> Response {
        removeOrphanedPasswords(r)
        let secret = try r.parameters.require("secret", as: String.self)
        switch c.form["decision"] {
        case "deny":
            guard let request = loginFlows.deny(login: secret) else { return flowGone(r, c) }
            r.log(
                "denied the login flow of \(quotedForLog(request.device)) from \(request.address)", always: true)
            return html(
                .ok,
                pages.loginFlowEnded(
                    title: "Denied", text: "The device was not given a password. You can close this page.",
                    viewer: c.viewer))
        case "approve": return approveLoginFlow(r, c, secret)
        default: throw .status(.badRequest, "approve or deny: the form has neither")
        }
    }

    private func approveLoginFlow(_ r: Request, _ c: SignedIn, _ secret: String) -> Response {
        var typed = Substring(c.form["name"] ?? "")  // a phone's keyboard may add a space
        while typed.first == " " { typed = typed.dropFirst() }
        while typed.last == " " { typed = typed.dropLast() }
        let name = String(typed)
        guard AppPasswords.validName(name) else {
            guard let request = loginFlows.pending(login: secret) else { return flowGone(r, c) }
            return html(
                .badRequest,
                pages.loginFlow(
                    flowView(r, secret, request), viewer: c.viewer,
                    message: "A password's name is 1 to 64 of A-Z a-z 0-9 . _ -, not starting with . or -"))
        }
        guard let request = loginFlows.beginApproval(login: secret) else { return flowGone(r, c) }
        let made: (AppPassword, password: String)
        do { made = try appPasswords.add(name: name, access: .upload, now: WallTime.now.seconds) } catch {
            loginFlows.abandonApproval(login: secret)
            if error.kind == .refused {
                return html(
                    .conflict,
                    pages.loginFlow(flowView(r, secret, request), viewer: c.viewer, message: error.description))
            }
            r.log("cannot write the app passwords (\(appPasswords.path)): \(error); answered 500")
            return html(
                .internalServerError,
                pages.error("The receiver cannot write its app passwords; see its log.", viewer: c.viewer))
        }
        guard
            loginFlows.finishApproval(
                login: secret, loginName: made.0.name, appPassword: made.password, passwordID: made.0.id)
        else {
            removePassword(r, name: made.0.name, id: made.0.id, why: "its login flow ended while it was made")
            return flowGone(r, c)
        }
        r.log(
            "approved the login flow of \(quotedForLog(request.device)) from \(request.address): app password \(quotedForTerminal(name)), upload access",
            always: true)
        return html(
            .ok,
            pages.loginFlowEnded(
                title: "Approved",
                text:
                    "The device gets the app password “\(name)” (upload access) at its next check, within seconds; it can then send photos. You can close this page; `ptk app-password remove \(name)` ends its access.",
                viewer: c.viewer))
    }

    // MARK: Helpers

    private func flowView(_ r: Request, _ secret: String, _ request: LoginFlowRequest) -> WebPages.LoginFlowView {
        // Without the list, the suggestion may be taken: the form says so when it comes back.
        let taken = ((try? appPasswords.list()) ?? []).map(\.name)
        return WebPages.LoginFlowView(
            device: request.device, address: request.address, browserAddress: r.address, server: request.server,
            action: Self.loginFlowPath + "/flow/" + secret,
            suggestedName: LoginFlows.suggestedPasswordName(device: request.device, taken: taken))
    }

    /// The page for a flow that is not pending (approved, denied, expired, never started).
    private func flowGone(_ r: Request, _ c: SignedIn) -> Response {
        r.log("a login flow's page for no flow waiting (approved, denied, expired or never started); answered 404")
        return html(
            .notFound,
            pages.loginFlowEnded(
                title: "This login has ended",
                text:
                    "It was approved or denied already, or it is over 20 minutes old. To log the app in, start again in the app.",
                viewer: c.viewer))
    }

    /// Removes the passwords made for flows that expired before their device collected them.
    func removeOrphanedPasswords(_ r: Request) {
        for orphan in loginFlows.takeOrphans() {
            removePassword(r, name: orphan.name, id: orphan.id, why: "its login flow expired before the device took it")
        }
    }

    /// Removes the app password `name` if it is still the one made (`id`), logging why.
    private func removePassword(_ r: Request, name: String, id: String, why: String) {
        do {
            guard try appPasswords.list().contains(where: { $0.id == id && $0.name == name }) else { return }
            try appPasswords.remove(name: name)
            r.log("removed the app password \(quotedForTerminal(name)): \(why)", always: true)
        } catch {
            r.log("cannot remove the app password \(quotedForTerminal(name)) (\(why)): \(error)", always: true)
        }
    }

    /// "https://HOST[:PORT]" from a Host header, or nil when there is none or it is not one: a
    /// DNS name (labels of 1 to 63 of A-Z a-z 0-9 -, not starting or ending with -, at most
    /// 253 bytes), an IPv4 address, or an IPv6 address in brackets (hex digits, ":" and "."; no
    /// zone), then an optional port (1 to 65535, no leading zero). The name is lower-cased. So
    /// what the flow's addresses hold is the address the device itself used, and nothing a
    /// URL or JSON would read otherwise can come through.
    static func serverAddress(host: String?) -> String? {
        guard let host, (1...300).contains(host.utf8.count) else { return nil }
        var name = host
        var port: Substring?
        if host.hasPrefix("[") {
            guard let close = host.firstIndex(of: "]") else { return nil }
            let inside = host[host.index(after: host.startIndex)..<close]
            guard (2...45).contains(inside.utf8.count), inside.contains(":"),
                inside.utf8.allSatisfy({ isHexDigit($0) || $0 == UInt8(ascii: ":") || $0 == UInt8(ascii: ".") })
            else { return nil }
            let rest = host[host.index(after: close)...]
            if !rest.isEmpty {
                guard rest.hasPrefix(":") else { return nil }
                port = rest.dropFirst()
            }
            name = String(host[...close])
        } else {
            let parts = host.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
            guard parts.count <= 2 else { return nil }
            if parts.count == 2 { port = parts[1] }
            name = String(parts[0])
            guard (1...253).contains(name.utf8.count) else { return nil }
            for label in name.split(separator: ".", omittingEmptySubsequences: false) {
                guard (1...63).contains(label.utf8.count), label.utf8.first != UInt8(ascii: "-"),
                    label.utf8.last != UInt8(ascii: "-"),
                    label.utf8.allSatisfy({ isHexDigit($0) || isLetterOrDigit($0) || $0 == UInt8(ascii: "-") })
                else { return nil }
            }
        }
        if let port {
            guard (1...5).contains(port.utf8.count), port.utf8.first != UInt8(ascii: "0"),
                port.utf8.allSatisfy({ (0x30...0x39).contains($0) }), let value = Int(port), value <= 65535
            else { return nil }
        }
        return "https://" + name.lowercased() + (port.map { ":" + $0 } ?? "")
    }

    private static func isHexDigit(_ c: UInt8) -> Bool {
        (0x30...0x39).contains(c) || (0x61...0x66).contains(c) || (0x41...0x46).contains(c)
    }

    private static func isLetterOrDigit(_ c: UInt8) -> Bool {
        (0x30...0x39).contains(c) || (0x61...0x7A).contains(c) || (0x41...0x5A).contains(c)
    }
}
