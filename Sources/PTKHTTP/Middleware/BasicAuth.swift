import PTKDigest
import PTKSystem
import PTKTime
import PTKVocabulary

/// HTTP Basic authentication (RFC 7617), a step a door's middleware runs (`authenticate`): the
/// credentials are checked by `verify` (the caller keeps them on a TLS connection only), wrong
/// ones counted per address by the door's `FailureThrottle`. Missing or wrong credentials are
/// refused 401 with `WWW-Authenticate: Basic realm="…"` (for every method, OPTIONS included:
/// Windows' WebDAV client asks for credentials only after a 401 there); an address that used
/// up its tries is refused 429 without its credentials being checked. A refused request's body
/// is not read: the connection closes after the answer (a PUT may be gigabytes).
public struct BasicAuth<Account, Limiter: FailureLimiter> {
    /// The realm of the `WWW-Authenticate` challenge, which clients show with the password prompt.
    public let realm: String
    /// The door's per-address count of wrong passwords, shared with its other logins.
    public let throttle: FailureThrottle<Limiter>
    /// The account for a user name and password, nil when they are wrong.
    public let verify: (_ name: String, _ password: String) -> Account?
    /// Told the address of each wrong password (the receiver's budget of guesses).
    public let failed: (String) -> Void
    /// Whether that budget is spent: a wrong password is then answered 429 (a right one passes).
    public let spent: () -> Bool

    /// `failed` and `spent` default to a receiver with no budget of guesses.
    public init(
        realm: String, throttle: FailureThrottle<Limiter>, verify: @escaping (String, String) -> Account?,
        failed: @escaping (String) -> Void = { _ in }, spent: @escaping () -> Bool = { false }
    ) {
        self.realm = realm
        self.failed = failed
        self.spent = spent
        self.throttle = throttle
        self.verify = verify
    }

    /// The user name and password of an `Authorization: Basic` header, nil when there is none
    /// or it is not one (not base64, no colon, not UTF-8).
    public static func credentials(_ header: String?) -> (name: String, password: String)? {
        guard let header else { return nil }
        let parts = header.parts(separatedBy: " ", maxSplits: 1, omittingEmpty: true)
        guard parts.count == 2, parts[0].lowercased() == "basic",
            let bytes = base64Decoded(parts[1].trimmingWhitespace), let colon = bytes.firstIndex(of: 0x3A),
            let name = String(validating: bytes[..<colon], as: UTF8.self),
            let password = String(validating: bytes[(colon + 1)...], as: UTF8.self)
        else { return nil }
        return (name, password)
    }

    /// The account of a request's right credentials (its connection then proven); otherwise
    /// the refusal a door's error middleware answers: 401 with the challenge (missing or wrong
    /// credentials), 429 for an address that must wait (its credentials not checked). Neither
    /// reads the body: a request with one then closes its connection (a PUT may be gigabytes).
    public func authenticate(_ request: Request) throws(HTTPError) -> Account {
        let challenge = HTTPError.status(
            .unauthorized, "a user name and app password are needed", headers: ["WWW-Authenticate": challengeValue])
        guard let (name, password) = Self.credentials(request.head.header("authorization")) else { throw challenge }
        switch outcome(name: name, password: password, address: request.address) {
        case .lockedOut:
            request.log(
                "credentials for \(quotedForLog(name, limit: 64)) while \(request.address) must wait; answered 429")
            throw .status(.tooManyRequests, "too many wrong passwords; try again in a few minutes")
        case .wrong(let locked):
            failed(request.address)
            request.log(
                "wrong password for \(quotedForLog(name, limit: 64))" + (locked ? "; \(request.address) must wait" : "")
                    + "; answered 401")
            throw challenge
        case .right(let account):
            request.proven()
            return account
        }
    }

    /// The `WWW-Authenticate` value of the challenge.
    var challengeValue: String { "Basic realm=\"\(realm)\", charset=\"UTF-8\"" }

    /// What `name` and `password` from `address` come to: checked unless the address must wait.
    private func outcome(name: String, password: String, address: String) -> BasicOutcome<Account> {
        throttle.withLimiter { limiter in
            if limiter.isLockedOut(address, now: .now) { return .lockedOut }
            if let account = verify(name, password) {
                limiter.succeeded(address)
                return .right(account)
            }
            // While the receiver's budget is spent, a wrong password is 429 (and not counted);
            // a right one still passes: a random password of 141 bits needs no budget, and the
            // budget must not let anyone on the LAN shut every app out.
            if spent() { return .lockedOut }
            return .wrong(lockedNow: limiter.failed(address, now: .now))
        }
    }
}

/// What a Basic credential check came to.
enum BasicOutcome<Account> {
    case lockedOut
    case wrong(lockedNow: Bool)
    case right(Account)
}
