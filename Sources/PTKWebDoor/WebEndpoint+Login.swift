import PTKConfiguration
import PTKHTTP
import PTKLibrary
import PTKProtocol
import PTKStore
import PTKSystem
import PTKTrust
import PTKVocabulary
import PTKWeb

/// Logging in and out: one-time links, the password, the session cookie.
extension WebDoor {
    // MARK: Logging in

    func sessionCookie(_ secret: String) -> String {
        "\(Self.cookieName)=\(secret); Path=/; Max-Age=\(WebAccess.sessionLifetime); Secure; HttpOnly; SameSite=Strict"
    }

    func loginPage(_ c: WebContext) -> Response {
        c.session != nil ? redirect("/") : html(.ok, pages.login(hasPassword: access.hasPassword))
    }

    /// POST /logout (its form's token checked by the `csrf` step): the session ends, the cookie goes.
    func logout(_ r: Request, _ c: SignedIn) -> Response {
        // A session file that cannot be written leaves the session listed; the cookie goes anyway.
        do { try access.revoke(c.session.id) } catch {
            r.log("cannot end the session in \(access.sessionsFile): \(error)")
        }
        r.log("logged out", always: true)
        return redirect("/login", cookie: "\(Self.cookieName)=; Path=/; Max-Age=0; Secure; HttpOnly; SameSite=Strict")
    }

    func linkLogin(_ r: Request, _ secret: String) -> Response {
        let result: (WebSession, String)?
        do { result = try access.redeemLink(secret, address: r.address) } catch {
            r.log("cannot use the web login files in \(access.directory): \(error); answered 500")
            return html(
                .internalServerError, pages.error("The receiver cannot read its login files; see its log.", viewer: nil)
            )
        }
        guard let (session, cookie) = result else {
            r.log("a login link that was used already, has expired or was never made; answered 401")
            return html(
                .unauthorized,
                pages.login(
                    hasPassword: access.hasPassword,
                    message: "This link was used already or has expired: make a new one with sudo ptk web-link."))
        }
        r.logSubject = ""  // a cookie of an earlier session may have named one
        r.log(
            "logged in with a one-time link as \(quotedForTerminal(session.name)), session \(session.id)", always: true)
        return redirect("/", cookie: sessionCookie(cookie))
    }

    func passwordLogin(_ r: Request) throws(HTTPError) -> Response {
        // Anyone may post here: the form is read only up to `loginFormLimit`.
        let form = try Self.readForm(r, limit: Self.loginFormLimit)
        let address = r.address
        // A wrong password's page keeps where the login goes on to.
        let next = Self.returnPath(form["next"])
        if let other = otherSite(r.head) {
            r.log("refused a login: \(other); answered 403")
            return html(.forbidden, pages.error("This login came from another site", viewer: nil))
        }
        enum Outcome {
            case lockedOut, everyoneWaits, noPassword
            case wrong(lockedNow: Bool)
            case right
        }
        let outcome: Outcome = throttle.withLimiter { limiter in
            if limiter.isLockedOut(address, now: .now) { return .lockedOut }
            // Too many wrong guesses at this receiver from anywhere: none is checked for a while.
            if guesses.isSpent { return .everyoneWaits }
            guard access.hasPassword else { return .noPassword }
            if access.checkPassword(form["password"] ?? "") {
                limiter.succeeded(address)
                return .right
            }
            guesses.failed("password", from: address)
            return .wrong(lockedNow: limiter.failed(address, now: .now))
        }
        switch outcome {
        case .lockedOut:
            return html(
                .tooManyRequests,
                pages.login(
                    hasPassword: true, message: "Too many wrong passwords from \(address): try again in 5 minutes.",
                    next: next))
        case .everyoneWaits:
            r.log("a login while too many wrong passwords or PINs were given this minute; answered 429")
            return html(
                .tooManyRequests,
                pages.login(
                    hasPassword: true,
                    message: "Too many wrong passwords were given to this receiver: try again in a minute.", next: next)
            )
        case .noPassword:
            return html(
                .unauthorized, pages.login(hasPassword: false, message: "No password is set: use a one-time link."))
        case .wrong(let locked):
            r.log("wrong password" + (locked ? "; \(address) must wait 5 minutes" : ""))
            return html(
                locked ? .tooManyRequests : .unauthorized,
                pages.login(
                    hasPassword: true,
                    message: locked
                        ? "Too many wrong passwords from \(address): try again in 5 minutes." : "Wrong password.",
                    next: next))
        case .right:
            let made: (WebSession, String)
            do { made = try access.login(name: form["name"] ?? "", address: address) } catch {
                r.log("cannot write \(access.sessionsFile): \(error); answered 500")
                return html(
                    .internalServerError,
                    pages.error("The receiver cannot write its sessions file; see its log.", viewer: nil))
            }
            r.logSubject = ""  // a cookie of an earlier session may have named one
            r.log(
                "logged in with the password as \(quotedForTerminal(made.0.name)), session \(made.0.id)", always: true)
            return redirect(next ?? "/", cookie: sessionCookie(made.1))
        }
    }

    /// The page a login goes on to (the login form's `next`, which `signedOut` put there): a
    /// path of this site alone, at most 256 bytes of `A-Z a-z 0-9 / . _ - ~` starting with one
    /// "/" (no "//" or a backslash, which a browser would take for another host; no "%", no query);
    /// nil for anything else, and the login goes to the gallery.
    static func returnPath(_ path: String?) -> String? {
        guard let path, (1...256).contains(path.utf8.count), path.utf8.first == UInt8(ascii: "/"),
            !path.contains("//")
        else { return nil }
        let allowed = path.utf8.allSatisfy { c in
            (0x41...0x5A).contains(c) || (0x61...0x7A).contains(c) || (0x30...0x39).contains(c)
                || c == UInt8(ascii: "/") || c == UInt8(ascii: ".") || c == UInt8(ascii: "_") || c == UInt8(ascii: "-")
                || c == UInt8(ascii: "~")
        }
        return allowed ? path : nil
    }
}
